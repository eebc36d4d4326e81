// Builds the ops of a tape being read from JSON, one OpRecord at a time (json_ops.h).
#include "io/json_ops.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>
#include <optional>

#include "tape/error.h"
#include "tape/float16.h"
#include "tape/strings.h"

namespace ytape::json_internal {

std::string shown(std::string_view s) {
  constexpr size_t kMax = 60;
  return s.size() <= kMax ? quoted(s) : quoted(s.substr(0, kMax)) + "...";
}

double nonfinite(std::string_view s) {
  if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
  return s == "inf" ? std::numeric_limits<double>::infinity()
                    : -std::numeric_limits<double>::infinity();
}

namespace {

std::string unknown_prim(std::string_view name) {
  std::string message = fmt::format(
      "unknown primitive {}: it is not in ytape's op list (docs/primitives.md)", shown(name));
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (Prim p : all_prims()) v.emplace_back(prim_name(p));
    return v;
  }();
  return message + did_you_mean(name, names);
}

}  // namespace

void OpBuilder::build_op() {
  if (!rec_.has(kOp)) lex_.fail(rec_.line, "an op has no \"op\" (input, const or a primitive)");
  constexpr uint32_t kCommon = bit(kOut) | bit(kOp) | bit(kType) | bit(kLoc) | bit(kScope);
  if (same(rec_.op, "input")) {
    check_keys(kCommon | bit(kName), bit(kOut) | bit(kName) | bit(kType), "an input");
    set_loc();
    build_input();
  } else if (same(rec_.op, "const")) {
    check_keys(kCommon | bit(kValue), bit(kOut) | bit(kValue) | bit(kType), "a const");
    set_loc();
    build_const();
  } else {
    std::optional<Prim> p = find_prim(rec_.op);
    if (!p) lex_.fail(rec_.key_line[kOp], "{}", unknown_prim(rec_.op));
    check_keys(kCommon | bit(kArgs) | bit(kAttrs) | bit(kRegions), bit(kOut) | bit(kArgs),
               "a call");
    set_loc();
    build_call(*p);
  }
}

void OpBuilder::check_keys(uint32_t allowed, uint32_t required, std::string_view what) {
  for (int k = 0; k < kNumOpKeys; ++k) {
    if (rec_.has(k) && !(allowed & bit(k))) {
      lex_.fail(rec_.key_line[k], "{}: unexpected key \"{}\" ({} has {})", rec_.op, kOpKeys[k],
                what, key_list(kOpKeys, allowed));
    }
  }
  for (int k = 0; k < kNumOpKeys; ++k) {
    if (!rec_.has(k) && (required & bit(k))) {
      lex_.fail(rec_.line, "{}: missing key \"{}\"", rec_.op, kOpKeys[k]);
    }
  }
}

bool split_loc(std::string_view loc, std::string_view& file, uint32_t& line) {
  size_t colon = loc.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  auto [end, ec] = std::from_chars(loc.data() + colon + 1, loc.data() + loc.size(), line);
  if (ec != std::errc() || end != loc.data() + loc.size()) return false;
  file = loc.substr(0, colon);
  return true;
}

void OpBuilder::set_loc() {
  Loc loc;
  if (rec_.has(kScope)) {
    if (rec_.scope < 1 || rec_.scope > UINT32_MAX) {
      lex_.fail(rec_.key_line[kScope], "{}: \"scope\" is {}; scopes are numbered from 1", rec_.op,
                rec_.scope);
    }
    loc.scope = static_cast<uint32_t>(rec_.scope);
    if (rec_.scope > scopes_.most) scopes_ = {rec_.scope, rec_.key_line[kScope]};
  }
  if (rec_.has(kLoc)) {
    std::string_view file;
    if (!split_loc(rec_.loc, file, loc.line)) {
      lex_.fail(rec_.key_line[kLoc], "{}: bad \"loc\" {} (expected \"file:line\")", rec_.op,
                shown(rec_.loc));
    }
    // Ops come in runs from one file; interning each op's file again would cost a string.
    if (file_index_ == 0 || file != file_) {
      file_index_ = files_.intern_file(file);
      file_ = file;
    }
    loc.file = file_index_;
  }
  b_.set_loc(loc);
}

