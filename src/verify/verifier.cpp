#include "verify/verifier.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>

#include "core/error.h"
#include "ir/parallel.h"
#include "verify/solver_watchdog.h"
#include "verify/z3_encoding.h"

namespace graphsub::verify {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

}  // namespace

// A Z3 context with the axioms encoded, and a solver holding them, kept for a lane of rules
// (VerifyOptions::reuse_context). Each rule is checked inside its own push/pop scope of the
// solver, so the axioms are asserted and internalized once per lane, not once per rule
// (most of a call's solver time on these small rules).
struct Z3Session {
  Z3Session(const rules::RuleSet& ax, unsigned rlimit)
      : domains(ax), enc(ctx, domains), solver(ctx, z3::solver::simple()) {
    // The plain SMT core: the default solver's preprocessing tactics cost more than they save
    // on these small problems.
    for (auto& a : domains.axioms) solver.add(enc.axiom(a));
    // Set once: setting parameters re-configures the solver (about a tenth of a small rule's
    // solver time). No `timeout` parameter: the time limit is kept by a SolverWatchdog.
    z3::params p(ctx);
    // E-matching only: model-based quantifier instantiation would search for models of the
    // (satisfiable) axioms instead of failing fast.
    p.set("mbqi", false);
    if (rlimit) p.set("rlimit", rlimit);
    // No SIGINT handler of Z3's own: Z3 4.8 keeps the check that installed it in one global,
    // so a Ctrl-C while checks run on several threads (the Python module cancels jobs on
    // SIGINT) called into a finished check and crashed. Cancellation goes through the
    // Reporter and the watchdog instead.
    p.set("ctrl_c", false);
    solver.set(p);
  }
  rules::RuleSet domains;  // own copy: the encoding refers to it
  z3::context ctx;
  Z3Encoding enc;
  z3::solver solver;
};

// The kept sessions of reuse_context, one per lane; a lane's mutex is held while its rules
// are checked.
struct SessionLanes {
  std::array<std::mutex, kSessionLanes> mu;
  std::array<std::unique_ptr<Z3Session>, kSessionLanes> session;
};

namespace {

// One rule's scope in a session's solver.
class SolverScope {
 public:
  explicit SolverScope(z3::solver& s) : s_(s) { s_.push(); }
  ~SolverScope() {
    try {
      s_.pop();
    } catch (const z3::exception&) {
      // The session is dropped by the caller when a check fails with an exception.
    }
  }
  SolverScope(const SolverScope&) = delete;
  SolverScope& operator=(const SolverScope&) = delete;

