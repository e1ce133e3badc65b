// TODO(helper): conv_pool operators.
#include "ops/families.h"
#include "ops/kernel_util.h"

namespace graphsub {

void register_conv_pool_ops(std::vector<OpDef>&) {}

}  // namespace graphsub
