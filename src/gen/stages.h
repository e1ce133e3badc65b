#pragma once
// The stages of the generator's pipeline (run_generator), one function each, in the order they
// run. Each lives in its stage's folder (src/gen/<stage>/<stage>_stage.cpp), fills its part of
// the GeneratorResult and logs its counts; the work itself is in that folder's other files.
#include <vector>

#include "gen/classify/classify.h"
#include "gen/cluster.h"
#include "gen/enumerate/enumerate.h"
#include "gen/generator.h"
#include "gen/prove/prove_classes.h"
#include "gen/prove/pruner.h"
#include "gen/prove/rule_class.h"
#include "gen/space/space.h"
#include "gen/stage_log.h"

namespace graphsub::gen {

// The search space of the options: operator variants (all generator operators when none are
// named), the pool (the default one when empty), the operator limit and the seeded values.
Space search_space(const GeneratorOptions& opts, GeneratorResult& res);

// Every graph of up to max_ops operators, and the ones that share a fingerprint.
EnumerationResult enumerate_stage(const Space& space, const GeneratorOptions& opts,
                                  GeneratorResult& res, StageLog& log, Reporter& rep);

// The counts and lines of an enumeration (of one process or of every shard).
void record_enumeration(const Space& space, const EnumStats& stats, uint64_t requests,
                        uint64_t spilled_bytes, GeneratorResult& res, StageLog& log, Reporter& rep,
                        double seconds);

// Buckets, candidate pairs, the float re-test and the classes up to renaming; frees the
// enumeration as soon as it is classified.
Classified classify_stage(const Space& space, EnumerationResult en, const GeneratorOptions& opts,
                          GeneratorResult& res, StageLog& log, Reporter& rep);

ClassifyOptions classify_options(const GeneratorOptions& opts);
// `classes_total`: the classes of every rank (0: those of `cl`).
void record_classified(const Classified& cl, const GeneratorOptions& opts, GeneratorResult& res,
                       StageLog& log, Reporter& rep, Clock::time_point t0,
                       uint64_t classes_total = 0);

// Enumeration and classification of a run kept in opts.run_dir, on the ranks of `cluster`:
// each rank enumerates its root tasks and classifies its fingerprint ranges, reading every
// rank's graphs of those ranges from the run directory; the shares found there from an
// earlier run are not run again. Every rank returns the classes it proves (rule_owner) and
// every rank's counts.
Classified sharded_classify_stage(const Space& space, const GeneratorOptions& opts,
                                  Cluster& cluster, GeneratorResult& res, StageLog& log,
                                  Reporter& rep);

// Verdicts on every class of this rank (lifted rules first, then the classes smallest first),
// with the prover's times; the counts returned are every rank's.
ProofCounts prove_stage(std::vector<RuleClass>& classes, const GeneratorOptions& opts, Pruner& pr,
                        GeneratorResult& res, StageLog& log, Reporter& rep);

// The classes not proved, of every rank, sorted by key, with their reasons (a class not tried
// names the failed form that settled it): GeneratorResult::unproved. Frees `classes` first.
void unproved_stage(std::vector<RuleClass> classes, Cluster& cluster, GeneratorResult& res);

// The library: one most general form per class (renaming), per family (parameter lifting),
// and the valid rules no more general one covers (common-subgraph pruning).
void prune_stage(const std::vector<RuleClass>& classes, const ProofCounts& counts, Pruner& pr,
                 GeneratorResult& res, StageLog& log);

// The library's rules that use one of opts.with_ops (all of them when none are named).
void select_stage(const GeneratorOptions& opts, GeneratorResult& res, StageLog& log);

}  // namespace graphsub::gen
