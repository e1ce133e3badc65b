#include "ir/report.h"

namespace graphsub {

Reporter& null_reporter() {
  static Reporter r;
  return r;
}

}  // namespace graphsub
