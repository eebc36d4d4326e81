// The interpreter of the model language: a tree-walking evaluator over the syntax tree with
// lexical environments. Top-level code runs concretely; while a trace is active (see
// trace.h), primitives on traced values are recorded on the trace's tape instead.
#pragma once

#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "tape/builder.h"
#include "tracer/interp/examples.h"
#include "tracer/interp/nesting.h"
#include "tracer/interp/sandbox.h"
#include "tracer/interp/value.h"
#include "tracer/lang/source.h"

namespace ytape::tracer {

/// A lexical scope. Function bodies start a `function_scope`; the outermost is global.
struct Env {
  ~Env();  ///< releases what it holds with release_later (nesting.h): chains of closures
  uint64_t serial = next_serial();  ///< see Object::serial
  std::unordered_map<std::string, Value> vars;
  std::shared_ptr<Env> parent;
  std::vector<std::string> globals;  ///< names declared `global` in this (local) scope
  /// Variables declared with a type here (`x::Float32 = 1`): every assignment converts.
  std::unordered_map<std::string, TypeRef> types;
  bool function_scope = false;
  bool global = false;
};
using EnvPtr = std::shared_ptr<Env>;

/// A located user error: its message already names the program position and call stack,
/// so enclosing calls pass it on unchanged.
class ProgramError : public UserError {
 public:
  using UserError::UserError;
};

/// The default of Limits::max_steps: 10^8 expressions, over 100 times what the largest
/// program of the tests and samples evaluates (tests/programs/flux_conv3d.jl, 712,337;
/// ResNet-18's, 13,005, its work being in primitives), and reached by `while true end`
/// in about 4 seconds.
inline constexpr int64_t kDefaultMaxSteps = 100'000'000;

/// How a traced `for` loop over a range is recorded (`ytape trace --loops`,
/// docs/regions.md, "Loops in programs"): `auto_` as a scan where it can be one and runs
/// at least kAutoScanTrips times, else unrolled; `scan` as a scan wherever its body records
/// ops, or an error saying why it cannot be; `unroll` always unrolled, one copy of the body
/// per iteration.
enum class LoopMode : uint8_t { auto_, scan, unroll };
/// Under LoopMode::auto_, loops of fewer iterations stay unrolled: each copy of a short
/// body can fuse with its neighbours, and the tape reads as the program does.
inline constexpr int64_t kAutoScanTrips = 8;

/// The bound a `while` loop traced as a while_loop op gets (its max_trips, which reverse
/// mode stores steps for) unless `@max_trips N` or `ytape trace --max-trips` gives one.
inline constexpr int64_t kDefaultMaxTrips = 1000;

/// Limits that stop runaway programs cleanly.
struct Limits {
  int max_depth = 1000;          ///< nested calls of program functions
  int max_includes = 100;        ///< files including one another, nested
  int64_t max_ops = 10'000'000;  ///< ops recorded by one trace
  /// Expressions evaluated in all (loop bodies and calls included, the prelude's own
  /// loading not), so that a program that loops forever ends in an error naming its loop.
  /// 0 is no limit.
  int64_t max_steps = kDefaultMaxSteps;
  LoopMode loops = LoopMode::auto_;      ///< how traced loops are recorded
  int64_t max_trips = kDefaultMaxTrips;  ///< of while loops without `@max_trips`
};

class Interpreter;

/// The built-in functions' table that each family fills (name, function).
using BuiltinTable = std::vector<std::pair<std::string, Builtin>>;

/// What the interpreter takes from the layer above it (tracer/builtins/builtins.h,
/// language_builtins()): the families of built-in functions, and two of their operations
/// that the language's own syntax performs.
struct Builtins {
  std::vector<void (*)(BuiltinTable&)> families;
  /// Writes `v` into the region of array `x` that `idx` selects (all of x when null): as
  /// `x[idx...] = v`, or with `broadcast` as `x[idx...] .= v`.
  void (*write_array)(Interpreter& in, const Value& x, const Value& v,
                      const std::vector<Value>* idx, bool broadcast) = nullptr;
  /// `v` with the gradient stopped (a call of a function marked non-differentiable).
  Value (*stop_gradient)(Interpreter& in, const Value& v) = nullptr;
};

class Interpreter {
 public:
  /// An interpreter whose globals hold `builtins` and, with `prelude`, the standard
  /// prelude (tracer/prelude/: layers, activations, losses, optimisers). Programs run in
  /// a tracer::Program (tracer/program.h), which passes the language's built-ins.
  Interpreter(const Builtins& builtins, Limits limits, bool prelude = true);
  ~Interpreter();

  /// Parses and runs a file from disk (or text, for tests) at top level. Throws UserError
  /// (syntax or runtime, located and with a call stack). The first program run is the
  /// entry: the folder of its path is where the program may read (sandbox()).
  void run_file(const std::string& path);
  void run_text(std::string path, std::string text);
  /// Where the program may read: include(), isfile(), isdir(), ispath() and cd() look only
  /// in the entry program's folder tree and in the folders allowed here (`--allow-read`).
  ReadSandbox& sandbox() { return sandbox_; }

  Sources& sources() { return sources_; }
  /// Seconds spent parsing the prelude and files so far (the rest of run_file and
  /// run_text is running them).
  double parse_seconds() const { return parse_seconds_; }
  const Limits& limits() const { return limits_; }
  void set_max_ops(int64_t n) { limits_.max_ops = n; }
  /// Expressions evaluated so far, against Limits::max_steps (the prelude's not counted).
  int64_t steps() const { return steps_; }
  /// Receives each line printed by concrete `print`/`println` (default: kept in output()).
  void set_print(std::function<void(std::string_view)> print) { print_ = std::move(print); }
  const std::string& output() const { return output_; }
  void emit(std::string_view text);
  /// Emits "ytape: note: FILE:LINE: text" for `pos`, the first time only that `key` asks.
  void note_once(const std::string& key, Pos pos, std::string_view text);
  /// Ends a line left open by `print` (done after each file runs).
  void flush_output();

