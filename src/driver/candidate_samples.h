#pragma once
// Candidate graphs at several costs, written out so that the cost model's predictions can be
// compared with end-to-end times in the target runtime (bench/ort_sweep.py --correlation): the
// original, the graphs along the search's path to its result, the search's finalists, and
// seeded random rewrites of the original (which may cost more than it). A debugging aid of
// `graphsub optimize --dump-candidates DIR`.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "onnx/onnx_model.h"
#include "opt/cost/cost_model.h"
#include "opt/search/optimize.h"

namespace graphsub::driver {

// A graph reached from `g` by up to `steps` random rewrites (every acyclic candidate of every
// transform equally likely at each step); the same for the same generator state.
Graph random_rewrite(const Graph& g, const std::vector<const opt::Transform*>& transforms,
                     int steps, std::mt19937_64& rng);

// Writes DIR/candidate-NN.onnx for each distinct sampled graph (weights pre-computed as in a
// written model) and DIR/candidates.json: [{file, kind, predicted_ms}], kind being original,
// path, finalist or random. `random_samples` random rewrites of 1 to 6 steps, seeded by `seed`.
// Returns the number of files written.
size_t dump_candidates(const std::string& dir, const ImportedModel& m, const opt::OptimizeResult& r,
                       const opt::RuleLibrary& lib, opt::CostModel& cost, int random_samples,
                       uint64_t seed, const ExportOptions& eo);

}  // namespace graphsub::driver
