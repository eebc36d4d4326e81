// The C++ tracing API: C++ code written on traced values records the tape that the model
// language records for the same program, op for op.
//
//     ytape::cpp::Tracer t("loss");
//     Traced w = t.input("w", {DType::f32, {10, 784}});
//     Traced x = t.input("x", {DType::f32, {784, 32}});
//     Traced y = relu(add(matmul(w, x), 1.0));   // the language's relu.(w * x .+ 1.0)
//     t.output(sum(y) / 2.0, "out");
//     Tape tape = t.finish();
//
// Everything lives in namespace ytape::cpp, so that argument-dependent lookup finds the
// functions below from a Traced argument without a using-directive. C++ evaluates function
// arguments in no fixed order, so `add(exp(x), log(y))` may record log first: write such
// sub-expressions as separate statements where the order of the ops matters.
// docs/cpp-api.md maps each function to the language.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tape/builder.h"

namespace ytape::cpp {

/// Where in the C++ source an operation is written; a default argument of every function
/// below, so ops carry the file:line that recorded them. std::source_location's interface,
/// built on the compiler builtins that Clang 14 has (its std::source_location does not
/// compile with libstdc++ 12).
class Where {
 public:
  static constexpr Where current(const char* file = __builtin_FILE(),
                                 unsigned line = __builtin_LINE()) noexcept {
    return Where(file, line);
  }
  constexpr const char* file_name() const noexcept { return file_; }
  constexpr unsigned line() const noexcept { return line_; }

 private:
  constexpr Where(const char* file, unsigned line) : file_(file), line_(line) {}
  const char* file_ = "";
  unsigned line_ = 0;
};
/// 1-based dims, as in the language and docs/primitives.md.
using Dims = std::vector<int64_t>;

struct TracerOptions {
  bool locations = true;         ///< record the C++ file:line of each op
  std::string source_root = "";  ///< a prefix cut from the front of recorded file names
};

class Traced;

/// What a scan's body is given: its consts, its carries and the slice t of each xs.
struct ScanArgs {
  std::vector<Traced> consts, carries, xs;
};
/// What a scan's body gives back: the next carries (of the carries' types exactly), then
/// one y_t per y.
struct ScanStep {
  std::vector<Traced> carries, ys;
};

/// Records a tape. Values made by a tracer point to it, so it is neither copied nor
/// moved, and it must outlive them. Errors are UserErrors that start with the C++ file:line
/// of the operation at fault (when locations are on).
class Tracer {
 public:
  explicit Tracer(std::string name = "", TracerOptions options = {});
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  /// A named input. Inputs come before every other op, with unique names (as the
  /// language lifts the entry's arguments first: `model.layers.1.weight`, `x`).
  Traced input(std::string name, Type type);
  /// Marks `v` as an output of the tape.
  void output(const Traced& v, std::string name);
  void add_meta(std::string key, std::string value);

  /// A constant tensor of `shape` with every element `value` (converted to `dtype`).
  Traced constant(DType dtype, double value, Shape shape = {}, Where at = Where::current());
  /// Any primitive on traced values, as the language's `Prim.<name>(args...; attrs...)`:
  /// the way to conv2d, pooling, batchnorm, slice, concat and the rest.
  std::vector<Traced> call(Prim p, const std::vector<Traced>& args, const Attrs& attrs = {},
                           Where at = Where::current());
  Traced call1(Prim p, const std::vector<Traced>& args, const Attrs& attrs = {},
               Where at = Where::current());
  /// The same with typed attributes: `call1<Prim::reshape>({x}, {.shape = {2, 3}})`.
  template <Prim P>
  Traced call1(const std::vector<Traced>& args, const AttrsOf<P>& attrs,
               Where at = Where::current());
  /// A scan (docs/regions.md): `body` is called once, on values of a tape of its own (the
  /// body's), and what it records becomes the scan's body; it may use only what it is
  /// given. The body runs `length` times (backwards with `reverse`) on the consts, the
  /// carries and the slice t of each xs on its last dim. Returns the final carries, then
  /// the ys stacked on a new last dim of `length`.
  std::vector<Traced> scan(const std::vector<Traced>& consts, const std::vector<Traced>& carries,
                           const std::vector<Traced>& xs, int64_t length,
                           const std::function<ScanStep(const ScanArgs&)>& body,
                           bool reverse = false, Where at = Where::current());

  /// A cond (docs/regions.md): each of `branches` is called once, on values of a tape of
  /// its own standing for `operands`, and what it records becomes that branch; all give
  /// back values of the same types. At run time `selector` picks the one that runs: a
  /// bool[] the first (then) when true, the second (else) when false; an i64[] k the k-th
  /// (1-based). Returns its results.
  using Branch = std::function<std::vector<Traced>(const std::vector<Traced>& operands)>;
  std::vector<Traced> cond(const Traced& selector, const std::vector<Traced>& operands,
                           const std::vector<Branch>& branches, Where at = Where::current());
  /// A while_loop (docs/regions.md): `test` and `body` are each called once on values of a
  /// tape of their own standing for the consts and the carries; `test` gives a bool[],
  /// `body` the next carries (of the carries' types exactly). At run time `body` runs while
  /// `test` gives true, at most `max_trips` times (one more is a run-time error; 0:
  /// unbounded, which reverse mode refuses). Returns the final carries.
  using LoopFn = std::function<std::vector<Traced>(const std::vector<Traced>& consts,
                                                   const std::vector<Traced>& carries)>;
  std::vector<Traced> while_loop(const std::vector<Traced>& consts,
                                 const std::vector<Traced>& carries, const LoopFn& test,
                                 const LoopFn& body, int64_t max_trips,
                                 Where at = Where::current());