 private:
  z3::solver& s_;
};

// Z3's resource count of the context so far ("rlimit count" of the statistics).
uint64_t resource_count(z3::solver& s) {
  z3::stats st = s.statistics();
  for (unsigned i = 0; i < st.size(); ++i)
    if (st.key(i) == "rlimit count")
      return static_cast<uint64_t>(st.is_uint(i) ? st.uint_value(i) : st.double_value(i));
  return 0;
}

// Checks rule `r` in a scope of the session's solver; sets the verdict and reason of `v`.
// Returns false when the watchdog interrupted a check (the session is not to be reused).
bool check_rule(Z3Session& session, SolverWatchdog& watchdog, const rules::Rule& r,
                const VerifyOptions& opts, RuleVerdict& v, Clock::time_point t0) {
  Z3Encoding& enc = session.enc;
  z3::solver& s = session.solver;
  SolverScope scope(s);
  auto vars = enc.declare(r, "r!");
  s.add(enc.guard(r, vars));
  s.add(enc.well_typed(r, vars));
  v.verdict = Verdict::Proved;
  // All outputs together within the time limit.
  auto deadline = t0 + std::chrono::milliseconds(opts.timeout_ms);
  bool reusable = true;
  for (size_t i = 0; i < r.source.size(); ++i) {
    s.push();
    s.add(enc.term(r.source[i], vars) != enc.term(r.target[i], vars));
    z3::check_result res = z3::unknown;
    // No time left (the earlier outputs used it): a timeout without a check.
    bool out_of_time = Clock::now() >= deadline;
    if (!out_of_time) {
      uint64_t before = opts.count_resources ? resource_count(s) : 0;
      {
        SolverWatchdog::Watch watch(watchdog, session.ctx, deadline);
        res = s.check();
        out_of_time = watch.interrupted();
      }
      if (opts.count_resources) v.resources += resource_count(s) - before;
      reusable = reusable && !out_of_time;
    }
    if (out_of_time && opts.timeout_is_error)
      throw SafetyLimitExceeded(fmt::format(
          "rule {}: output {} not decided within the safety time limit of {} ms (the resource "
          "limit {} should end every check long before; the machine may be overloaded)",
          r.name, i, opts.timeout_ms, opts.rlimit));
    if (res == z3::unsat) {
      s.pop();
      continue;
    }
    v.output = static_cast<int>(i);
    if (res == z3::sat) {
      v.verdict = Verdict::Counterexample;
      z3::model m = s.get_model();
      std::string params;
      for (auto& pv : r.param_vars)
        params +=
            fmt::format(" ?{}={}", pv.name, m.eval(vars.params.at(pv.name), true).to_string());
      v.reason = fmt::format("output {}: the solver found a model where it differs{}", i, params);
    } else {
      std::string why = out_of_time ? "canceled" : s.reason_unknown();
      if (why.size() >= 2 && why.front() == '(' && why.back() == ')')
        why = why.substr(1, why.size() - 2);
      bool timed_out = out_of_time;
      // Z3 4.8 reports an exhausted rlimit as plain "unknown" (newer ones as "canceled").
      bool out_of_resources =
          !out_of_time && (why.find("resource") != std::string::npos ||
                           (opts.rlimit && (why == "unknown" || why == "canceled")));
      v.verdict = timed_out || out_of_resources ? Verdict::Timeout : Verdict::Unknown;
      v.reason =
          timed_out ? fmt::format("output {}: no proof within {} ms", i, opts.timeout_ms)
          : out_of_resources
              ? fmt::format("output {}: no proof within the resource limit {}", i, opts.rlimit)
              : fmt::format("output {}: solver unknown ({})", i, why);
    }
    s.pop();
    break;
  }
  return reusable;
}

}  // namespace

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Proved:
      return "proved";
    case Verdict::Counterexample:
      return "counterexample";
    case Verdict::Unknown:
      return "unknown";
    case Verdict::Timeout:
      return "timeout";
    case Verdict::Invalid:
      return "invalid";
  }
  return "?";
}

// The watchdog of a verifier (and its copies), started with the first proof.
class LazyWatchdog {
 public:
  SolverWatchdog& get(unsigned timeout_ms) {
    // A few looks per time limit, at most every 50 ms.
    std::call_once(once_, [&] {
      w_ = std::make_unique<SolverWatchdog>(
          std::chrono::milliseconds(std::clamp(timeout_ms / 4, 1u, 50u)));
    });
    return *w_;
  }

 private:
  std::once_flag once_;
  std::unique_ptr<SolverWatchdog> w_;
};

Verifier::Verifier(rules::RuleSet axioms, VerifyOptions opts)
    : axioms_(std::move(axioms)),
      opts_(std::move(opts)),
      watchdog_(std::make_shared<LazyWatchdog>()),
      lanes_(std::make_shared<SessionLanes>()) {
  axioms_.rules.clear();
}

