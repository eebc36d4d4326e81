// Random tapes of the ops the rules rewrite (shape ops, identities with splats, negation,
// selection): optimizing never changes a single output bit, and reaches a fixed point.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <numeric>
#include <random>

#include "helpers.h"
#include "io/json.h"
#include "opt/optimize.h"
#include "runtime/executor.h"
#include "runtime/inputs.h"

namespace ytape::passes_test {

namespace {

class RandomTape {
 public:
  explicit RandomTape(uint32_t seed) : rng_(seed), b_("random") {
    pool_.push_back(b_.input("x", f32({2, 3, 1})));
    pool_.push_back(b_.input("y", f32({3})));
  }

  Tape make(int ops) {
    for (int i = 0; i < ops; ++i) pool_.push_back(step());
    for (int k = 1; k <= 3; ++k) b_.output(pool_[pool_.size() - k], "out" + std::to_string(k));
    return b_.finish();
  }

 private:
  size_t pick(size_t n) { return rng_() % n; }
  Var any() { return pool_[pool_.size() - 1 - pick(std::min<size_t>(pool_.size(), 6))]; }
  const Shape& shape(Var v) { return b_.type(v).shape; }

  Var step() {
    Var x = any();
    Shape s = shape(x);
    switch (pick(9)) {
      case 0: {  // a permutation
        std::vector<int64_t> perm(s.size());
        std::iota(perm.begin(), perm.end(), 1);
        std::shuffle(perm.begin(), perm.end(), rng_);
        return b_.call1(Prim::permutedims, {x}, {{"perm", perm}});
      }
      case 1: {  // reshape: flat, reversed, or with a trailing 1
        Shape to = s;
        int how = static_cast<int>(pick(3));
        if (how == 0) to = {b_.type(x).size()};
        if (how == 1) std::reverse(to.begin(), to.end());
        if (how == 2) to.push_back(1);
        return b_.reshape(x, {.shape = to});
      }
      case 2: {  // broadcast: a size-1 dim grows, or a new trailing dim
        Shape to = s;
        auto one = std::find(to.begin(), to.end(), 1);
        if (one != to.end() && pick(2))
          *one = 2;
        else
          to.push_back(static_cast<int64_t>(1 + pick(2)));
        return b_.broadcast_to(x, {.shape = to});
      }
      case 3: {  // a sum over some dims, maybe none, maybe of size 1
        std::vector<int64_t> dims;
        for (int d = 1; d <= static_cast<int>(s.size()); ++d) {
          if (pick(3) == 0) dims.push_back(d);
        }
        return b_.sum(x, {.dims = dims});
      }
      case 4:
        return b_.neg(x);
      case 5: {  // an identity with a splat of some broadcasting shape
        Shape splat = pick(3) == 0 ? Shape{} : s;
        if (!splat.empty() && pick(2)) splat.push_back(2);
        Var c = pick(2) ? fill(b_, pick(2) ? 0.0 : 1.0, DType::f32, splat)
                        : b_.constant(DType::f32, pick(2) ? 0.0 : 1.0, splat);
        Prim p = std::array{Prim::add, Prim::sub, Prim::mul, Prim::div}[pick(4)];
        return pick(2) ? b_.call1(p, {x, c}) : b_.call1(p, {c, x});
      }
      case 6: {  // select on a splat condition, or between one value twice
        Var c = fill(b_, static_cast<double>(pick(2)), DType::boolean, pick(2) ? Shape{} : s);
        Var other = any();
        bool same = pick(2) || shape(other) != s;
        return b_.select(c, x, same ? x : other);
      }
      case 7:
        return b_.sin(x);
      default:
        return b_.call1(Prim::convert, {x}, {{"dtype", DType::f32}});
    }
  }

  std::mt19937 rng_;
  Builder b_;
  std::vector<Var> pool_;
};

}  // namespace

TEST_CASE("optimizing random tapes of rewritable ops keeps every output bit") {
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    CAPTURE(seed);
    Tape t = RandomTape(seed).make(12);
    Tape o = optimize(t);
    validate(o);
    TensorMap inputs = complete_inputs(t, {}, seed);
    std::vector<Tensor> want = Executor(t).run(inputs), got = Executor(o).run(inputs);
    CHECK(same_bits(want, got));
    std::string once = write_tape_json(o);
    CHECK(write_tape_json(optimize(o)) == once);
  }
}

}  // namespace ytape::passes_test
