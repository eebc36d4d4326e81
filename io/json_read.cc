// Reads the JSON form of a tape (docs/tape-format.md). A DOM parser would cost too much time
// and memory at 10^6 ops and would lose line numbers, so a pull lexer (json_lexer.h) is
// driven by the format's fixed structure. Only regions recurse, each read by a TapeReader of
// its own, at most kMaxRegionDepth deep; every other nesting level the format has is a
// separate function, and anything nested deeper is refused at its first bracket. Each op
// object is read into an OpRecord, which json_ops.cc checks and builds.
#include <algorithm>
#include <array>
#include <unordered_set>

#include "io/json.h"
#include "io/json_lexer.h"
#include "io/json_ops.h"
#include "tape/builder.h"

namespace ytape {

namespace {

using namespace json_internal;

// Keys of the tape object, in canonical order.
enum TopKey : uint8_t { kFormat, kVersion, kTapeName, kMeta, kScopes, kOps, kOutputs, kNumTopKeys };
constexpr std::string_view kTopKeys[kNumTopKeys] = {"format", "version", "name",   "meta",
                                                    "scopes", "ops",     "outputs"};

template <size_t N>
int find_key(const std::string_view (&keys)[N], std::string_view key) {
  for (size_t i = 0; i < N; ++i) {
    if (same(keys[i], key)) return static_cast<int>(i);
  }
  return -1;
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

class TapeReader {
 public:
  // Reads from `lex`; `root` is the reader of the outermost tape (null for that one), whose
  // builder holds the files that locations name, and `depth` counts the regions around.
  TapeReader(Lexer& lex, size_t reserve, TapeReader* root, int depth)
      : lex_(lex), root_(root != nullptr ? root : this), depth_(depth) {
    b_.reserve(reserve, reserve);
    ops_.reserve(reserve);
  }

  // Reports the text read to `consumed` between the ops of this, the outermost, tape.
  void report_to(const std::function<void(size_t)>& consumed) { consumed_ = &consumed; }

  Tape read() {
    if (lex_.peek() == kEnd) lex_.fail(lex_.line(), "empty input; expected a tape (a JSON object)");
    lex_.expect('{', "'{' (a tape is a JSON object)");
    uint32_t seen = read_members(kTopKeys, "the tape",
                                 [&](int k, int64_t) { read_top(static_cast<TopKey>(k)); });
    int64_t close_line = lex_.here();
    lex_.finish();
    if (!(seen & bit(kFormat))) {
      lex_.fail(close_line, "not a ytape tape: it has no \"format\":\"{}\"", kTapeFormat);
    }
    for (TopKey k : {kVersion, kOps, kOutputs}) {
      if (!(seen & bit(k))) lex_.fail(close_line, "the tape has no \"{}\"", kTopKeys[k]);
    }
    return finish();
  }

  // A region object: {"name": ..., "ops": [...], "yield": [var ids]}.
  Tape read_region() {
    int64_t open_line = lex_.line();
    lex_.expect('{', "a region (a JSON object with name, ops and yield)");
    constexpr std::string_view kKeys[] = {"name", "ops", "yield"};
    uint32_t seen = read_members(kKeys, "a region", [&](int k, int64_t) {
      if (k == 0) name_ = lex_.string();
      if (k == 1) read_ops();
      if (k == 2) read_yield();
    });
    for (int k = 0; k < 3; ++k) {
      if (!(seen & bit(k))) lex_.fail(open_line, "a region has no \"{}\"", kKeys[k]);
    }
    return finish();
  }

 private:
  // The members of an object whose '{' was read, each key one of `keys`, at most once:
  // read(k, line) reads the value of keys[k]. Returns the keys given (bit k: keys[k]).
  template <size_t N, typename Read>
  uint32_t read_members(const std::string_view (&keys)[N], std::string_view what, Read read) {
    uint32_t seen = 0;
    if (lex_.consume('}')) return seen;
    do {
      int64_t line = lex_.line();
      std::string_view key = lex_.key();
      int k = find_key(keys, key);
      if (k < 0) {
        lex_.fail(line, "unknown key {} in {} (expected {})", shown(key), what, key_list(keys));
      }
      if (seen & bit(k)) lex_.fail(line, "duplicate key \"{}\" in {}", key, what);
      seen |= bit(k);
      read(k, line);
    } while (lex_.more('}'));
    return seen;
  }

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
      case kScopes:
        read_scopes();
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

  // The layer calls that ops name (Tape::scopes), each once, each after its caller.
  void read_scopes() {
    lex_.expect('[', "'[' (\"scopes\" is a list)");
    if (lex_.consume(']')) return;
    do {
      int64_t open_line = lex_.line();
      Scope s;
      lex_.expect('{', "a scope object");
      constexpr std::string_view kKeys[] = {"path", "layer", "made", "call", "parent"};
      uint32_t seen = read_members(kKeys, "a scope", [&](int k, int64_t line) {
        if (k == 0) s.path = lex_.string();
        if (k == 1) s.layer = lex_.string();
        if (k == 2) s.made = scope_loc(line, "made");
        if (k == 3) s.call = scope_loc(line, "call");
        if (k == 4) s.parent = scope_parent(line);
      });
      if (!(seen & bit(1))) lex_.fail(open_line, "a scope has no \"layer\"");
      size_t index = b_.tape().scopes.size() + 1;
      if (s.parent >= index) {
        lex_.fail(open_line, "scope {} names scope {} as its caller; a caller comes before", index,
                  s.parent);
      }
      uint32_t got = b_.intern_scope(s);
      if (got != index) lex_.fail(open_line, "scope {} repeats scope {}", index, got);
    } while (lex_.more(']'));
  }

  Loc scope_loc(int64_t line, std::string_view key) {
    std::string_view text = lex_.string(), file;
    Loc loc;
    if (!split_loc(text, file, loc.line)) {
      lex_.fail(line, "a scope's \"{}\" is {}, not \"file:line\"", key, shown(text));
    }
    loc.file = b_.intern_file(file);
    return loc;
  }

  uint32_t scope_parent(int64_t line) {
    int64_t parent = lex_.integer("\"parent\"");
    if (parent < 0 || parent > UINT32_MAX)
      lex_.fail(line, "a scope's \"parent\" is {}; scopes are numbered from 1", parent);
    return static_cast<uint32_t>(parent);
  }

  void read_outputs() {
    lex_.expect('[', "'[' (\"outputs\" is a list)");
    if (lex_.consume(']')) return;
    std::unordered_set<std::string> names;
    do {
      PendingOutput o{0, {}, lex_.line()};
      lex_.expect('{', "an output object");
      constexpr std::string_view kKeys[] = {"var", "name"};
      uint32_t seen = read_members(kKeys, "an output", [&](int k, int64_t) {
        if (k == 0) o.id = read_id();
        if (k == 1) o.name = lex_.string();
      });
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
      ops_.build_op();
      if (depth_ == 0 && consumed_ != nullptr && lex_.offset() >= next_report_) {
        (*consumed_)(lex_.offset());
        next_report_ = lex_.offset() + kReportEvery;
      }
    } while (lex_.more(']'));
  }

  void read_op() {
    rec_.line = lex_.line();
    rec_.seen = 0;
    rec_.regions.clear();
    lex_.expect('{', "an op (a JSON object)");
    if (lex_.consume('}')) return;
    int k = -1;
    do {
      int64_t line = lex_.line();
      k = next_op_key(k);
      if (k < 0) {
        std::string_view key = lex_.key();
        k = find_key(kOpKeys, key);
        if (k < 0) {
          lex_.fail(line, "unknown key {} in an op (expected {})", shown(key), key_list(kOpKeys));
        }
      }
      if (rec_.has(k)) lex_.fail(line, "duplicate key \"{}\" in an op", kOpKeys[k]);
      rec_.seen |= bit(k);
      rec_.key_line[k] = line;
      switch (static_cast<OpKey>(k)) {
        case kOut:
          read_ids(rec_.out);
          break;
        case kOp:
          rec_.op = lex_.lasting_string(rec_.op_storage);
          break;
        case kName:
          rec_.name = lex_.lasting_string(rec_.name_storage);
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
          rec_.loc = lex_.lasting_string(rec_.loc_storage);
          break;
        case kScope:
          rec_.scope = lex_.integer("\"scope\"");
          break;
        case kRegions:
          read_regions();
          break;
        case kNumOpKeys:
          break;
      }
    } while (lex_.more('}'));
  }

  // The key after key `last` in canonical order (the writer's) if the text has it next,
  // written as the writer writes it: "key": with nothing between. -1 if it has not: the
  // caller reads the key whatever it is.
  int next_op_key(int last) {
    static const auto tokens = [] {
      std::array<std::string, kNumOpKeys> t;
      for (int k = 0; k < kNumOpKeys; ++k) t[k] = fmt::format("\"{}\":", kOpKeys[k]);
      return t;
    }();
    for (int k = last + 1; k < kNumOpKeys; ++k) {
      if (lex_.literal(tokens[k])) return k;
    }
    return -1;
  }

  void read_regions() {
    int64_t line = lex_.line();
    if (depth_ + 1 > kMaxRegionDepth)
      lex_.fail(line, "regions nest deeper than {}", kMaxRegionDepth);
    lex_.expect('[', "'[' (\"regions\" is a list of regions)");
    if (lex_.consume(']')) return;
    do {
      rec_.regions.push_back(TapeReader(lex_, 0, root_, depth_ + 1).read_region());
    } while (lex_.more(']'));
  }

  // What a region yields: its outputs, unnamed, resolved at the end as the tape's are.
  void read_yield() {
    lex_.expect('[', "'[' (\"yield\" is a list of var ids)");
    if (lex_.consume(']')) return;
    do {
      int64_t line = lex_.line();
      outputs_.push_back({read_id(), "", line});
    } while (lex_.more(']'));
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
      std::string_view text = lex_.string("a type such as \"f32[3]\"");
      // Runs of ops share a type: the last one parsed is kept with its text.
      if (text != last_type_text_ || text.empty()) {
        if (!parse_type(text, &last_type_, &why)) lex_.fail(line, "{}", why);
        last_type_text_ = text;
      }
      rec_.types.push_back(last_type_);
    } while (lex_.more(']'));
  }

  Tape finish() {
    for (PendingOutput& o : outputs_) {
      const VarTable::Entry* e = ops_.find(o.id);
      if (e == nullptr) {
        if (depth_ > 0)
          lex_.fail(o.line, "the region yields var {}, which no op of it defines", o.id);
        lex_.fail(o.line, "output {} is var {}, which no op defines", shown(o.name), o.id);
      }
      b_.output(e->var, std::move(o.name));
    }
    if (depth_ == 0 && scope_use_.most > static_cast<int64_t>(b_.tape().scopes.size())) {
      lex_.fail(scope_use_.line, "an op names scope {}, but the tape lists {} scope{}",
                scope_use_.most, b_.tape().scopes.size(), b_.tape().scopes.size() == 1 ? "" : "s");
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

  // How often the outermost reader reports the text it has read (read_tape_json).
  static constexpr size_t kReportEvery = size_t{16} << 20;
  const std::function<void(size_t)>* consumed_ = nullptr;  // the outermost tape's only
  size_t next_report_ = kReportEvery;
  Lexer& lex_;
  TapeReader* root_;
  int depth_;
  Builder b_;
  OpRecord rec_;
  ScopeUse scope_use_;  // the outermost tape's: its regions' ops report here too
  OpBuilder ops_{lex_, b_, rec_, root_->b_, root_->scope_use_};
  // Outputs may come before "ops" in a hand-written file, so they are resolved at the end.
  std::vector<PendingOutput> outputs_;
  std::string name_;
  std::vector<std::pair<std::string, std::string>> meta_;
  std::string last_type_text_;  // the text of the last type read, and that type
  Type last_type_;
};

}  // namespace

Tape read_tape_json(std::string_view text, std::string_view source) {
  return read_tape_json(text, source, {});
}

Tape read_tape_json(std::string_view text, std::string_view source,
                    const std::function<void(size_t)>& consumed) {
  Lexer lex(text, source);
  // A canonical op line takes at least ~48 bytes: reserving that many ops spares the copies
  // of growing vectors without over-reserving much for pretty-printed files.
  TapeReader reader(lex, text.size() / 48, nullptr, 0);
  if (consumed) reader.report_to(consumed);
  return reader.read();
}

}  // namespace ytape
