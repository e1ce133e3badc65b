// TODO(helper): linear operators.
#include "ops/families.h"
#include "ops/kernel_util.h"

namespace graphsub {

void register_linear_ops(std::vector<OpDef>&) {}

}  // namespace graphsub
