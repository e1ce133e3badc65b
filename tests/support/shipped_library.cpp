#include "support/shipped_library.h"

#include "driver/data_paths.h"

namespace graphsub::testutil {

const opt::RuleLibrary& shipped_library() {
  static const opt::RuleLibrary lib(driver::resolved({}), null_reporter());
  return lib;
}

const opt::RuleLibrary& builtin_library() {
  static const opt::RuleLibrary lib({}, null_reporter());
  return lib;
}

}  // namespace graphsub::testutil
