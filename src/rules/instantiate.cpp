#include "rules/instantiate.h"

#include <fmt/format.h>

#include <optional>

#include "core/error.h"
#include "rules/axiom_ops.h"

namespace graphsub::rules {
namespace {

std::vector<AxiomParam> param_values(const TermPtr& t, const AxiomOp& op,
                                     const std::map<std::string, AxiomParam>& bound) {
  std::vector<AxiomParam> out;
  for (size_t i = 0; i < op.num_params(); ++i) {
    const Term& p = *t->args[i];
    if (p.kind == Term::Kind::Var) {
      auto it = bound.find(p.name);
      if (it == bound.end())
        throw Error(fmt::format("{}: parameter ?{} is not bound", term_str(t), p.name));
      out.push_back(it->second);
    } else {
      out.push_back(param_value(p));
    }
  }
  return out;
}

std::string types_str(std::span<const TensorType> ts) {
  std::vector<std::string> s;
  for (auto& t : ts) s.push_back(t.str());
  return fmt::format("{}", fmt::join(s, ", "));
}

// The attributes of a constant operand, sized from the operator it enters and its sibling
// operands (nullopt for siblings that are constants themselves).
Attrs size_constant(const TermPtr& ct, const AxiomOp& c, std::span<const AxiomParam> params,
                    const AxiomOp* parent, size_t pos,
                    std::span<const std::optional<TensorType>> siblings) {
  Attrs a;
  if (c.op->params_to_attrs && !params.empty()) a = c.op->params_to_attrs(params, {});
  auto square_kernel = [&] {
    if (!a.has("kernel")) {
      if (params.size() != 1 || !std::holds_alternative<int64_t>(params[0]))
        throw Error(fmt::format("{}: expected one integer kernel size", term_str(ct)));
      int64_t k = std::get<int64_t>(params[0]);
      a.set("kernel", std::vector<int64_t>{k, k});
    }
  };
  auto other = [&]() -> const TensorType* {
    for (size_t i = 0; i < siblings.size(); ++i)
      if (i != pos && siblings[i]) return &*siblings[i];
    return nullptr;
  };
  const std::string& n = c.op->name;
  const std::string parent_name = parent ? parent->name : "";
  const TensorType* o = other();
  auto fail = [&](const char* what) -> Attrs {
    throw Error(fmt::format("cannot size the constant {}: it must be {}", term_str(ct), what));
  };
  if (n == "const_pool" || n == "const_iconv") {
    if (parent_name != "conv" || pos != 1 || !o || o->rank() != 4)
      return fail("the weight of a conv on a 4-d input");
    square_kernel();
    a.set("channels", o->shape[1]);
    return a;
  }
  if (n == "const_imatmul") {
    if (parent_name != "matmul" || !o || o->rank() < 2)
      return fail("an operand of a matmul whose other operand is a matrix");
    a.set("n", pos == 1 ? o->shape.back() : o->shape[o->shape.size() - 2]);
    return a;
  }
  if (n == "const_iewmul") {
    if (!parent || !parent->op->elementwise || !o)
      return fail("an operand of an element-wise operator beside a tensor");
    a.set("shape", o->shape);
    return a;
  }
  return fail("used where its size is known");
}

// A term denotes an IR node only where the node lies inside the language, i.e. where the
// operator maps it back to parameters (e.g. transpose is 2-d). Matmul operands must also have
// equal ranks: with a broadcast right operand, axis numbers in rules such as
// concat(1, matmul(x,y), matmul(x,z)) = matmul(x, concat(1,y,z)) would name different axes.
void check_in_language(const AxiomOp& op, const Attrs& attrs, std::span<const TensorType> in) {
  if (op.op->name == "matmul" && in.size() >= 2 && in[0].rank() != in[1].rank())
    throw Error(
        fmt::format("matmul in the rule language takes operands of equal rank, got {} and {}",
                    in[0].str(), in[1].str()));
  if (op.op->attrs_to_params) {
    auto p = op.op->attrs_to_params(attrs, in);
    if (!p || p->size() != op.num_params())
      throw Error(fmt::format("{} with {} on {} lies outside the rule language", op.name,
                              attrs.str(), types_str(in)));
  }
}

// The engine is written once over a Sink: building graph nodes, or computing types only.
template <class Sink>
class Engine {
 public:
  using Value = typename Sink::Value;
  Engine(Sink& sink, const std::map<std::string, AxiomParam>& params, bool describe_errors = true)
      : sink_(sink), params_(params), describe_errors_(describe_errors) {}