  /// A global variable; nullptr if undefined.
  const Value* global(const std::string& name) const;
  /// "; did you mean 'X'?" for an undefined `name`: the nearest of the names `env` and the
  /// globals define (Dnese is Dense, rleu relu), or "".
  std::string undefined_hint(const std::string& name, const Env* env) const;
  /// The names of all globals (built-ins too), in no particular order.
  std::vector<std::string> global_names() const;
  /// Calls a function (or callable) value, as the program would.
  Value call(const Value& f, Args args, Pos pos = {});
  /// Calls `f` as `f.(args...)` does: built-ins act elementwise on arrays, and a user
  /// function runs once on whole arrays with its scalar operations elementwise.
  Value broadcast(const Value& f, Args args, Pos pos = {});
  /// broadcast() with a tuple among the arguments: a tuple of f's results on the items.
  Value broadcast_tuples(const Value& f, Args args, Pos pos);
  /// broadcast() of a user function: called once on the whole arrays marked as elements.
  Value broadcast_user(const Value& f, Args args, Pos pos);
  void vectors_of_values(std::vector<Value>& args, Pos pos);
  /// The items a `for` loop over `v` sees: a tuple's, a range's, an array's elements in
  /// memory order, a number itself, a string's characters, and a struct's by the
  /// program's `iterate` methods. Errors are located at `pos`.
  std::vector<Value> iterate(const Value& v, Pos pos);
  /// The length of integer range `r`; past Int64, Julia's OverflowError located at `pos`.
  int64_t range_length(const RangeObj& r, Pos pos);
  /// The values of integer range `r`, for what needs them all at once (a `for` loop over a
  /// range counts instead), each charged as a step (charge_steps).
  std::vector<Value> range_items(const RangeObj& r, Pos pos);
  /// Charges `n` steps to the step limit for work a built-in does for the program, one
  /// step per value it makes (`what` names them: "the 10 values of 1:10"): beyond the
  /// limit it fails at `pos` before any work is done, where the work would have ended
  /// at the limit anyway, or in the allocator. With no limit, 2^48 is the limit.
  void charge_steps(int64_t n, Pos pos, std::string_view what);
  /// Evaluates the text of one expression at top level (tests).
  Value eval_text(const std::string& text);

  // ---- tracing --------------------------------------------------------------------------
  /// Starts recording on `b`. `examples` holds a value for every input when complete
  /// (`have_examples`), for data-dependent branches.
  void begin_trace(Builder* b, TensorMap examples, bool have_examples);
  void end_trace();
  bool tracing() const { return builder_ != nullptr; }
  /// The builder of the trace being recorded (tracing only).
  Builder& builder() { return *builder_; }
  /// The level of the trace being recorded: 0 for the outermost, one more for each trace
  /// nested in it (see begin_nested_trace).
  uint32_t trace_level() const {
    return levels_.empty() ? 0 : static_cast<uint32_t>(levels_.size() - 1);
  }
  /// A number naming the trace being recorded, never given to another trace; 0 when none.
  uint64_t trace_serial() const { return level_ != nullptr ? level_->serial : 0; }

  /// Starts a trace nested in the current one, on a builder of its own, like `b`'s tape
  /// (its files): `gradient` records its function so. A traced value of a trace below,
  /// when an op here uses it, becomes an input of this trace that *captures* it (in
  /// every trace between, too); its example value comes from the trace it belongs to.
  void begin_nested_trace();
  /// Declares an input of the nested trace standing for `outer` (a number or a tensor,
  /// concrete or of a trace below), which is not a capture: each call makes a new input,
  /// however often `outer` is given. Returns the input as a traced value.
  Value nested_input(std::string name, const Value& outer);
  /// Declares an input of the nested trace standing for one example of `outer`, a tensor
  /// whose last dim is a batch (`vmap`): of outer's type without that dim, its example
  /// value outer's first example.
  Value nested_example(std::string name, const Value& outer);
  /// What a nested trace recorded: its tape, unfinished (captures stand among its ops),
  /// and per capture, its var on that tape and the var it stands for on the trace below.
  struct NestedTape {
    std::unique_ptr<Builder> builder;
    std::vector<std::pair<Var, Var>> captures;
  };
  /// Ends the nested trace begun last; the trace below is recorded again. The caller
  /// makes sure no value of the ended trace is used later (they read its tape).
  NestedTape end_nested_trace();
  /// The var of a value on the trace's tape: traced tensors as they are, concrete tensors
  /// and numbers as constants.
  Var tape_var(const Value& v);
  /// The method of `f` a call with `args` would run, or nullptr (then a built-in runs).
  const Method* find_method(const FunctionObj& f, const Args& args);

