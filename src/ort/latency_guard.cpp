#include "ort/latency_guard.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

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

// What happened to the original as imported when nothing better was found.
std::string cleaned_verdict(const GuardResult& r) {
  if (!r.cleaned || r.chosen >= 0) return "";
  return fmt::format(
      "; the original as imported (cleaned) ran {:.3f} ms, not faster beyond the band either: "
      "the input file is written as given",
      r.cleaned->median_ms);
}

// The second timing, where one ran: why a gain inside the band was written, or was not.
std::string confirmation_text(const GuardResult& r) {
  if (!r.confirmation) return "";
  const GuardConfirmation& c = *r.confirmation;
  std::string rewrite =
      c.challenger == "cleaned" ? "the original as imported (cleaned)" : "the " + c.challenger;
  return fmt::format(
      "; {} was {:.3f}x faster, inside that band but beyond {:.1f}%, so it was timed again "
      "against the original in fresh sessions: {:.3f}x ({:.3f} ms -> {:.3f} ms, band {:.1f}%), {}",
      rewrite, c.first_speedup, 100 * c.first_noise, c.speedup, c.original.median_ms,
      c.rewrite.median_ms, 100 * c.noise,
      c.confirmed ? "confirmed: it is written" : "not confirmed");
}

// How many runs the verdict rests on: all of them, or the first half where nothing gained.
std::string runs_text(const GuardResult& r, const GuardOptions& opts) {
  size_t n = r.original.ms.size();
  if (n >= static_cast<size_t>(opts.runs)) return fmt::format("median of {} alternated runs", n);
  return fmt::format(
      "median of {} alternated runs: no model gained over {:.0f}% in them, so the other {} were "
      "not run",
      n, 100 * opts.cut_gain, static_cast<size_t>(opts.runs) - n);
}

std::string verdict(const GuardResult& r, const GuardOptions& opts) {
  if (r.confirmation && r.confirmation->confirmed) {
    const GuardConfirmation& c = *r.confirmation;
    return fmt::format(
        "{} is faster in {} than the input in two timings, each beyond its band ({:.3f}x within "
        "the first band of {:.1f}%, then {:.3f}x beyond {:.1f}% in fresh sessions; medians of {} "
        "alternated runs): it is written",
        c.challenger == "cleaned" ? "the original as imported (cleaned)" : "the " + c.challenger,
        r.runtime, c.first_speedup, 100 * r.noise, c.speedup, 100 * c.noise, opts.runs);
  }
  if (r.cleaned_fastest)
    return fmt::format(
        "the original as imported (cleaned) is faster in {} than the input and every candidate "
        "beyond the noise band ({:.3f} ms -> {:.3f} ms, {:.3f}x): it is written",
        r.runtime, r.original_ms, r.cleaned->median_ms, r.original_ms / r.cleaned->median_ms);
  if (r.chosen < 0) {
    const TimedModel& best = r.candidates[0];
    if (r.within_noise)
      return fmt::format(
          "the optimized model is not measured faster in {} ({:.3f} ms against {:.3f} ms, "
          "within the noise band of {:.1f}%, {}): the original is written back (a rewrite is "
          "written only when measured faster; within the band the verdict may differ on "
          "another machine){}{}",
          r.runtime, best.median_ms, r.original_ms, 100 * r.noise, runs_text(r, opts),
          cleaned_verdict(r), confirmation_text(r));
    return fmt::format(
        "the optimized model is slower in {} ({:.3f} ms against {:.3f} ms, beyond the noise band "
        "of {:.1f}%): the original is written back{}{}",
        r.runtime, best.median_ms, r.original_ms, 100 * r.noise, cleaned_verdict(r),
        confirmation_text(r));
  }
  const TimedModel& w = r.candidates[static_cast<size_t>(r.chosen)];
  std::string which =
      r.candidates.size() == 1 ? ""
      : r.chosen == 0
          ? fmt::format(" (the cheapest predicted of {} candidates)", r.candidates.size())
          : fmt::format(" (candidate {} of {}: faster than the cheapest predicted beyond noise)",
                        r.chosen + 1, r.candidates.size());
  return fmt::format(
      "{:.3f} ms -> {:.3f} ms in {}{} ({:.3f}x; noise band {:.1f}%, median of {} alternated runs)",
      r.original_ms, w.median_ms, r.runtime, which, r.original_ms / w.median_ms, 100 * r.noise,
      opts.runs);
}

}  // namespace