  /// A function with a derivative of its own (docs/rules.md): one custom_rule op. `f` is
  /// called once on values of a tape of its own standing for `operands` (its body, what
  /// runs); `pullback` once on values standing for the operands, f's results and a
  /// cotangent per float result, and gives back a cotangent per float operand, each of
  /// that operand's type: `ytape grad` uses it instead of differentiating f. `name` names
  /// the rule (its function) in messages, as `ytape gradcheck`'s; the rule's location is
  /// `at`. Returns f's results.
  using RuleBody = std::function<std::vector<Traced>(const std::vector<Traced>& operands)>;
  using RulePullback = std::function<std::vector<Traced>(const std::vector<Traced>& operands,
                                                         const std::vector<Traced>& results,
                                                         const std::vector<Traced>& cotangents)>;
  std::vector<Traced> custom_rule(const std::string& name, const std::vector<Traced>& operands,
                                  const RuleBody& f, const RulePullback& pullback,
                                  Where at = Where::current());

  const Tape& tape() const { return builder_.tape(); }
  /// Returns the tape. The tracer is spent afterwards: using it or its values throws.
  Tape finish();

  /// Throws a UserError whose message starts with the file:line of `at` (when locations
  /// are on), for checks written over this API.
  [[noreturn]] void fail(Where at, std::string_view message) const;

 private:
  void check_open() const;
  void check_arg(const Traced& v, std::string_view what, Where at) const;
  void locate(Where at);
  std::string_view file_name(Where at) const;
  // Inputs of `inner` standing for `values` (named prefix1, prefix2...); `op` names the
  // region op in errors. Each xs value (`slice`) stands for its slice on its last dim.
  std::vector<Traced> region_params(Tracer& inner, const std::vector<Traced>& values,
                                    std::string_view prefix, std::string_view op, Where at,
                                    bool slice = false) const;
  // The region `inner` recorded, yielding `yields` (values it made or was given), its
  // locations moved to this tape's files.
  Tape finish_region(Tracer& inner, const std::vector<Traced>& yields, std::string_view op,
                     Where at);

  Builder builder_;
  TracerOptions options_;
  bool finished_ = false;
  const char* last_file_ = nullptr;  // the file of the last location and its index
  uint32_t last_index_ = 0;
};

/// A value on a tracer's tape: the tracer, the var and its type. Cheap to copy; a
/// default-constructed Traced is empty, and using it throws.
class Traced {
 public:
  Traced() = default;

  Tracer* tracer() const { return tracer_; }
  Var var() const { return var_; }
  const Type& type() const { return type_; }
  DType dtype() const { return type_.dtype; }
  const Shape& shape() const { return type_.shape; }
  int rank() const { return type_.rank(); }
  /// The size of 1-based dim `d`; 1 beyond the rank, as Julia's `size(x, d)`.
  int64_t size(int d) const;

 private:
  friend class Tracer;
  Traced(Tracer* tracer, Var var, Type type) : tracer_(tracer), var_(var), type_(std::move(type)) {}

  Tracer* tracer_ = nullptr;
  Var var_;
  Type type_;
};

/// An operand of a binary operation: a traced value, or a number, which is a weak literal
/// as `2.0` is in the language: it takes the dtype of the traced operand (f64 beside an
/// integer or bool one). Converts implicitly, recording where the expression is written.
/// A parameter type only: it points to the value it was made from, so never keep one.
template <Prim P>
Traced Tracer::call1(const std::vector<Traced>& args, const AttrsOf<P>& attrs, Where at) {
  return call1(P, args, attrs.to_attrs(), at);
}

class Operand {
 public:
  Operand(const Traced& v, Where at = Where::current()) : traced_(&v), at_(at) {}
  Operand(double number, Where at = Where::current()) : number_(number), at_(at) {}

  const Traced* traced() const { return traced_; }  ///< null for a number
  double number() const { return number_; }
  Where where() const { return at_; }