  // ---- for built-ins ---------------------------------------------------------------------
  /// Applies a primitive to tensor values: recorded when tracing and any is traced,
  /// computed otherwise. `number` marks rank-0 results that stand for numbers.
  std::vector<Value> prim(Prim p, std::span<const Value> args, const Attrs& attrs = {});
  Value prim1(Prim p, std::span<const Value> args, const Attrs& attrs = {});
  // A braced list of arguments (`prim1(p, {x, y})`) stays on the stack.
  std::vector<Value> prim(Prim p, std::initializer_list<Value> args, const Attrs& attrs = {}) {
    return prim(p, std::span<const Value>(args.begin(), args.size()), attrs);
  }
  Value prim1(Prim p, std::initializer_list<Value> args, const Attrs& attrs = {}) {
    return prim1(p, std::span<const Value>(args.begin(), args.size()), attrs);
  }
  /// The same with typed attributes: `prim1<Prim::reshape>({x}, {.shape = {2, 3}})`.
  template <Prim P>
  std::vector<Value> prim(std::span<const Value> args, const AttrsOf<P>& attrs) {
    return prim(P, args, attrs.to_attrs());
  }
  template <Prim P>
  Value prim1(std::span<const Value> args, const AttrsOf<P>& attrs) {
    return prim1(P, args, attrs.to_attrs());
  }
  template <Prim P>
  std::vector<Value> prim(std::initializer_list<Value> args, const AttrsOf<P>& attrs) {
    return prim(P, args, attrs.to_attrs());
  }
  template <Prim P>
  Value prim1(std::initializer_list<Value> args, const AttrsOf<P>& attrs) {
    return prim1(P, args, attrs.to_attrs());
  }
  /// Records `p` on the trace's tape whatever its arguments (tracing only); returns the op.
  const Op& record(Prim p, std::span<const Value> args, const Attrs& attrs);
  /// A scalar or tensor as a tensor value of `dtype` (scalars become rank-0 numbers).
  Value as_tensor(const Value& v, DType dtype);
  /// The truth of a condition; a traced condition takes the branch of the example values
  /// and records a guard, or fails without them.
  bool truth(const Value& cond, Pos pos);
  /// Inside the body of a loop being traced as a scan, `x[..., t]` where t is the loop's
  /// variable and x an array from outside the loop, seen as `view` (the indices' shape):
  /// slice t of an xs operand of the scan (x reshaped to `view`, sliced to the loop's range
  /// on its last dim), as a parameter of the body. nullopt anywhere else, and for other
  /// indices; `index` is the last index given.
  std::optional<Value> scan_slice(const Value& x, const Shape& view, const Value& index);
  /// `stack(f, over)` as one scan op whose body is f(t), when tracing and the range `over`
  /// may be one (see LoopMode): the results stacked on a new last dim; nullopt where it is
  /// to be computed otherwise, with nothing changed.
  std::optional<Value> trace_stack(const Value& f, const Value& over, Pos pos);
  /// A fold or a map to trace as one scan op (trace_fold): `step(scope, x)` gives, for the
  /// item x (bound in `scope` to `index`), the next accumulator (with `init`, bound to
  /// kFoldAcc in `scope`) or what the step gives; `stacks`: the steps' values are stacked.
  struct Fold {
    std::string index = "t";
    EnvPtr env;  ///< where the fold is (a comprehension's scope); null: the globals
    std::optional<Value> init;
    bool stacks = false;
    std::function<Value(const EnvPtr& scope, const Value& x)> step;
  };
  static constexpr const char* kFoldAcc = "acc";
  /// `fold` over `over` (a range, or all the slices of one traced array: see
  /// TensorObj::slice_of) as one scan op, when tracing and the loop may be one (LoopMode):
  /// the last accumulator, or (`stacks`) the steps' values as a vector (numbers) or a
  /// vector of the slices of their stack; nullopt, with nothing changed, where it is to be
  /// computed otherwise (interp_fold.cc).
  std::optional<Value> trace_fold(const Fold& fold, const Value& over, Pos pos);
  /// trace_fold of `map(f, over)` (and `f.(over)`): f of each item, stacked.
  std::optional<Value> trace_map(const Value& f, const Value& over, Pos pos);
  /// The `n` slices of array `x` along `dim` (selectdim's), each knowing it is one
  /// (TensorObj::slice_of) while tracing; those nothing reads in the end leave the tape.
  std::vector<Value> slices(const Value& x, int dim, int64_t n);
  /// The array whose slices along its last dim, all of them in order, the vector `v` holds
  /// (what a traced map gave): stack(v) is that array. nullopt for any other value.
  std::optional<Value> covered_source(const Value& v);
  /// Ops of the outermost trace that may leave its tape when nothing reads them (slices).
  const std::vector<Var>& droppable() const { return droppable_; }
  /// Whether arithmetic on arrays is elementwise now (inside `f.(x)` of a user function).
  bool elementwise() const { return elementwise_ > 0; }
  /// Inside `f.(x)` of a user function over arrays: the broadcast's shape, over which a
  /// number drawn at random (`rand()` in f) is one draw per element; else null.
  const Shape* element_shape() const {
    return element_shapes_.empty() ? nullptr : &element_shapes_.back();
  }
  /// The position of the call being evaluated, for messages and op locations.
  Pos here() const { return here_; }
  /// here(), or where that is in the prelude, the program's innermost call around it: where
  /// the program made what the prelude makes now (a layer's line, Scope::made).
  Pos program_here() const { return program_pos(here_); }
  [[noreturn]] void fail(Pos pos, std::string_view message) const;
  /// A message at `pos` as fail() words it: file:line:col, the line with a caret, and the
  /// call stack of program frames.
  std::string located(Pos pos, std::string_view message) const;
  /// The text `print` and `string` give `v`: an instance whose type has a `show(io, x)`
  /// method (Flux's layers, a program's `Base.show`) as that method writes it, as Julia's
  /// print calls show; anything else as print_text.
  std::string printed(const Value& v);
  /// What a show method of `v`'s own type writes of it (Flux's layers), if it has one.
  std::optional<std::string> shown_by_method(const Value& v);
  /// The generator of `rand`/`randn`: `seed!(n)` restarts it; each draw takes the next
  /// seed, so a program's random values depend only on its seed and the order of draws.
  void seed(uint64_t s) {
    seed_ = s;
    draws_ = 0;
  }
  uint64_t next_seed();
  /// The generator's state, its seed and the draws made since: an RNG object of the
  /// prelude swaps its own in for its draws.
  std::pair<uint64_t, uint64_t> stream() const { return {seed_, draws_}; }
  void set_stream(std::pair<uint64_t, uint64_t> s) { std::tie(seed_, draws_) = s; }
  /// `object.name = v` on an instance of a mutable struct (Julia's setfield!): every
  /// copy of the instance sees the new value. While tracing, the instance's fields as
  /// they were before the trace come back at end_trace, so that no traced value outlives
  /// its tape; the tape computes with the writes.
  void set_field(const Value& object, const std::string& name, Value v);
  /// Replaces the value of array `x` (a tensor that is not a number) by `v`, of x's
  /// type, in place: every name for the array sees the new value (see write_array).
  /// Undone at end_trace, as set_field's writes are.
  void replace_array(const Value& x, const Value& v);
  /// The same for a vector of values (TupleObj::vector): its items become `items`.
  void replace_items(const Value& vector, std::vector<Value> items);
  /// Notes a vector of values or mutable instance that holds containers it did not hold
  /// when it was made (deepcopy's copies; set_field and replace_items note theirs): it may
  /// be inside itself, a cycle that the destructor frees.
  void note_cycle_candidate(const Value& container) { cycles_.note(container.obj); }