double GuardResult::speedup() const {
  if (chosen < 0) return 1.0;
  const TimedModel& w = candidates[static_cast<size_t>(chosen)];
  return w.median_ms > 0 ? original_ms / w.median_ms : 1.0;
}

namespace {

std::vector<std::vector<double>> time_in_worker(Worker& worker,
                                                const std::vector<std::string>& paths,
                                                const GuardOptions& opts) {
  std::vector<std::string> ids;
  for (size_t i = 0; i < paths.size(); ++i) {
    ids.push_back(fmt::format("m{}", i));
    worker.call({{"op", "load"},
                 {"id", ids[i]},
                 {"path", paths[i]},
                 {"threads", opts.threads},
                 {"dim", opts.dim},
                 {"dims", opts.dims}});
  }
  auto reply =
      worker.call({{"op", "time"}, {"ids", ids}, {"runs", opts.runs}, {"warmup", opts.warmup}});
  std::vector<std::vector<double>> runs;
  for (const auto& id : ids) runs.push_back(reply.at("ms").at(id).get<std::vector<double>>());
  for (const auto& id : ids) worker.call({{"op", "unload"}, {"id", id}});
  return runs;
}

// Whether two files hold the same bytes, read a chunk at a time (a model may be gigabytes).
bool same_bytes(const std::string& a, const std::string& b) {
  std::ifstream fa(a, std::ios::binary), fb(b, std::ios::binary);
  if (!fa || !fb) return false;
  std::vector<char> ca(1 << 20), cb(1 << 20);
  for (;;) {
    fa.read(ca.data(), static_cast<std::streamsize>(ca.size()));
    fb.read(cb.data(), static_cast<std::streamsize>(cb.size()));
    if (fa.gcount() != fb.gcount()) return false;
    if (!std::equal(ca.begin(), ca.begin() + fa.gcount(), cb.begin())) return false;
    if (!fa || !fb) return fa.eof() && fb.eof();
  }
}

// For each path, the first path of the same bytes (itself where none is earlier). The first
// two are the original and its A/A control: loaded apart on purpose, never merged. Candidates
// often are the same file (the search's finalists differ in graphs the export writes alike,
// and the cleaned original may be one): each distinct file is loaded and timed once, which
// for a 500 MB model saves seconds per file.
std::vector<size_t> same_files(const std::vector<std::string>& paths) {
  std::vector<size_t> first(paths.size());
  std::map<uintmax_t, std::vector<size_t>> by_size;  // distinct files so far, by size
  for (size_t i = 0; i < paths.size(); ++i) {
    first[i] = i;
    std::error_code ec;
    uintmax_t size = std::filesystem::file_size(paths[i], ec);
    if (i < 2 || ec) continue;
    auto& same_size = by_size[size];
    for (size_t j : same_size)
      if (same_bytes(paths[i], paths[j])) {
        first[i] = j;
        break;
      }
    if (first[i] == i) same_size.push_back(i);
  }
  return first;
}

// time_in_worker over the distinct files; a repeated file gets its first copy's times.
std::vector<std::vector<double>> time_distinct(Worker& worker,
                                               const std::vector<std::string>& paths,
                                               const GuardOptions& opts) {
  std::vector<size_t> first = same_files(paths);
  std::vector<std::string> distinct;
  std::vector<size_t> slot(paths.size());
  for (size_t i = 0; i < paths.size(); ++i) {
    if (first[i] == i) {
      slot[i] = distinct.size();
      distinct.push_back(paths[i]);
    } else {
      slot[i] = slot[first[i]];
    }
  }
  auto runs = time_in_worker(worker, distinct, opts);
  std::vector<std::vector<double>> out;
  for (size_t i = 0; i < paths.size(); ++i) out.push_back(runs.at(slot[i]));
  return out;
}

}  // namespace

GuardResult guard_latency(Worker& worker, const std::string& original,
                          const std::vector<std::string>& candidates, const GuardOptions& opts,
                          const std::string& cleaned) {
  GuardResult r =
      guard_latency([&](const std::vector<std::string>& paths,
                        const GuardOptions& o) { return time_distinct(worker, paths, o); },
                    original, candidates, opts, cleaned);
  std::vector<std::string> dims;
  for (const auto& [name, v] : opts.dims) dims.push_back(fmt::format("{}={}", name, v));
  r.runtime = fmt::format("ONNX Runtime {}, {} thread(s){}{}", worker.runtime_version(),
                          opts.threads, dims.empty() ? "" : ", at ", fmt::join(dims, ", "));
  r.verdict = verdict(r, opts);
  return r;
}

