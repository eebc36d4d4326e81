#include "tracer/cpp_api.h"

#include <fmt/format.h>

#include <algorithm>

#include "tape/error.h"
#include "tape/float16.h"
#include "tape/validate.h"

namespace ytape::cpp {

// ---- the tracer ---------------------------------------------------------------------------

Tracer::Tracer(std::string name, TracerOptions options)
    : builder_(std::move(name)), options_(std::move(options)) {}

void Tracer::check_open() const {
  if (finished_) user_error("this Tracer has finished its tape; start a new Tracer");
}

std::string_view Tracer::file_name(Where at) const {
  std::string_view path = at.file_name();
  if (!options_.source_root.empty() && path.starts_with(options_.source_root)) {
    path.remove_prefix(options_.source_root.size());
  }
  return path;
}

void Tracer::fail(Where at, std::string_view message) const {
  if (!options_.locations) throw UserError(std::string(message));
  user_error("{}:{}: {}", file_name(at), at.line(), message);
}

void Tracer::check_arg(const Traced& v, std::string_view what, Where at) const {
  if (v.tracer() == nullptr) {
    fail(at, fmt::format("{}: an empty Traced value (default-constructed): give it a value "
                         "first",
                         what));
  }
  if (v.tracer() != this) {
    fail(at, fmt::format("{}: a value of another Tracer; each Tracer records its own tape, and "
                         "values of two tracers cannot be combined",
                         what));
  }
}

// Source locations arrive as the same few file names over and over: remember the last.
void Tracer::locate(Where at) {
  if (!options_.locations) return;
  if (at.file_name() != last_file_) {
    last_file_ = at.file_name();
    last_index_ = builder_.intern_file(file_name(at));
  }
  builder_.set_loc({last_index_, at.line()});
}

Traced Tracer::input(std::string name, Type type) {
  check_open();
  Var v = builder_.input(std::move(name), type);
  return Traced(this, v, std::move(type));
}

void Tracer::output(const Traced& v, std::string name) {
  check_open();
  if (v.tracer() != this) {
    user_error("output '{}': {}", name,
               v.tracer() == nullptr ? "an empty Traced value (default-constructed)"
                                     : "a value of another Tracer");
  }
  builder_.output(v.var(), std::move(name));
}

void Tracer::add_meta(std::string key, std::string value) {
  builder_.add_meta(std::move(key), std::move(value));
}

Traced Tracer::constant(DType dtype, double value, Shape shape, Where at) {
  check_open();
  locate(at);
  Var v = builder_.constant(dtype, value, std::move(shape));
  return Traced(this, v, builder_.type(v));
}

std::vector<Traced> Tracer::call(Prim p, const std::vector<Traced>& args, const Attrs& attrs,
                                 Where at) {
  check_open();
  std::vector<Var> vars;
  vars.reserve(args.size());
  for (const Traced& a : args) {
    check_arg(a, prim_name(p), at);
    vars.push_back(a.var());
  }
  locate(at);
  std::vector<Traced> outs;
  for (Var v : builder_.call(p, std::move(vars), attrs)) {
    outs.push_back(Traced(this, v, builder_.type(v)));
  }
  return outs;
}

Traced Tracer::call1(Prim p, const std::vector<Traced>& args, const Attrs& attrs, Where at) {
  if (prim_info(p).outputs != 1) {
    fail(at, fmt::format("{} has {} outputs: use call", prim_name(p), prim_info(p).outputs));
  }
  return call(p, args, attrs, at)[0];
}

std::vector<Traced> Tracer::region_params(Tracer& inner, const std::vector<Traced>& values,
                                          std::string_view prefix, std::string_view op, Where at,
                                          bool slice) const {
  std::vector<Traced> out;
  for (size_t i = 0; i < values.size(); ++i) {
    check_arg(values[i], op, at);
    Type type = values[i].type();
    if (slice) {
      if (type.shape.empty())
        fail(at, fmt::format("{}: an xs value is a scalar; xs are stacked on their last dim", op));
      type.shape.pop_back();
    }
    out.push_back(inner.input(fmt::format("{}{}", prefix, i + 1), std::move(type)));
  }
  return out;
}

Tape Tracer::finish_region(Tracer& inner, const std::vector<Traced>& yields, std::string_view op,
                           Where at) {
  for (const Traced& v : yields) {
    if (v.tracer() != &inner) {
      fail(at, fmt::format("{}: a region gives back a value it was not given nor made; pass "
                           "values from outside it as operands",
                           op));
    }
    inner.builder_.output(v.var(), "");
  }
  Tape region = inner.builder_.finish();
  // A region's locations name the files of the tape around it.
  for (Op& op : region.ops) {
    if (op.loc.known()) op.loc.file = builder_.intern_file(region.files[op.loc.file - 1]);
  }
  region.files.clear();
  return region;
}

namespace {

VarList vars_of(const std::vector<Traced>& values) {
  VarList out;
  for (const Traced& v : values) out.push_back(v.var());
  return out;
}

}  // namespace

std::vector<Traced> Tracer::scan(const std::vector<Traced>& consts,
                                 const std::vector<Traced>& carries, const std::vector<Traced>& xs,
                                 int64_t length,
                                 const std::function<ScanStep(const ScanArgs&)>& body, bool reverse,
                                 Where at) {
  check_open();
  Tracer inner("body", options_);
  ScanArgs given{region_params(inner, consts, "const", "scan", at),
                 region_params(inner, carries, "carry", "scan", at),
                 region_params(inner, xs, "x", "scan", at, true)};
  ScanStep step = body(given);
  std::vector<Traced> yields = step.carries;
  yields.insert(yields.end(), step.ys.begin(), step.ys.end());
  Tape region = finish_region(inner, yields, "scan", at);
  locate(at);
  std::vector<Traced> outs;
  for (Var v : builder_.scan(vars_of(consts), vars_of(carries), vars_of(xs), std::move(region),
                             length, reverse)) {
    outs.push_back(Traced(this, v, builder_.type(v)));
  }
  return outs;
}

std::vector<Traced> Tracer::cond(const Traced& selector, const std::vector<Traced>& operands,
                                 const std::vector<Branch>& branches, Where at) {
  check_open();
  check_arg(selector, "cond", at);
  std::vector<Tape> regions;
  for (const Branch& branch : branches) {
    Tracer inner("branch", options_);
    std::vector<Traced> given = region_params(inner, operands, "x", "cond", at);
    regions.push_back(finish_region(inner, branch(given), "cond", at));
  }
  locate(at);
  std::vector<Traced> outs;
  for (Var v : builder_.cond(selector.var(), vars_of(operands), std::move(regions))) {
    outs.push_back(Traced(this, v, builder_.type(v)));
  }
  return outs;
}

std::vector<Traced> Tracer::while_loop(const std::vector<Traced>& consts,
                                       const std::vector<Traced>& carries, const LoopFn& test,
                                       const LoopFn& body, int64_t max_trips, Where at) {
  check_open();
  std::vector<Tape> regions;
  for (const LoopFn* fn : {&test, &body}) {
    Tracer inner(fn == &test ? "cond" : "body", options_);
    std::vector<Traced> c = region_params(inner, consts, "const", "while_loop", at);
    std::vector<Traced> k = region_params(inner, carries, "carry", "while_loop", at);
    regions.push_back(finish_region(inner, (*fn)(c, k), "while_loop", at));
  }
  locate(at);
  std::vector<Traced> outs;
  for (Var v : builder_.while_loop(vars_of(consts), vars_of(carries), std::move(regions[0]),
                                   std::move(regions[1]), max_trips)) {
    outs.push_back(Traced(this, v, builder_.type(v)));
  }
  return outs;
}

std::vector<Traced> Tracer::custom_rule(const std::string& name,
                                        const std::vector<Traced>& operands, const RuleBody& f,
                                        const RulePullback& pullback, Where at) {
  check_open();
  std::vector<Tape> regions;
  Tracer body("body", options_);
  regions.push_back(finish_region(body, f(region_params(body, operands, "x", "custom_rule", at)),
                                  "custom_rule", at));
  Tracer back("pullback", options_);
  std::vector<Traced> x = region_params(back, operands, "x", "custom_rule", at), y, dy;
  const std::vector<Type> results = regions[0].output_types();
  for (size_t j = 0; j < results.size(); ++j)
    y.push_back(back.input(fmt::format("y{}", j + 1), results[j]));
  for (size_t j = 0; j < results.size(); ++j) {
    if (is_float(results[j].dtype))
      dy.push_back(back.input(fmt::format("dy{}", j + 1), results[j]));
  }
  regions.push_back(finish_region(back, pullback(x, y, dy), "custom_rule", at));
  regions[0].name = "body";
  regions[1].name = "pullback";
  locate(at);
  AttrsOf<Prim::custom_rule> attrs{
      .name = name,
      .rule = options_.locations ? fmt::format("{}:{}", file_name(at), at.line()) : ""};
  std::vector<Traced> outs;
  for (Var v :
       builder_.record(Prim::custom_rule, vars_of(operands), attrs.to_attrs(), std::move(regions))
           .outs) {
    outs.push_back(Traced(this, v, builder_.type(v)));
  }
  return outs;
}

Tape Tracer::finish() {
  check_open();
  finished_ = true;
  Tape t = builder_.finish();
  check_made(t, "the C++ tracer");
  return t;
}

int64_t Traced::size(int d) const {
  if (d < 1) user_error("size(x, d) needs a dim d >= 1, got {}", d);
  return d <= rank() ? shape()[d - 1] : 1;
}

namespace {

// The tracer of a value. An empty value has none to format the location, so do it here.
Tracer& owner(const Traced& x, Where at) {
  if (x.tracer() == nullptr) {
    user_error("{}:{}: an empty Traced value (default-constructed): give it a value first",
               at.file_name(), at.line());
  }
  return *x.tracer();
}

// The one tracer of the traced operands.
Tracer& tracer_of(const Operand& a, const Operand& b, std::string_view op) {
  Where at = a.where();
  const Traced* x = a.traced() != nullptr ? a.traced() : b.traced();
  if (x == nullptr) {
    user_error("{}:{}: {} of two numbers: one operand must be a traced value", at.file_name(),
               at.line(), op);
  }
  Tracer& t = owner(*x, at);
  if (a.traced() == nullptr || b.traced() == nullptr) return t;
  if (b.traced()->tracer() == nullptr) {
    t.fail(at, fmt::format("{}: an empty Traced value (default-constructed): give it a value "
                           "first",
                           op));
  }
  if (b.traced()->tracer() != &t) {
    t.fail(at, fmt::format("{} of values of two different Tracers: each Tracer records its "
                           "own tape, and values of two tracers cannot be combined",
                           op));
  }
  return t;
}

// The dtype two operands combine to, as the language's result_dtype: numbers are weak
// literals, so a traced operand decides; two floats give the wider.
DType promote(const Operand& a, const Operand& b) {
  const Traced* x = a.traced();
  const Traced* y = b.traced();
  if (x == nullptr && y == nullptr) return DType::f64;
  if (x == nullptr || y == nullptr) {
    DType d = (x != nullptr ? x : y)->dtype();
    return is_float(d) ? d : DType::f64;
  }
  DType da = x->dtype(), db = y->dtype();
  if (is_float(da) && is_float(db)) {
    return wider_float(da, db);
  }
  if (is_float(da)) return da;
  if (is_float(db)) return db;
  return da == DType::boolean && db == DType::boolean ? DType::boolean : DType::i64;
}

// The operands as values of dtype `d`. The language converts traced operands first and
// records the constants of numbers just before the op, so the same happens here.
std::vector<Traced> as_values(Tracer& t, std::initializer_list<const Operand*> operands, DType d,
                              Where at) {
  std::vector<Traced> values;
  for (const Operand* o : operands) {
    values.push_back(o->traced() != nullptr ? convert(*o->traced(), d, at) : Traced());
  }
  size_t i = 0;
  for (const Operand* o : operands) {
    if (o->traced() == nullptr) values[i] = t.constant(d, o->number(), {}, at);
    ++i;
  }
  return values;
}

// `a .op b` in the language: promoted operands, broadcast by the primitive.
Traced binary(Prim p, const Operand& a, const Operand& b) {
  Tracer& t = tracer_of(a, b, prim_name(p));
  DType d = promote(a, b);
  if (!prim_info(p).compares() && d == DType::boolean) d = DType::i64;
  if ((p == Prim::div || p == Prim::pow) && !is_float(d)) d = DType::f64;
  return t.call1(p, as_values(t, {&a, &b}, d, a.where()), {}, a.where());
}

// `a op b`: as the dotted form, for operands of one shape or with a scalar.
Traced same_shape(Prim p, std::string_view op, std::string_view hint, const Operand& a,
                  const Operand& b) {
  Tracer& t = tracer_of(a, b, fmt::format("'{}'", op));
  const Traced* x = a.traced();
  const Traced* y = b.traced();
  if (x != nullptr && y != nullptr && x->rank() > 0 && y->rank() > 0 && x->shape() != y->shape()) {
    t.fail(a.where(), fmt::format("'{}' of shapes {} and {}: the shapes must be equal, or one "
                                  "side a scalar ({})",
                                  op, shape_str(x->shape()), shape_str(y->shape()), hint));
  }
  return binary(p, a, b);
}

// `f.(x)` of a built-in scalar function: integer and bool values become f64 for the float
// functions, bools i64 for the others.
Traced unary(Prim p, const Traced& x, Where at) {
  Tracer& t = owner(x, at);
  bool float_only = prim_info(p).dtypes == DTypes::floating;
  DType d = x.dtype();
  if (float_only && !is_float(d)) d = DType::f64;
  if (d == DType::boolean) d = DType::i64;
  return t.call1(p, {convert(x, d, at)}, {}, at);
}

// sum/maximum/minimum over `dims` (all when null). A scalar is its own reduction.
Traced reduce(Prim p, const Traced& x, const Dims* dims, Where at) {
  Tracer& t = owner(x, at);
  if (x.rank() == 0) return x;
  Dims inside;
  for (int64_t d = 1; dims == nullptr && d <= x.rank(); ++d) inside.push_back(d);
  for (int64_t d : dims != nullptr ? *dims : Dims{}) {
    if (d < 1) t.fail(at, fmt::format("{}: dims must be >= 1, got {}", prim_name(p), d));
    if (d <= x.rank()) inside.push_back(d);
  }
  std::sort(inside.begin(), inside.end());
  inside.erase(std::unique(inside.begin(), inside.end()), inside.end());
  Traced v = p == Prim::sum && x.dtype() == DType::boolean ? convert(x, DType::i64, at) : x;
  Traced r = t.call1(p, {v}, reduce_attrs(p, inside), at);
  if (dims == nullptr) return r;
  Shape kept = x.shape();
  for (int64_t d : inside) kept[d - 1] = 1;
  return reshape(r, kept, at);
}

// The sum divided by the count, which the language counts over the dims as given.
Traced mean_of(const Traced& x, const Dims* dims, Where at) {
  Traced total = reduce(Prim::sum, x, dims, at);
  int64_t count = 1;
  if (dims == nullptr) count = x.type().size();
  for (int64_t d : dims != nullptr ? *dims : Dims{}) {
    if (d >= 1 && d <= x.rank()) count *= x.shape()[d - 1];
  }
  return binary(Prim::div, Operand(total, at), Operand(static_cast<double>(count), at));
}

}  // namespace

// ---- operators --------------------------------------------------------------------------

Traced operator+(Operand a, Operand b) {
  return same_shape(Prim::add, "+", "add(a, b) broadcasts", a, b);
}
Traced operator-(Operand a, Operand b) {
  return same_shape(Prim::sub, "-", "sub(a, b) broadcasts", a, b);
}
Traced operator*(Operand a, Operand b) {
  return same_shape(Prim::mul, "*", "mul(a, b) broadcasts; matmul(a, b) is the matrix product", a,
                    b);
}
Traced operator/(Operand a, Operand b) {
  return same_shape(Prim::div, "/", "div(a, b) broadcasts", a, b);
}

Traced operator-(Operand x) {
  if (x.traced() == nullptr) user_error("unary '-' of a number: negate the number itself");
  return unary(Prim::neg, *x.traced(), x.where());
}

Traced& operator+=(Traced& a, Operand b) {
  return a = Operand(a, b.where()) + b;
}
Traced& operator-=(Traced& a, Operand b) {
  return a = Operand(a, b.where()) - b;
}
Traced& operator*=(Traced& a, Operand b) {
  return a = Operand(a, b.where()) * b;
}
Traced& operator/=(Traced& a, Operand b) {
  return a = Operand(a, b.where()) / b;
}

// ---- broadcasting -----------------------------------------------------------------------

#define YTAPE_BINARY(p)            \
  Traced p(Operand a, Operand b) { \
    return binary(Prim::p, a, b);  \
  }
YTAPE_BINARY(add)
YTAPE_BINARY(sub)
YTAPE_BINARY(mul)
YTAPE_BINARY(div)
YTAPE_BINARY(pow)
YTAPE_BINARY(max)
YTAPE_BINARY(min)
YTAPE_BINARY(eq)
YTAPE_BINARY(ne)
YTAPE_BINARY(lt)
YTAPE_BINARY(le)
YTAPE_BINARY(gt)
YTAPE_BINARY(ge)
#undef YTAPE_BINARY

Traced ifelse(const Traced& c, Operand a, Operand b) {
  Where at = a.where();
  Tracer& t = owner(c, at);
  Traced cond = convert(c, DType::boolean, at);
  if (a.traced() != nullptr) tracer_of(Operand(c, at), a, "ifelse");
  if (b.traced() != nullptr) tracer_of(Operand(c, at), b, "ifelse");
  std::vector<Traced> xy = as_values(t, {&a, &b}, promote(a, b), at);
  return t.call1(Prim::select, {cond, xy[0], xy[1]}, {}, at);
}

// ---- elementwise functions --------------------------------------------------------------

// Each function records its namesake primitive.
#define X(...)
#define X_UNARY(name, ...)                 \
  Traced name(const Traced& x, Where at) { \
    return unary(Prim::name, x, at);       \
  }
#include "tape/ops.def"
#undef X

std::span<const std::pair<Prim, UnaryFunction>> unary_functions() {
#define X(...)
#define X_UNARY(name, ...) {Prim::name, static_cast<UnaryFunction>(&name)},
  static const std::pair<Prim, UnaryFunction> table[] = {
#include "tape/ops.def"
  };
#undef X
  return table;
}

Traced abs2(const Traced& x, Where at) {
  return binary(Prim::mul, Operand(x, at), Operand(x, at));
}

Traced leakyrelu(const Traced& x, double a, Where at) {
  Traced ax = binary(Prim::mul, Operand(a, at), Operand(x, at));
  return binary(Prim::max, Operand(ax, at), Operand(x, at));
}

Traced swish(const Traced& x, Where at) {
  Traced s = sigmoid(x, at);
  return binary(Prim::mul, Operand(x, at), Operand(s, at));
}

Traced convert(const Traced& x, DType dtype, Where at) {
  Tracer& t = owner(x, at);
  if (x.dtype() == dtype) return x;
  return t.call1<Prim::convert>({x}, {.dtype = dtype}, at);
}

// ---- linear algebra, reductions, shapes ----------------------------------------------------

Traced matmul(const Traced& a, const Traced& b, Where at) {
  Operand oa(a, at), ob(b, at);
  Tracer& t = tracer_of(oa, ob, "matmul");
  int ra = a.rank(), rb = b.rank();
  if (!(ra == 2 && rb == 2) && !(ra == 2 && rb == 1) && !(ra == 1 && rb == 2)) {
    t.fail(at, fmt::format("matmul of shapes {} and {}: the matrix product needs matrices, or a "
                           "matrix and a vector (mul(a, b) multiplies elementwise)",
                           shape_str(a.shape()), shape_str(b.shape())));
  }
  DType d = promote(oa, ob);
  Traced x = convert(a, d, at);
  Traced y = convert(b, d, at);
  if (rb == 1) {
    Traced r = t.call1(Prim::matmul, {x, reshape(y, {b.shape()[0], 1}, at)}, {}, at);
    return reshape(r, {a.shape()[0]}, at);
  }
  if (ra == 1) x = reshape(x, {a.shape()[0], 1}, at);
  return t.call1(Prim::matmul, {x, y}, {}, at);
}

Traced sum(const Traced& x, Where at) {
  return reduce(Prim::sum, x, nullptr, at);
}
Traced maximum(const Traced& x, Where at) {
  return reduce(Prim::maximum, x, nullptr, at);
}
Traced minimum(const Traced& x, Where at) {
  return reduce(Prim::minimum, x, nullptr, at);
}
Traced mean(const Traced& x, Where at) {
  return mean_of(x, nullptr, at);
}
Traced sum(const Traced& x, Dims dims, Where at) {
  return reduce(Prim::sum, x, &dims, at);
}
Traced maximum(const Traced& x, Dims dims, Where at) {
  return reduce(Prim::maximum, x, &dims, at);
}
Traced minimum(const Traced& x, Dims dims, Where at) {
  return reduce(Prim::minimum, x, &dims, at);
}
Traced mean(const Traced& x, Dims dims, Where at) {
  return mean_of(x, &dims, at);
}

Traced softmax(const Traced& x, Dims dims, Where at) {
  return owner(x, at).call1<Prim::softmax>({x}, {.dims = std::move(dims)}, at);
}

Traced logsoftmax(const Traced& x, Dims dims, Where at) {
  return owner(x, at).call1<Prim::log_softmax>({x}, {.dims = std::move(dims)}, at);
}

Traced logsumexp(const Traced& x, Dims dims, Where at) {
  Traced m = maximum(x, dims, at);
  Traced e = exp(sub(Operand(x, at), Operand(m, at)), at);
  Traced l = log(sum(e, dims, at), at);
  return add(Operand(m, at), Operand(l, at));
}

Traced reshape(const Traced& x, Shape shape, Where at) {
  Tracer& t = owner(x, at);
  Shape given = shape;
  int colon = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1 && colon >= 0) t.fail(at, "reshape takes at most one -1");
    if (shape[i] < -1) {
      t.fail(at, fmt::format("reshape sizes must be >= 0 or -1, got {}", shape[i]));
    }
    if (shape[i] == -1) colon = static_cast<int>(i);
    if (shape[i] >= 0) known *= shape[i];
  }
  if (colon >= 0) {
    int64_t total = x.type().size();
    if (known == 0 || total % known != 0) {
      t.fail(at, fmt::format("cannot reshape {} elements to {}", total, shape_str(given)));
    }
    shape[colon] = total / known;
  }
  if (shape == x.shape()) return x;
  return t.call1<Prim::reshape>({x}, {.shape = std::move(shape)}, at);
}