 private:
  friend struct Eval;
  struct Frame {
    std::string name;
    Pos call;
  };

  // ---- evaluation: the dispatcher, variables and their scopes (interp_eval.cc) -----
  Value eval(const Expr& e, const EnvPtr& env);
  Value eval_literal(const Expr& e, const EnvPtr& env);
  // `value_used`: whether the block's value (its last statement's) is used.
  Value eval_block(const Expr& e, const EnvPtr& env, bool value_used = true);
  Value eval_id(const Expr& e, const EnvPtr& env);
  /// Assigns the variable `name` by Julia's scope rules; returns the scope that holds it.
  /// The value is converted to the variable's declared type, if it has one.
  Env* set_var(const std::string& name, Value v, const EnvPtr& env, Pos pos);
  void declare_global(const Expr& decl, const EnvPtr& env);

  // ---- control flow, assignment, fields and comparisons (interp_control.cc) --------
  Value eval_field(const Expr& e, const EnvPtr& env);
  // Field `name` of a struct instance or named tuple; fails at `pos` naming the fields.
  Value field_of(const Value& v, const std::string& name, Pos pos);
  Value eval_comparison(const Expr& e, const EnvPtr& env);
  // `a || b` or `a && b` (as `|`, `&`) on the elements of a broadcast function: each
  // element takes its own side, so both were computed; the result stands for elements.
  Value element_logic(bool is_or, const Value& a, const Value& b, Pos pos);
  Value eval_dotted_comparison(const Expr& e, const EnvPtr& env);
  Value eval_if(const Expr& e, const EnvPtr& env, bool value_used = true);
  // Whether `a && b` (or `||`) with `a` evaluated to `lhs` computes both sides: `lhs` a
  // traced Bool and `b` a plain condition (interp_eval.cc), when tracing regions.
  bool both_sides(const Value& lhs, const Expr& rhs) const;
  // A branch of an `if`: a block as eval_block evaluates it, else an expression (`?:`).
  Value eval_block_or(const Expr& e, const EnvPtr& env, bool value_used);
  Value eval_for(const Expr& e, const EnvPtr& env);
  Value eval_while(const Expr& e, const EnvPtr& env);
  Value eval_let(const Expr& e, const EnvPtr& env);
  Value eval_assign(const Expr& e, const EnvPtr& env);
  Value eval_op_assign(const Expr& e, const EnvPtr& env);
  Value eval_dot_assign(const Expr& e, const EnvPtr& env);
  // write_array(x, v, idx, broadcast) from `.=` at `pos`, its errors located there.
  void write_located(const Value& x, const Value& v, const std::vector<Value>* idx, Pos pos);
  void assign(const Expr& target, const Value& v, const EnvPtr& env);
  void bind_local(const Expr& target, const Value& v, const EnvPtr& scope);
  // iterate() of a struct instance, by the program's `iterate` methods.
  std::vector<Value> iterate_protocol(const Value& v, Pos pos);
  // The loop over iteration clause k and those after it; `first` is clause 0's iterable,
  // evaluated already.
  void run_loop(const Expr& iteration, size_t k, const Expr& body, const EnvPtr& env,
                const Value* first = nullptr);