 private:
  const Traced* traced_ = nullptr;
  double number_ = 0;
  Where at_;
};

// ---- operators --------------------------------------------------------------------------
// Elementwise, as the undotted operators of the language on numbers: both sides of one
// shape, or one side a scalar (a number or a rank-0 value); other shapes throw, naming both.
// `*` is elementwise here: the language's `*` of two arrays is `matmul`.

Traced operator+(Operand a, Operand b);
Traced operator-(Operand a, Operand b);
Traced operator*(Operand a, Operand b);
Traced operator/(Operand a, Operand b);
Traced operator-(Operand x);
Traced& operator+=(Traced& a, Operand b);
Traced& operator-=(Traced& a, Operand b);
Traced& operator*=(Traced& a, Operand b);
Traced& operator/=(Traced& a, Operand b);

// ---- broadcasting -----------------------------------------------------------------------
// The dotted operators of the language (`a .+ b`, `max.(a, b)`): Julia's broadcasting,
// dims aligned from the first. Operands of two dtypes promote as in the language.

Traced add(Operand a, Operand b);
Traced sub(Operand a, Operand b);
Traced mul(Operand a, Operand b);
Traced div(Operand a, Operand b);
Traced pow(Operand a, Operand b);
Traced max(Operand a, Operand b);
Traced min(Operand a, Operand b);
/// Comparisons give bool values.
Traced eq(Operand a, Operand b);
Traced ne(Operand a, Operand b);
Traced lt(Operand a, Operand b);
Traced le(Operand a, Operand b);
Traced gt(Operand a, Operand b);
Traced ge(Operand a, Operand b);
/// `ifelse.(c, a, b)`: the select primitive.
Traced ifelse(const Traced& c, Operand a, Operand b);

// ---- elementwise functions (the language's `f.(x)`) -------------------------------------

/// One function per `X_UNARY` row of tape/ops.def, named as its primitive: `exp(x)`,
/// `sin(x)`, `floor(x)` (integer values kept as floats; `round` takes ties to even), ...
#define X(...)
#define X_UNARY(name, ...) Traced name(const Traced& x, Where at = Where::current());
#include "tape/ops.def"
#undef X
/// The functions above by the primitive each records (the test of the tables a new
/// primitive needs walks them).
using UnaryFunction = Traced (*)(const Traced&, Where);
std::span<const std::pair<Prim, UnaryFunction>> unary_functions();
/// `abs2.(x)` and `x.^2`: recorded as `x * x`.
Traced abs2(const Traced& x, Where at = Where::current());
/// `leakyrelu.(x, a)` of the prelude: `max(a * x, x)`.
Traced leakyrelu(const Traced& x, double a = 0.01, Where at = Where::current());
/// `swish.(x)` of the prelude: `x * sigmoid(x)`.
Traced swish(const Traced& x, Where at = Where::current());
/// The value in `dtype`: no op when it has it already.
Traced convert(const Traced& x, DType dtype, Where at = Where::current());

// ---- linear algebra, reductions, shapes --------------------------------------------------

/// The language's `*` of arrays: matrix × matrix, matrix × vector (a vector result) and
/// vector × 1×n matrix, vectors reshaped around the matmul primitive.
Traced matmul(const Traced& a, const Traced& b, Where at = Where::current());
/// Over all dims, to a rank-0 value (a scalar stays as it is).
Traced sum(const Traced& x, Where at = Where::current());
Traced mean(const Traced& x, Where at = Where::current());
Traced maximum(const Traced& x, Where at = Where::current());
Traced minimum(const Traced& x, Where at = Where::current());
/// Over `dims`, keeping them as size 1 like Julia (`sum(x; dims=2)`): the primitive drops
/// them, then a reshape. Dims beyond the rank are ignored.
Traced sum(const Traced& x, Dims dims, Where at = Where::current());
Traced mean(const Traced& x, Dims dims, Where at = Where::current());
Traced maximum(const Traced& x, Dims dims, Where at = Where::current());
Traced minimum(const Traced& x, Dims dims, Where at = Where::current());
Traced softmax(const Traced& x, Dims dims = {1}, Where at = Where::current());
Traced logsoftmax(const Traced& x, Dims dims = {1}, Where at = Where::current());
/// The prelude's `logsumexp(x; dims)`: `m .+ log.(sum(exp.(x .- m); dims))`, m the maximum.
Traced logsumexp(const Traced& x, Dims dims = {1}, Where at = Where::current());

/// One size may be -1, as the language's `:`: the size that makes the counts agree. No op
/// when the shape is unchanged.
Traced reshape(const Traced& x, Shape shape, Where at = Where::current());
Traced permutedims(const Traced& x, Dims perm, Where at = Where::current());
/// A matrix transposed, a vector as a 1×n matrix (`x'` in the language).
Traced transpose(const Traced& x, Where at = Where::current());
/// `Prim.gather(x, idx; dim)`: idx holds 1-based i64 indices along `dim`.
Traced gather(const Traced& x, const Traced& idx, int64_t dim, Where at = Where::current());

// ---- losses of the prelude ---------------------------------------------------------------

/// Mean cross-entropy of logits (classes, batch) against i64 labels (batch,) in 1:classes.
Traced logitcrossentropy_labels(const Traced& logits, const Traced& labels,
                                Where at = Where::current());
/// Mean squared error `mean(abs2.(yhat .- y))`.
Traced mse(const Traced& yhat, const Traced& y, Where at = Where::current());

}  // namespace ytape::cpp
