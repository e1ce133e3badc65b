#pragma once
// Typed operator attributes: a small map kept sorted by name, so that printing, hashing and
// comparison are canonical.
#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace graphsub {

using AttrValue = std::variant<int64_t, double, std::string, std::vector<int64_t>>;

enum class AttrKind : uint8_t { Int, Float, String, Ints };
AttrKind attr_kind(const AttrValue& v);
const char* attr_kind_name(AttrKind k);
std::string attr_value_str(const AttrValue& v);

class Attrs {
 public:
  Attrs() = default;
  Attrs(std::initializer_list<std::pair<std::string, AttrValue>> init);

  void set(const std::string& name, AttrValue v);
  bool has(const std::string& name) const { return find(name) != nullptr; }
  const AttrValue* find(const std::string& name) const;
  void erase(const std::string& name);

  // Typed getters throw graphsub::Error when the attribute is missing or of another kind.
  int64_t i(const std::string& name) const;
  double f(const std::string& name) const;
  const std::string& s(const std::string& name) const;
  const std::vector<int64_t>& ints(const std::string& name) const;

  const std::vector<std::pair<std::string, AttrValue>>& items() const { return items_; }
  bool empty() const { return items_.empty(); }
  std::string str() const;  // "axis=1 pads=[0,0,1,1]"

  friend bool operator==(const Attrs& a, const Attrs& b) { return a.items_ == b.items_; }

 private:
  std::vector<std::pair<std::string, AttrValue>> items_;
};

}  // namespace graphsub