void OpBuilder::require_one_out(std::string_view what) {
  if (rec_.out.size() != 1) {
    lex_.fail(rec_.key_line[kOut], "{}: \"out\" must list one var, not {}", what, rec_.out.size());
  }
  if (rec_.types.size() != 1) {
    lex_.fail(rec_.key_line[kType], "{}: \"type\" must list one type, not {}", what,
              rec_.types.size());
  }
}

void OpBuilder::build_input() {
  require_one_out("input");
  Var v;
  try {
    v = b_.input(std::string(rec_.name), rec_.types[0]);
  } catch (const UserError& e) {
    lex_.fail(rec_.line, "{}", e.what());
  }
  define(rec_.out[0], v);
}

void OpBuilder::build_const() {
  require_one_out("const");
  const Type& t = rec_.types[0];
  if (static_cast<int64_t>(rec_.value.size()) != t.size()) {
    lex_.fail(rec_.key_line[kValue], "const: \"value\" has {} element{}, but type {} has {}",
              rec_.value.size(), rec_.value.size() == 1 ? "" : "s", type_str(t), t.size());
  }
  int size = dtype_size(t.dtype);
  std::vector<uint8_t> bytes(rec_.value.size() * size);
  for (size_t i = 0; i < rec_.value.size(); ++i) {
    literal_bytes(rec_.value[i], t.dtype, bytes.data() + i * size);
  }
  define(rec_.out[0], b_.constant(t, std::move(bytes)));
}

void OpBuilder::literal_bytes(const Literal& lit, DType dtype, uint8_t* dst) const {
  switch (dtype) {
    case DType::f32: {
      float v = float_literal<float>(lit, dtype);
      std::memcpy(dst, &v, 4);
      return;
    }
    case DType::f64: {
      double v = float_literal<double>(lit, dtype);
      std::memcpy(dst, &v, 8);
      return;
    }
    case DType::i64: {
      if (lit.kind != Literal::number || !lit.integer) refuse(lit, dtype, "write an integer");
      int64_t v = lex_.to_int64(lit.text, lit.line);
      std::memcpy(dst, &v, 8);
      return;
    }
    case DType::boolean:
      if (lit.kind != Literal::boolean) refuse(lit, dtype, "write true or false");
      *dst = lit.text == "true";
      return;
    case DType::f16: {
      uint16_t v = f16_literal(lit);
      std::memcpy(dst, &v, 2);
      return;
    }
  }
}

template <typename T>
T OpBuilder::float_literal(const Literal& lit, DType dtype) const {
  if (lit.kind == Literal::boolean) refuse(lit, dtype, "write a number");
  if (lit.kind == Literal::nonfinite) return static_cast<T>(nonfinite(lit.text));
  return lex_.to_float<T>(lit.text, lit.line, dtype_name(dtype));
}

// Read as a double and rounded once; what f32 and f64 refuse (out of range, too small to
// be anything but 0) is refused for f16's narrower range too.
uint16_t OpBuilder::f16_literal(const Literal& lit) const {
  double d = float_literal<double>(lit, DType::f16);
  uint16_t h = f16_from_double(d);
  if (lit.kind == Literal::number && (h & 0x7fff) == 0x7c00) {
    lex_.fail(lit.line, "{} is out of range for f16 (infinities are written \"inf\" and \"-inf\")",
              lit.text);
  }
  if ((h & 0x7fff) == 0 && d != 0) {
    lex_.fail(lit.line, "{} is too small for f16: it would round to 0 (write 0 if that is meant)",
              lit.text);
  }
  return h;
}

