// Verification time per rule over a rule file (default tests/rules/true.rules): each rule is
// verified `--reps` times on one thread; the per-rule time is the median of its repetitions.
// Prints each rule's time (numeric pre-test and solver), the median and maximum over rules,
// and the wall time of verifying the whole file in parallel on every core.
//   build/bench/bench_verify [RULES_FILE] [--reps N]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "driver/data_paths.h"
#include "ir/parallel.h"
#include "rules/rule_parser.h"
#include "verify/verifier.h"

using namespace graphsub;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty()      ? 0
         : v.size() % 2 ? v[v.size() / 2]
                        : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  // The source tree, found through the axioms file (working directory or build's source).
  std::string axioms_path = driver::shipped_axioms();
  std::string root =
      axioms_path.substr(0, axioms_path.size() - std::strlen("specs/operators.axioms"));
  std::string file = root + "tests/rules/true.rules";
  int reps = 3;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = std::max(1, std::atoi(argv[++i]));
    else
      file = argv[i];
  }
  try {
    rules::RuleSet axioms = rules::load_rules(axioms_path);
    rules::RuleSet set = rules::load_rules(file, &axioms);
    verify::VerifyOptions opts;
    opts.threads = 1;
    verify::Verifier v(axioms, opts);

    fmt::print("verification time per rule: {} rules from {}, {} repetitions each, one thread\n",
               set.rules.size(), file, reps);
    fmt::print("{:<34} {:>10} {:>10} {:>10}  {}\n", "rule", "total ms", "numeric", "solver",
               "verdict");
    std::vector<double> totals, numerics, solvers;
    size_t proved = 0;
    for (auto& r : set.rules) {
      std::vector<double> t, n, s;
      verify::RuleVerdict last;
      for (int k = 0; k < reps; ++k) {
        last = v.verify(r);
        t.push_back(last.total_ms());
        n.push_back(last.numeric_ms);
        s.push_back(last.solver_ms);
      }
      proved += last.proved();
      totals.push_back(median(t));
      numerics.push_back(median(n));
      solvers.push_back(median(s));
      fmt::print("{:<34} {:>10.1f} {:>10.1f} {:>10.1f}  {}\n", r.name, totals.back(),
                 numerics.back(), solvers.back(), verify::verdict_name(last.verdict));
    }
    fmt::print("\n{} of {} proved\n", proved, set.rules.size());
    fmt::print(
        "per rule (ms): median {:.1f}, max {:.1f}; numeric test median {:.1f}; solver median "
        "{:.1f}\n",
        median(totals), totals.empty() ? 0 : *std::max_element(totals.begin(), totals.end()),
        median(numerics), median(solvers));

    verify::VerifyOptions par;
    verify::Verifier vp(axioms, par);
    int threads = hardware_threads();
    auto t0 = std::chrono::steady_clock::now();
    auto all = vp.verify_all(set.rules);
    double wall =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    size_t ok = std::count_if(all.begin(), all.end(), [](auto& x) { return x.proved(); });
    fmt::print("whole file in parallel on {} threads: {:.0f} ms wall, {} proved\n", threads, wall,
               ok);
    return proved == set.rules.size() ? 0 : 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 2;
  }
}