  // ---- loops traced as scans (interp_scan.cc) --------------------------------------
  struct ScanTrace;
  struct ScanCarry;
  struct ScanLoop;
  struct ScanAttempt;
  class FieldsBack;
  ScanTrace* scan_ = nullptr;        // the loop whose body is being traced as a scan
  const Env* scan_scope_ = nullptr;  // its scope, holding the carried variables
  // Whether a loop over `over` may be traced as a scan now (see LoopMode).
  bool may_scan(const Value& over, Pos pos);
  // Records `for` loop `e` over `over` as one scan op, when tracing and the loop can be
  // one (see LoopMode); false where it is to be unrolled, with nothing changed.
  bool trace_scan(const Expr& e, const Value& over, const EnvPtr& env);
  // The variables the body of loop `e` assigns that exist around it, with their values.
  std::vector<std::pair<std::string, Value>> loop_carries(const Expr& e, const EnvPtr& env);
  // The attempts of a loop with these carries, one more per field found assigned and
  // for a number's dtype settled; the ys (stacked) where it became a scan op.
  // Where an attempt failed as a carry's type changed, sets `settles` (if given) and
  // fails quietly: the caller may run one iteration and try the rest.
  std::optional<std::vector<Value>> run_scan(const ScanLoop& loop, std::vector<ScanCarry> carries,
                                             bool* settles = nullptr);
  bool peeled_ = false;  // trace_scan is trying the iterations after the first
  // Flattens `c`'s value into its leaves; false where a scan cannot carry it (or, unless
  // `forced`, should not: an integer or Bool); under `forced` that is an error at `pos`.
  bool prepare_carry(ScanCarry& c, bool forced, Pos pos);
  // One attempt: the body traced once on a nested trace; `may_retype` lets an untyped
  // float literal be itself, to learn the dtype it takes.
  ScanAttempt attempt_scan(const ScanLoop& loop, std::vector<ScanCarry>& carries, bool may_retype);
  // Makes `c` parameters of the body: a variable of `scope`, or its field set through
  // `fields`, holds them; their names are made unique in `used`.
  void bind_carry(ScanCarry& c, Env& scope, bool may_retype, std::set<std::string>& used,
                  FieldsBack& fields);
  // After the body of an attempt ran in `scope`: the vars the body yields for each carry,
  // appended to `yields`; the carries whose type an iteration changed (a number's dtype,
  // where `may_retype`), with the dtype they take, are returned instead.
  std::vector<std::pair<size_t, DType>> settle_carries(const std::vector<ScanCarry>& carries,
                                                       const Env& scope, bool may_retype,
                                                       std::vector<Var>& yields);
  // Ends a failed attempt: the traces begun in it, its signal and its random draws undone.
  void abandon_scan(size_t depth, std::pair<uint64_t, uint64_t> stream);
  // Records the scan op of a successful attempt, assigns the carries' final values and
  // returns the ys.
  std::vector<Value> record_scan(const ScanLoop& loop, const ScanTrace& st,
                                 const NestedTape& nested, const std::vector<ScanCarry>& carries,
                                 const std::vector<Var>& yields);
  // Assigns each carry's final value, from `outs` in order (a variable in `env`, or the
  // field of its instance); returns how many of `outs` they took.
  size_t set_carries(const std::vector<ScanCarry>& carries, std::span<const Var> outs,
                     const EnvPtr& env, Pos pos);
  // The xs of the scan (the index's positions where the body reads it, the slices),
  // appended to `xs` and their parameters to `params`.
  void record_scan_xs(const ScanLoop& loop, const ScanTrace& st, const Tape& body,
                      const std::vector<Var>& yields,
                      std::vector<std::pair<Var, std::string>>& params, VarList& xs);
  // ---- branches and while loops traced as regions (interp_branch.cc) ------------------
  struct Speculation;
  // Runs `trace` on a trace nested in this one, speculatively, as a scan's body is traced
  // (in `scope`, made before it): it returns the vars to yield. Whatever a region cannot
  // hold stops it with the interpreter's state restored, the reason in `why` and
  // `settles` set where a carried value changed type.
  std::optional<Speculation> speculate(const EnvPtr& scope,
                                       const std::function<std::vector<Var>()>& trace,
                                       std::string& why, bool* settles = nullptr);
  // Records `if` `e` on the traced Bool `flag` as a cond op where both branches trace to
  // values of the same types; nullopt where it is to be guarded, nothing changed.
  std::optional<Value> trace_cond(const Expr& e, const Value& flag, const EnvPtr& env,
                                  bool value_used);
  // Records the rest of `while` loop `e`, whose condition is traced now, as a while_loop
  // op: true if it did; else `again` says whether a later trip may try once more (a
  // carried value changed type, as a first trip may change it).
  bool trace_while(const Expr& e, const EnvPtr& env, bool& again);
  // The region ops' parameters for values from outside: the union of the captures of
  // `regions`, each region given a parameter for every one (unused where it read none).
  VarList region_consts(std::span<Speculation> regions,
                        std::vector<std::vector<std::pair<Var, std::string>>>& params);

  // Stops the attempt being made: the body did what a scan cannot hold, `reason`.
  [[noreturn]] void not_a_scan(std::string reason) const;
  // Stops the attempt where the body assigns a variable of `scope` that existed before
  // it and is not the loop's own (through a closure made outside it, or `global`), or
  // writes into `object` made before it.
  void check_scan_write(const Env* scope) const;
  void check_scan_write(const Object& object) const;
  // Inside an attempt, a write of field `field` (`name`) of `object`: true where it is a
  // carried field (the write goes to the body's value, unlogged); false where the object is
  // the body's own; else stops the attempt, naming the field to carry next.
  bool scan_field_write(const std::shared_ptr<const Object>& object, size_t field,
                        const std::string& name);

  // ---- arrays, indexing, ranges and comprehensions (interp_collections.cc) ---------
  /// `x[i...]`; with `as_view`, a view of an array x (`@view`), its elements otherwise.
  Value eval_index(const Expr& e, const EnvPtr& env, bool as_view = false);
  /// The arguments of getindex (and setindex!) for `object[...]` of index expression `e`:
  /// the object, then each index evaluated with its `end`.
  Args index_args(const Expr& e, Value object, const EnvPtr& env);
  // `end` inside obj[...] of a struct instance: lastindex(obj) or length(obj) by the
  // program's methods, or kUnknownEnd.
  int64_t object_end(const Value& object);
  static constexpr int64_t kUnknownEnd = INT64_MIN;
  Value eval_collection(const Expr& e, const EnvPtr& env);
  Value eval_array(const Expr& e, const EnvPtr& env);
  /// `a:s:b` with a float among them: its Float64 values, as Julia's range has them.
  Value float_range(const std::vector<Value>& parts, Pos pos);
  /// Appends the values of comprehension `e` from `clause` on; `dims` gets the lengths of
  /// that clause's iterators when it is not a filter; `given`, where not null, is the value of
  /// the clause's one iterator, evaluated already.
  void comprehend(const Expr& e, size_t clause, const EnvPtr& env, std::vector<Value>& out,
                  std::vector<int64_t>* dims = nullptr, const Value* given = nullptr);
  /// Comprehension `e` as one scan op (trace_fold) where it is `[body for x in over]` and
  /// `over` a range or a sequence of slices, when tracing; else nullopt, with `over` the
  /// iterator's value where it was evaluated.
  std::optional<Value> traced_comprehension(const Expr& e, const EnvPtr& scope,
                                            std::optional<Value>& over);

