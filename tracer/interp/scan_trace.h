// The state of a loop being traced as a scan (tracer/interp/interp_scan.cc), shared by
// the files that make it: what an attempt carries, slices and gives back.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tracer/interp/interp.h"

namespace ytape::tracer {

// What stops an attempt. Not a UserError: nothing between the body and its loop, where
// errors are located and rethrown, turns it into a program error. `field` names a field
// the body assigns, to be carried by the next attempt.
struct NotAScan {
  std::string reason;
  std::shared_ptr<const Object> object;
  size_t field = 0;
  bool settles = false;  // a carry's type changed, as a first iteration may change it
};

/// The type of an array or number.
Type value_type(const Value& v);
/// Appends the arrays and numbers `v` is made of (itself, or the items of a tuple or named
/// tuple, recursively) to `leaves`, and its structure and types to `form`; false where it
/// holds anything else (a vector of values, a struct, a string).
bool flatten_carried(const Value& v, std::vector<Value>& leaves, std::string& form);
/// `like` with its arrays and numbers replaced by leaves[k], leaves[k + 1], ...
Value with_leaves(const Value& like, const std::vector<Value>& leaves, size_t& k);
/// An untyped float literal, which takes the dtype of the arrays it meets.
inline bool weak_float(const Value& v) {
  return v.kind == VKind::float_ && v.weak;
}

/// `base`, or `base#2`, `base#3`... the first not in `used`, which it is added to.
std::string unique_name(std::string base, std::set<std::string>& used);
/// The name of input `v` of `t`, or "" where v is no input.
std::string input_name(const Tape& t, Var v);
/// The names the statements of `e` assign, in order of appearance (repeats included),
/// functions and comprehensions (scopes of their own) left out.
void assigned_names(const Expr& e, std::vector<std::string>& out);
/// The local variables among `names` visible from `env` (those of `globals` left out), with
/// their values, each once, in the order of `names`.
std::vector<std::pair<std::string, Value>> visible_locals(const std::vector<std::string>& names,
                                                          const EnvPtr& env, const Env* globals);

// What a scan carries from one iteration to the next, as the program holds it: a variable
// the loop assigns, or a field of an instance made before the loop.
struct Interpreter::ScanCarry {
  std::string name;                      // of the variable or the field
  std::shared_ptr<const Object> object;  // the instance of a field, else null
  size_t field = 0;
  Value init;                 // before the loop
  std::vector<Value> leaves;  // init's arrays and numbers, each a carry of the scan op
  std::string form;           // init's structure and types, which an iteration keeps
  std::vector<Var> params;    // the body's parameters for the leaves
  std::vector<std::string> param_names;

  // Its value now, where the body's scope is `scope`.
  const Value& current(const Env& scope) const {
    if (object == nullptr) return scope.vars.at(name);
    return static_cast<const StructObj&>(*object).fields[field];
  }
};

// The fields of instances that an attempt gave its parameters, put back as they were.
class Interpreter::FieldsBack {
 public:
  FieldsBack() = default;
  FieldsBack(const FieldsBack&) = delete;
  FieldsBack& operator=(const FieldsBack&) = delete;
  ~FieldsBack() { now(); }
  void set(const ScanCarry& c, Value v) {
    Value& field = const_cast<StructObj&>(static_cast<const StructObj&>(*c.object)).fields[c.field];
    saved_.emplace_back(&field, field);
    field = std::move(v);
  }
  void now() {
    for (auto& [field, before] : saved_) *field = std::move(before);
    saved_.clear();
  }

 private:
  std::vector<std::pair<Value*, Value>> saved_;
};

// A loop to trace as a scan: `run` evaluates its body once in a scope that holds the
// loop variable `index` (and the carried variables), giving y_t where the loop stacks one.
struct Interpreter::ScanLoop {
  Pos pos;
  std::string index;
  RangeObj range;
  EnvPtr env;  // where the loop is
  std::function<std::optional<Value>(const EnvPtr& scope)> run;
  // Under `--loops scan`, a loop that cannot be a scan is an error; a fold or a map
  // (interp_fold.cc) that cannot then runs as it would otherwise.
  bool required = true;
};

// How an attempt ended: with `ys` (the scan's stacked ys) where the loop is now a scan op;
// else why not, with a field the body assigns (to carry next) or the carries whose dtype an
// iteration settled.
struct Interpreter::ScanAttempt {
  std::optional<std::vector<Value>> ys;
  std::string reason;
  std::shared_ptr<const Object> object;
  size_t field = 0;
  std::vector<std::pair<size_t, DType>> retyped;
  bool settles = false;  // see NotAScan
};

// One loop being traced as a scan.
struct Interpreter::ScanTrace {
  uint32_t level = 0;         // the body's trace level
  uint64_t first_serial = 0;  // scopes and objects from this serial on are the body's own
  Var index;                  // the loop variable, a parameter of the body
  RangeObj range;
  std::vector<ScanCarry>* carries = nullptr;
  // `x[..., t]` of arrays from outside: per slice, the array, the shape it is indexed as
  // and the body's parameter for slice t.
  struct Slice {
    Value array;
    Shape view;
    Var param;
  };
  std::vector<Slice> slices;
};

// A region traced on a nested trace (Interpreter::speculate): its tape and what it yields.
struct Interpreter::Speculation {
  NestedTape nested;
  std::vector<Var> yields;
};

}  // namespace ytape::tracer