RuleVerdict Verifier::numeric_test(const rules::Rule& r, uint64_t per_params) const {
  RuleVerdict v;
  v.name = r.name;
  auto t0 = Clock::now();
  rules::BoundedOptions bo;
  bo.max_per_params = per_params;
  bo.seed = opts_.seed;
  bo.max_partial_instances = opts_.max_partial_instances;
  // A search that grows too large (many tensor variables) counts as finding no instance; the
  // given shapes, fewer, are tried then, but not the whole space, which is larger still.
  std::string too_large;
  auto attempt = [&](auto&& search) -> std::optional<rules::BoundedResult> {
    try {
      return search();
    } catch (const rules::InstanceSearchTooLarge& e) {
      too_large = e.what();
      return std::nullopt;
    }
  };
  std::optional<rules::BoundedResult> found =
      attempt([&] { return rules::bounded_test(r, axioms_, opts_.numeric_space, bo); });
  if (found && (found->holds || found->instances > 0)) {
    v.tested = found->instances;
  } else {
    // Nothing type-checks among the small shapes: try the given shapes, then the axioms'
    // full shape space.
    bool small_too_large = !found;
    found.reset();
    if (!opts_.fallback_types.empty())
      found =
          attempt([&] { return rules::bounded_test_types(r, axioms_, opts_.fallback_types, bo); });
    if ((!found || found->instances == 0) && !small_too_large)
      found = attempt([&] {
        return rules::bounded_test(r, axioms_, axioms_.shapes.value_or(rules::ShapeSpace{}), bo);
      });
    if (!found) {
      v.numeric_ms = ms_since(t0);
      v.verdict = Verdict::Invalid;
      v.reason = too_large;
      return v;
    }
    v.tested = found->instances;
  }
  const rules::BoundedResult& b = *found;
  v.numeric_ms = ms_since(t0);
  if (!b.holds) {
    v.output = b.output;
    if (b.instances == 0) {
      v.verdict = Verdict::Invalid;
      v.reason = "no instance type-checks in the shape space";
    } else {
      v.verdict = Verdict::Counterexample;
      v.reason = fmt::format("numerically false at {}", b.counterexample);
    }
  }
  return v;
}

RuleVerdict Verifier::prove(const rules::Rule& r, std::unique_ptr<Z3Session>* session) const {
  RuleVerdict v;
  v.name = r.name;
  auto t0 = Clock::now();
  std::unique_ptr<Z3Session> own;
  std::unique_ptr<Z3Session>& s = session ? *session : own;
  if (!s) s = std::make_unique<Z3Session>(axioms_, opts_.rlimit);
  try {
    // An interrupted context may still be canceled for its next check: not reused.
    if (!check_rule(*s, watchdog_->get(opts_.timeout_ms), r, opts_, v, t0)) s.reset();
  } catch (...) {
    // A solver left in an unknown state is not reused.
    s.reset();
    throw;
  }
  v.solver_ms = ms_since(t0);
  return v;
}

void Verifier::refute(const rules::Rule& r, RuleVerdict& v) const {
  auto t0 = Clock::now();
  rules::BoundedOptions bo;
  bo.max_per_params = 0;  // every instance, in enumeration order
  bo.seed = opts_.seed;
  bo.max_partial_instances = opts_.max_partial_instances;
  uint64_t budget = opts_.exhaustive_instances;
  // The axioms' space first (what check-axioms enumerates), then the fallback types, with what
  // the first left of the budget. A search too large to enumerate refutes nothing.
  auto run = [&](auto&& test) -> bool {
    if (budget == 0) return false;
    bo.max_instances = budget;
    try {
      rules::BoundedResult b = test();
      v.exhaustive += b.instances;
      budget -= std::min(budget, b.instances);
      if (b.holds || b.instances == 0) return false;
      v.verdict = Verdict::Counterexample;
      v.output = b.output;
      v.reason = fmt::format(
          "numerically false at {} (exhaustive bounded test, {} instances, after the solver "
          "left it open)",
          b.counterexample, v.exhaustive);
      return true;
    } catch (const rules::InstanceSearchTooLarge&) {
      return false;
    }
  };
  if (!run([&] {
        return rules::bounded_test(r, axioms_, axioms_.shapes.value_or(rules::ShapeSpace{}), bo);
      }) &&
      !opts_.fallback_types.empty())
    run([&] { return rules::bounded_test_types(r, axioms_, opts_.fallback_types, bo); });
  v.numeric_ms += ms_since(t0);
}