namespace {

// Whether `a` is slower than `b` beyond `band` in the medians and in the fastest runs both.
bool slower_beyond(const TimedModel& a, const TimedModel& b, double band, double min_ms) {
  auto beyond = [&](double slow, double fast) {
    return slow > fast * (1.0 + band) && slow - fast > min_ms;
  };
  return beyond(a.median_ms, b.median_ms) && beyond(fastest(a), fastest(b));
}

// Nothing beat the original beyond the band. The faster of the picked candidate and the
// cleaned original, where it beat the original beyond confirm_noise, is timed once more
// against the original (twice, for a fresh A/A) in fresh sessions; confirmed there, it is
// written. A session's own luck is most of the spread, and the second timing draws anew.
void confirm_small_gain(const TimeModels& time, const std::string& original, const TimedModel& orig,
                        double aa, int picked, const GuardOptions& opts, GuardResult& r) {
  double first_band = std::max(std::abs(aa - 1.0), opts.confirm_noise);
  if (opts.confirm_noise <= 0 || first_band >= r.noise) return;
  // As in the first decision, the search's choice stands unless the cleaned original beats
  // it beyond the band: the same rewrite is retimed whichever of the two drew the luckier
  // sessions, so that two runs do not write two different files.
  const TimedModel& cand = r.candidates[static_cast<size_t>(picked)];
  auto gains = [&](const TimedModel& t) {
    return slower_beyond(orig, t, first_band, opts.min_noise_ms);
  };
  const TimedModel* cleaned = r.cleaned && !r.cleaned->cut ? &*r.cleaned : nullptr;
  const TimedModel* best = nullptr;
  std::string which;
  if (gains(cand) && !(cleaned && slower_beyond(cand, *cleaned, r.noise, opts.min_noise_ms))) {
    best = &cand;
    which = fmt::format("candidate {}", picked + 1);
  } else if (cleaned && gains(*cleaned)) {
    best = cleaned;
    which = "cleaned";
  }
  if (!best) return;
  auto runs = time({original, original, best->path}, opts);
  if (runs.size() != 3 || runs[0].empty() || runs[1].empty() || runs[2].empty())
    throw Error("latency guard: the second timing returned no times");
  GuardConfirmation c;
  c.challenger = which;
  c.original = {original, median(runs[0]), runs[0]};
  c.control = {original, median(runs[1]), runs[1]};
  c.rewrite = {best->path, median(runs[2]), runs[2]};
  double aa2 = c.original.median_ms > 0 ? c.control.median_ms / c.original.median_ms : 1.0;
  c.noise = std::max(std::abs(aa2 - 1.0), opts.confirm_noise);
  std::vector<double> both = runs[0];
  both.insert(both.end(), runs[1].begin(), runs[1].end());
  TimedModel orig2{original, median(both), both};
  c.first_speedup = orig.median_ms / best->median_ms;
  c.first_noise = first_band;
  c.speedup = orig2.median_ms / c.rewrite.median_ms;
  c.confirmed = slower_beyond(orig2, c.rewrite, c.noise, opts.min_noise_ms);
  if (c.confirmed) {
    r.within_noise = false;
    r.write_input = false;
    if (which == "cleaned")
      r.cleaned_fastest = true;
    else
      r.chosen = picked;
  }
  r.confirmation = std::move(c);
}

}  // namespace

int first_half_runs(int runs) {
  return runs < 5 ? runs : std::max(3, runs / 2);
}

