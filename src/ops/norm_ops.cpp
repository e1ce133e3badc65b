// TODO(helper): norm operators.
#include "ops/families.h"
#include "ops/kernel_util.h"

namespace graphsub {

void register_norm_ops(std::vector<OpDef>&) {}

}  // namespace graphsub