Traced permutedims(const Traced& x, Dims perm, Where at) {
  return owner(x, at).call1<Prim::permutedims>({x}, {.perm = std::move(perm)}, at);
}

Traced transpose(const Traced& x, Where at) {
  Tracer& t = owner(x, at);
  if (x.rank() > 2) {
    t.fail(at,
           fmt::format("transpose needs a vector or a matrix, got shape {}", shape_str(x.shape())));
  }
  if (x.rank() == 0) return x;
  if (x.rank() == 1) return reshape(x, {1, x.shape()[0]}, at);
  return permutedims(x, {2, 1}, at);
}

Traced gather(const Traced& x, const Traced& idx, int64_t dim, Where at) {
  return owner(x, at).call1<Prim::gather>({x, idx}, {.dim = dim}, at);
}

// ---- losses -------------------------------------------------------------------------------

Traced logitcrossentropy_labels(const Traced& logits, const Traced& labels, Where at) {
  int64_t n = logits.size(2);
  Traced logp = logsoftmax(logits, {1}, at);
  Traced picked = gather(logp, reshape(labels, {1, n}, at), 1, at);
  return mean(unary(Prim::neg, picked, at), at);
}

Traced mse(const Traced& yhat, const Traced& y, Where at) {
  return mean(abs2(sub(Operand(yhat, at), Operand(y, at)), at), at);
}

}  // namespace ytape::cpp