namespace {

// Times `paths` (the original twice first) in two halves: after the first, only the original,
// its control and the models that gained more than cut_gain there run on, and the search's
// choice with them (the others are compared with it). A model cut keeps its first runs.
std::vector<TimedModel> time_racing(const TimeModels& time, const std::vector<std::string>& paths,
                                    const GuardOptions& opts) {
  GuardOptions first = opts;
  first.runs = first_half_runs(opts.runs);
  auto timed = [&](const std::vector<std::string>& ps, const GuardOptions& o) {
    auto runs = time(ps, o);
    if (runs.size() != ps.size())
      throw Error(
          fmt::format("latency guard: {} models timed, {} expected", runs.size(), ps.size()));
    for (size_t i = 0; i < ps.size(); ++i)
      if (runs[i].empty()) throw Error(fmt::format("latency guard: no time for {}", ps[i]));
    return runs;
  };
  auto runs = timed(paths, first);
  std::vector<TimedModel> out;
  for (size_t i = 0; i < paths.size(); ++i) out.push_back({paths[i], median(runs[i]), runs[i]});
  if (first.runs >= opts.runs || opts.cut_gain < 0) return out;
  std::vector<double> both = runs[0];
  both.insert(both.end(), runs[1].begin(), runs[1].end());
  double orig_ms = median(both);
  std::vector<size_t> on = {0, 1};
  double orig_fastest = std::min(fastest(out[0]), fastest(out[1]));
  // Gaining in the medians and in the fastest runs both, as a written model must.
  for (size_t i = 2; i < out.size(); ++i)
    if (orig_ms > out[i].median_ms * (1.0 + opts.cut_gain) &&
        orig_fastest > fastest(out[i]) * (1.0 + opts.cut_gain))
      on.push_back(i);
  if (on.size() == 2) return out;  // nothing gained: the first half decides alone
  if (on[2] != 2) on.insert(on.begin() + 2, 2);
  GuardOptions second = opts;
  second.runs = opts.runs - first.runs;
  std::vector<std::string> more;
  for (size_t i : on) more.push_back(paths[i]);
  auto rest = timed(more, second);
  for (TimedModel& t : out) t.cut = true;
  for (size_t k = 0; k < on.size(); ++k) {
    TimedModel& t = out[on[k]];
    t.cut = false;
    t.ms.insert(t.ms.end(), rest[k].begin(), rest[k].end());
    t.median_ms = median(t.ms);
  }
  return out;
}

}  // namespace

GuardResult guard_latency(const TimeModels& time, const std::string& original,
                          const std::vector<std::string>& candidates, const GuardOptions& opts,
                          const std::string& cleaned) {
  if (candidates.empty()) throw Error("latency guard: no candidate to time");
  if (opts.runs < 3) throw Error("latency guard: at least 3 timed runs are needed for a median");
  GuardResult r;
  r.runtime = fmt::format("the runtime, {} thread(s)", opts.threads);
  std::vector<std::string> paths = {original, original};
  paths.insert(paths.end(), candidates.begin(), candidates.end());
  if (!cleaned.empty()) paths.push_back(cleaned);
  std::vector<TimedModel> timed = time_racing(time, paths, opts);
  r.original = timed[0];
  r.control = timed[1];
  if (!cleaned.empty()) {
    r.cleaned = timed.back();
    timed.pop_back();
  }
  r.candidates.assign(timed.begin() + 2, timed.end());
  double aa = r.original.median_ms > 0 ? r.control.median_ms / r.original.median_ms : 1.0;
  r.noise = std::max(std::abs(aa - 1.0), opts.min_noise);
  // The original's best estimate is the median over both of its timings.
  std::vector<double> both = r.original.ms;
  both.insert(both.end(), r.control.ms.begin(), r.control.ms.end());
  TimedModel orig{original, median(both), both};

  // Slower beyond the band in the medians and in the fastest runs both: other processes only
  // ever add time, so a difference that the fastest runs do not show is theirs, not the
  // model's (under load the medians alone flipped the choice from one run to the next).
  auto slower = [&](const TimedModel& a, const TimedModel& b) {
    return slower_beyond(a, b, r.noise, opts.min_noise_ms);
  };
  r.chosen = 0;
  for (size_t i = 1; i < r.candidates.size(); ++i) {
    const TimedModel& c = r.candidates[i];
    if (!c.cut && slower(r.candidates[0], c) &&
        c.median_ms < r.candidates[static_cast<size_t>(r.chosen)].median_ms)
      r.chosen = static_cast<int>(i);
  }
  const int picked_index = r.chosen;
  const TimedModel& picked = r.candidates[static_cast<size_t>(r.chosen)];
  // The original as imported is a rewrite too, with the same burden of proof: it is written
  // when it beats the input beyond the band and no candidate beats it so; where neither it
  // nor a candidate beats the input, the input is written as given.
  bool picked_wins = slower(orig, picked);
  if (r.cleaned && !r.cleaned->cut && slower(orig, *r.cleaned) &&
      (!picked_wins || slower(picked, *r.cleaned))) {
    r.cleaned_fastest = true;
    r.chosen = -1;
  } else if (!picked_wins) {
    r.within_noise = !slower(picked, orig);
    r.chosen = -1;
    r.write_input = r.cleaned.has_value();
    confirm_small_gain(time, original, orig, aa, picked_index, opts, r);
  }
  r.original_ms = orig.median_ms;
  r.verdict = verdict(r, opts);
  return r;
}

