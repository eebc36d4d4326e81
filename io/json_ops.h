// Internal to the JSON reader (io/json_read.cc): one op object as read, and OpBuilder,
// which checks it and appends its op to the tape being built. Reading parses; this builds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "io/json_lexer.h"
#include "tape/attrs.h"
#include "tape/builder.h"

namespace ytape::json_internal {

// Keys of an op object, in canonical order.
enum OpKey : uint8_t {
  kOut,
  kOp,
  kName,
  kValue,
  kArgs,
  kAttrs,
  kType,
  kLoc,
  kScope,
  kRegions,
  kNumOpKeys
};
constexpr std::string_view kOpKeys[kNumOpKeys] = {"out",   "op",   "name", "value", "args",
                                                  "attrs", "type", "loc",  "scope", "regions"};

constexpr uint32_t bit(int key) {
  return 1u << key;
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

/// A string from the file, quoted for a message and cut short: messages stay bounded.
std::string shown(std::string_view s);
/// Splits a location "file:line" (the file may hold colons); false if it is not one.
bool split_loc(std::string_view loc, std::string_view& file, uint32_t& line);

/// The largest scope (Loc::scope) the ops name and the line of an op naming it: checked
/// against the tape's "scopes" once the whole file is read, as keys come in any order.
struct ScopeUse {
  int64_t most = 0;
  int64_t line = 0;
};
/// "nan", "inf" or "-inf" as a double.
double nonfinite(std::string_view s);

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
  /// Room for ids 1..n without copies of a growing table.
  void reserve(size_t n) { dense_.reserve(n); }

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
  std::string_view op, name, loc;  ///< lasting_string()s
  std::string op_storage, name_storage, loc_storage;
  int64_t scope = 0;
  std::vector<int64_t> out, args;
  std::vector<Literal> value;
  std::vector<Attr> attrs;
  std::vector<int64_t> attr_lines;
  std::vector<Type> types;
  std::vector<Tape> regions;  ///< read whole before the op is built

  bool has(int key) const { return seen & bit(key); }
};

/// Checks each op record against its kind and primitive and appends its op to `b`, the
/// tape being read: the builder infers the types, which must match those of the file.
/// Errors name the line of the record (or of its key) through `lex`.
class OpBuilder {
 public:
  /// `files` interns the files of locations: `b` itself, or for a region's ops the
  /// builder of the outermost tape, whose files and scopes a region's locations name;
  /// `scopes` gathers the scopes the ops name, for that tape.
  OpBuilder(const Lexer& lex, Builder& b, OpRecord& rec, Builder& files, ScopeUse& scopes)
      : lex_(lex), b_(b), rec_(rec), files_(files), scopes_(scopes) {}

  /// Reserves room for `vars` vars of the file, as Builder::reserve.
  void reserve(size_t vars) { vars_.reserve(vars); }
  /// Builds the op of the current record.
  void build_op();
  /// The entry of the file's var `id`, or nullptr if no op defined it.
  const VarTable::Entry* find(int64_t id) const { return vars_.find(id); }

 private:
  void check_keys(uint32_t allowed, uint32_t required, std::string_view what);
  void set_loc();
  void require_one_out(std::string_view what);
  void build_input();
  void build_const();
  void literal_bytes(const Literal& lit, DType dtype, uint8_t* dst) const;
  template <typename T>
  T float_literal(const Literal& lit, DType dtype) const;
  uint16_t f16_literal(const Literal& lit) const;
  [[noreturn]] void refuse(const Literal& lit, DType dtype, std::string_view hint) const;
  void build_call(Prim p);
  Attrs call_attrs(const PrimInfo& info);
  void define(int64_t id, Var v);
  Var use(int64_t id);

  const Lexer& lex_;
  Builder& b_;
  OpRecord& rec_;
  Builder& files_;
  ScopeUse& scopes_;
  VarTable vars_;
  std::string file_;  // the file of the last location, and its index in the new tape
  uint32_t file_index_ = 0;
};

}  // namespace ytape::json_internal
