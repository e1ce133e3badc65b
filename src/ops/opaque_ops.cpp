// The opaque operator: a node imported from ONNX whose semantics graphsub does not know.
// Its output types are given at import; it has no kernel, so nothing rewrites through it.
#include "ops/families.h"
#include "ops/kernel_util.h"

namespace graphsub {

static std::vector<TensorType> infer_opaque(const Attrs& a, std::span<const TensorType>) {
  throw Error(fmt::format("opaque operator '{}' has no shape inference; types are given",
                          a.has("op_type") ? a.s("op_type") : "?"));
}

void register_opaque_ops(std::vector<OpDef>& defs) {
  defs.push_back({.name = "opaque",
                  .cls = OpClass::Opaque,
                  .min_inputs = 0,
                  .max_inputs = -1,
                  .attrs = {{"op_type", AttrKind::String, std::nullopt, {}},
                            {"domain", AttrKind::String, AttrValue{std::string()}, {}}},
                  .infer = infer_opaque});
}

}  // namespace graphsub
