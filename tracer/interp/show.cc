// Values as text, the way Julia shows and prints them: `show` (what `repr` and containers
// use: 1.0f0, "text", :sym, Float32[1.0, 2.0]) and `print` (strings and symbols bare,
// floats without their type: 1.0).
#include <fmt/format.h>

#include <cmath>
#include <string>
#include <string_view>

#include "tape/float16.h"
#include "tracer/interp/nesting.h"
#include "tracer/interp/value.h"
#include "tracer/lang/ast.h"

namespace ytape::tracer {

namespace {

constexpr int64_t kMaxShown = 1000;  // elements of one array; the rest is counted

// The shortest decimal digits that read back to `v` (> 0), and where the decimal point
// goes: v = 0.DIGITS × 10^point.
template <typename F>
std::pair<std::string, int> shortest_digits(F v) {
  std::string s = fmt::format("{}", v);  // shortest round trip: 0.0015, 1e-05, 1.5e+20
  int exp = 0;
  if (size_t e = s.find_first_of("eE"); e != std::string::npos) {
    exp = std::stoi(s.substr(e + 1));
    s.resize(e);
  }
  size_t dot = s.find('.');
  int point = static_cast<int>(dot == std::string::npos ? s.size() : dot) + exp;
  if (dot != std::string::npos) s.erase(dot, 1);
  size_t lead = s.find_first_not_of('0');
  s.erase(0, lead);
  point -= static_cast<int>(lead);
  s.erase(s.find_last_not_of('0') + 1);
  return {s, point};
}

// Julia's float form: plain between 1e-4 and 1e6 (0.0015, 123456.0), otherwise with an
// exponent (1.0e-5, 1.5e20). A typed Float32 says so: 1.0f0, 0.0015f0, 1.0f-5.
template <typename F>
std::string julia_float(F v, bool typed32) {
  std::string suffix = typed32 ? "32" : "";
  if (std::isnan(v)) return "NaN" + suffix;
  if (std::isinf(v)) return (v < 0 ? "-Inf" : "Inf") + suffix;
  std::string sign = std::signbit(v) ? "-" : "";
  if (v == 0) return sign + (typed32 ? "0.0f0" : "0.0");
  auto [digits, point] = shortest_digits(std::fabs(v));
  int n = static_cast<int>(digits.size());
  if (point > -4 && point <= 6) {
    std::string out;
    if (point <= 0) {
      out = "0." + std::string(static_cast<size_t>(-point), '0') + digits;
    } else if (point >= n) {
      out = digits + std::string(static_cast<size_t>(point - n), '0') + ".0";
    } else {
      out = digits.substr(0, static_cast<size_t>(point)) + "." +
            digits.substr(static_cast<size_t>(point));
    }
    return sign + out + (typed32 ? "f0" : "");
  }
  std::string mantissa = digits.substr(0, 1) + "." + (n > 1 ? digits.substr(1) : "0");
  return sign + mantissa + (typed32 ? "f" : "e") + std::to_string(point - 1);
}

// A Float16 as Julia shows it: Float16(0.1) typed, 0.1 in an array or printed. Its
// shortest digits read as a double have those same digits as their shortest form.
std::string julia_float16(uint16_t h, bool typed) {
  float v = f16_to_f32(h);
  if (std::isnan(v)) return "NaN16";
  if (std::isinf(v)) return v < 0 ? "-Inf16" : "Inf16";
  std::string text = julia_float(std::stod(float16_str(h)), false);
  return typed ? "Float16(" + text + ")" : text;
}

std::string float_text(double v, DType dtype, bool typed) {
  if (dtype == DType::f32) return julia_float(static_cast<float>(v), typed);
  if (dtype == DType::f16) return julia_float16(f16_from_double(v), typed);
  return julia_float(v, false);
}

// Element i of an array, as Julia writes it inside the array's brackets: the array's
// prefix already names the type, so Float32 elements have no suffix and Bools are 1/0.
std::string element_text(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::f32:
      return julia_float(t.data<float>()[i], false);
    case DType::f64:
      return julia_float(t.data<double>()[i], false);
    case DType::i64:
      return std::to_string(t.data<int64_t>()[i]);
    case DType::boolean:
      return t.data<bool>()[i] ? "1" : "0";
    case DType::f16:
      return julia_float16(t.data<uint16_t>()[i], false);
  }
  return {};
}

std::string eltype_name(DType d) {
  switch (d) {
    case DType::f32:
      return "Float32";
    case DType::f64:
      return "Float64";
    case DType::i64:
      return "Int64";
    case DType::boolean:
      return "Bool";
    case DType::f16:
      return "Float16";
  }
  return {};
}

// Julia's array literal syntax: [1, 2] for vectors, [1 3; 2 4] for matrices, and for
// higher ranks the matrices separated by ";;;" (";;;;" between rank-4 blocks, ...).
std::string array_text(const Tensor& t) {
  bool default_eltype = t.dtype() == DType::f64 || t.dtype() == DType::i64;
  std::string prefix = default_eltype ? "" : eltype_name(t.dtype());
  const Shape& s = t.shape();
  if (t.size() == 0) {
    if (s.size() == 1) return eltype_name(t.dtype()) + "[]";
    std::string dims;
    for (int64_t d : s) dims += ", " + std::to_string(d);
    return fmt::format("Array{{{}, {}}}(undef{})", eltype_name(t.dtype()), s.size(), dims);
  }
  std::string out = prefix + "[";
  if (s.size() == 1) {
    int64_t shown = std::min(t.size(), kMaxShown);
    for (int64_t i = 0; i < shown; ++i) {
      if (i > 0) out += ", ";
      out += element_text(t, i);
    }
    if (t.size() > shown) out += fmt::format(", … {} elements", t.size());
    return out + "]";
  }
  int64_t rows = s[0], cols = s[1], block = rows * cols;
  int64_t blocks = std::min(t.size() / block, std::max<int64_t>(1, kMaxShown / block));
  for (int64_t b = 0; b < blocks; ++b) {
    if (b > 0) {
      // The separator names the highest dim that changes between the two blocks.
      int level = 3;
      for (int64_t k = b, d = 2; d + 1 < static_cast<int64_t>(s.size()) && k % s[d] == 0; ++d) {
        k /= s[d];
        ++level;
      }
      out += std::string(static_cast<size_t>(level), ';') + " ";
    }
    for (int64_t r = 0; r < rows; ++r) {
      if (r > 0) out += "; ";
      for (int64_t c = 0; c < cols; ++c) {
        if (c > 0) out += ' ';
        out += element_text(t, b * block + c * rows + r);
      }
    }
  }
  if (blocks * block < t.size()) {
    out += fmt::format(" … {} elements", t.size());
  } else if (blocks == 1 && (s.size() > 2 || cols == 1)) {
    // Trailing semicolons give the rank where the rows alone would not: [1; 2;;] is a
    // 2×1 matrix, [1 3; 2 4;;;] a 2×2×1 array.
    out += std::string(s.size(), ';');
  }
  return out + "]";
}

// A vector of values of numbers of one struct type (Complex) shows that type first, as
// Julia's `ComplexF64[1.0 + 2.0im]`.
std::string vector_open(const TupleObj& t) {
  if (t.items.empty()) return "Any[";
  TypeRef eltype = value_vector_eltype(t);
  return eltype->tag == TypeTag::any ? "[" : eltype->name + "[";
}

// The text of a value that holds no others (numbers, strings, arrays, functions, ...).
std::string leaf_text(const Value& v) {
  switch (v.kind) {
    case VKind::nothing:
      return "nothing";
    case VKind::boolean:
      return v.b ? "true" : "false";
    case VKind::integer:
      return std::to_string(v.i);
    case VKind::float_:
      return float_text(v.f, v.dtype, true);
    case VKind::string:
      return julia_quoted(v.text());
    case VKind::symbol:
      return ":" + v.text();
    case VKind::function:
      return v.fn().name;
    case VKind::type:
      return v.type_ref()->name;
    case VKind::range: {
      const RangeObj& r = v.rng();
      if (r.step == 1) return fmt::format("{}:{}", r.start, r.stop);
      return fmt::format("{}:{}:{}", r.start, r.step, r.stop);
    }
    case VKind::tensor: {
      const TensorObj& t = v.tensor();
      if (t.traced) return fmt::format("<traced {}>", type_str(t.type));
      if (t.type.rank() > 0) return array_text(t.data);
      switch (t.type.dtype) {
        case DType::f32:
          return julia_float(t.data.data<float>()[0], true);
        case DType::f64:
          return julia_float(t.data.data<double>()[0], false);
        case DType::i64:
          return std::to_string(t.data.data<int64_t>()[0]);
        case DType::boolean:
          return t.data.data<bool>()[0] ? "true" : "false";
        case DType::f16:
          return julia_float16(t.data.data<uint16_t>()[0], true);
      }
      return {};
    }
    default:
      return {};
  }
}

// One show of a value, which knows the containers it is inside: as Julia's show (its
// SHOWN_SET), a container met again inside itself shows as `#= circular reference @-N =#`,
// N containers up, and nesting is bounded (Nesting).
class Shower {
 public:
  std::string show(const Value& v) {
    switch (v.kind) {
      case VKind::tuple:
        if (v.tup().vector) return items(v, v.tup().items, {}, vector_open(v.tup()), "]");
        return items(v, v.tup().items, {}, "(", ")");
      case VKind::named_tuple:
        if (v.tup().items.empty()) return "NamedTuple()";
        return items(v, v.tup().items, v.tup().names, "(", ")");
      case VKind::object:
        return object(v);
      default:
        return leaf_text(v);
    }
  }