RuleVerdict Verifier::verify_in(const rules::Rule& r, std::unique_ptr<Z3Session>* session) const {
  try {
    RuleVerdict n;
    const uint64_t all = opts_.numeric_per_params;
    const uint64_t first =
        opts_.numeric_first_per_params ? std::min(opts_.numeric_first_per_params, all) : all;
    if (opts_.numeric_test) {
      n = numeric_test(r, first);
      if (n.verdict == Verdict::Counterexample || n.verdict == Verdict::Invalid) return n;
    }
    RuleVerdict p = prove(r, session);
    p.tested = n.tested;
    p.numeric_ms = n.numeric_ms;
    if (opts_.numeric_test && first < all && p.verdict == Verdict::Proved) {
      // Proved: the whole numeric test still stands under the proof (an axiom's error shows
      // as a proved rule that is numerically false).
      RuleVerdict whole = numeric_test(r, all);
      if (whole.verdict == Verdict::Counterexample) {
        whole.numeric_ms += p.numeric_ms;
        whole.reason =
            "proved from the axioms but numerically false (an axiom is wrong?): " + whole.reason;
        return whole;
      }
      p.tested = whole.tested;
      p.numeric_ms += whole.numeric_ms;
    }
    if ((p.verdict == Verdict::Unknown || p.verdict == Verdict::Timeout) &&
        opts_.exhaustive_instances > 0)
      refute(r, p);
    return p;
  } catch (const SafetyLimitExceeded&) {
    throw;  // not a verdict: the caller's output must not depend on time
  } catch (const z3::exception& e) {
    return {.name = r.name,
            .verdict = Verdict::Invalid,
            .reason = fmt::format("Z3 error: {}", e.msg())};
  } catch (const Error& e) {
    return {.name = r.name, .verdict = Verdict::Invalid, .reason = e.what()};
  }
}

void Verifier::reset_sessions() const {
  for (size_t l = 0; l < kSessionLanes; ++l) {
    std::lock_guard<std::mutex> lane(lanes_->mu[l]);
    lanes_->session[l].reset();
  }
}

RuleVerdict Verifier::verify(const rules::Rule& r) const {
  return verify_in(r, nullptr);
}

std::vector<RuleVerdict> Verifier::verify_all(const std::vector<rules::Rule>& rules, Reporter& rep,
                                              const LaneShare& share) const {
  std::vector<RuleVerdict> out(rules.size());
  std::atomic<size_t> done{0}, last{0};  // rules checked; the latest of them, for progress
  // Work items: with reuse_context the lanes, each checking its rules in order in its kept
  // session (so a rule's check sees the same solver history whatever the threads and their
  // timing); single rules otherwise.
  size_t items = opts_.reuse_context ? std::min(kSessionLanes, rules.size()) : rules.size();
  auto check = [&](size_t k, std::unique_ptr<Z3Session>* session) {
    out[k] = verify_in(rules[k], session);
    last = k;
    done.fetch_add(1);
  };
  auto progress = [&](size_t) {
    if (size_t d = done.load())
      rep.progress("verify", static_cast<double>(d), static_cast<double>(rules.size()),
                   rules[last.load()].name);
  };
  int threads = opts_.threads > 0 ? opts_.threads : hardware_threads();
  parallel_for(
      items, threads,
      [&](size_t item, size_t) {
        if (!share.owns_rule(item)) return;  // another rank's lane (or rule)
        if (!opts_.reuse_context) return check(item, nullptr);
        std::lock_guard<std::mutex> lane(lanes_->mu[item]);
        for (size_t k = item; k < rules.size() && !parallel_stopping(); k += kSessionLanes)
          check(k, &lanes_->session[item]);
      },
      progress);
  progress(0);
  return out;
}

}  // namespace graphsub::verify
