#pragma once
// The one definition of an operator: schema, attribute validation, shape inference, reference
// kernels (one generic template instantiated for float and for wrap-around uint32), its name in
// the axiom language, and its cost. Every stage (executors, verifier, generator, optimizer,
// ONNX) reads operators only through this record.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "core/attrs.h"
#include "core/tensor_type.h"

namespace graphsub {

// A parameter value in the axiom language: an integer (stride 2, axis 1) or a symbol
// (padding `same`, activation `relu`).
using AxiomParam = std::variant<int64_t, std::string>;

struct AttrSpec {
  std::string name;
  AttrKind kind;
  std::optional<AttrValue> default_value;  // nullopt: the attribute is required
  std::vector<std::string> choices;        // allowed values of a string attribute
};

// What a reference kernel sees: attributes, input/output types and flat row-major buffers
// (output buffers are allocated by the caller from the inferred output types).
template <class T>
struct KernelIO {
  const Attrs& attrs;
  std::span<const TensorType> in_types;
  std::span<const TensorType> out_types;
  std::span<const T* const> in;
  std::span<T* const> out;
};
template <class T>
using Kernel = void (*)(const KernelIO<T>&);

struct OpCost {
  double flops = 0;  // arithmetic operations
  double bytes = 0;  // bytes read and written
};

using InferFn = std::vector<TensorType> (*)(const Attrs&, std::span<const TensorType>);
using CostFn = OpCost (*)(const Attrs&, std::span<const TensorType>, std::span<const TensorType>);

// Another form of an operator in the axiom language, under a name of its own: the operator
// with optional inputs bound (a LayerNormalization's bias, a skip normalization's beta), or
// a reading with parameters of its own (a transpose of more than two axes is (permute p x)).
// A node is the form whose number of tensors it has and whose number of parameters
// attrs_to_params gives it.
struct AxiomForm {
  std::string name;                 // "layernorm_b"
  int num_tensors = 0;              // tensor inputs of the form
  std::vector<std::string> params;  // its parameter domains; empty: the operator's axiom_params
};

enum class OpClass : uint8_t {
  Source,   // no inputs: graph input, weight, constant
  Compute,  // has reference semantics
  Opaque,   // shapes known, semantics unknown (kept from ONNX, never rewritten through)
};

struct OpDef {
  std::string name;        // IR name, e.g. "conv"
  std::string axiom_name;  // name in the axiom/rule language ("" when not in it)
  OpClass cls = OpClass::Compute;
  int min_inputs = 0;
  int max_inputs = 0;  // -1: variadic
  std::vector<AttrSpec> attrs;
  InferFn infer = nullptr;  // throws graphsub::Error naming the shapes on bad input
  Kernel<float> kernel_f32 = nullptr;
  Kernel<uint32_t> kernel_u32 = nullptr;
  CostFn cost = nullptr;  // null: cost of streaming inputs and outputs once
  bool elementwise = false;
  // The uint32 kernel uses a non-linear polynomial stand-in (src/ops/scalar.h): its exact
  // values say nothing about the real function, so numeric checks compare floats only.
  bool standin = false;
  // The runtime whose fused kernel this operator is ("onnxruntime" for the com.microsoft
  // operators, src/ops/fused_ops.cpp); empty for operators every runtime runs. A graph holding
  // one runs only there: the optimizer introduces it only for a target of that runtime.
  std::string_view runtime;
  // The first ONNX opset that has this operator (ONNX's Attention and RotaryEmbedding: 23); 0
  // where every opset the exporter writes holds it or its lowering. The search does not
  // introduce one into a file of an older opset (CostModel::set_written_opset).
  int64_t onnx_since = 0;

  // Binding to the axiom/rule language (generator operators only). A term applies an operator
  // to its parameter arguments first, then its tensor arguments: (conv ?s ?p ?c ?x ?w).
  // axiom_params names those parameters in order; their values are integers or symbols
  // (AxiomParam), with the domains declared in specs/operators.axioms.
  std::vector<std::string> axiom_params;
  // IR attributes for given parameter values and input types (e.g. padding `same` -> pads
  // from the kernel size). Null when the operator has no parameters.
  Attrs (*params_to_attrs)(std::span<const AxiomParam> params,
                           std::span<const TensorType> in) = nullptr;
  // The parameter values of an IR node, or nullopt when the node lies outside the axiom
  // language (e.g. asymmetric pads, a stride not expressible). Null: no parameters. A form
  // with parameters of its own (AxiomForm::params) is told apart by their number.
  std::optional<std::vector<AxiomParam>> (*attrs_to_params)(
      const Attrs&, std::span<const TensorType> in) = nullptr;
  // Axiom names of the individual outputs when the axiom language names them separately:
  // split has {"split0", "split1"}, and the term (split1 a x) denotes output 1 of the IR
  // node. find_op_by_axiom_name resolves these names to the operator too.
  std::vector<std::string> axiom_outputs;
  // Longer forms (AxiomForm): a node with a form's number of inputs is that form, one with
  // min_inputs the plain axiom_name. A form of a multi-output operator names its outputs as
  // axiom_outputs does, with the form's name in place of axiom_name
  // ("ort_skip_layernorm_b_sum").
  std::vector<AxiomForm> axiom_forms;
};

// The axiom name of output `k` of `form` of `op` (form.name itself for a one-output operator
// or where output k is named by the operator's own axiom name).
std::string axiom_form_output(const OpDef& op, const AxiomForm& form, size_t k);

// The output an axiom name denotes: the index in op.axiom_outputs, or 0 for the operator's
// own axiom name. Throws Error when the name belongs to neither.
uint32_t axiom_output_index(const OpDef& op, std::string_view axiom_name);

// Fills defaults and checks kinds, choices, unknown names, arity; then infers output types.
// Errors are thrown as graphsub::Error without the node prefix (callers add it).
Attrs normalize_attrs(const OpDef& op, Attrs attrs);
void check_arity(const OpDef& op, size_t num_inputs);
OpCost op_cost(const OpDef& op, const Attrs& a, std::span<const TensorType> in,
               std::span<const TensorType> out);

// The activations conv and matmul can fuse (values of their `act` attribute other than
// "none"); each is also the IR name of the stand-alone operator, and all are oneDNN post-ops.
const std::vector<std::string>& fused_activations();

// The registry of all operators, built once.
const OpDef* find_op(std::string_view name);
const OpDef& op_def(std::string_view name);  // throws Error on unknown names
const OpDef* find_op_by_axiom_name(std::string_view axiom_name);
const std::vector<const OpDef*>& all_ops();  // sorted by name

}  // namespace graphsub
