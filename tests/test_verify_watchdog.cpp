// The solver watchdog (src/verify/solver_watchdog.h) interrupts a check that runs past its
// deadline, says so, and leaves checks that end in time alone.
#include <gtest/gtest.h>

#include <chrono>

#include "verify/solver_watchdog.h"

namespace graphsub::verify {
namespace {

using namespace std::chrono_literals;
using Clock = SolverWatchdog::Clock;

// The pigeonhole principle for `n` pigeons in n-1 holes, as propositional clauses: unsat, and
// exponentially hard for resolution, so the check runs far longer than the deadlines here.
void add_pigeonhole(z3::context& ctx, z3::solver& s, int n) {
  std::vector<std::vector<z3::expr>> in(static_cast<size_t>(n));
  for (int p = 0; p < n; ++p)
    for (int h = 0; h + 1 < n; ++h)
      in[static_cast<size_t>(p)].push_back(
          ctx.bool_const(("p" + std::to_string(p) + "h" + std::to_string(h)).c_str()));
  for (int p = 0; p < n; ++p) {
    z3::expr_vector some(ctx);
    for (auto& e : in[static_cast<size_t>(p)]) some.push_back(e);
    s.add(z3::mk_or(some));
  }
  for (int h = 0; h + 1 < n; ++h)
    for (int p = 0; p < n; ++p)
      for (int q = p + 1; q < n; ++q)
        s.add(!in[static_cast<size_t>(p)][static_cast<size_t>(h)] ||
              !in[static_cast<size_t>(q)][static_cast<size_t>(h)]);
}

TEST(SolverWatchdog, InterruptsACheckPastItsDeadline) {
  SolverWatchdog w(5ms);
  z3::context ctx;
  z3::solver s(ctx, z3::solver::simple());
  add_pigeonhole(ctx, s, 14);
  auto t0 = Clock::now();
  z3::check_result res;
  bool interrupted;
  {
    SolverWatchdog::Watch watch(w, ctx, t0 + 50ms);
    res = s.check();
    interrupted = watch.interrupted();
  }
  auto took = Clock::now() - t0;
  EXPECT_EQ(res, z3::unknown);
  EXPECT_TRUE(interrupted);
  EXPECT_GE(took, 50ms);
  EXPECT_LT(took, 5s);  // stopped, not run to the end
}

TEST(SolverWatchdog, LeavesAQuickCheckAlone) {
  SolverWatchdog w(5ms);
  z3::context ctx;
  z3::solver s(ctx);
  z3::expr x = ctx.int_const("x");
  s.add(x > 2 && x < 2);
  SolverWatchdog::Watch watch(w, ctx, Clock::now() + 60s);
  EXPECT_EQ(s.check(), z3::unsat);
  EXPECT_FALSE(watch.interrupted());
}

}  // namespace
}  // namespace graphsub::verify