  // ---- calls: methods, dispatch, frames, include (interp_calls.cc) -----------------
  Value eval_call(const Expr& e, const EnvPtr& env);
  Value eval_broadcast(const Expr& e, const EnvPtr& env);
  Value eval_function(const Expr& e, const EnvPtr& env);
  void eval_args(const Expr& e, size_t first, const EnvPtr& env, Args& args);
  Value call_function(const FunctionObj& f, Args& args, Pos pos, const Value* self);
  // ---- a program's rules (interp_rules.cc, docs/rules.md) -----------------------------
  enum class RuleKind : uint8_t { rrule, adjoint, scalar };
  struct FoundRule {
    RuleKind kind;
    const Method* method;
    std::string where;  // FILE:LINE of its definition
  };
  // The rule a call of `f` on `args` has: an rrule method, then an @adjoint, then an
  // @scalar_rule (the methods of the hidden functions #adjoint and #scalar_rule).
  std::optional<FoundRule> find_rule(const Value& f, const Args& args, Pos pos);
  // A call of `f` that a rule decides: on traced arguments, one custom_rule op; inside a
  // gradient, on concrete ones, the rrule's value. nullopt where f runs as it is (no rule,
  // or one that cannot be used, which a note says).
  std::optional<Value> apply_rule(const Value& f, Args& args, Pos pos);
  // Records the custom_rule op of a call of `f` with `rule`; nullopt, `why` set, where its
  // body or its pullback cannot be a region.
  std::optional<Value> record_rule(const Value& f, Args& args, Pos pos, const FoundRule& rule,
                                   const std::string& name, const std::string& label,
                                   std::string& why);
  struct RuleCall;
  // record_rule's parts: the trace of f's body, yielding its arrays and numbers; the
  // trace of the rule's pullback; the pullback's region, given the operands and the
  // parameters that stand for them.
  std::vector<Var> trace_rule_body(RuleCall& c);
  void trace_rule_pullback(RuleCall& c);
  Tape pullback_region(RuleCall& c, Speculation& back, const VarList& consts,
                       std::vector<std::pair<Var, std::string>> params);
  // With an frule method (find_frule): its trace, yielding a tangent per float result, and
  // its region.
  const Method* find_frule(const Value& f, const Args& args, Pos pos);
  std::vector<Var> trace_rule_pushforward(RuleCall& c);
  Tape pushforward_region(RuleCall& c, Speculation& fwd, const VarList& consts,
                          std::vector<std::pair<Var, std::string>> params);
  // The tangents the rule gives each argument for the cotangent `dy` of f's result (a
  // value that is not an array or a number where it gives none).
  std::vector<Value> rule_tangents(const Value& f, Args& args, Pos pos, const FoundRule& rule,
                                   const std::string& label, const Value& dy);
  std::optional<Value> rrule_value(const Value& f, Args& args, Pos pos);
  // call_function but for a non-differentiable function's stop of the gradient.
  Value dispatch(const FunctionObj& f, Args& args, Pos pos, const Value* self);
  Value invoke(const Method& m, Args& args, Pos pos, const Value* self, const std::string& name);
  // Binds the names of a destructuring parameter to the parts of `v`, groups in turn.
  void unpack_into(const EnvPtr& frame, const std::vector<Unpack>& parts, const Value& v, Pos pos);
  void bind_params(const Method& m, Args& args, const EnvPtr& frame, Pos pos,
                   const std::string& name);
  const Method* select(const std::vector<Method>& methods, const Args& args, const Value* self,
                       Pos pos, const std::string& name);
  /// The message of a call of struct type `t` that no constructor takes, listing them.
  std::string no_constructor(const TypeObj& t, const Value* ctor, const Args& args);
  // Enters a call of `name` made at `pos`: fails beyond limits_.max_depth nested calls.
  // The caller pops the frame when the call ends, also by an exception.
  void push_frame(const std::string& name, Pos pos);
  // Fails at `pos` when including `file` would close a cycle or nest too deep.
  void check_include(const std::string& file, Pos pos);
  // `include(path)` at `pos`: the file, found from the including file, confined to the
  // sandbox, read and run.
  void include(const Value& path, Pos pos);

  // ---- type expressions and conversions (interp_type_exprs.cc) ---------------------
  /// The type a type expression names; null for Any. `where` (a method's where clause or
  /// a struct's type parameters, or null) names the free type variables: alone, each
  /// stands for its bound or Any; inside `Val{N}` or `NTuple{N, T}`, for any value.
  TypeRef eval_type(const Expr& type, const EnvPtr& env, const std::vector<ExprPtr>* where);
  TypeRef eval_curly(const Expr& type, TypeRef head, const EnvPtr& env,
                     const std::vector<ExprPtr>* where);
  TypeRef tuple_type(const Expr& type, const TypeObj& head, const EnvPtr& env,
                     const std::vector<ExprPtr>* where);
  TypeRef type_of_type(const Expr& type, const EnvPtr& env, const std::vector<ExprPtr>* where);
  std::optional<Value> eval_type_value(const Expr& p, const EnvPtr& env,
                                       const std::vector<ExprPtr>* where);
  /// Binds a method's where variables in its frame (`f(::Val{N}) where N` binds N) from
  /// the arguments their parameter types mention.
  void bind_static_params(const Method& m, const Args& args, const EnvPtr& frame);
  /// Whether every argument that shows a where variable shows the same value: Julia's
  /// `f(x::T, y::T) where T` takes two Float64s, not an Int and a Float64.
  bool static_params_agree(const Method& m, const Args& args);
  // `@eval e`: e with its `$` parts replaced by their values (interp_eval_macro.cc), run
  // at top level; the tree is kept, as methods it defines point into it.
  Value eval_macro(const Expr& e, const EnvPtr& env);
  ExprPtr interpolated(const Expr& e, const EnvPtr& env);
  std::unique_ptr<Function> interpolated(const Function& f, const EnvPtr& env);
  Param interpolated(const Param& p, const EnvPtr& env);
  // `const Name{T...} = rhs`: a parametric type alias (aliases_), bound by its bare name to
  // rhs with T free; returns that value.
  Value define_alias(const Expr& target, const Expr& rhs, const EnvPtr& env);
  // `Name{args}` of an alias, its right side with the parameters replaced; null for other
  // types.
  ExprPtr expand_alias(const Expr& type) const;
  // match_static for parameter i of a method (a Vararg{T, N} splat binds N to its count).
  std::optional<Value> match_param(const Param& p, const Args& args, size_t i,
                                   const std::string& name);
  std::optional<Value> match_static(const Expr& type, const Value& v, const std::string& name);
  TypeRef struct_type(const Expr& type, const TypeRef& head, const EnvPtr& env,
                      const std::vector<ExprPtr>* where);
  /// `Val(x)` and `Val{x}()`: the instance of `Val{x}`.
  Value construct_val(const TypeRef& t, const Args& args, Pos pos);
  /// `x::T = v`: v converted to T, as Julia's typed assignment (convert when not a T).
  Value converted(const Expr& decl, const Value& v, const EnvPtr& env);
  Value convert_to(const TypeRef& t, Value v, Pos pos);
  /// `v` converted to the declared type of `name` in `scope`, if it has one.
  Value converted_to(const Env& scope, const std::string& name, Value v, Pos pos) {
    if (scope.types.empty()) [[likely]]
      return v;
    auto it = scope.types.find(name);
    return it == scope.types.end() ? v : convert_to(it->second, std::move(v), pos);
  }
  /// `v::T` as an expression: v, or an error when it is not a T (Julia's typeassert).
  Value type_assert(const Expr& decl, const EnvPtr& env);

