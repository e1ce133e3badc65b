#include "gen/prove/rule_class.h"

#include <fmt/format.h>

#include <cstring>
#include <map>

#include "gen/prove/prover.h"
#include "ir/parallel.h"

namespace graphsub::gen {

std::vector<RuleClass> rule_classes(Classified& cl, int threads, Reporter& rep) {
  std::vector<RuleClass> classes(cl.classes.size());
  std::vector<std::string> keys;
  keys.reserve(cl.classes.size());
  for (auto it = cl.classes.begin(); it != cl.classes.end(); it = cl.classes.erase(it)) {
    RuleClass& c = classes[keys.size()];
    c.pairs = it->second.pairs;
    c.reduced = it->second.reduced;
    c.shape_conds = std::move(it->second.shape_conds);
    keys.push_back(it->first);
  }
  parallel_for(
      classes.size(), threads,
      [&](size_t i, size_t) {
        classes[i].eq = equality_from_key(keys[i]);
        std::string().swap(keys[i]);
      },
      [&](size_t done) {
        rep.progress("classes", static_cast<double>(done), static_cast<double>(classes.size()));
      });
  return classes;
}

void link_most_general_forms(std::vector<RuleClass>& classes, Reporter& rep) {
  std::map<std::string, std::vector<size_t>> by_skeleton;
  for (size_t i = 0; i < classes.size(); ++i) {
    classes[i].vars = num_vars(classes[i].eq);
    by_skeleton[classes[i].eq.skeleton].push_back(i);
  }
  size_t skeletons_done = 0;
  for (auto& [skel, members] : by_skeleton) {
    if (++skeletons_done % 256 == 0)  // a progress report (and a chance to cancel) now and then
      rep.progress("most general forms", static_cast<double>(skeletons_done),
                   static_cast<double>(by_skeleton.size()));
    for (size_t i : members)
      for (size_t j : members)
        if (classes[j].vars > classes[i].vars && is_instance(classes[i].eq, classes[j].eq) &&
            (classes[i].general < 0 ||
             classes[j].vars > classes[static_cast<size_t>(classes[i].general)].vars))
          classes[i].general = static_cast<int>(j);
  }
  // Nothing after this reads a class's skeleton: its text is freed (hundreds of thousands of
  // them at N = 4).
  for (auto& c : classes) std::string().swap(c.eq.skeleton);
}

bool general_form_holds(const std::vector<RuleClass>& classes, const RuleClass& c) {
  for (int g = c.general; g >= 0; g = classes[static_cast<size_t>(g)].general)
    if (classes[static_cast<size_t>(g)].holds_always()) return true;
  return false;
}

void skip_for(RuleClass& c, const RuleKey& root) {
  c.state = RuleClass::Failed;
  c.has_root = true;
  c.not_tried = true;
  c.failed_root = root;
}

bool failure_carries_over(const RuleClass& c, const RuleClass& g) {
  return g.state == RuleClass::Failed && g.has_root &&
         (c.shape_conds.empty() || !g.shape_conds.empty());
}

bool failure_carries_over(const RuleClass& c, const FailInfo* g) {
  return g && (c.shape_conds.empty() || g->has_conds);
}

void exchange_failures(Cluster& cluster, std::vector<FailEntry>& mine, FailBook& book) {
  if (cluster.size() == 1) {
    for (const FailEntry& f : mine) book.emplace(f.key, f.info);
  } else {
    for (const std::string& bytes : cluster.all_gather(std::string(
             reinterpret_cast<const char*>(mine.data()), mine.size() * sizeof(FailEntry)))) {
      std::vector<FailEntry> theirs(bytes.size() / sizeof(FailEntry));
      if (!theirs.empty()) std::memcpy(theirs.data(), bytes.data(), bytes.size());
      for (const FailEntry& f : theirs) book.emplace(f.key, f.info);
    }
  }
  mine.clear();
}

}  // namespace graphsub::gen
