#pragma once
// Small text helpers shared by the command line and the benchmarks.
#include <string>
#include <vector>

namespace graphsub {

// The items of a separated list ("a,b,,c" -> a, b, c): empty items are dropped.
inline std::vector<std::string> split_list(const std::string& s, char sep = ',') {
  std::vector<std::string> out;
  for (size_t p = 0; p <= s.size();) {
    size_t q = s.find(sep, p);
    if (q == std::string::npos) q = s.size();
    if (q > p) out.push_back(s.substr(p, q - p));
    p = q + 1;
  }
  return out;
}

}  // namespace graphsub