  // ---- structs and their constructors (interp_structs.cc) --------------------------
  Value eval_struct(const Expr& e, const EnvPtr& env);
  Value construct(const Value& type, Args& args, Pos pos);
  Value construct_instantiated(const TypeRef& t, Args& args, Pos pos);
  Value construct_array(const TypeObj& t, Args& args, Pos pos);
  // The positional arguments of `T(; kws...)` for a `@kwdef struct T`.
  void kwdef_fields(const TypeObj& t, Args& args, Pos pos);

  // ---- lifecycle (interp.cc) and the tracing bridge (interp_tracing.cc) ------------
  void register_builtins(const Builtins& builtins);
  // Parses and runs source `file`, read since `start`.
  void run_source(uint32_t file, std::chrono::steady_clock::time_point start);
  // run_text without making the text the entry program (the prelude's files).
  void run_text_as_is(std::string path, std::string text);
  void define_global(const std::string& name, Value v);
  // emit(), which notes write too: a loop traced as a scan may note, never print.
  void write_output(std::string_view text);
  // fail() for an error of a call itself (its keywords), raised after the callee's frame
  // was pushed: the stack shows the caller as the innermost frame.
  [[noreturn]] void fail_call(Pos pos, std::string_view message);
  Var var_of(const Value& v);
  Pos op_pos() const;
  // `pos`, or where it is in the prelude, the innermost call of the program's around it.
  Pos program_pos(Pos pos) const;
  // While tracing, a call of a layer (a struct whose type is TypeObj::layer) is a scope of
  // the ops recorded inside it (Tape::scopes): pushed here, popped on leaving.
  class LayerScope {
   public:
    LayerScope(Interpreter& in, const Value& layer, Pos call);
    ~LayerScope();
    LayerScope(const LayerScope&) = delete;
    LayerScope& operator=(const LayerScope&) = delete;

   private:
    Interpreter& in_;
    bool pushed_ = false;
  };
  struct LayerCall {
    std::shared_ptr<const Object> layer;  // the StructObj, kept alive
    std::string text;                     // Scope::layer
    Pos call;                             // the program's line of the call
    uint64_t level = 0;                   // the trace level (serial) `scope` is on
    uint32_t scope = 0;                   // on that level's tape, once interned
  };
  std::string layer_text(const Value& layer);
  uint32_t scope_of_call(size_t i);
  // The tape location of program position `at`, its file added to the tape's files.
  Loc loc_of(Pos at);
  void check_op_limit();

  Limits limits_;
  // The built-ins' hooks; their families are in globals_ once registered.
  decltype(Builtins::write_array) write_array_;
  decltype(Builtins::stop_gradient) stop_gradient_;
  ReadSandbox sandbox_;
  Sources sources_;
  std::vector<ExprPtr> files_;  // every parsed file; methods point into them
  // The chain of files being run, outermost first: canonical path and path as given.
  std::vector<std::pair<std::string, std::string>> running_files_;
  double parse_seconds_ = 0;
  // The prelude's source files are [0, prelude_files_): ops recorded there take the
  // program's line.
  uint32_t prelude_files_ = 0;
  bool in_prelude(uint32_t file) const { return file < prelude_files_; }
  EnvPtr globals_;
  std::vector<Var> droppable_;  // see droppable()
  // Makes the ops of the outermost trace from `first` on droppable().
  void droppable_since(size_t first);
  // trace_fold's parts (interp_fold.cc): a fold being traced; array `x` with its dim `dim`
  // last; step k run apart; the steps of `range` as a scan (`settles`: see run_scan); the
  // fold's value from the scan's stacked ys and a first step run apart.
  struct FoldRun;
  Value dim_last(const Value& x, int dim);
  Value fold_apart(FoldRun& r, int64_t k);
  std::optional<std::vector<Value>> fold_scan(FoldRun& r, const RangeObj& range, bool* settles);
  Value fold_result(const FoldRun& r, Value stacked, const std::optional<Value>& first);
  // Julia's `using`: a program's own top-level definition of a name the prelude defines
  // (not imported, not qualified) makes a function of the program's. The prelude's stays
  // here, what the prelude's own code and module paths (`Flux.dropout`) still call.
  std::unordered_map<std::string, Value> shadowed_;
  std::unordered_set<std::string> imported_;  // `import Flux: f`, `using Base: g`
  // The global `name` as code at `pos` sees it: the prelude's own where it is shadowed.
  const Value* global_at(const std::string& name, Pos pos) const;
  // `import A: f, g`, `import A.f`, `using A: f`: the names a definition extends.
  void note_imports(const Expr& e);
  // Whether the top-level method `m`, written as `name`, makes a new function of the
  // program's in place of `existing` (the prelude's).
  bool shadows(const Method& m, const std::string& name, const Value& existing) const;
  std::vector<Frame> frames_;
  std::vector<LayerCall> layer_calls_;                     // innermost last
  std::unordered_map<uint64_t, std::string> layer_texts_;  // by StructObj::serial
  // Environments captured by closures. A closure stored in (a scope below) the
  // environment it captures makes a reference cycle; the destructor breaks them all by
  // emptying these.
  std::vector<std::weak_ptr<Env>> captured_;
  CycleCandidates cycles_;
  std::function<void(std::string_view)> print_;
  std::string output_;
  bool rules_defined_ = false;  // a program defined rules: calls look them up
  struct TypeAlias {
    std::vector<ExprPtr> params;  // names
    ExprPtr rhs;
  };
  std::unordered_map<std::string, TypeAlias> aliases_;  // parametric type aliases by name
  std::vector<ExprPtr> eval_trees_;                     // what @eval ran (eval_macro)
  int rule_bodies_ = 0;                             // rules' bodies being traced (interp_rules.cc)
  std::unordered_set<std::string> noted_;           // the keys of note_once
  std::vector<const FunctionObj*> rrules_running_;  // whose rrule is being called
  Pos here_;
  std::vector<int64_t> ends_;  // the value of `end` in each enclosing index expression
  std::string pending_;        // printed text not yet ended by a newline
  int elementwise_ = 0;
  std::vector<Shape> element_shapes_;  // of the user-function broadcasts being called