 private:
  // `open` items `close`, as Julia's show_delim_array; a named tuple's items with their
  // names (Julia's show of a named tuple is no container of SHOWN_SET).
  std::string items(const Value& v, const std::vector<Value>& items,
                    const std::vector<std::string>& names, std::string_view open,
                    std::string_view close) {
    std::string out(open);
    if (size_t up = nesting_.levels_up(v.obj.get()); up > 0) {
      return out + Nesting::circular_reference(up) + std::string(close);
    }
    NestingScope scope(nesting_, names.empty() ? v.obj.get() : nullptr, "print");
    for (size_t i = 0; i < items.size(); ++i) {
      if (i > 0) out += ", ";
      if (!names.empty()) out += names[i] + " = ";
      out += show(items[i]);
    }
    if (items.size() == 1 && open == "(") out += ',';
    return out + std::string(close);
  }

  // The prelude's Complex, Rational, Pair and Dict show as Julia's: `1 + 2im`, `1//3`,
  // `:a => 1`, `Dict(:a => 1)`; other instances as their constructor call.
  std::string object(const Value& v) {
    const StructObj& s = v.object();
    const std::string& name = s.type->name;
    const std::string generic = s.type->generic ? s.type->generic->name : "";
    bool pair =
        s.fields.size() == 2 && (generic == "Complex" || generic == "Rational" || name == "Pair");
    if (pair) {
      NestingScope scope(nesting_, nullptr, "print");
      if (generic == "Complex") return complex_text(s.fields[0], s.fields[1]);
      const char* between = generic == "Rational" ? "//" : " => ";
      return show(s.fields[0]) + between + show(s.fields[1]);
    }
    if (name == "Dict" && s.fields.size() == 3 && is_value_vector(s.fields[0]) &&
        is_value_vector(s.fields[1])) {
      if (size_t up = nesting_.levels_up(v.obj.get()); up > 0) {
        return "Dict(" + Nesting::circular_reference(up) + ")";
      }
      NestingScope scope(nesting_, v.obj.get(), "print");
      std::vector<std::string> entries;
      const auto &keys = s.fields[0].tup().items, &vals = s.fields[1].tup().items;
      for (size_t i = 0; i < keys.size() && i < vals.size(); ++i) {
        entries.push_back(show(keys[i]) + " => " + show(vals[i]));
      }
      return fmt::format("Dict({})", fmt::join(entries, ", "));
    }
    return items(v, s.fields, {}, name + "(", ")");
  }

