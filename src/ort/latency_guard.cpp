#include "ort/latency_guard.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace graphsub::ort {
namespace {

double fastest(const TimedModel& t) {
  return t.ms.empty() ? 0 : *std::min_element(t.ms.begin(), t.ms.end());
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

}  // namespace

double GuardResult::speedup() const {
  const TimedModel& w = chosen < 0 ? original : candidates[static_cast<size_t>(chosen)];
  return w.median_ms > 0 ? original.median_ms / w.median_ms : 1.0;
}

GuardResult guard_latency(Worker& worker, const std::string& original,
                          const std::vector<std::string>& candidates, const GuardOptions& opts) {
  if (candidates.empty()) throw Error("latency guard: no candidate to time");
  if (opts.runs < 3) throw Error("latency guard: at least 3 timed runs are needed for a median");
  GuardResult r;
  r.runtime = fmt::format("ONNX Runtime {}, {} thread(s)", worker.runtime_version(), opts.threads);
  std::vector<std::string> ids = {"original", "control"};
  std::vector<std::string> paths = {original, original};
  for (size_t i = 0; i < candidates.size(); ++i) {
    ids.push_back(fmt::format("candidate{}", i));
    paths.push_back(candidates[i]);
  }
  for (size_t i = 0; i < ids.size(); ++i)
    worker.call({{"op", "load"},
                 {"id", ids[i]},
                 {"path", paths[i]},
                 {"threads", opts.threads},
                 {"dim", opts.dim}});
  auto reply =
      worker.call({{"op", "time"}, {"ids", ids}, {"runs", opts.runs}, {"warmup", opts.warmup}});
  std::vector<TimedModel> timed;
  for (size_t i = 0; i < ids.size(); ++i) {
    TimedModel t{paths[i], 0, reply.at("ms").at(ids[i]).get<std::vector<double>>()};
    t.median_ms = median(t.ms);
    timed.push_back(std::move(t));
  }
  for (const auto& id : ids) worker.call({{"op", "unload"}, {"id", id}});
  r.original = timed[0];
  r.control = timed[1];
  r.candidates.assign(timed.begin() + 2, timed.end());
  double aa = r.original.median_ms > 0 ? r.control.median_ms / r.original.median_ms : 1.0;
  r.noise = std::max(std::abs(aa - 1.0), opts.min_noise);
  // The original's best estimate is the median over both of its timings.
  std::vector<double> both = r.original.ms;
  both.insert(both.end(), r.control.ms.begin(), r.control.ms.end());
  double orig_ms = median(both);

  double orig_fastest = std::min(fastest(r.original), fastest(r.control));
  // Slower beyond the band in the medians and in the fastest runs both: other processes only
  // ever add time, so a difference that the fastest runs do not show is theirs, not the
  // model's (under load the medians alone flipped the choice from one run to the next).
  auto beyond_noise = [&](double slower, double faster) {
    return slower > faster * (1.0 + r.noise) && slower - faster > opts.min_noise_ms;
  };
  auto slower = [&](const TimedModel& a, double median_b, double fastest_b) {
    return beyond_noise(a.median_ms, median_b) && beyond_noise(fastest(a), fastest_b);
  };
  r.chosen = 0;
  for (size_t i = 1; i < r.candidates.size(); ++i) {
    const TimedModel& c = r.candidates[i];
    if (slower(r.candidates[static_cast<size_t>(r.chosen)], c.median_ms, fastest(c)))
      r.chosen = static_cast<int>(i);
  }
  const TimedModel& best = r.candidates[static_cast<size_t>(r.chosen)];
  if (slower(best, orig_ms, orig_fastest)) {
    r.verdict = fmt::format(
        "the optimized model is slower in {} ({:.3f} ms against {:.3f} ms, beyond the noise band "
        "of {:.1f}%): the original is written back",
        r.runtime, best.median_ms, orig_ms, 100 * r.noise);
    r.chosen = -1;
  } else {
    r.verdict = fmt::format(
        "{:.3f} ms -> {:.3f} ms in {} ({:.3f}x; noise band {:.1f}%, median of "
        "{} alternated runs)",
        orig_ms, best.median_ms, r.runtime, orig_ms / best.median_ms, 100 * r.noise, opts.runs);
  }
  return r;
}

}  // namespace graphsub::ort