  Value build(const TermPtr& t) {
    if (t->kind == Term::Kind::Var) return sink_.var(t->name);
    const AxiomOp& op = app_op(t);
    size_t np = op.num_params();
    std::vector<std::optional<Value>> args(t->args.size() - np);
    for (size_t i = 0; i < args.size(); ++i)
      if (!is_constant_app(t->args[np + i])) args[i] = build(t->args[np + i]);
    return apply(t, std::move(args));
  }

  // Applies `t` to built arguments; nullopt arguments are constants, sized here from the
  // others.
  Value apply(const TermPtr& t, std::vector<std::optional<Value>> args) {
    const AxiomOp& op = app_op(t);
    auto params = param_values(t, op, params_);
    if (op.is_constant()) return constant(t, op, params, nullptr, 0, {});
    size_t np = op.num_params();
    std::vector<std::optional<TensorType>> types(args.size());
    for (size_t i = 0; i < args.size(); ++i)
      if (args[i]) types[i] = sink_.type(*args[i]);
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i]) continue;
      const TermPtr& a = t->args[np + i];
      const AxiomOp& cop = app_op(a);
      args[i] = constant(a, cop, param_values(a, cop, params_), &op, i, types);
    }
    std::vector<Value> ins;
    std::vector<TensorType> in_types;
    for (auto& v : args) {
      ins.push_back(*v);
      in_types.push_back(sink_.type(*v));
    }
    try {
      Attrs attrs;
      if (op.op->params_to_attrs) attrs = op.op->params_to_attrs(params, in_types);
      check_arity(*op.op, in_types.size());
      attrs = normalize_attrs(*op.op, std::move(attrs));
      // Shape errors first (clearer messages), then the language's own restrictions.
      auto outs = op.op->infer(attrs, in_types);
      check_in_language(op, attrs, in_types);
      return sink_.apply(*op.op, std::move(ins), std::move(attrs), std::move(outs), op.output);
    } catch (const Error& e) {
      if (!describe_errors_) throw;
      throw Error(fmt::format("{} does not type-check on {}: {}", term_str(t), types_str(in_types),
                              e.what()));
    }
  }

  static bool is_constant_app(const TermPtr& t) {
    if (t->kind != Term::Kind::App) return false;
    const AxiomOp* op = find_axiom_op(t->name);
    return op && op->is_constant();
  }

  static const AxiomOp& app_op(const TermPtr& t) {
    if (t->kind != Term::Kind::App)
      throw Error(fmt::format("'{}' is a parameter value, not a tensor term", term_str(t)));
    const AxiomOp* op = find_axiom_op(t->name);
    if (!op) throw Error(fmt::format("unknown operator '{}' in {}", t->name, term_str(t)));
    return *op;
  }

 private:
  Value constant(const TermPtr& t, const AxiomOp& c, std::span<const AxiomParam> params,
                 const AxiomOp* parent, size_t pos,
                 std::span<const std::optional<TensorType>> sib) {
    Attrs a = size_constant(t, c, params, parent, pos, sib);
    try {
      a = normalize_attrs(*c.op, std::move(a));
      auto outs = c.op->infer(a, {});
      return sink_.apply(*c.op, {}, std::move(a), std::move(outs), 0);
    } catch (const Error& e) {
      throw Error(fmt::format("{} is not a valid constant: {}", term_str(t), e.what()));
    }
  }

  Sink& sink_;
  const std::map<std::string, AxiomParam>& params_;
  bool describe_errors_;  // off where failures are expected and discarded (enumeration)
};