  // Julia's show of a Complex: `1 + 2im`, `1.0 - 2.5im`, `1.0 + NaN*im`; `im` itself.
  std::string complex_text(const Value& re, const Value& im) {
    if (re.kind == VKind::boolean && im.kind == VKind::boolean) {
      return !re.b && im.b ? "im" : fmt::format("Complex({},{})", show(re), show(im));
    }
    Value part = im;
    bool negative = false, star = false;
    if (im.kind == VKind::integer) {
      negative = im.i < 0;
      part.i = negative ? -im.i : im.i;
    } else if (im.kind == VKind::float_) {
      negative = std::signbit(im.f) && !std::isnan(im.f);
      part.f = negative ? -im.f : im.f;
      star = !std::isfinite(im.f);
    }
    return show(re) + (negative ? " - " : " + ") + show(part) + (star ? "*im" : "im");
  }

  Nesting nesting_;
};

}  // namespace

std::string show(const Value& v) {
  return Shower().show(v);
}

std::string a_type_name(const Value& v) {
  std::string name = type_name_of(v);
  bool vowel = std::string_view("AEIOU").find(name[0]) != std::string_view::npos;
  return (vowel ? "an " : "a ") + name;
}

std::string print_text(const Value& v) {
  switch (v.kind) {
    case VKind::string:
    case VKind::symbol:
      return v.text();
    case VKind::float_:
      return float_text(v.f, v.dtype, false);
    case VKind::tensor: {
      const TensorObj& t = v.tensor();
      if (!t.traced && t.type.rank() == 0 && t.type.dtype == DType::f32) {
        return julia_float(t.data.data<float>()[0], false);
      }
      if (!t.traced && t.type.rank() == 0 && t.type.dtype == DType::f16) {
        return julia_float16(t.data.data<uint16_t>()[0], false);
      }
      return show(v);
    }
    default:
      return show(v);
  }
}

}  // namespace ytape::tracer
