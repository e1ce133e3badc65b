// The search space is fixed before anything runs, so that every later stage (and the library
// header) sees the same variants, pool and seed.
#include "gen/stages.h"

namespace graphsub::gen {

Space search_space(const GeneratorOptions& opts, GeneratorResult& res) {
  std::vector<PoolTensor> pool = opts.pool.empty() ? default_pool() : opts.pool;
  std::vector<std::string> ops = opts.ops.empty() ? all_generator_ops() : opts.ops;
  Space space = make_space(make_variants(ops, opts.domains, pool), pool, opts.max_ops, opts.seed);
  space.minimal_reads =
      opts.minimal_reads_from_ops > 0 && opts.max_ops >= opts.minimal_reads_from_ops;
  res.minimal_reads = space.minimal_reads;
  for (auto& v : space.variants)
    res.variants.push_back(v.label() + (v.commutative ? " (commutative)" : ""));
  return space;
}

}  // namespace graphsub::gen
