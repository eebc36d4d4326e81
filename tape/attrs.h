// Attributes of ops: static parameters such as dims, strides or a fill value.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "tape/compact.h"
#include "tape/dtype.h"

namespace ytape {

/// Kind of an attribute value; the order matches the alternatives of AttrValue.
enum class AttrKind : uint8_t { int_, ints, float_, bool_, string, dtype };

using AttrValue = std::variant<int64_t, std::vector<int64_t>, double, bool, std::string, DType>;

/// "int", "ints", "float", "bool", "string", "dtype".
std::string_view attr_kind_name(AttrKind k);
inline AttrKind attr_kind(const AttrValue& v) {
  return static_cast<AttrKind>(v.index());
}

/// Text form of a value: 3, [1,2], 0.5 (shortest round trip), true, "text", f32.
std::string attr_value_str(const AttrValue& v);
/// A double in shortest round-trip form, as the text and JSON forms write it.
std::string float_str(double v);
/// A float in shortest round-trip form as a float (0.1f is "0.1", not the digits of the
/// double it widens to), written like float_str.
std::string float32_str(float v);
/// A string quoted and escaped as in JSON.
std::string quoted(std::string_view s);

struct Attr {
  std::string name;
  AttrValue value;
  friend bool operator==(const Attr&, const Attr&) = default;
};

/// The attributes of one op. On a tape they are complete and in the order of the
/// primitive's schema (see `normalize_attrs`), so the typed getters below never miss.
class Attrs {
 public:
  Attrs() = default;
  Attrs(std::initializer_list<Attr> items) : items_(items) {}

  /// Nullptr if absent.
  const AttrValue* find(std::string_view name) const;
  /// Sets or replaces a value.
  void set(std::string_view name, AttrValue value);

  /// Typed getters; an absent attribute or one of another kind is an InternalError. Their
  /// callers are generated: `AttrsOf<P>::from` (op_attrs.cc) calls get_<kind> per ATTR row.
  int64_t get_int(std::string_view name) const;
  const std::vector<int64_t>& get_ints(std::string_view name) const;
  double get_float(std::string_view name) const;
  bool get_bool(std::string_view name) const;
  const std::string& get_string(std::string_view name) const;
  DType get_dtype(std::string_view name) const;

  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  void push_back(Attr a) { items_.push_back(std::move(a)); }
  friend bool operator==(const Attrs&, const Attrs&) = default;

 private:
  const AttrValue& get(std::string_view name, AttrKind kind) const;
  RareVector<Attr> items_;  // one pointer: most ops have none
};

}  // namespace ytape
