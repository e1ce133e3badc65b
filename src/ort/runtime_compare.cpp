#include "ort/runtime_compare.h"

namespace graphsub::ort {

RuntimeComparison compare_in_runtime(Worker& worker, const std::string& reference,
                                     const std::string& candidate, const CompareOptions& opts) {
  const char* ids[] = {"compare_reference", "compare_candidate"};
  for (int k = 0; k < 2; ++k) {
    nlohmann::json load = {{"op", "load"},
                           {"id", ids[k]},
                           {"path", k == 0 ? reference : candidate},
                           {"threads", 1},
                           {"dim", opts.dim}};
    if (!opts.dims.empty()) load["dims"] = opts.dims;
    worker.call(load);
  }
  nlohmann::json reply = worker.call({{"op", "compare"},
                                      {"ids", {ids[0], ids[1]}},
                                      {"sets", opts.sets},
                                      {"seed", opts.seed},
                                      {"rtol", opts.rtol},
                                      {"atol", opts.atol}});
  for (const char* id : ids) worker.call({{"op", "unload"}, {"id", id}});
  RuntimeComparison r;
  r.match = reply.at("match").get<bool>();
  r.sets = opts.sets;
  r.dim = opts.dim;
  r.dims = opts.dims;
  r.reference_error = reply.value("reference_error", "");
  for (const auto& o : reply.at("outputs")) {
    OutputComparison c;
    c.name = o.at("name").get<std::string>();
    c.max_abs_diff = o.at("max_abs_diff").get<double>();
    c.max_rel_diff = o.at("max_rel_diff").get<double>();
    c.max_abs_value = o.at("max_abs_value").get<double>();
    c.match = o.at("match").get<bool>();
    c.note = o.value("note", "");
    r.outputs.push_back(std::move(c));
  }
  return r;
}

}  // namespace graphsub::ort