namespace {

// The second runtime's timing of the original (twice) and the candidates of `order` that it
// loads; throws Error when it cannot load the original.
SecondRuntimeCheck time_in_openvino(Worker& worker, const std::string& original,
                                    const std::vector<std::string>& candidates,
                                    const std::vector<int>& order, const GuardOptions& opts) {
  SecondRuntimeCheck s;
  s.runtime = fmt::format("OpenVINO {}, {} thread(s)", worker.openvino_version(), opts.threads);
  std::vector<std::string> ids;
  auto unload_all = [&] {
    for (const std::string& id : ids) worker.call({{"op", "unload"}, {"id", id}});
  };
  auto load = [&](const std::string& id, const std::string& path) {
    worker.call({{"op", "load"},
                 {"runtime", "openvino"},
                 {"id", id},
                 {"path", path},
                 {"threads", opts.threads},
                 {"dim", opts.dim},
                 {"dims", opts.dims}});
    ids.push_back(id);
  };
  try {
    load("ov_original", original);
    load("ov_control", original);
  } catch (const Error&) {
    unload_all();
    throw;
  }
  for (int i : order) {
    try {
      load(fmt::format("ov_candidate{}", i), candidates[static_cast<size_t>(i)]);
      s.index.push_back(i);
    } catch (const Error& e) {
      s.refused.push_back(fmt::format("candidate {}: {}", i + 1, e.what()));
    }
  }
  nlohmann::json reply;
  try {
    reply =
        worker.call({{"op", "time"}, {"ids", ids}, {"runs", opts.runs}, {"warmup", opts.warmup}});
  } catch (const Error&) {
    unload_all();
    throw;
  }
  unload_all();
  auto timed = [&](const std::string& id, const std::string& path) {
    TimedModel t;
    t.path = path;
    t.ms = reply.at("ms").at(id).get<std::vector<double>>();
    t.median_ms = median(t.ms);
    return t;
  };
  s.original = timed(ids[0], original);
  s.control = timed(ids[1], original);
  for (size_t k = 0; k < s.index.size(); ++k)
    s.candidates.push_back(timed(ids[k + 2], candidates[static_cast<size_t>(s.index[k])]));
  double aa = s.original.median_ms > 0 ? s.control.median_ms / s.original.median_ms : 1.0;
  s.noise = std::max(std::abs(aa - 1.0), opts.min_noise);
  std::vector<double> both = s.original.ms;
  both.insert(both.end(), s.control.ms.begin(), s.control.ms.end());
  s.original_ms = median(both);
  return s;
}

}  // namespace

void guard_in_openvino(Worker& worker, const std::string& original,
                       const std::vector<std::string>& candidates, const GuardOptions& opts,
                       GuardResult& r) {
  if (r.chosen < 0 || worker.openvino_version().empty()) return;
  guard_in_second_runtime(
      [&](const std::vector<int>& order) {
        return time_in_openvino(worker, original, candidates, order, opts);
      },
      opts, r);
}

namespace {

// A candidate that passed the first timing in the second runtime, slower than the original
// beyond confirm_noise though inside the band: timed again in fresh sessions. Returns whether
// it is kept; says why in `s.retimed`.
bool passes_second_timing(const TimeSecondRuntime& time, int index, double first_ratio,
                          const GuardOptions& opts, SecondRuntimeCheck& s) {
  SecondRuntimeCheck again = time({index});
  std::string first =
      fmt::format("candidate {}: {:.3f}x (band {:.1f}%)", index + 1, first_ratio, 100 * s.noise);
  if (again.candidates.empty()) {
    s.retimed.push_back(first + ", then not loaded in fresh sessions: not kept");
    return false;
  }
  double aa =
      again.original.median_ms > 0 ? again.control.median_ms / again.original.median_ms : 1.0;
  double band = std::max(std::abs(aa - 1.0), opts.confirm_noise);
  TimedModel orig{again.original.path, again.original_ms, again.original.ms};
  orig.ms.insert(orig.ms.end(), again.control.ms.begin(), again.control.ms.end());
  const TimedModel& cand = again.candidates[0];
  bool slower = slower_beyond(cand, orig, band, opts.min_noise_ms);
  s.retimed.push_back(fmt::format("{}, then {:.3f}x in fresh sessions (band {:.1f}%): {}", first,
                                  again.original_ms / cand.median_ms, 100 * band,
                                  slower ? "slower, not kept" : "not slower, kept"));
  return !slower;
}

}  // namespace