  // Control signals of return/break/continue: set by those nodes, consumed by the
  // enclosing call or loop; every block stops at a set signal.
  enum class Signal : uint8_t { none, return_, break_, continue_ };
  Signal signal_ = Signal::none;
  Value return_value_;

  uint64_t seed_ = 0;
  uint64_t draws_ = 0;
  int64_t steps_ = 0;  // expressions evaluated, against limits_.max_steps
  // The loops running now, outermost first, with the iterations each has begun: the step
  // limit's message names the one that has run the most, the likeliest to run forever.
  struct RunningLoop {
    Pos pos;
    int64_t iterations = 0;
  };
  std::vector<RunningLoop> loops_;
  // Fails at `pos`: the program ran more than limits_.max_steps steps.
  [[noreturn]] void step_limit_reached(Pos pos) const;
  // One active trace: the outermost (level 0), or one nested in it by `gradient`.
  struct TraceLevel {
    uint64_t serial = 0;  // see trace_serial
    Builder* builder = nullptr;
    std::unique_ptr<Builder> own;  // a nested trace's builder
    ExampleValues examples;        // computed on demand for data-dependent branches
    bool have_examples = false;
    // Concrete tensors already on the tape as constants, by their data.
    std::unordered_map<const void*, std::pair<Tensor, Var>> constants;
    std::unordered_map<uint32_t, uint32_t> tape_files;  // source file -> file of the tape
    // Nested traces: the capture of each var of the trace below (by id), and per input
    // name the value of a lower trace (or a concrete one) the input stands for.
    std::unordered_map<uint32_t, Var> captured;
    std::vector<std::pair<Var, Var>> captures;
    std::unordered_map<std::string, Value> stands_for;
  };
  std::vector<std::unique_ptr<TraceLevel>> levels_;  // the active traces, outermost first
  uint64_t traces_begun_ = 0;                        // the last TraceLevel::serial given
  TraceLevel* level_ = nullptr;                      // levels_.back(), or null
  Builder* builder_ = nullptr;                       // level_->builder, or null
  // Makes level_ the last of levels_ (or null) and tells new traced values their level.
  void enter_level();
  // `t`'s var as a var of the trace being recorded: a traced tensor of a trace below
  // becomes a capture of each trace above it.
  Var capture(const TensorObj& t);
  // The example value of a number or tensor of any active trace, or of a concrete one.
  Tensor example_of(const Value& v);
  // Mutable instances and arrays written while tracing, as they were before the first
  // write: end_trace puts them back.
  struct Undo {
    std::shared_ptr<const Object> object;
    std::vector<Value> fields;  // of a struct instance, or the items of a vector
    TensorObj array;            // of an array
  };
  std::vector<Undo> undo_;
  std::unordered_set<const Object*> logged_;  // the objects in undo_
  // Logs `object` in undo_ before its first write while tracing.
  void log_write(const std::shared_ptr<const Object>& object);
  // Number tensors made by as_tensor lately, by dtype and bits. Values are immutable, so
  // `s * 1.0001` in a loop shares one tensor rather than allocating one per use.
  struct NumberSlot {
    DType dtype = DType::f32;
    uint64_t bits = 0;
    Value value;
  };
  static constexpr size_t kNumberSlots = 64;
  std::array<NumberSlot, kNumberSlots> numbers_;
};

/// One file of the standard prelude (tracer/prelude/, embedded at build time).
struct PreludeFile {
  const char* name;  ///< as messages name it: "prelude/layers.jl"
  const char* text;
};
/// The prelude's files, in the order they are loaded.
extern const PreludeFile kPreludeFiles[];
extern const size_t kNumPreludeFiles;

/// Julia's Vector of `items`: an array when they are numbers (as `[a, b]`), else a vector
/// of values. What map, broadcasting and collect give over anything but tuples.
Value vector_of(Interpreter& in, std::vector<Value> items);
/// A new array object with the value of tensor `v` (`copy(x)`): a later write into either
/// leaves the other as it was.
Value copy_array(const Value& v);
/// `t` without the ops of `droppable` (their outputs) that nothing reads: the slices a
/// traced fold read in place (interp_fold.cc). One pass; `t` itself, moved, where none
/// goes: the tracer's tape is not copied to be returned unchanged.
Tape drop_unread(Tape t, const std::vector<Var>& droppable);
}  // namespace ytape::tracer
