#include "gen/enumerate/enumerator.h"

#include <algorithm>
#include <bit>

#include "gen/enumerate/partitions.h"

namespace graphsub::gen {

Enumerator::Enumerator(const Space& s, int min_emit_ops, const FingerprintSet* pieces,
                       bool prefix_variables)
    : s_(s),
      ev_(s.variants),
      p_(s.num_pool()),
      prefix_variables_(prefix_variables),
      join_(std::max(1, s.max_arity() - 1)),
      min_emit_ops_(min_emit_ops),
      pieces_(pieces),
      partner_max_ops_(static_cast<uint32_t>(s.max_ops)) {
  size_t n = p_ + 2 * kMaxOps;
  slots_.resize(n);
  readers_.assign(n, 0);
  for (size_t i = 0; i < p_; ++i) {
    Slot& sl = slots_[i];
    sl.type = ev_.types().intern(s.pool_types[i]);
    sl.weight_only = s.pool[i].role != Role::Data;
    sl.pool = true;
    sl.pool_weight = s.pool[i].role == Role::Weight;
    sl.hash = value_hash(ev_.types().hash(sl.type), s.pool_u32[i].data(),
                         static_cast<int64_t>(s.pool_u32[i].size()));
    sl.data = s.pool_u32[i].data();
    live_.push_back(static_cast<TensorId>(i));
  }
  uses_.assign(p_, 0);
  // The prefix rule keeps one renaming of each graph; with more pool tensors than a mask
  // holds it is left off (graphs are then also enumerated in their renamed forms).
  // The first operator comes from a planner without the rule; a graph of one operator is
  // kept whole.
  prefix_variables_ = prefix_variables_ && p_ <= 64 && s.max_ops > 1;
  class_pred_mask_.assign(p_, 0);
  for (size_t i = 0; i < p_ && prefix_variables_; ++i)
    for (size_t j = 0; j < i; ++j)
      if (s.pool[j].shape == s.pool[i].shape && s.pool[j].role == s.pool[i].role)
        class_pred_mask_[i] = uint64_t{1} << j;
  const size_t nv = s.variants.size();
  const_ok_.assign(nv * kMaxArity * nv, 0);
  for (size_t r = 0; r < nv; ++r)
    for (int slot = 0; slot < kMaxArity; ++slot)
      for (size_t c = 0; c < nv; ++c)
        const_ok_[(r * kMaxArity + static_cast<size_t>(slot)) * nv + c] =
            s.variants[c].may_be_read_by(s.variants[r], slot);
}

bool Enumerator::readable(TensorId t, uint16_t reader, int slot) const {
  const Slot& sl = slots_[t];
  if (sl.terminal || sl.redundant) return false;
  const size_t nv = s_.variants.size();
  if (sl.constant >= 0 && !const_ok_[(reader * kMaxArity + static_cast<size_t>(slot)) * nv +
                                     static_cast<size_t>(sl.constant)])
    return false;
  switch (s_.variants[reader].slots[static_cast<size_t>(slot)]) {
    case SlotRule::Any:
      return true;
    case SlotRule::Data:
      return !sl.weight_only;
    case SlotRule::Weight:
      return sl.weight_only;
    case SlotRule::PoolWeight:
      return sl.pool_weight;
  }
  return false;
}

namespace {
// An operator application's key in the canonical order: variant, then input ids (an empty
// slot is 0xFF, the largest), most significant first.
// The inputs `a` and `b` (kNoTensor: none), every later slot empty.
Inputs inputs_of(TensorId a, TensorId b = kNoTensor) {
  Inputs in = kNoInputs;
  in[0] = a;
  in[1] = b;
  return in;
}

uint64_t application_key(uint16_t v, const Inputs& in) {
  static_assert(16 + 8 * kMaxArity <= 64, "the key holds the variant and every input id");
  uint64_t key = v;
  for (TensorId t : in) key = key << 8 | t;
  return key;
}
}  // namespace

template <class Visit>
void Enumerator::for_each_application(Visit&& visit) {
  // How many components the next operator must join so that the graph can still become
  // connected. Each later operator joins at most join_ + 1 components into one, so
  // num_comps - join_ * (operators left after this one) must be joined now: 0 or fewer
  // (anything goes), 1 (it must read an operator output), or more (outputs of that many
  // different components, so it reads at least that many tensors).
  const int need = num_comps_[depth_] - join_ * (s_.max_ops - depth_ - 1);
  if (need > kMaxArity) return;
  const size_t first_op_tensor = p_;  // live_[p_..] are operator outputs, by producer
  const size_t n_live = live_.size();
  // Canonical order: the key of the new operator must exceed the keys of every operator
  // placed after the last one it reads. order[j] is one more than the largest key from
  // operator j on (0: none), so reading tensors whose last producer is k needs
  // order[k + 1] <= key. Most applications fail this or the other cheap tests below; they
  // are skipped here, before any table lookup.
  const auto& order = order_bound_[depth_];
  const auto& comp = comp_[depth_];
  auto producer = [&](TensorId t) { return static_cast<int>(slots_[t].producer); };
  // The first index of live_ produced after operator k (pool tensors count as operator -1).
  auto live_after = [&](int k) { return k + 1 < depth_ ? live_start_[k + 1] : n_live; };
  // Pool tensors as a prefix of their class, for the last operator (prefix_variables).
  const bool prefix = prefix_variables_ && depth_ + 1 == s_.max_ops;
  uint64_t preds_used = 0;  // class predecessors of the pool tensors read so far
  if (prefix)
    for (uint64_t m = used_pool_; m; m &= m - 1)
      preds_used |= class_pred_mask_[static_cast<size_t>(std::countr_zero(m))];
  auto pool_bit = [&](TensorId t) { return t < p_ ? uint64_t{1} << t : 0; };
  auto pool_pred = [&](TensorId t) { return t < p_ ? class_pred_mask_[t] : 0; };
  auto prefix_ok = [&](const Inputs& in) {
    if (!prefix) return true;
    uint64_t used = used_pool_, preds = preds_used;
    for (TensorId t : in) {
      used |= pool_bit(t);
      preds |= pool_pred(t);
    }
    return (preds & ~used) == 0;
  };

  const size_t nv = s_.variants.size();
  for (size_t v = 0; v < nv; ++v) {
    const GenOp& op = s_.variants[v];
    auto vid = static_cast<uint16_t>(v);
    if (op.alias_of >= 0) continue;
    if (op.arity == 0) {
      if (need <= 0 && order[0] <= application_key(vid, kNoInputs) && prefix_ok(kNoInputs))
        visit(vid, kNoInputs);
    } else if (op.arity == 1) {
      if (need > 1) continue;
      for (size_t i = need > 0 ? first_op_tensor : 0; i < n_live; ++i) {
        const Inputs in = inputs_of(live_[i]);
        if (order[producer(in[0]) + 1] > application_key(vid, in)) continue;
        if (readable(in[0], vid, 0) && prefix_ok(in)) visit(vid, in);
      }
    } else if (op.arity == 2) {
      if (need > 2) continue;
      for (size_t i = need > 1 ? first_op_tensor : 0; i < n_live; ++i) {
        TensorId a = live_[i];
        if (!readable(a, vid, 0)) continue;
        const int pa = producer(a);
        size_t j0 = op.commutative ? i + 1 : 0;
        // With a pool tensor first, the second operand must be an operator output; to join
        // two components, both must be.
        if (need > 1 || (need > 0 && i < first_op_tensor)) j0 = std::max(j0, first_op_tensor);
        // Second operands produced no later than `a` share its order bound: when even the
        // largest key of this variant and `a` is below it, only later ones can follow.
        if (order[pa + 1] > application_key(vid, inputs_of(a))) j0 = std::max(j0, live_after(pa));
        for (size_t j = j0; j < n_live; ++j) {
          const Inputs in = inputs_of(a, live_[j]);
          const int pb = producer(in[1]);
          if (order[std::max(pa, pb) + 1] > application_key(vid, in)) continue;
          if (need > 1 && comp[pa] == comp[pb]) continue;
          if (in[1] == a || !readable(in[1], vid, 1) || !prefix_ok(in)) continue;
          visit(vid, in);
        }
      }
    } else {
      // Three or four distinct tensors; few variants read that many, so only the cheap tests
      // prune: each input readable in its slot and new, then the order, the components and
      // the prefix of pool tensors on the whole application.
      Inputs in = kNoInputs;
      auto choose = [&](auto& self, int slot, int last) -> void {
        if (slot == op.arity) {
          if (order[last + 1] > application_key(vid, in)) return;
          if (need > 0 && components_read(in) < need) return;
          if (prefix_ok(in)) visit(vid, in);
          return;
        }
        for (size_t i = 0; i < n_live; ++i) {
          TensorId t = live_[i];
          if (std::find(in.begin(), in.begin() + slot, t) != in.begin() + slot) continue;
          if (!readable(t, vid, slot)) continue;
          in[static_cast<size_t>(slot)] = t;
          self(self, slot + 1, std::max(last, producer(t)));
        }
        in[static_cast<size_t>(slot)] = kNoTensor;
      };
      choose(choose, 0, -1);
    }
  }
}

int Enumerator::components_read(const Inputs& in) const {
  const auto& comp = comp_[depth_];
  int8_t seen[kMaxArity];
  int n = 0;
  for (TensorId t : in) {
    if (t == kNoTensor) continue;
    int pr = slots_[t].producer;
    if (pr < 0) continue;
    int8_t c = comp[pr];
    if (std::find(seen, seen + n, c) == seen + n) seen[n++] = c;
  }
  return n;
}

// Checks on the last operator that need no values: outputs not all computed from weights.
// (The order of operators, joining components and the prefix of pool tensors are checked by
// for_each_application, which proposes every operator pushed after the first.)
bool Enumerator::leaf_admissible(const GenOp& op, const Inputs& ins) const {
  bool out_weights = true;
  for (int i = 0; i < op.arity; ++i) out_weights = out_weights && slots_[ins[i]].weight_only;
  for (size_t i = p_; out_weights && i < live_.size(); ++i) {
    TensorId t = live_[i];
    if (!readers_[t] && std::find(ins.begin(), ins.end(), t) == ins.end())
      out_weights = slots_[t].weight_only;
  }
  return !out_weights;
}

bool Enumerator::push(uint16_t v, const Inputs& ins) {
  const GenOp& op = s_.variants[v];
  // The canonical order was checked by for_each_application (the first operator has none).
  const uint64_t key = application_key(v, ins);

  // Components of the operator graph: the new operator joins those of the operators it reads.
  // Each later operator can join at most join_ + 1 components into one, so a graph that
  // cannot become connected within max_ops is dropped here, before its kernel runs.
  auto comp = comp_[depth_];
  int merged = 0;
  int8_t joined[kMaxArity];
  std::fill(joined, joined + kMaxArity, int8_t{-1});
  for (int i = 0; i < op.arity; ++i) {
    int pr = slots_[ins[i]].producer;
    if (pr < 0) continue;
    int8_t c = comp[pr];
    if (std::find(joined, joined + merged, c) != joined + merged) continue;
    joined[merged++] = c;
  }
  int comps = num_comps_[depth_] + 1 - merged;
  if (comps - 1 > join_ * (s_.max_ops - (depth_ + 1))) return false;
  bool leaf = depth_ + 1 == s_.max_ops;
  if (leaf && !leaf_admissible(op, ins)) return false;

  TypeId in_types[kMaxArity];
  const uint32_t* in_data[kMaxArity];
  for (int i = 0; i < op.arity; ++i) {
    in_types[i] = slots_[ins[i]].type;
    in_data[i] = slots_[ins[i]].data;
  }
  const Applied& ap =
      ev_.apply(v, std::span<const TypeId>(in_types, static_cast<size_t>(op.arity)));
  if (!ap.ok) return false;

  auto& bufs = arena_[depth_];
  uint32_t* out_ptrs[kMaxOutputs] = {nullptr, nullptr};
  std::array<uint64_t, kMaxOutputs> hashes{};
  // The last operator is only hashed: repeats come from the memo.
  std::array<uint64_t, kMaxArity> in_hashes{};
  for (int i = 0; i < op.arity; ++i) in_hashes[i] = slots_[ins[i]].hash;
  if (!leaf || !memo_.find(v, in_hashes, hashes)) {
    for (int o = 0; o < ap.num_out; ++o) {
      bufs[o].resize(static_cast<size_t>(ev_.types().numel(ap.out[o])));
      out_ptrs[o] = bufs[o].data();
    }
    ev_.run<uint32_t>(v, ap,
                      std::span<const uint32_t* const>(in_data, static_cast<size_t>(op.arity)),
                      std::span<uint32_t* const>(out_ptrs, static_cast<size_t>(ap.num_out)));
    ++stats_.kernel_runs;
    for (int o = 0; o < ap.num_out; ++o)
      hashes[o] =
          value_hash(ev_.types().hash(ap.out[o]), out_ptrs[o], ev_.types().numel(ap.out[o]));
    if (leaf) memo_.store(v, in_hashes, hashes);
  }

  auto cone = static_cast<uint8_t>(1u << depth_);
  for (int i = 0; i < op.arity; ++i) cone |= slots_[ins[i]].cone;
  const auto cone_ops = static_cast<uint32_t>(std::popcount(cone));
  // Representatives looked up below: their slots start loading now (a large table).
  const bool rep_lookup = reps_ && (!leaf || cone_ops < static_cast<uint32_t>(depth_ + 1));
  if (rep_lookup)
    for (int o = 0; o < ap.num_out; ++o) reps_->prefetch(hashes[o]);

  // Values must be new: equal to an earlier operator's output is computing it twice; equal to
  // a pool tensor makes the output terminal.
  bool terminal[kMaxOutputs] = {false, false};
  for (int o = 0; o < ap.num_out; ++o) {
    for (TensorId t : live_) {
      if (slots_[t].hash != hashes[o]) continue;
      if (!slots_[t].pool) return false;
      terminal[o] = true;
    }
    for (int q = 0; q < o; ++q)
      if (hashes[q] == hashes[o]) return false;
  }

  bool weight_only = true;
  for (int i = 0; i < op.arity; ++i) weight_only = weight_only && slots_[ins[i]].weight_only;
  uint64_t terms[kMaxOutputs] = {0, 0};
  bool redundant[kMaxOutputs] = {false, false};
  for (int o = 0; o < ap.num_out && (collect_ || reps_); ++o) {
    uint64_t k = (uint64_t{v} << 8 | static_cast<uint64_t>(o)) * 0x9e3779b97f4a7c15ull;
    std::array<uint64_t, kMaxArity> in_hash = in_hashes;
    if (op.commutative && in_hash[0] > in_hash[1]) std::swap(in_hash[0], in_hash[1]);
    for (int i = 0; i < op.arity; ++i) k = (k ^ in_hash[i]) * 0xff51afd7ed558ccdull + 1;
    terms[o] = k ^ (k >> 29);
    if (terminal[o]) continue;
    const ValueRep here{cone_ops, terms[o]};
    if (collect_ && cone_ops <= collect_max_ops_) keep_smaller_rep(*collect_, hashes[o], here);
    // Values of the last operator are never read; they are looked up only where they must be
    // representatives too: outputs that are not computed from the whole graph (emit).
    if (rep_lookup) {
      const ValueRep* r = reps_->find(hashes[o]);
      redundant[o] = r && (r->ops != here.ops || r->term != here.term);
      stats_.redundant += redundant[o];
    }
  }
  for (int o = 0; o < ap.num_out; ++o) {
    TensorId t = op_output_id(p_, depth_, o);
    Slot& sl = slots_[t];
    sl.redundant = redundant[o];
    sl.cone = cone;
    sl.term = terms[o];
    sl.type = ap.out[o];
    sl.weight_only = weight_only;
    sl.pool = sl.pool_weight = false;
    sl.terminal = terminal[o];
    sl.producer = static_cast<int8_t>(depth_);
    sl.constant = op.arity == 0 ? static_cast<int32_t>(v) : -1;
    sl.hash = hashes[o];
    sl.data = out_ptrs[o];
    readers_[t] = 0;
  }
  for (int i = 0; i < op.arity; ++i) {
    ++readers_[ins[i]];
    if (ins[i] < p_ && uses_[ins[i]]++ == 0 && prefix_variables_)
      used_pool_ |= uint64_t{1} << ins[i];
  }
  for (int k = 0; k < depth_; ++k)
    if (std::find(joined, joined + merged, comp[k]) != joined + merged)
      comp[k] = static_cast<int8_t>(depth_);
  comp[depth_] = static_cast<int8_t>(depth_);
  comp_[depth_ + 1] = comp;
  num_comps_[depth_ + 1] = comps;

  ops_[depth_] = GraphOp{v, ins};
  auto& order = order_bound_[depth_ + 1];
  for (int k = 0; k <= depth_; ++k) order[k] = std::max(order_bound_[depth_][k], key + 1);
  order[depth_ + 1] = 0;
  live_start_[depth_] = live_.size();
  ++depth_;
  for (int o = 0; o < ap.num_out; ++o) live_.push_back(op_output_id(p_, depth_ - 1, o));
  ++stats_.states;
  return true;
}

void Enumerator::pop() {
  --depth_;
  const GenOp& op = s_.variants[ops_[depth_].variant];
  for (int i = 0; i < op.arity; ++i) {
    TensorId t = ops_[depth_].in[static_cast<size_t>(i)];
    --readers_[t];
    if (t < p_ && --uses_[t] == 0 && prefix_variables_) used_pool_ &= ~(uint64_t{1} << t);
  }
  live_.resize(live_.size() - static_cast<size_t>(op.num_outputs));
}

void Enumerator::emit() {
  if (num_comps_[depth_] != 1 || depth_ < min_emit_ops_) return;
  uint64_t hashes[2 * kMaxOps];
  size_t n = 0;
  int terminals = 0;
  bool weights_only = true;
  for (size_t i = p_; i < live_.size(); ++i) {
    TensorId t = live_[i];
    if (readers_[t]) continue;
    hashes[n++] = slots_[t].hash;
    terminals += slots_[t].terminal;
    weights_only = weights_only && slots_[t].weight_only;
  }
  if (terminals != 0 && terminals != static_cast<int>(n)) return;
  // With several outputs, one computed from part of the graph must be its representative:
  // with another computation of its value the graph is a smaller rule's instance in context.
  if (reps_ && n >= 2)
    for (size_t i = p_; i < live_.size(); ++i) {
      const Slot& sl = slots_[live_[i]];
      if (!readers_[live_[i]] && sl.redundant && std::popcount(sl.cone) < depth_) {
        ++stats_.unrepresentative;
        return;
      }
    }
  // Computations on weights alone are done once before run time (weight pre-computation):
  // rules among them never change a model's cost.
  if (weights_only) return;
  GraphRecord r;
  r.fp = combine_output_hashes(std::span<const uint64_t>(hashes, n));
  r.g.num_ops = static_cast<uint8_t>(depth_);
  r.g.terminal = terminals != 0;
  std::copy_n(ops_.begin(), depth_, r.g.ops.begin());
  out_->add(r);
  ++stats_.graphs;
  if (pieces_ && n >= 2) {
    for (const auto& part : output_partitions(n)) {
      uint64_t block[2 * kMaxOps];
      bool all_known = true;
      uint32_t piece_ops = 0;  // of the smallest piece of each block
      for (uint8_t b = 0; all_known && b <= *std::max_element(part.begin(), part.end()); ++b) {
        size_t m = 0;
        for (size_t i = 0; i < n; ++i)
          if (part[i] == b) block[m++] = hashes[i];
        const uint32_t* ops =
            pieces_->find(combine_output_hashes(std::span<const uint64_t>(block, m)));
        all_known = ops != nullptr;
        if (ops) piece_ops += *ops;
      }
      // A partner of more than max_ops operators is never formed (split_partner).
      if (!all_known || piece_ops > partner_max_ops_) continue;
      SplitRequest q;
      q.g = r.g;
      std::copy(part.begin(), part.end(), q.blocks.begin());
      out_->add_request(q);
      ++stats_.requests;
    }
  }
}

void keep_smaller_rep(ValueReps& reps, uint64_t hash, const ValueRep& r) {
  ValueRep* have = reps.find(hash);
  if (!have)
    reps.insert(hash, r);
  else if (r < *have)
    *have = r;
}

void merge_reps(ValueReps& into, const ValueReps& from) {
  from.for_each([&](uint64_t hash, const ValueRep& r) { keep_smaller_rep(into, hash, r); });
}

void Enumerator::expand() {
  for_each_application([&](uint16_t v, const Inputs& in) {
    if (!push(v, in)) return;
    emit();
    if (depth_ < s_.max_ops) expand();
    pop();
  });
}

std::vector<RootTask> Enumerator::root_tasks() {
  std::vector<RootTask> tasks;
  num_comps_[0] = 0;
  for_each_application([&](uint16_t v, const Inputs& in) {
    if (!push(v, in)) return;
    tasks.push_back(RootTask{v, in});
    pop();
  });
  return tasks;
}

void Enumerator::run_task(const RootTask& task, GraphSink& out) {
  out_ = &out;
  num_comps_[0] = 0;
  if (!push(task.variant, task.in)) return;
  emit();
  if (depth_ < s_.max_ops) expand();
  pop();
  out_ = nullptr;
}

}  // namespace graphsub::gen
