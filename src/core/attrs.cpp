#include "core/attrs.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"

namespace graphsub {

AttrKind attr_kind(const AttrValue& v) {
  return static_cast<AttrKind>(v.index());
}

const char* attr_kind_name(AttrKind k) {
  switch (k) {
    case AttrKind::Int:
      return "int";
    case AttrKind::Float:
      return "float";
    case AttrKind::String:
      return "string";
    case AttrKind::Ints:
      return "ints";
  }
  return "?";
}

std::string attr_value_str(const AttrValue& v) {
  switch (attr_kind(v)) {
    case AttrKind::Int:
      return fmt::format("{}", std::get<int64_t>(v));
    case AttrKind::Float:
      return fmt::format("{}", std::get<double>(v));
    case AttrKind::String:
      return std::get<std::string>(v);
    case AttrKind::Ints:
      return fmt::format("[{}]", fmt::join(std::get<std::vector<int64_t>>(v), ","));
  }
  return "?";
}

Attrs::Attrs(std::initializer_list<std::pair<std::string, AttrValue>> init) {
  for (auto& [k, v] : init) set(k, v);
}

void Attrs::set(const std::string& name, AttrValue v) {
  auto it = std::lower_bound(items_.begin(), items_.end(), name,
                             [](const auto& p, const std::string& n) { return p.first < n; });
  if (it != items_.end() && it->first == name)
    it->second = std::move(v);
  else
    items_.insert(it, {name, std::move(v)});
}

const AttrValue* Attrs::find(const std::string& name) const {
  auto it = std::lower_bound(items_.begin(), items_.end(), name,
                             [](const auto& p, const std::string& n) { return p.first < n; });
  return it != items_.end() && it->first == name ? &it->second : nullptr;
}

void Attrs::erase(const std::string& name) {
  std::erase_if(items_, [&](const auto& p) { return p.first == name; });
}

template <class T>
static const T& get_typed(const Attrs& a, const std::string& name, AttrKind want) {
  const AttrValue* v = a.find(name);
  if (!v) throw Error(fmt::format("missing attribute '{}'", name));
  if (attr_kind(*v) != want)
    throw Error(fmt::format("attribute '{}' is {}, expected {}", name,
                            attr_kind_name(attr_kind(*v)), attr_kind_name(want)));
  return std::get<T>(*v);
}

int64_t Attrs::i(const std::string& name) const {
  return get_typed<int64_t>(*this, name, AttrKind::Int);
}
double Attrs::f(const std::string& name) const {
  return get_typed<double>(*this, name, AttrKind::Float);
}
const std::string& Attrs::s(const std::string& name) const {
  return get_typed<std::string>(*this, name, AttrKind::String);
}
const std::vector<int64_t>& Attrs::ints(const std::string& name) const {
  return get_typed<std::vector<int64_t>>(*this, name, AttrKind::Ints);
}

std::string Attrs::str() const {
  std::string out;
  for (auto& [k, v] : items_) {
    if (!out.empty()) out += ' ';
    out += k + "=" + attr_value_str(v);
  }
  return out;
}

}  // namespace graphsub
