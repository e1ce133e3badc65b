// TODO(helper): fast executor on oneDNN.
#include "exec_onednn/onednn_executor.h"
