// Reads the JSON form of a tape (docs/tape-format.md). A DOM parser would cost too much time
// and memory at 10^6 ops and would lose line numbers, so a pull lexer (json_lexer.h) is
// driven by the format's fixed structure. Nothing recurses: every nesting level the format
// has is a separate function, and anything nested deeper is refused at its first bracket.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "tape/builder.h"
#include "tape/error.h"
#include "tape/json.h"
#include "tape/json_lexer.h"
#include "tape/strings.h"

namespace ytape {

namespace {

using json_internal::kEnd;
using json_internal::Lexer;
using json_internal::Number;

// Keys of an op object, in canonical order.
enum OpKey : uint8_t { kOut, kOp, kName, kValue, kArgs, kAttrs, kType, kLoc, kNumOpKeys };
constexpr std::string_view kOpKeys[kNumOpKeys] = {"out",  "op",    "name", "value",
                                                  "args", "attrs", "type", "loc"};
// Keys of the tape object, in canonical order.
enum TopKey : uint8_t { kFormat, kVersion, kTapeName, kMeta, kOps, kOutputs, kNumTopKeys };
constexpr std::string_view kTopKeys[kNumTopKeys] = {"format", "version", "name",
                                                    "meta",   "ops",     "outputs"};

constexpr uint32_t bit(int key) {
  return 1u << key;
}

// Compares short strings without a call to memcmp: keys are matched ~5 times per op.
bool same(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

template <size_t N>
int find_key(const std::string_view (&keys)[N], std::string_view key) {
  for (size_t i = 0; i < N; ++i) {
    if (same(keys[i], key)) return static_cast<int>(i);
  }
  return -1;
}

// "out, op, name" for the keys whose bits are set.
template <size_t N>
std::string key_list(const std::string_view (&keys)[N], uint32_t mask = ~0u) {
  std::string out;
  for (size_t i = 0; i < N; ++i) {
    if (!(mask & bit(static_cast<int>(i)))) continue;
    if (!out.empty()) out += ", ";
    out += keys[i];
  }
  return out;
}

// A string from the file, quoted for a message and cut short: messages stay bounded.
std::string shown(std::string_view s) {
  constexpr size_t kMax = 60;
  return s.size() <= kMax ? quoted(s) : quoted(s.substr(0, kMax)) + "...";
}

std::string unknown_prim(std::string_view name) {
  std::string message = fmt::format(
      "unknown primitive {}: it is not in ytape's op list (docs/primitives.md)", shown(name));
  std::string_view best;
  size_t best_distance = 3;  // suggest only a near miss
  for (Prim p : all_prims()) {
    if (name.size() > 2 * prim_name(p).size()) continue;
    size_t d = edit_distance(name, prim_name(p));
    if (d < best_distance) {
      best_distance = d;
      best = prim_name(p);
    }
  }
  if (!best.empty()) message += fmt::format("; did you mean \"{}\"?", best);
  return message;
}

// The most attributes any primitive takes; a longer "attrs" object is wrong whatever its op.
size_t max_attrs() {
  static const size_t n = [] {
    size_t m = 0;
    for (Prim p : all_prims()) m = std::max(m, prim_info(p).attrs.size());
    return m;
  }();
  return n;
}

double nonfinite(std::string_view s) {
  if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
  return s == "inf" ? std::numeric_limits<double>::infinity()
                    : -std::numeric_limits<double>::infinity();
}

/// Var ids of the file -> vars of the new tape. A canonical file numbers vars 1, 2, 3, ...,
/// so those index a vector; any other id (a hand-written 10, 20, 30) goes to a hash map.
class VarTable {
 public:
  struct Entry {
    Var var;
    int64_t line;  ///< where it was defined, for messages
  };
  /// The entry of `id`, or nullptr.
  const Entry* find(int64_t id) const {
    if (id >= 1 && id <= static_cast<int64_t>(dense_.size())) return &dense_[id - 1];
    auto it = sparse_.find(id);
    return it == sparse_.end() ? nullptr : &it->second;
  }
  /// Adds an entry for `id` and returns nullptr; if `id` has one already, returns that.
  const Entry* add(int64_t id, Entry entry) {
    if (const Entry* old = find(id)) return old;
    if (id == static_cast<int64_t>(dense_.size()) + 1) {
      dense_.push_back(entry);
    } else {
      sparse_.emplace(id, entry);
    }
    return nullptr;
  }

 private:
  std::vector<Entry> dense_;  // ids 1..size
  std::unordered_map<int64_t, Entry> sparse_;
};

/// One element of a const's "value", kept as written until the op's "type" is known.
struct Literal {
  enum Kind : uint8_t { number, boolean, nonfinite } kind = number;
  bool integer = false;   ///< a number without fraction or exponent
  std::string_view text;  ///< digits, "true"/"false", or "nan"/"inf"/"-inf"
  int64_t line = 0;
};

/// One op object as read, before it is checked and built. Reused from op to op, so that
/// its vectors keep their capacity.
struct OpRecord {
  int64_t line = 0;   ///< of the op's '{'
  uint32_t seen = 0;  ///< bit k: key k was given
  int64_t key_line[kNumOpKeys] = {};
  std::string op, name, loc;
  std::vector<int64_t> out, args;
  std::vector<Literal> value;
  std::vector<Attr> attrs;
  std::vector<int64_t> attr_lines;
  std::vector<Type> types;

  bool has(int key) const { return seen & bit(key); }
};

class TapeReader {
 public:
  TapeReader(std::string_view text, std::string_view source) : lex_(text, source) {
    // A canonical op line takes at least ~48 bytes: reserving that many ops spares the copies
    // of growing vectors without over-reserving much for pretty-printed files.
    size_t estimate = text.size() / 48;
    b_.reserve(estimate, estimate);
  }

  Tape read() {
    if (lex_.peek() == kEnd) lex_.fail(lex_.line(), "empty input; expected a tape (a JSON object)");
    lex_.expect('{', "'{' (a tape is a JSON object)");
    if (!lex_.consume('}')) {
      do {
        int64_t line = lex_.line();
        std::string_view key = lex_.key();
        int k = find_key(kTopKeys, key);
        if (k < 0) {
          lex_.fail(line, "unknown key {} in the tape (expected {})", shown(key),
                    key_list(kTopKeys));
        }
        if (seen_ & bit(k)) lex_.fail(line, "duplicate key \"{}\" in the tape", key);
        seen_ |= bit(k);
        read_top(static_cast<TopKey>(k));
      } while (lex_.more('}'));
    }
    int64_t close_line = lex_.here();
    lex_.finish();
    if (!(seen_ & bit(kFormat))) {
      lex_.fail(close_line, "not a ytape tape: it has no \"format\":\"{}\"", kTapeFormat);
    }
    for (TopKey k : {kVersion, kOps, kOutputs}) {
      if (!(seen_ & bit(k))) lex_.fail(close_line, "the tape has no \"{}\"", kTopKeys[k]);
    }
    return finish();
  }

 private:
  void read_top(TopKey key) {
    int64_t line = lex_.line();
    switch (key) {
      case kFormat: {
        std::string_view format = lex_.string();
        if (format != kTapeFormat) {
          lex_.fail(line, "not a ytape tape: \"format\" is {}, not \"{}\"", shown(format),
                    kTapeFormat);
        }
        return;
      }
      case kVersion: {
        int64_t v = lex_.integer("\"version\"");
        if (v > kTapeFormatVersion) {
          lex_.fail(line, "written by a newer ytape (format version {}); this one reads version {}",
                    v, kTapeFormatVersion);
        }
        if (v < 1) {
          lex_.fail(line, "format version {} does not exist; this ytape reads version {}", v,
                    kTapeFormatVersion);
        }
        return;
      }
      case kTapeName:
        name_ = lex_.string();
        return;
      case kMeta:
        read_meta();
        return;
      case kOps:
        read_ops();
        return;
      case kOutputs:
        read_outputs();
        return;
      case kNumTopKeys:
        break;
    }
  }

  // A repeated meta key is kept, in order: the tape's meta is a list of pairs, and every
  // valid tape must read back as written.
  void read_meta() {
    lex_.expect('{', "'{' (\"meta\" is an object of strings)");
    if (lex_.consume('}')) return;
    do {
      std::string key(lex_.key());
      meta_.emplace_back(std::move(key), lex_.string("a string (meta values are strings)"));
    } while (lex_.more('}'));
  }

  void read_outputs() {
    lex_.expect('[', "'[' (\"outputs\" is a list)");
    if (lex_.consume(']')) return;
    std::unordered_set<std::string> names;
    do {
      PendingOutput o{0, {}, lex_.line()};
      lex_.expect('{', "an output object");
      uint32_t seen = 0;
      if (!lex_.consume('}')) {
        do {
          int64_t line = lex_.line();
          std::string_view key = lex_.key();
          int k = key == "var" ? 0 : key == "name" ? 1 : -1;
          if (k < 0) {
            lex_.fail(line, "unknown key {} in an output (expected var, name)", shown(key));
          }
          if (seen & bit(k)) lex_.fail(line, "duplicate key \"{}\" in an output", key);
          seen |= bit(k);
          if (k == 0) o.id = read_id();
          if (k == 1) o.name = lex_.string();
        } while (lex_.more('}'));
      }
      if (!(seen & bit(0))) lex_.fail(o.line, "an output has no \"var\"");
      if (!(seen & bit(1))) lex_.fail(o.line, "an output has no \"name\"");
      if (!names.insert(o.name).second) {
        lex_.fail(o.line, "two outputs are named {}", shown(o.name));
      }
      outputs_.push_back(std::move(o));
    } while (lex_.more(']'));
  }

  void read_ops() {
    lex_.expect('[', "'[' (\"ops\" is a list)");
    if (lex_.consume(']')) return;
    do {
      read_op();
      build_op();
    } while (lex_.more(']'));
  }

  void read_op() {
    rec_.line = lex_.line();
    rec_.seen = 0;
    lex_.expect('{', "an op (a JSON object)");
    if (lex_.consume('}')) return;
    do {
      int64_t line = lex_.line();
      std::string_view key = lex_.key();
      int k = find_key(kOpKeys, key);
      if (k < 0) {
        lex_.fail(line, "unknown key {} in an op (expected {})", shown(key), key_list(kOpKeys));
      }
      if (rec_.has(k)) lex_.fail(line, "duplicate key \"{}\" in an op", key);
      rec_.seen |= bit(k);
      rec_.key_line[k] = line;
      switch (static_cast<OpKey>(k)) {
        case kOut:
          read_ids(rec_.out);
          break;
        case kOp:
          rec_.op = lex_.string();
          break;
        case kName:
          rec_.name = lex_.string();
          break;
        case kValue:
          read_literals();
          break;
        case kArgs:
          read_ids(rec_.args);
          break;
        case kAttrs:
          read_attrs();
          break;
        case kType:
          read_types();
          break;
        case kLoc:
          rec_.loc = lex_.string();
          break;
        case kNumOpKeys:
          break;
      }
    } while (lex_.more('}'));
  }

  int64_t read_id() {
    int64_t line = lex_.line();
    int64_t id = lex_.integer("a var id");
    if (id < 1) lex_.fail(line, "var ids are positive integers, got {}", id);
    return id;
  }

  void read_ids(std::vector<int64_t>& ids) {
    ids.clear();
    lex_.expect('[', "'[' (a list of var ids)");
    if (lex_.consume(']')) return;
    do {
      ids.push_back(read_id());
    } while (lex_.more(']'));
  }

  void read_literals() {
    rec_.value.clear();
    lex_.expect('[', "'[' (\"value\" is a list of elements)");
    if (lex_.consume(']')) return;
    do {
      Literal lit;
      lit.line = lex_.line();
      int c = lex_.peek();
      if (c == '"') {
        std::string_view s = lex_.string();
        lit.kind = Literal::nonfinite;
        lit.text = s == "nan" ? "nan" : s == "inf" ? "inf" : s == "-inf" ? "-inf" : "";
        if (lit.text.empty()) {
          lex_.fail(lit.line,
                    "const value {} is not a number (the non-finite values are "
                    "\"nan\", \"inf\" and \"-inf\")",
                    shown(s));
        }
      } else if (c == 't' || c == 'f') {
        lit.kind = Literal::boolean;
        lit.text = lex_.boolean() ? "true" : "false";
      } else if (c == '[') {
        lex_.fail(lit.line,
                  "\"value\" is a flat list of elements in column-major order, not nested lists");
      } else {
        Number n = lex_.number();
        lit.text = n.text;
        lit.integer = n.integer;
      }
      rec_.value.push_back(lit);
    } while (lex_.more(']'));
  }

  void read_attrs() {
    rec_.attrs.clear();
    rec_.attr_lines.clear();
    lex_.expect('{', "'{' (\"attrs\" is an object)");
    if (lex_.consume('}')) return;
    do {
      int64_t line = lex_.line();
      std::string name(lex_.key());
      for (const Attr& a : rec_.attrs) {
        if (a.name == name) lex_.fail(line, "duplicate attribute {}", shown(name));
      }
      if (rec_.attrs.size() == max_attrs()) {
        lex_.fail(line, "too many attributes: no primitive takes more than {}", max_attrs());
      }
      rec_.attrs.push_back({std::move(name), read_attr_value()});
      rec_.attr_lines.push_back(line);
    } while (lex_.more('}'));
  }

  // The value as written; strings are given their kind (dtype, non-finite float) later,
  // from the primitive's schema, since "op" may come after "attrs".
  AttrValue read_attr_value() {
    int64_t line = lex_.line();
    int c = lex_.peek();
    if (c == '"') return std::string(lex_.string());
    if (c == 't' || c == 'f') return lex_.boolean();
    if (c == '[') {
      std::vector<int64_t> v;
      lex_.expect('[', "'['");
      if (lex_.consume(']')) return v;
      do {
        v.push_back(lex_.integer("an element of a list attribute"));
      } while (lex_.more(']'));
      return v;
    }
    if (c != '-' && (c < '0' || c > '9')) {
      lex_.fail(line,
                "expected an attribute value (a number, string, bool or list of integers), "
                "got {}",
                lex_.next());
    }
    Number n = lex_.number();
    if (n.integer) return lex_.to_int64(n.text, line);
    return lex_.to_float<double>(n.text, line, "a float attribute");
  }

  void read_types() {
    rec_.types.clear();
    lex_.expect('[', "'[' (\"type\" is a list of types, one per output)");
    if (lex_.consume(']')) return;
    std::string why;
    do {
      int64_t line = lex_.line();
      Type t;
      if (!parse_type(lex_.string("a type such as \"f32[3]\""), &t, &why)) {
        lex_.fail(line, "{}", why);
      }
      rec_.types.push_back(std::move(t));
    } while (lex_.more(']'));
  }

  void build_op() {
    if (!rec_.has(kOp)) lex_.fail(rec_.line, "an op has no \"op\" (input, const or a primitive)");
    constexpr uint32_t kCommon = bit(kOut) | bit(kOp) | bit(kType) | bit(kLoc);
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
      check_keys(kCommon | bit(kArgs) | bit(kAttrs), bit(kOut) | bit(kArgs), "a call");
      set_loc();
      build_call(*p);
    }
  }

  void check_keys(uint32_t allowed, uint32_t required, std::string_view what) {
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

  void set_loc() {
    if (!rec_.has(kLoc)) {
      b_.set_loc({});
      return;
    }
    std::string_view loc = rec_.loc;
    size_t colon = loc.rfind(':');
    uint32_t line = 0;
    bool ok = colon != std::string_view::npos && colon > 0;
    if (ok) {
      auto [end, ec] = std::from_chars(loc.data() + colon + 1, loc.data() + loc.size(), line);
      ok = ec == std::errc() && end == loc.data() + loc.size();
    }
    if (!ok) {
      lex_.fail(rec_.key_line[kLoc], "{}: bad \"loc\" {} (expected \"file:line\")", rec_.op,
                shown(loc));
    }
    std::string_view file = loc.substr(0, colon);
    // Ops come in runs from one file; interning each op's file again would cost a string.
    if (file_index_ == 0 || file != file_) {
      file_index_ = b_.intern_file(file);
      file_ = file;
    }
    b_.set_loc({file_index_, line});
  }

  void require_one_out(std::string_view what) {
    if (rec_.out.size() != 1) {
      lex_.fail(rec_.key_line[kOut], "{}: \"out\" must list one var, not {}", what,
                rec_.out.size());
    }
    if (rec_.types.size() != 1) {
      lex_.fail(rec_.key_line[kType], "{}: \"type\" must list one type, not {}", what,
                rec_.types.size());
    }
  }

  void build_input() {
    require_one_out("input");
    Var v;
    try {
      v = b_.input(rec_.name, rec_.types[0]);
    } catch (const UserError& e) {
      lex_.fail(rec_.line, "{}", e.what());
    }
    define(rec_.out[0], v);
  }

  void build_const() {
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

  void literal_bytes(const Literal& lit, DType dtype, uint8_t* dst) const {
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
    }
  }

  template <typename T>
  T float_literal(const Literal& lit, DType dtype) const {
    if (lit.kind == Literal::boolean) refuse(lit, dtype, "write a number");
    if (lit.kind == Literal::nonfinite) return static_cast<T>(nonfinite(lit.text));
    return lex_.to_float<T>(lit.text, lit.line, dtype_name(dtype));
  }

  [[noreturn]] void refuse(const Literal& lit, DType dtype, std::string_view hint) const {
    std::string text = lit.kind == Literal::nonfinite ? quoted(lit.text) : std::string(lit.text);
    lex_.fail(lit.line, "const: value {} is not {} {} ({})", text,
              dtype == DType::boolean ? "a" : "an", dtype_name(dtype), hint);
  }

  void build_call(Prim p) {
    const PrimInfo& info = prim_info(p);
    if (rec_.out.size() != static_cast<size_t>(info.outputs)) {
      lex_.fail(rec_.key_line[kOut], "{} has {} output{}, but \"out\" lists {}", info.name,
                info.outputs, info.outputs == 1 ? "" : "s", rec_.out.size());
    }
    if (rec_.has(kType) && rec_.types.size() != rec_.out.size()) {
      lex_.fail(rec_.key_line[kType], "{}: \"type\" lists {} type{} for {} output{}", info.name,
                rec_.types.size(), rec_.types.size() == 1 ? "" : "s", rec_.out.size(),
                rec_.out.size() == 1 ? "" : "s");
    }
    std::vector<Var> args;
    args.reserve(rec_.args.size());
    for (int64_t id : rec_.args) args.push_back(use(id));
    Attrs attrs = call_attrs(info);
    std::vector<Var> outs;
    try {
      outs = b_.call(p, std::move(args), attrs);
    } catch (const UserError& e) {
      lex_.fail(rec_.line, "{}", e.what());
    }
    for (size_t i = 0; rec_.has(kType) && i < outs.size(); ++i) {
      if (rec_.types[i] == b_.type(outs[i])) continue;
      std::string which = outs.size() > 1 ? fmt::format(" output {}:", i + 1) : "";
      lex_.fail(rec_.key_line[kType], "{}:{} the file says {} but the inferred type is {}",
                info.name, which, type_str(rec_.types[i]), type_str(b_.type(outs[i])));
    }
    for (size_t i = 0; i < outs.size(); ++i) define(rec_.out[i], outs[i]);
  }

  // Gives string values the kind the schema asks for: a dtype name, or a non-finite float.
  // Everything else goes to the builder as written, whose normalize_attrs judges it.
  Attrs call_attrs(const PrimInfo& info) {
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
                      "{}: attribute '{}': unknown dtype {} (expected f32, f64, i64 or bool)",
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

  void define(int64_t id, Var v) {
    if (const VarTable::Entry* old = vars_.add(id, {v, rec_.key_line[kOut]})) {
      lex_.fail(rec_.key_line[kOut], "{}: var {} is defined twice (first on line {})", rec_.op, id,
                old->line);
    }
  }

  Var use(int64_t id) {
    const VarTable::Entry* e = vars_.find(id);
    if (e == nullptr) {
      lex_.fail(rec_.key_line[kArgs], "{}: var {} is not defined by an earlier op", rec_.op, id);
    }
    return e->var;
  }

  Tape finish() {
    for (PendingOutput& o : outputs_) {
      const VarTable::Entry* e = vars_.find(o.id);
      if (e == nullptr) {
        lex_.fail(o.line, "output {} is var {}, which no op defines", shown(o.name), o.id);
      }
      b_.output(e->var, std::move(o.name));
    }
    Tape t = b_.finish();
    t.name = std::move(name_);
    t.meta = std::move(meta_);
    return t;
  }

  struct PendingOutput {
    int64_t id;
    std::string name;
    int64_t line;
  };

  Lexer lex_;
  Builder b_;
  OpRecord rec_;
  uint32_t seen_ = 0;  // bit k: top-level key k was given
  VarTable vars_;
  // Outputs may come before "ops" in a hand-written file, so they are resolved at the end.
  std::vector<PendingOutput> outputs_;
  std::string name_;
  std::vector<std::pair<std::string, std::string>> meta_;
  std::string file_;  // the file of the last location, and its index in the new tape
  uint32_t file_index_ = 0;
};

}  // namespace

Tape read_tape_json(std::string_view text, std::string_view source) {
  return TapeReader(text, source).read();
}

}  // namespace ytape
