#include "gen/prove/rule_owner.h"

#include <xxhash.h>

#include <algorithm>
#include <vector>

namespace graphsub::gen {

std::string owner_form(std::string_view key) {
  // Conditions (" where ...") follow the sides; a class has none, a conditioned retry keeps its
  // class's owner.
  if (size_t w = key.find(" where "); w != std::string_view::npos) key = key.substr(0, w);
  std::vector<std::string> outputs;
  std::string cur;
  int depth = 0;
  bool after_open = false;
  for (size_t i = 0; i < key.size();) {
    char ch = key[i];
    if (ch == ' ') {
      ++i;
      continue;
    }
    if (ch == '(') {
      cur += '(';
      ++depth;
      after_open = true;
      ++i;
      continue;
    }
    if (ch == ')') {
      cur += ')';
      --depth;
      ++i;
      if (depth == 0) outputs.push_back(std::move(cur)), cur.clear();
      continue;
    }
    size_t j = i;
    while (j < key.size() && key[j] != ' ' && key[j] != '(' && key[j] != ')') ++j;
    std::string_view tok = key.substr(i, j - i);
    i = j;
    if (depth == 0) {
      if (tok != "=") outputs.emplace_back("_");  // a bare variable as an output
      continue;
    }
    // An operator name follows "(", every other token is a variable or a parameter value.
    if (!cur.empty() && cur.back() != '(') cur += ' ';
    cur += after_open ? tok : std::string_view("_");
    after_open = false;
  }
  std::sort(outputs.begin(), outputs.end());
  std::string out;
  for (auto& o : outputs) out += (out.empty() ? "" : "|") + o;
  return out;
}

int rule_owner(std::string_view key, int ranks) {
  if (ranks <= 1) return 0;
  std::string f = owner_form(key);
  return static_cast<int>(XXH3_64bits(f.data(), f.size()) % static_cast<uint64_t>(ranks));
}

}  // namespace graphsub::gen
