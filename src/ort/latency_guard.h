#pragma once
// The end-to-end guard: before a model is written, the original and the candidate graphs are
// timed end to end in the runtime that will run them (alternated run by run in rotated and
// reversed orders, medians), with the original timed twice as a noise control. The burden of
// proof is on the rewrite: a candidate is written only when it is measured faster than the
// original beyond that noise; within the noise, or slower, the original is written.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ort/ort_worker.h"

namespace graphsub::ort {

struct GuardOptions {
  int runs = 15;    // timed runs of each model (alternated; medians)
  int warmup = 2;   // untimed runs of each model first
  int threads = 1;  // intra-op threads; 1 by default: with more, this 2-core machine swings 25%
  int64_t dim = 1;  // value of symbolic input dimensions not named in `dims`
  std::map<std::string, int64_t> dims;  // values of symbolic input dimensions, by name
  // The noise band is never taken below this: on these shared 2-core machines ONNX Runtime's
  // A/A ratios over 20 runs spread from 0.97x to 1.06x, so a smaller difference is not a
  // measured one.
  double min_noise = 0.05;
  // ... nor below this absolute difference: one run goes through Node.js and the runtime's
  // entry, whose jitter is tens of microseconds, so a model of a few microseconds cannot be
  // told apart from another one by its time.
  double min_noise_ms = 0.05;
  // A rewrite measured faster than this, but inside the band above, is timed a second time
  // with fresh sessions (the original twice again), and written only when that timing shows
  // it faster beyond this band too. Most of the A/A spread is a session's own luck (where its
  // buffers landed), not the runs: over 86 models of the peer sweep the median |A/A - 1| was
  // 0.75%, with a tail of 6-9% in 4 of them. Two independent draws both 2% in a rewrite's
  // favour by chance are rare, and a real slowdown cannot pass both; so gains of 2-5%
  // (ConvNeXt's cleaned file, 1.04-1.09x) are written, and googlenet's 0.96x still is not.
  // 0 or at least min_noise: no second timing.
  double confirm_noise = 0.02;
  // Racing: the runs are timed in two halves. A candidate or the cleaned original that after
  // the first half is not faster than the original by more than this (in the medians and in
  // the fastest runs) cannot be
  // written (that takes a gain beyond the band, or beyond confirm_noise twice), so it is not
  // timed in the second half; where none is left, the second half is not run at all. Most
  // searches find nothing ONNX Runtime runs faster, and this halves their guard's time
  // (VGG-19, 548 MB, 155 ms a run: 13.6 s before, 7.6 s). Negative: every model runs every run.
  double cut_gain = 0.01;
};

// The runs of the first half when `runs` are timed in two (racing): at least 3, for a median;
// all of them (no second half) below 5.
int first_half_runs(int runs);

struct TimedModel {
  std::string path;
  double median_ms = 0;
  std::vector<double> ms;
  double predicted_ms = 0;  // the cost model's price, when the caller gives it (0: none)
  // Timed in the first half of the runs only: it showed no gain there (cut_gain) while
  // another model did, and it is not a contender.
  bool cut = false;
};

// The second timing of a rewrite whose first gain was inside the band (confirm_noise).
struct GuardConfirmation {
  std::string challenger;        // "cleaned", or "candidate N" (1-based)
  TimedModel original, control;  // the original, timed twice again in fresh sessions
  TimedModel rewrite;            // the rewrite, in a fresh session
  double first_speedup = 0;      // the rewrite's gain in the first timing (medians)
  double first_noise = 0;        // max(|A'/A - 1| of the first timing, confirm_noise)
  double speedup = 0;            // its gain in this one (original's median over both)
  double noise = 0;              // max(|A'/A - 1| of this timing, confirm_noise)
  bool confirmed = false;        // faster beyond `noise` here too: written
};

// The rewrite the guard picked, timed again in the second runtime users deploy ONNX on:
// OpenVINO's CPU runtime, through the worker where it can (openvino_version()). A file tuned
// for ONNX Runtime must not run slower there: each candidate ONNX Runtime found faster than
// the original beyond its band, fastest there first, is timed against the original (twice,
// A and A') in one alternated run, and the first one not slower than the original beyond the
// band (max(|A'/A - 1|, min_noise), as in ONNX Runtime) is kept; where none is, the original.
struct SecondRuntimeCheck {
  std::string runtime;           // "OpenVINO 2026.4.1, 1 thread(s)"
  TimedModel original, control;  // the original, timed twice
  std::vector<int> index;        // the candidates timed (indices into GuardResult::candidates)
  std::vector<TimedModel> candidates;
  std::vector<std::string> refused;  // "candidate 2: OpenVINO cannot load ..." (not timed)
  double original_ms = 0, noise = 0;
  int kept = -1;  // the candidate kept (index into GuardResult::candidates); -1: none
  // Candidates slower than the original beyond confirm_noise but inside the band, timed a
  // second time in fresh sessions (the original twice again): "candidate 1: 0.968x (band
  // 5.0%), then 0.962x in fresh sessions (band 2.0%): slower, not kept".
  std::vector<std::string> retimed;
  std::string verdict;
};

struct GuardResult {
  std::string runtime;           // "ONNX Runtime 1.30.0, 1 thread(s)"
  TimedModel original, control;  // the original, timed twice (A and A')
  std::vector<TimedModel> candidates;
  double original_ms = 0;  // the original's median over both of its timings
  double noise = 0;        // max(|A'/A - 1|, min_noise)
  int chosen = 0;          // index into candidates; -1: write the original back
  // The original is written because the candidate's time was within the noise band (not
  // measured slower): on another machine, or under other load, the verdict may differ.
  bool within_noise = false;
  // The original as imported (cleaned: Identity removed, shape computations folded), timed
  // beside the input file when given. Cleaning is a rewrite too, with the same burden of
  // proof: on BERT it lets ONNX Runtime fuse SkipLayerNormalization, whose CPU kernel made
  // the cleaned file 0.93-0.97x of the input at sequence 64, inside the band once.
  std::optional<TimedModel> cleaned;
  bool write_input = false;      // chosen < 0, nothing beat the input: the input as given
  bool cleaned_fastest = false;  // chosen < 0: the cleaned original beat the input and all
  std::optional<GuardConfirmation> confirmation;  // where a second timing was run
  std::optional<SecondRuntimeCheck> second;       // where a rewrite was timed in OpenVINO
  std::string verdict;                            // one line: what is written and why
  double speedup() const;                         // original / written, medians
};

// Times the models at `paths` alternated run by run: runs[i] are the times (ms) of paths[i].
// The same path may be given twice (the original's noise control).
using TimeModels = std::function<std::vector<std::vector<double>>(
    const std::vector<std::string>& paths, const GuardOptions& opts)>;

// Times `original` against `candidates` (in the order the search ranked them, the cheapest
// predicted first) and picks what to write:
//  - the first candidate (the search's choice), unless
//  - other candidates are faster than it beyond the noise band (in the medians and in the
//    fastest runs both): then the fastest of those by median; and
//  - the original unless what was picked is faster than the original beyond the noise band
//    (in the medians and the fastest runs both): a rewrite within the band is not written,
//    since a real slowdown of a few percent can hide there (googlenet's merged convolutions,
//    0.96x, were once written as "within noise").
// Among candidates the search's choice stands within the band, so the same input and flags
// write the same file unless the runtime clearly disagrees with the cost model.
// `cleaned` (optional, "" for none): the original as imported, a rewrite like the others:
// written (chosen -1, cleaned_fastest) when faster than `original` beyond the band and not
// slower than the picked candidate beyond it; when neither it nor a candidate is faster than
// `original`, write_input: the input file as given. Without it, chosen -1 is the original.
// Where nothing beat the original beyond the band, the faster of the picked candidate and the
// cleaned original, if faster beyond confirm_noise, is timed again against the original in
// fresh sessions, and written when it is faster beyond confirm_noise there too
// (`confirmation`).
GuardResult guard_latency(const TimeModels& time, const std::string& original,
                          const std::vector<std::string>& candidates, const GuardOptions& opts,
                          const std::string& cleaned = "");
// The same in ONNX Runtime, through the worker.
GuardResult guard_latency(Worker& worker, const std::string& original,
                          const std::vector<std::string>& candidates, const GuardOptions& opts,
                          const std::string& cleaned = "");

// After guard_latency picked a candidate (r.chosen >= 0) and where the worker runs OpenVINO:
// the SecondRuntimeCheck above, which sets r.second and, where the picked candidate is slower
// there beyond the band, r.chosen to the candidate kept, or to -1 with write_input (none
// kept: the input as given). The verdict says which. A candidate OpenVINO cannot load is not
// kept; where it cannot load the original, nothing is checked and the verdict says so.
void guard_in_openvino(Worker& worker, const std::string& original,
                       const std::vector<std::string>& candidates, const GuardOptions& opts,
                       GuardResult& r);

// Times the original (twice) and the candidates of `order` (indices into
// GuardResult::candidates) in the second runtime, in fresh sessions; throws Error when it
// cannot run the original.
using TimeSecondRuntime = std::function<SecondRuntimeCheck(const std::vector<int>& order)>;
// guard_in_openvino's decision over any such timing. The burden of proof is as in the first
// runtime: a candidate measured slower than the original beyond confirm_noise, though inside
// the band (where a real 3-4% slowdown hides), is timed again in fresh sessions and kept
// only when that timing does not show it slower beyond confirm_noise either.
void guard_in_second_runtime(const TimeSecondRuntime& time, const GuardOptions& opts,
                             GuardResult& r);

}  // namespace graphsub::ort
