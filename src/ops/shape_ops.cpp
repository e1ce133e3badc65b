// TODO(helper): shape operators.
#include "ops/families.h"
#include "ops/kernel_util.h"

namespace graphsub {

void register_shape_ops(std::vector<OpDef>&) {}

}  // namespace graphsub