void guard_in_second_runtime(const TimeSecondRuntime& time, const GuardOptions& opts,
                             GuardResult& r) {
  if (r.chosen < 0) return;
  // The picked candidate first, then the others ONNX Runtime also found faster than the
  // original beyond its band, fastest there first.
  TimedModel orig{"", r.original_ms, r.original.ms};
  orig.ms.insert(orig.ms.end(), r.control.ms.begin(), r.control.ms.end());
  std::vector<int> order = {r.chosen};
  std::vector<int> others;
  for (size_t i = 0; i < r.candidates.size(); ++i)
    if (static_cast<int>(i) != r.chosen && !r.candidates[i].cut &&
        slower_beyond(orig, r.candidates[i], r.noise, opts.min_noise_ms))
      others.push_back(static_cast<int>(i));
  std::sort(others.begin(), others.end(), [&](int a, int b) {
    return r.candidates[static_cast<size_t>(a)].median_ms <
           r.candidates[static_cast<size_t>(b)].median_ms;
  });
  order.insert(order.end(), others.begin(), others.end());
  SecondRuntimeCheck s;
  try {
    s = time(order);
  } catch (const Error& e) {
    r.verdict +=
        fmt::format("; not checked in OpenVINO, which cannot run the original ({})", e.what());
    return;
  }
  TimedModel sorig{s.original.path, s.original_ms, s.original.ms};
  sorig.ms.insert(sorig.ms.end(), s.control.ms.begin(), s.control.ms.end());
  auto ratio = [&](size_t k) { return s.original_ms / s.candidates[k].median_ms; };
  size_t kept = s.candidates.size();
  for (size_t k = 0; k < s.candidates.size() && kept == s.candidates.size(); ++k) {
    if (slower_beyond(s.candidates[k], sorig, s.noise, opts.min_noise_ms)) continue;
    bool retime = opts.confirm_noise > 0 &&
                  slower_beyond(s.candidates[k], sorig, opts.confirm_noise, opts.min_noise_ms);
    try {
      if (!retime || passes_second_timing(time, s.index[k], ratio(k), opts, s)) kept = k;
    } catch (const Error& e) {
      s.retimed.push_back(
          fmt::format("candidate {}: not timed again ({}): not kept", s.index[k] + 1, e.what()));
    }
  }
  int picked = r.chosen;
  std::string retimed = s.retimed.empty() ? "" : fmt::format(" ({})", fmt::join(s.retimed, "; "));
  if (kept < s.candidates.size()) {
    s.kept = s.index[kept];
    s.verdict =
        s.kept == picked
            ? fmt::format("in {}: {:.3f} ms -> {:.3f} ms ({:.3f}x; band {:.1f}%), not slower{}",
                          s.runtime, s.original_ms, s.candidates[kept].median_ms, ratio(kept),
                          100 * s.noise, retimed)
            : fmt::format(
                  "in {} candidate {} runs slower than the original{}, candidate {} does not "
                  "({:.3f}x): candidate {} is written",
                  s.runtime, picked + 1,
                  retimed.empty() ? fmt::format(" beyond the band ({:.1f}%)", 100 * s.noise)
                                  : retimed,
                  s.kept + 1, ratio(kept), s.kept + 1);
    r.chosen = s.kept;
  } else {
    s.verdict = fmt::format(
        "in {} every candidate ONNX Runtime ran faster runs slower than the original ({}"
        "band {:.1f}%{}){}: the input is written as given",
        s.runtime, retimed.empty() ? "beyond the " : "", 100 * s.noise,
        s.candidates.empty() ? "; OpenVINO loads none of them"
                             : fmt::format("; candidate {}: {:.3f}x", s.index[0] + 1, ratio(0)),
        retimed);
    r.chosen = -1;
    r.write_input = true;
  }
  r.verdict += "; " + s.verdict;
  r.second = std::move(s);
}

}  // namespace graphsub::ort
