#include "train/data.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <set>

#include "tape/error.h"
#include "unit/train/helpers.h"

using namespace ytape;
using namespace ytape::testing;

TEST_CASE("an epoch's order is a permutation, a pure function of the seed and the epoch") {
  std::vector<int64_t> a = epoch_order(100, 5, 1, true);
  std::vector<int64_t> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 100; ++i) CHECK(sorted[static_cast<size_t>(i)] == i);
  CHECK(a == epoch_order(100, 5, 1, true));
  CHECK(a != epoch_order(100, 5, 2, true));
  CHECK(a != epoch_order(100, 6, 1, true));
  std::vector<int64_t> identity(100);
  for (int64_t i = 0; i < 100; ++i) identity[static_cast<size_t>(i)] = i;
  CHECK(a != identity);
  CHECK(epoch_order(100, 5, 1, false) == identity);
  CHECK(epoch_order(1, 5, 1, true) == std::vector<int64_t>{0});
}

// Pinned (a Python rebuild of the formula in train/data.h gives the same): changing the
// generator would make checkpoints of older runs resume into another order.
TEST_CASE("the order of an epoch is pinned") {
  CHECK(epoch_order(6, 0, 1, true) == std::vector<int64_t>{2, 1, 3, 5, 0, 4});
}

TEST_CASE("step keys differ per step and seed, and are never 0") {
  std::set<uint64_t> keys;
  for (uint64_t seed = 0; seed < 4; ++seed) {
    for (int64_t step = 0; step < 100; ++step) keys.insert(step_key(seed, step));
  }
  CHECK(keys.size() == 400);
  CHECK(!keys.contains(0));
  CHECK(step_key(3, 10) == step_key(3, 10));
}

TEST_CASE("a batch takes the samples along the last dim, in the order given") {
  DataSet d = ramp_data(5);
  CHECK(d.samples == 5);
  std::vector<int64_t> pick = {3, 0, 3};
  Tensor b = gather_samples(d.tensors[0].second, pick);
  CHECK(b.type() == f32({2, 3}));
  CHECK(std::vector<float>(b.data<float>(), b.data<float>() + 6) ==
        std::vector<float>{3, -3, 0, 0, 3, -3});
}

TEST_CASE("a data set needs one sample count in every tensor") {
  CHECK_THROWS_WITH_AS(make_data_set({{"x", Tensor(f32({2, 5}))}, {"y", Tensor(f32({4}))}}, "d.st"),
                       "d.st: tensor 'y' (f32[4]) has 4 samples but 'x' has 5: the last dim counts "
                       "samples and must be the same in every tensor",
                       UserError);
  CHECK_THROWS_WITH_AS(make_data_set({{"s", Tensor(f32({}))}}, "d.st"),
                       "d.st: tensor 's' is a scalar; data tensors need a last dim that counts "
                       "samples",
                       UserError);
  CHECK_THROWS_WITH_AS(make_data_set({}, "d.st"), "d.st: the data file holds no tensors",
                       UserError);
}
