#include "driver/candidate_samples.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "core/error.h"
#include "exec/precompute.h"
#include "ir/hash.h"
#include "opt/match/graph_hashing.h"
#include "opt/match/graph_index.h"
#include "opt/search/search.h"

namespace graphsub::driver {

Graph random_rewrite(const Graph& g, const std::vector<const opt::Transform*>& transforms,
                     int steps, std::mt19937_64& rng) {
  Graph cur = g;
  std::vector<NodeId> order;
  for (int s = 0; s < steps; ++s) {
    opt::GraphIndex ix(cur);
    std::vector<Graph> cands;
    for (auto* t : transforms)
      opt::apply_everywhere(*t, ix, [&](opt::Candidate&& c) {
        if (opt::topological_order(c.graph, order)) cands.push_back(std::move(c.graph));
      });
    if (cands.empty()) break;
    cur = std::move(cands[rng() % cands.size()]);
  }
  return cur;
}

size_t dump_candidates(const std::string& dir, const ImportedModel& m, const opt::OptimizeResult& r,
                       const opt::RuleLibrary& lib, opt::CostModel& cost, int random_samples,
                       uint64_t seed, const ExportOptions& eo) {
  std::filesystem::create_directories(dir);
  auto transforms = lib.transforms();
  std::vector<std::pair<std::string, Graph>> graphs = {{"original", m.graph}};
  // At most four graphs evenly spaced along the search's path (its result last).
  const auto& steps = r.search.steps;
  if (!steps.empty()) {
    auto path = opt::replay_steps(m.graph, transforms, steps, steps.size());
    size_t stride = std::max<size_t>(1, path.size() / 4);
    for (size_t i = path.size(); i-- > 0;)
      if ((path.size() - 1 - i) % stride == 0) graphs.emplace_back("path", path[i]);
  }
  graphs.emplace_back("finalist", r.optimized);
  for (const auto& u : r.runners_up) graphs.emplace_back("finalist", u.graph);
  std::mt19937_64 rng(seed);
  for (int i = 0; i < random_samples; ++i)
    graphs.emplace_back("random", random_rewrite(m.graph, transforms, 1 + i % 6, rng));

  nlohmann::json list = nlohmann::json::array();
  std::set<uint64_t> seen;
  for (auto& [kind, g] : graphs) {
    precompute_weights(g);
    g.compact();
    if (!seen.insert(structural_hash(g)).second) continue;
    std::string file = fmt::format("candidate-{:02}.onnx", list.size());
    export_onnx_file(g, m.info.get(), (std::filesystem::path(dir) / file).string(), eo);
    list.push_back({{"file", file}, {"kind", kind}, {"predicted_ms", cost.graph_cost(g) / 1e3}});
  }
  std::string json = (std::filesystem::path(dir) / "candidates.json").string();
  std::ofstream out(json);
  out << list.dump(1) << "\n";
  if (!out.flush()) throw Error(fmt::format("cannot write {}", json));
  return list.size();
}

}  // namespace graphsub::driver
