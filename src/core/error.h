#pragma once
// One exception type for every user-facing failure: bad graphs, bad files, bad flags.
// The message names the problem (node, operator, shapes) so the command line can print it as is.
#include <stdexcept>
#include <string>

namespace graphsub {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace graphsub