void OpBuilder::refuse(const Literal& lit, DType dtype, std::string_view hint) const {
  std::string text = lit.kind == Literal::nonfinite ? quoted(lit.text) : std::string(lit.text);
  lex_.fail(lit.line, "const: value {} is not {} {} ({})", text,
            dtype == DType::boolean ? "a" : "an", dtype_name(dtype), hint);
}

void OpBuilder::build_call(Prim p) {
  const PrimInfo& info = prim_info(p);
  if (info.outputs != kVariadic && rec_.out.size() != static_cast<size_t>(info.outputs)) {
    lex_.fail(rec_.key_line[kOut], "{} has {} output{}, but \"out\" lists {}", info.name,
              info.outputs, info.outputs == 1 ? "" : "s", rec_.out.size());
  }
  if (rec_.has(kType) && rec_.types.size() != rec_.out.size()) {
    lex_.fail(rec_.key_line[kType], "{}: \"type\" lists {} type{} for {} output{}", info.name,
              rec_.types.size(), rec_.types.size() == 1 ? "" : "s", rec_.out.size(),
              rec_.out.size() == 1 ? "" : "s");
  }
  VarList args;
  args.resize(rec_.args.size());
  for (size_t i = 0; i < args.size(); ++i) args[i] = use(rec_.args[i]);
  Attrs attrs = call_attrs(info);
  const VarList* created = nullptr;
  try {
    created = &b_.record(p, std::move(args), attrs, std::move(rec_.regions)).outs;
  } catch (const UserError& e) {
    lex_.fail(rec_.line, "{}", e.what());
  }
  const VarList& outs = *created;  // valid until the next op is added
  for (size_t i = 0; rec_.has(kType) && i < outs.size(); ++i) {
    if (rec_.types[i] == b_.type(outs[i])) continue;
    std::string which = outs.size() > 1 ? fmt::format(" output {}:", i + 1) : "";
    lex_.fail(rec_.key_line[kType], "{}:{} the file says {} but the inferred type is {}", info.name,
              which, type_str(rec_.types[i]), type_str(b_.type(outs[i])));
  }
  for (size_t i = 0; i < outs.size(); ++i) define(rec_.out[i], outs[i]);
}

// Gives string values the kind the schema asks for: a dtype name, or a non-finite float.
// Everything else goes to the builder as written, whose normalize_attrs judges it.
Attrs OpBuilder::call_attrs(const PrimInfo& info) {
  Attrs attrs;
  if (!rec_.has(kAttrs)) return attrs;
  for (size_t i = 0; i < rec_.attrs.size(); ++i) {
    Attr& a = rec_.attrs[i];
    const std::string* s = std::get_if<std::string>(&a.value);
    auto spec = std::find_if(info.attrs.begin(), info.attrs.end(),
                             [&](const AttrSpec& spec) { return spec.name == a.name; });
    if (s != nullptr && spec != info.attrs.end()) {
      DType dtype{};
      if (spec->kind == AttrKind::dtype) {
        if (!parse_dtype(*s, &dtype)) {
          lex_.fail(rec_.attr_lines[i],
                    "{}: attribute '{}': unknown dtype {} (expected f32, f64, f16, i64 or bool)",
                    info.name, a.name, shown(*s));
        }
        a.value = dtype;
      } else if (spec->kind == AttrKind::float_ && (*s == "nan" || *s == "inf" || *s == "-inf")) {
        a.value = nonfinite(*s);
      }
    }
    attrs.push_back(std::move(a));
  }
  return attrs;
}

void OpBuilder::define(int64_t id, Var v) {
  if (const VarTable::Entry* old = vars_.add(id, {v, rec_.key_line[kOut]})) {
    lex_.fail(rec_.key_line[kOut], "{}: var {} is defined twice (first on line {})", rec_.op, id,
              old->line);
  }
}

Var OpBuilder::use(int64_t id) {
  const VarTable::Entry* e = vars_.find(id);
  if (e == nullptr) {
    lex_.fail(rec_.key_line[kArgs], "{}: var {} is not defined by an earlier op", rec_.op, id);
  }
  return e->var;
}

}  // namespace ytape::json_internal
