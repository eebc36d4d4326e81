#include "check/random_tape.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "tape/builder.h"
#include "tape/error.h"

namespace ytape::check {

namespace {

using Ints = std::vector<int64_t>;

std::vector<Prim> concatenated(std::vector<Prim> a, const std::vector<Prim>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Draws ops onto a builder. Each draw picks a family and builds one op (with the helper
// ops its domain needs); when the builder refuses it (shapes that do not fit), the draw
// is dropped and another is made, so every tape is valid by construction.
class Generator {
 public:
  static constexpr size_t kInputs = 5;

  Generator(const Choose& choose, DType dtype, bool exact)
      : choose_(choose), dtype_(dtype), exact_(exact), b_("random") {
    for (auto [name, shape] : {std::pair<const char*, Shape>{"x", {3, 4}},
                               {"v", {4}},
                               {"img", {5, 5, 2, 1}},
                               {"w", {3, 3, 2, 3}},
                               {"c", {2}}}) {
      pool_.push_back(b_.input(name, Type{dtype, shape}));
    }
  }

  Tape make(int ops) {
    for (int added = 0, tries = 0; added < ops && tries < 8 * ops; ++tries) {
      try {
        pool_.push_back(exact_ ? draw_exact() : draw());
        ++added;
      } catch (const UserError&) {
        // Refused: the helper ops drawn for it stay behind, unread (DCE removes them).
      }
    }
    // Every value drawn reaches the loss, so that every op's gradient rule takes part.
    Var loss = b_.constant(dtype_, 0.0);
    for (size_t k = kInputs; k < pool_.size(); ++k) {
      loss = b_.add(loss, b_.sum(pool_[k], {.dims = all_dims(pool_[k])}));
    }
    b_.output(loss, "loss");
    return b_.finish();
  }

 private:
  uint64_t pick(uint64_t n) { return n <= 1 ? 0 : choose_(n) % n; }
  template <class T>
  T one_of(std::initializer_list<T> items) {
    return items.begin()[pick(items.size())];
  }
  Prim one_of(const std::vector<Prim>& prims) { return prims[pick(prims.size())]; }
  // A var drawn so far, most often a recent one.
  Var any() {
    size_t recent = std::min<size_t>(pool_.size(), 6);
    return pick(3) == 0 ? pool_[pick(pool_.size())] : pool_[pool_.size() - 1 - pick(recent)];
  }
  const Shape& shape(Var v) const { return b_.type(v).shape; }
  int rank(Var v) const { return static_cast<int>(shape(v).size()); }
  Ints all_dims(Var v) const {
    Ints dims(shape(v).size());
    std::iota(dims.begin(), dims.end(), 1);
    return dims;
  }
  int64_t dim_of(Var v) { return static_cast<int64_t>(pick(shape(v).size())) + 1; }
  Var scalar(double value) { return b_.constant(dtype_, value); }
  // x² + 1: positive, for log, sqrt, pow's base and divisors.
  // A value of the pool plus a small integer. (Here and below, one draw or builder call per
  // statement where two would be arguments of one call: C++ leaves their order open, and a
  // seed must give the same tape whatever the compiler.)
  Var shifted_any() {
    Var k = scalar(static_cast<double>(pick(7)) - 3);
    return b_.add(any(), k);
  }
  // tanh(x) * bound: inside (-bound, bound).
  Var squashed(Var x, double bound) {
    Var k = scalar(bound);
    return b_.mul(b_.tanh(x), k);
  }
  Var positive(Var x) {
    Var one = scalar(1);
    return b_.add(b_.mul(x, x), one);
  }

  Var draw() {
    switch (pick(12)) {
      case 0:
        return unary(any());
      case 1: {
        Var y = any(), x = any();
        return binary(x, y);
      }
      case 2: {  // a choice between two values
        Var x = any(), y = any();
        Var c = b_.call1(one_of(comparisons_), {x, y});
        return b_.select(c, x, y);
      }
      case 3:
        return reduce(any());
      case 4:
        return reshape(any());
      case 5:
        return slice_or_pad(any());
      case 6:
        return index(any());
      case 7: {  // x xᵀ or xᵀ x
        Var x = any();
        bool left = pick(2);
        return b_.matmul(x, x, {.transpose_a = left, .transpose_b = !left});
      }
      case 8:
        return image(any());
      case 9:
        return created(any());
      case 10:
        return regioned(any());
      default:
        return shifted_any();
    }
  }

  // The integer arithmetic of the elementwise, reduce, shape, index and creation
  // families, and bools from comparisons.
  Var draw_exact() {
    switch (pick(10)) {
      case 0: {
        Var x = any();
        return b_.call1(one_of(integer_unary_), {x});
      }
      case 1: {  // products grow: each is kept within ±1000
        Var x = any(), y = any();
        return bounded(b_.call1(one_of(integer_binary_), {x, y}));
      }
      case 2: {  // a choice, or the agreement of two comparisons as 0 or 1
        Var x = any(), y = any();
        Var c = b_.call1(one_of(ordered_), {x, y});
        if (pick(2)) return b_.select(c, x, y);
        Var y_positive = b_.gt(y, scalar(0));
        Var d = b_.call1(one_of(equalities_), {c, y_positive});
        return b_.convert(d, {.dtype = dtype_});
      }
      case 3: {
        Var x = any();
        Ints dims = all_dims(x);
        if (!dims.empty() && pick(2)) dims = {dim_of(x)};
        Prim p = one_of({Prim::sum, Prim::maximum, Prim::minimum});
        return bounded(b_.call1(p, {x}, reduce_attrs(p, dims)));
      }
      case 4:
        return reshape(any());
      case 5:
        return slice_or_pad(any());
      case 6:
        return index(any());
      case 7:
        return created(any());
      case 8:
        return regioned(any());
      default:
        return shifted_any();
    }
  }
  // Created values: a fill or an iota the shape of x, added to it or multiplying it.
  Var created(Var x) {
    if (pick(2)) {
      return b_.add(x, b_.fill({.value = exact_ ? 2 : 0.5, .dtype = dtype_, .shape = shape(x)}));
    }
    return b_.mul(x, b_.iota({.dtype = dtype_, .shape = shape(x), .dim = dim_of(x)}));
  }
  Var bounded(Var x) { return bounded(b_, x); }
  Var bounded(Builder& b, Var x) {
    Var low = b.constant(dtype_, -1000), high = b.constant(dtype_, 1000);
    return b.max(b.min(x, high), low);
  }

  // A region op on x (docs/regions.md): a scan, a cond or a while_loop.
  Var regioned(Var x) {
    switch (pick(3)) {
      case 0:
        return scanned(x);
      case 1:
        return branched(x);
      default:
        return looped(x);
    }
  }
  // f(x) for two smooth (or exact and bounded) functions: tanh or x^2, sin(x) x or x - 1.
  Var step(Builder& b, Var x, bool first) {
    if (exact_) return first ? bounded(b, b.mul(x, x)) : b.sub(x, b.constant(dtype_, 1));
    return first ? b.tanh(x) : b.mul(b.sin(x), x);
  }
  // A cond choosing step 1 or step 2 of x. Its selector is a constant (which `inline`
  // folds), or a comparison of sum(x .* x) with 0 that holds, or fails, by a margin: never
  // at its boundary, where finite differences would cross from one branch to the other.
  // A bool selector's then, an i64 one's case1, is step 1.
  Var branched(Var x) {
    const Type t = b_.type(x);
    bool first = pick(2);
    Var selector;
    switch (pick(3)) {
      case 0:
        selector = b_.constant(DType::boolean, first ? 1 : 0);
        break;
      case 1:
        selector = b_.constant(DType::i64, first ? 1 : 2);
        break;
      default: {
        Var squares = b_.sum(b_.mul(x, x), {.dims = all_dims(x)});
        selector = first ? b_.ge(squares, scalar(0)) : b_.lt(squares, scalar(0));
      }
    }
    std::vector<Tape> branches;
    for (bool one : {true, false}) {
      Builder r;
      r.output(step(r, r.input("x", t), one), "");
      branches.push_back(r.finish());
    }
    return b_.cond(selector, {x}, std::move(branches))[0];
  }
  // A while_loop applying step 1 to x 1 to 3 times, counted by an i64 carry: the trips
  // depend on no float value, so finite differences never cross a change of trip count.
  Var looped(Var x) {
    const Type t = b_.type(x), count{DType::i64, {}};
    const int64_t trips = 1 + static_cast<int64_t>(pick(3));
    Builder test;
    test.input("x", t);
    test.output(test.lt(test.input("n", count), test.constant(DType::i64, trips)), "");
    Builder body;
    Var h = body.input("x", t), n = body.input("n", count);
    body.output(step(body, h, true), "");
    body.output(body.add(n, body.constant(DType::i64, 1)), "");
    Var n0 = b_.constant(DType::i64, 0);
    return b_.while_loop({}, {x, n0}, test.finish(), body.finish(),
                         trips + static_cast<int64_t>(pick(2)))[0];
  }

  // A scan over the last dim of x (docs/regions.md), its carry starting at x's first slice,
  // a value of the pool (or its sum) as its const. The body mixes them with elementwise ops, smooth
  // for floats, exact and bounded for integers; its carry must keep its type, so a const that
  // broadcasts the slice to another shape is refused (and redrawn). The final carry joins
  // the pool; the stacked ys are the draw.
  Var scanned(Var x) {
    if (rank(x) == 0) user_error("no dim to scan");
    const Shape s = shape(x);
    const Type slice{dtype_, Shape(s.begin(), s.end() - 1)};
    Ints start(s.size(), 1), first = s, step(s.size(), 1);
    first.back() = 1;
    Var h0 = b_.reshape(b_.slice(x, {.start = start, .stop = first, .step = step}),
                        {.shape = slice.shape});
    // Half the time the const is a scalar (a value of the pool summed), which any slice takes.
    Var k = any();
    if (pick(2)) k = bounded(b_.sum(k, {.dims = all_dims(k)}));
    Builder body;
    Var bk = body.input("k", b_.type(k)), bh = body.input("h", slice), bx = body.input("x", slice);
    Var u = body.add(body.call1(one_of({Prim::add, Prim::sub, Prim::mul}), {bh, bx}), bk);
    Var next = exact_ ? bounded(body, u) : body.tanh(u);
    body.output(next, "");
    body.output(exact_ || pick(2) ? next : body.mul(body.sin(u), bx), "");
    std::vector<Var> r = b_.scan({k}, {h0}, {x}, body.finish(), s.back(), pick(2) == 1);
    pool_.push_back(r[0]);
    return r[1];
  }

  Var unary(Var x) {
    switch (pick(17)) {
      case 0:
        return b_.neg(x);
      case 1:
        return b_.exp(b_.tanh(x));
      case 2:
        return b_.expm1(b_.tanh(x));
      case 3:
        return b_.log(positive(x));
      case 4:
        return b_.log1p(b_.mul(x, x));
      case 5:
        return b_.sqrt(positive(x));
      case 6:
        return b_.tan(squashed(x, 0.5));
      case 7:  // inside (-1, 1), away from the ends where the slope grows without bound
        return b_.asin(squashed(x, 0.9));
      case 8:
        return b_.acos(squashed(x, 0.9));
      default:
        return b_.call1(one_of({Prim::abs, Prim::sign, Prim::sin, Prim::cos, Prim::tanh,
                                Prim::sigmoid, Prim::relu, Prim::softplus, Prim::atan}),
                        {x});
    }
  }

  // Broadcasting ones when the shapes allow; the builder refuses the others.
  Var binary(Var x, Var y) {
    switch (pick(5)) {
      case 0:
        return b_.div(x, positive(y));
      case 1: {
        Var exponent = b_.tanh(y);
        return b_.pow(positive(x), exponent);
      }
      case 2:
        return b_.rem(x, positive(y));
      default:
        return b_.call1(one_of({Prim::add, Prim::sub, Prim::mul, Prim::max, Prim::min}), {x, y});
    }
  }

  // Over a random non-empty set of dims.
  Var reduce(Var x) {
    Ints dims;
    for (int64_t d = 1; d <= rank(x); ++d) {
      if (pick(2)) dims.push_back(d);
    }
    if (dims.empty() && rank(x) > 0) dims.push_back(dim_of(x));
    Prim p = one_of({Prim::sum, Prim::maximum, Prim::minimum, Prim::softmax, Prim::log_softmax});
    return b_.call1(p, {x}, reduce_attrs(p, dims));
  }

  Var reshape(Var x) {
    Shape s = shape(x);
    switch (pick(4)) {
      case 0:
        return b_.reshape(x, {.shape = {b_.type(x).size()}});
      case 1:
        std::reverse(s.begin(), s.end());
        return b_.reshape(x, {.shape = s});
      case 2: {
        Ints perm = all_dims(x);
        for (size_t i = perm.size(); i > 1; --i) std::swap(perm[i - 1], perm[pick(i)]);
        return b_.permutedims(x, {.perm = perm});
      }
      default:  // a size-1 dim grows to 2, or a trailing one is added
        auto one = std::find(s.begin(), s.end(), 1);
        if (one != s.end()) {
          *one = 2;
        } else {
          s.push_back(2);
        }
        return b_.broadcast_to(x, {.shape = s});
    }
  }

  Var slice_or_pad(Var x) {
    const Shape& s = shape(x);
    Ints start(s.size()), stop(s.size()), step(s.size()), lo(s.size()), hi(s.size()),
        interior(s.size());
    for (size_t d = 0; d < s.size(); ++d) {
      start[d] = 1 + static_cast<int64_t>(pick(s[d]));
      stop[d] = start[d] + static_cast<int64_t>(pick(s[d] - start[d] + 1));
      step[d] = 1 + static_cast<int64_t>(pick(2));
      lo[d] = static_cast<int64_t>(pick(2));
      hi[d] = static_cast<int64_t>(pick(2));
      interior[d] = static_cast<int64_t>(pick(2));
    }
    switch (pick(3)) {
      case 0:
        return b_.slice(x, {.start = start, .stop = stop, .step = step});
      case 1:
        return b_.pad(x, {.lo = lo, .hi = hi, .interior = interior, .value = exact_ ? 2 : 0.25});
      default:
        return b_.concat({x, b_.neg(x)}, {.dim = dim_of(x)});
    }
  }

  // An i64 constant of `shape` with values in 1..n.
  Var indices(const Shape& shape, int64_t n) {
    Type t{DType::i64, shape};
    std::vector<uint8_t> bytes(static_cast<size_t>(t.size()) * sizeof(int64_t));
    for (int64_t i = 0; i < t.size(); ++i) {
      int64_t v = 1 + static_cast<int64_t>(pick(static_cast<uint64_t>(n)));
      std::memcpy(bytes.data() + i * sizeof v, &v, sizeof v);
    }
    return b_.constant(t, std::move(bytes));
  }

  // gather and scatter_add at random indices, or x's largest values along a dim (argmax).
  Var index(Var x) {
    if (rank(x) == 0) user_error("no dim to index");
    int64_t dim = dim_of(x);
    Shape s = shape(x);
    int64_t n = s[dim - 1];
    switch (pick(3)) {
      case 0: {
        Shape is = s;
        is[dim - 1] = 1 + static_cast<int64_t>(pick(3));
        return b_.gather(x, indices(is, n), {.dim = dim});
      }
      case 1: {
        int64_t size = n + static_cast<int64_t>(pick(2));
        return b_.scatter_add(x, indices(s, size), {.dim = dim, .size = size});
      }
      default: {
        Var best = b_.argmax(x, {.dim = dim});
        Shape kept = s;
        kept[dim - 1] = 1;
        return b_.gather(x, b_.reshape(best, {.shape = kept}), {.dim = dim});
      }
    }
  }

  // The conv, pool and norm families, on images (WHCN) such as img.
  Var image(Var x) {
    int64_t p = static_cast<int64_t>(pick(2)), s = 1 + static_cast<int64_t>(pick(2));
    switch (pick(4)) {
      case 0: {
        int64_t d = 1 + static_cast<int64_t>(pick(2));
        return b_.conv2d(x, pool_[3], {.stride = {s, s}, .pad = {p, p, p, p}, .dilation = {d, d}});
      }
      case 1:
        return b_.max_pool2d(x, {.window = {2, 2}, .stride = {s, s}, .pad = {p, p, p, p}});
      case 2:
        return b_.avg_pool2d(x, {.window = {2, 2}, .stride = {s, s}, .pad = {p, p, p, p}});
      default:
        return b_.batchnorm(x, b_.add(pool_[4], scalar(2)), pool_[4]);
    }
  }

  const Choose& choose_;
  DType dtype_;
  bool exact_;
  Builder b_;
  std::vector<Var> pool_;  // the values drawn so far, inputs first
  // The primitives of one kind that a draw picks from, by the dtypes column of ops.def:
  // those exact on integers (numeric), and the comparisons.
  const std::vector<Prim> integer_unary_ = elementwise_prims(1, DTypes::numeric);
  const std::vector<Prim> integer_binary_ = elementwise_prims(2, DTypes::numeric);
  const std::vector<Prim> ordered_ = elementwise_prims(2, DTypes::ordered);
  const std::vector<Prim> equalities_ = elementwise_prims(2, DTypes::equality);
  const std::vector<Prim> comparisons_ = concatenated(equalities_, ordered_);
};

}  // namespace

Tape random_tape(const Choose& choose, const RandomTapeOptions& options) {
  if (!is_float(options.dtype) && !(options.exact && options.dtype == DType::i64)) {
    internal_error("random tapes are of f32 or f64, or exact ones of i64");
  }
  return Generator(choose, options.dtype, options.exact).make(options.ops);
}

bool has_jumps(const Tape& t) {
  return std::any_of(t.ops.begin(), t.ops.end(), [](const Op& op) {
    return op.kind == OpKind::call && prim_info(op.prim).jump();
  });
}

}  // namespace ytape::check
