#pragma once
// Instantiation of terms as IR: the bridge from the rule language to graphs, shared by the
// axiom checker, the verifier's numeric test, the generator and the optimizer's rewriter.
//
//   Graph g;  ... g.add_input("x", ...) ...
//   Bindings b{.tensors = {{"x", x}, {"y", y}}, .params = {{"c", std::string("none")}}};
//   TensorRef out = instantiate(g, parse_term("(matmul ?c ?x ?y)"), b);
//
// Equal subterms become one node (nodes are hash-consed per Instantiator, so two outputs of a
// rule target that share a subterm share the node). Parameter values become IR attributes
// through OpDef::params_to_attrs. The constants (cpool k), (iconv k), (imatmul), (iewmul) are
// sized from the operand they meet: the input channels of the conv they are the weight of,
// the inner size of the matmul they enter, the shape of their ewmul/ewadd partner.
// Shape errors throw graphsub::Error naming the term and the shapes.
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "rules/term.h"

namespace graphsub::rules {

struct Bindings {
  std::map<std::string, TensorRef> tensors;  // tensor variable (without '?') -> graph tensor
  std::map<std::string, AxiomParam> params;  // parameter variable -> value
};

class Instantiator {
 public:
  Instantiator(Graph& g, Bindings b);
  ~Instantiator();
  Instantiator(const Instantiator&) = delete;
  Instantiator& operator=(const Instantiator&) = delete;

  // Builds (or finds) the nodes of `t` and returns the tensor it denotes.
  TensorRef build(const TermPtr& t);
  std::vector<TensorRef> build(std::span<const TermPtr> ts);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One-shot helpers.
TensorRef instantiate(Graph& g, const TermPtr& t, const Bindings& b);
std::vector<TensorRef> instantiate(Graph& g, std::span<const TermPtr> ts, const Bindings& b);

// The type a term would have, without building anything (used to enumerate well-typed shapes
// quickly). Throws Error exactly when instantiate() would.
struct TypeBindings {
  std::map<std::string, TensorType> tensors;
  std::map<std::string, AxiomParam> params;
};
TensorType infer_term_type(const TermPtr& t, const TypeBindings& b);

// The type of one application given the types of its tensor arguments (nullopt for arguments
// that are constants, which are sized here as in instantiate()). Throws Error when it does not
// type-check. Used to enumerate well-typed shapes bottom-up.
TensorType infer_app_type(const TermPtr& app, const std::map<std::string, AxiomParam>& params,
                          std::span<const std::optional<TensorType>> arg_types);

}  // namespace graphsub::rules
