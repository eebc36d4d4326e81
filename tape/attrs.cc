#include "tape/attrs.h"

#include <fmt/format.h>

#include "tape/error.h"

namespace ytape {

std::string_view attr_kind_name(AttrKind k) {
  static constexpr std::string_view kNames[] = {"int", "ints", "float", "bool", "string", "dtype"};
  return kNames[static_cast<int>(k)];
}

std::string float_str(double v) {
  if (v != v) return "nan";
  if (v == 1.0 / 0.0) return "inf";
  if (v == -1.0 / 0.0) return "-inf";
  // fmt's default presentation is the shortest string that reads back to the same double.
  std::string s = fmt::format("{}", v);
  // Keep floats recognisable as floats in the text form: 1 is written 1.0.
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

std::string float32_str(float v) {
  if (v != v || v == 1.0f / 0.0f || v == -1.0f / 0.0f) return float_str(v);
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

std::string attr_value_str(const AttrValue& v) {
  switch (attr_kind(v)) {
    case AttrKind::int_:
      return fmt::format("{}", std::get<int64_t>(v));
    case AttrKind::ints:
      return fmt::format("[{}]", fmt::join(std::get<std::vector<int64_t>>(v), ","));
    case AttrKind::float_:
      return float_str(std::get<double>(v));
    case AttrKind::bool_:
      return std::get<bool>(v) ? "true" : "false";
    case AttrKind::string:
      return quoted(std::get<std::string>(v));
    case AttrKind::dtype:
      return std::string(dtype_name(std::get<DType>(v)));
  }
  internal_error("bad attribute kind");
}

const AttrValue* Attrs::find(std::string_view name) const {
  for (const Attr& a : items_) {
    if (a.name == name) return &a.value;
  }
  return nullptr;
}

void Attrs::set(std::string_view name, AttrValue value) {
  for (Attr& a : items_) {
    if (a.name == name) {
      a.value = std::move(value);
      return;
    }
  }
  items_.push_back({std::string(name), std::move(value)});
}

const AttrValue& Attrs::get(std::string_view name, AttrKind kind) const {
  const AttrValue* v = find(name);
  if (v == nullptr) internal_error("attribute '{}' is missing", name);
  if (attr_kind(*v) != kind) {
    internal_error("attribute '{}' is {}, not {}", name, attr_kind_name(attr_kind(*v)),
                   attr_kind_name(kind));
  }
  return *v;
}

int64_t Attrs::get_int(std::string_view n) const {
  return std::get<int64_t>(get(n, AttrKind::int_));
}
const std::vector<int64_t>& Attrs::get_ints(std::string_view n) const {
  return std::get<std::vector<int64_t>>(get(n, AttrKind::ints));
}
double Attrs::get_float(std::string_view n) const {
  return std::get<double>(get(n, AttrKind::float_));
}
bool Attrs::get_bool(std::string_view n) const {
  return std::get<bool>(get(n, AttrKind::bool_));
}
const std::string& Attrs::get_string(std::string_view n) const {
  return std::get<std::string>(get(n, AttrKind::string));
}
DType Attrs::get_dtype(std::string_view n) const {
  return std::get<DType>(get(n, AttrKind::dtype));
}

}  // namespace ytape