struct GraphSink {
  using Value = TensorRef;
  Graph& g;
  const std::map<std::string, TensorRef>& vars;
  // Hash-consing: (operator, inputs) -> nodes, told apart by their attributes.
  std::map<std::pair<const OpDef*, std::vector<TensorRef>>, std::vector<NodeId>> nodes;

  TensorRef var(const std::string& name) {
    auto it = vars.find(name);
    if (it == vars.end()) throw Error(fmt::format("tensor variable ?{} is not bound", name));
    return it->second;
  }
  const TensorType& type(TensorRef r) const { return g.type(r); }
  TensorRef apply(const OpDef& op, std::vector<TensorRef> ins, Attrs attrs,
                  std::vector<TensorType> /*inferred*/, uint32_t output) {
    auto& same = nodes[{&op, ins}];
    NodeId id = 0;
    bool found = false;
    for (NodeId n : same)
      if (g.node(n).attrs == attrs) {
        id = n;
        found = true;
        break;
      }
    if (!found) {
      id = g.add(op, std::move(ins), std::move(attrs));
      same.push_back(id);
    }
    if (output >= g.node(id).outputs.size())
      throw Error(fmt::format("{} has no output {}", g.describe(id), output));
    return {id, output};
  }
};

struct TypeSink {
  using Value = TensorType;
  const std::map<std::string, TensorType>& vars;

  TensorType var(const std::string& name) {
    auto it = vars.find(name);
    if (it == vars.end()) throw Error(fmt::format("tensor variable ?{} is not bound", name));
    return it->second;
  }
  const TensorType& type(const TensorType& t) const { return t; }
  TensorType apply(const OpDef& op, std::vector<TensorType>, Attrs, std::vector<TensorType> outs,
                   uint32_t output) {
    if (output >= outs.size()) throw Error(fmt::format("{} has no output {}", op.name, output));
    return std::move(outs[output]);
  }
};

}  // namespace

struct Instantiator::Impl {
  Bindings b;
  GraphSink sink;
  Engine<GraphSink> engine;
  Impl(Graph& g, Bindings bind)
      : b(std::move(bind)), sink{g, b.tensors, {}}, engine(sink, b.params) {}
};

Instantiator::Instantiator(Graph& g, Bindings b) : impl_(std::make_unique<Impl>(g, std::move(b))) {}
Instantiator::~Instantiator() = default;

TensorRef Instantiator::build(const TermPtr& t) {
  return impl_->engine.build(t);
}

std::vector<TensorRef> Instantiator::build(std::span<const TermPtr> ts) {
  std::vector<TensorRef> out;
  for (auto& t : ts) out.push_back(build(t));
  return out;
}

TensorRef instantiate(Graph& g, const TermPtr& t, const Bindings& b) {
  return Instantiator(g, b).build(t);
}

std::vector<TensorRef> instantiate(Graph& g, std::span<const TermPtr> ts, const Bindings& b) {
  return Instantiator(g, b).build(ts);
}

TensorType infer_term_type(const TermPtr& t, const TypeBindings& b) {
  TypeSink sink{b.tensors};
  Engine<TypeSink> engine(sink, b.params);
  return engine.build(t);
}

TensorType infer_app_type(const TermPtr& app, const std::map<std::string, AxiomParam>& params,
                          std::span<const std::optional<TensorType>> arg_types) {
  static const std::map<std::string, TensorType> no_vars;
  TypeSink sink{no_vars};
  Engine<TypeSink> engine(sink, params, /*describe_errors=*/false);
  return engine.apply(app, {arg_types.begin(), arg_types.end()});
}

}  // namespace graphsub::rules
