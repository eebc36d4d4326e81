// Inference of the shape, index and linalg families: edge cases and messages.
#include <doctest/doctest.h>

#include "unit/tape/infer_helpers.h"

using namespace ytape;
using namespace ytape::testing;

// ---- shape ------------------------------------------------------------------------------

TEST_CASE("reshape keeps the element count") {
  CHECK(infer(Prim::reshape, {"f32[2,3]"}, {{"shape", Ints{6}}}) == "f32[6]");
  CHECK(infer(Prim::reshape, {"i64[1,1]"}, {{"shape", Ints{}}}) == "i64[]");
  CHECK(infer(Prim::reshape, {"f32[]"}, {{"shape", Ints{1, 1, 1}}}) == "f32[1,1,1]");
  CHECK(infer(Prim::reshape, {"f32[0,3]"}, {{"shape", Ints{3, 0, 7}}}) == "f32[3,0,7]");
  CHECK_THROWS_WITH_AS(infer(Prim::reshape, {"f32[2,3]"}, {{"shape", Ints{4}}}),
                       "shape=[4] has 4 elements, but f32[2,3] has 6", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::reshape, {"f32[6]"}, {{"shape", Ints{-1, 6}}}),
                       "shape: dimension -1 is negative", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::reshape, {"f32[6]"}, {{"shape", Ints{-2, -3}}}),
                       "shape: dimension -2 is negative", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::reshape, {"f32[0]"}, {{"shape", Ints{0, int64_t{1} << 62}}}),
                       "shape: dimension 4611686018427387904 is too large", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::reshape, {"f32[2]"}, {{"shape", Ints{1 << 24, 1 << 24, 2}}}),
                       "shape: shape [16777216,16777216,2] has more than 2^48 elements", UserError);
  // 2^32 * 2^32 wraps to 0 in int64 arithmetic: it must not pass as a reshape of 0 elements.
  CHECK_THROWS_WITH_AS(
      infer(Prim::reshape, {"f32[0]"}, {{"shape", Ints{int64_t{1} << 32, int64_t{1} << 32}}}),
      "shape: shape [4294967296,4294967296] has more than 2^48 elements", UserError);
}

TEST_CASE("permutedims permutes the dims") {
  CHECK(infer(Prim::permutedims, {"f32[2,3]"}, {{"perm", Ints{2, 1}}}) == "f32[3,2]");
  CHECK(infer(Prim::permutedims, {"f32[]"}, {{"perm", Ints{}}}) == "f32[]");
  CHECK(infer(Prim::permutedims, {"bool[0,5]"}, {{"perm", Ints{2, 1}}}) == "bool[5,0]");
  for (const Ints& perm : {Ints{1, 1}, Ints{1}, Ints{1, 2, 3}, Ints{0, 1}, Ints{1, 3}}) {
    CHECK_THROWS_WITH_AS(
        infer(Prim::permutedims, {"f32[2,3]"}, {{"perm", perm}}),
        fmt::format("perm=[{}] is not a permutation of 1..2", fmt::join(perm, ",")).c_str(),
        UserError);
  }
}

TEST_CASE("broadcast_to follows Julia's rule") {
  CHECK(infer(Prim::broadcast_to, {"f32[]"}, {{"shape", Ints{2, 2}}}) == "f32[2,2]");
  CHECK(infer(Prim::broadcast_to, {"f32[1,4]"}, {{"shape", Ints{0, 4}}}) == "f32[0,4]");
  CHECK(infer(Prim::broadcast_to, {"i64[3,1]"}, {{"shape", Ints{3, 5, 2}}}) == "i64[3,5,2]");
  CHECK(infer(Prim::broadcast_to, {"f32[0]"}, {{"shape", Ints{0, 3}}}) == "f32[0,3]");
  CHECK_THROWS_WITH_AS(infer(Prim::broadcast_to, {"f32[3,4]"}, {{"shape", Ints{3}}}),
                       "shape=[3] has rank 1, less than the rank 2 of f32[3,4]", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::broadcast_to, {"f32[3,4]"}, {{"shape", Ints{3, 5}}}),
                       "f32[3,4] does not broadcast to shape=[3,5] (dim 2: 4 vs 5)", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::broadcast_to, {"f32[0]"}, {{"shape", Ints{2}}}),
                       "f32[0] does not broadcast to shape=[2] (dim 1: 0 vs 2)", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::broadcast_to, {"f32[1]"}, {{"shape", Ints{1, -4}}}),
                       "shape: dimension -4 is negative", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::broadcast_to, {"f32[]"}, {{"shape", Ints{1 << 30, 1 << 30}}}),
                       "shape: shape [1073741824,1073741824] has more than 2^48 elements",
                       UserError);
}

TEST_CASE("slice takes Julia ranges") {
  Attrs a{{"start", Ints{1}}, {"stop", Ints{10}}, {"step", Ints{3}}};
  CHECK(infer(Prim::slice, {"f32[10]"}, a) == "f32[4]");
  a = {{"start", Ints{4, 1}}, {"stop", Ints{3, 5}}, {"step", Ints{1, 1}}};
  CHECK(infer(Prim::slice, {"f32[10,5]"}, a) == "f32[0,5]");
  // An empty range may start just past the end.
  a = {{"start", Ints{11}}, {"stop", Ints{10}}, {"step", Ints{1}}};
  CHECK(infer(Prim::slice, {"f32[10]"}, a) == "f32[0]");
  // 3:2:2 is empty although (2 - 3) / 2 + 1 truncates to 1.
  a = {{"start", Ints{3}}, {"stop", Ints{2}}, {"step", Ints{2}}};
  CHECK(infer(Prim::slice, {"f32[10]"}, a) == "f32[0]");
  a = {{"start", Ints{1}}, {"stop", Ints{0}}, {"step", Ints{1}}};
  CHECK(infer(Prim::slice, {"f32[0]"}, a) == "f32[0]");
  a = {{"start", Ints{}}, {"stop", Ints{}}, {"step", Ints{}}};
  CHECK(infer(Prim::slice, {"i64[]"}, a) == "i64[]");

  auto bad = [](Ints start, Ints stop, Ints step) {
    return infer(
        Prim::slice, {"f32[10,5]"},
        {{"start", std::move(start)}, {"stop", std::move(stop)}, {"step", std::move(step)}});
  };
  CHECK_THROWS_WITH_AS(bad({1}, {1, 1}, {1, 1}), "start must have 2 elements, got [1]", UserError);
  CHECK_THROWS_WITH_AS(bad({1, 1}, {1, 1}, {1, 1, 1}), "step must have 2 elements, got [1,1,1]",
                       UserError);
  CHECK_THROWS_WITH_AS(bad({0, 1}, {1, 1}, {1, 1}), "start=[0,1] must be positive", UserError);
  CHECK_THROWS_WITH_AS(bad({1, 1}, {1, 1}, {1, 0}), "step=[1,0] must be positive", UserError);
  CHECK_THROWS_WITH_AS(bad({1, 1}, {11, 5}, {1, 1}),
                       "stop=[11,5] exceeds f32[10,5] at dim 1 (11 > 10)", UserError);
  CHECK_THROWS_WITH_AS(bad({5, 1}, {3, 5}, {1, 1}),
                       "start=[5,1] and stop=[3,5] give a negative length at dim 1 (write an "
                       "empty range as stop = start - 1)",
                       UserError);
  CHECK_THROWS_WITH_AS(bad({1, 1}, {1, INT64_MIN}, {1, 1}),
                       "start=[1,1] and stop=[1,-9223372036854775808] give a negative length at "
                       "dim 2 (write an empty range as stop = start - 1)",
                       UserError);
}

TEST_CASE("concat joins along one dim") {
  CHECK(infer(Prim::concat, {"f32[2,3]"}, {{"dim", 1}}) == "f32[2,3]");
  CHECK(infer(Prim::concat, {"f32[2,3]", "f32[5,3]", "f32[0,3]"}, {{"dim", 1}}) == "f32[7,3]");
  CHECK(infer(Prim::concat, {"bool[0]", "bool[0]"}, {{"dim", 1}}) == "bool[0]");
  CHECK_THROWS_WITH_AS(infer(Prim::concat, {}, {{"dim", 1}}), "needs at least one argument",
                       UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::concat, {"f32[2]", "i64[2]"}, {{"dim", 1}}),
                       "arguments must have one dtype, got f32[2] and i64[2]; convert one first",
                       UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::concat, {"f32[2,3]", "f32[2]"}, {{"dim", 1}}),
                       "arguments must have one rank, got f32[2,3] and f32[2]", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::concat, {"f32[2,3]", "f32[2,3]"}, {{"dim", 3}}),
                       "dim=3 is out of range for rank 2 (dims are 1-based)", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::concat, {"f32[]", "f32[]"}, {{"dim", 1}}),
                       "dim=1 is out of range for rank 0 (dims are 1-based)", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::concat, {"f32[2,3]", "f32[3,3]"}, {{"dim", 2}}),
                       "f32[2,3] and f32[3,3] differ at dim 1, but dim=2", UserError);
  std::string big = fmt::format("f32[{}]", k2to48);
  CHECK_THROWS_WITH_AS(infer(Prim::concat, {big, big}, {{"dim", 1}}),
                       "the result: dimension 562949953421312 is too large", UserError);
}

TEST_CASE("pad adds lo, hi and interior elements") {
  Attrs a{{"lo", Ints{1}}, {"hi", Ints{1}}, {"interior", Ints{5}}, {"value", 1}};
  CHECK(infer(Prim::pad, {"f32[0]"}, a) == "f32[2]");
  CHECK(infer(Prim::pad, {"f32[1]"}, a) == "f32[3]");
  CHECK(infer(Prim::pad, {"i64[2]"}, a) == "i64[9]");
  CHECK(infer(Prim::pad, {"bool[2]"}, a) == "bool[9]");
  CHECK(infer(Prim::pad, {"f32[]"}, {{"lo", Ints{}}, {"hi", Ints{}}, {"interior", Ints{}}}) ==
        "f32[]");
  a.set("value", 1.5);
  CHECK(infer(Prim::pad, {"f64[2]"}, a) == "f64[9]");
  CHECK_THROWS_WITH_AS(infer(Prim::pad, {"i64[2]"}, a), "value=1.5 is not an exact i64", UserError);
  a.set("value", 2.0);
  CHECK_THROWS_WITH_AS(infer(Prim::pad, {"bool[2]"}, a), "value=2.0 is not a bool (use 0 or 1)",
                       UserError);
  a.set("value", 0.0);
  a.set("lo", Ints{-1});
  CHECK_THROWS_WITH_AS(infer(Prim::pad, {"f32[2]"}, a), "lo=[-1] must be non-negative", UserError);
  a.set("lo", Ints{1, 1});
  CHECK_THROWS_WITH_AS(infer(Prim::pad, {"f32[2]"}, a), "lo must have 1 elements, got [1,1]",
                       UserError);
  a.set("lo", Ints{0});
  a.set("interior", Ints{int64_t{1} << 62});
  CHECK_THROWS_WITH_AS(infer(Prim::pad, {"f32[3]"}, a),
                       "interior=[4611686018427387904]: 4611686018427387904 is too large",
                       UserError);
  a.set("interior", Ints{int64_t{1} << 47});
  CHECK_THROWS_WITH_AS(infer(Prim::pad, {"f32[5]"}, a),
                       "interior=[140737488355328] makes dim 1 of f32[5] larger than 2^48",
                       UserError);
  a.set("interior", Ints{0});
  a.set("hi", Ints{k2to48});
  CHECK_THROWS_WITH_AS(infer(Prim::pad, {"f32[5]"}, a),
                       "the result: dimension 281474976710661 is too large", UserError);
}

// ---- index ------------------------------------------------------------------------------

TEST_CASE("gather picks along one dim, broadcasting idx elsewhere") {
  // Labels: logits (C, N), one index per sample.
  CHECK(infer(Prim::gather, {"f32[10,32]", "i64[1,32]"}, {{"dim", 1}}) == "f32[1,32]");
  // Embeddings: table (D, V), token ids (1, L).
  CHECK(infer(Prim::gather, {"f32[64,1000]", "i64[1,16]"}, {{"dim", 2}}) == "f32[64,16]");
  CHECK(infer(Prim::gather, {"bool[3]", "i64[5]"}, {{"dim", 1}}) == "bool[5]");
  CHECK(infer(Prim::gather, {"f32[3,4]", "i64[0,4]"}, {{"dim", 1}}) == "f32[0,4]");
  CHECK_THROWS_WITH_AS(infer(Prim::gather, {"f32[10,32]", "f32[1,32]"}, {{"dim", 1}}),
                       "idx must be i64, got f32[1,32]", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::gather, {"f32[10,32]", "i64[32]"}, {{"dim", 1}}),
                       "idx i64[32] must have the rank of f32[10,32]", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::gather, {"f32[10,32]", "i64[1,32]"}, {{"dim", 3}}),
                       "dim=3 is out of range for rank 2 (dims are 1-based)", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::gather, {"f32[10,32]", "i64[1,31]"}, {{"dim", 1}}),
                       "idx i64[1,31] does not fit f32[10,32] at dim 2 (31 is neither 1 nor 32)",
                       UserError);
}

TEST_CASE("scatter_add is gather's transpose") {
  CHECK(infer(Prim::scatter_add, {"f32[64,16]", "i64[1,16]"}, {{"dim", 2}, {"size", 1000}}) ==
        "f32[64,1000]");
  CHECK(infer(Prim::scatter_add, {"i64[4]", "i64[4]"}, {{"dim", 1}, {"size", 0}}) == "i64[0]");
  CHECK_THROWS_WITH_AS(
      infer(Prim::scatter_add, {"bool[1,32]", "i64[1,32]"}, {{"dim", 1}, {"size", 10}}),
      "y must be numeric (f32, f64 or i64), got bool[1,32]", UserError);
  CHECK_THROWS_WITH_AS(
      infer(Prim::scatter_add, {"f32[1,32]", "i64[2,32]"}, {{"dim", 1}, {"size", 10}}),
      "idx i64[2,32] and y f32[1,32] differ at dim=1 (2 vs 1)", UserError);
  CHECK_THROWS_WITH_AS(
      infer(Prim::scatter_add, {"f32[1,32]", "i64[1,2]"}, {{"dim", 1}, {"size", 10}}),
      "idx i64[1,2] does not fit f32[1,32] at dim 2 (2 is neither 1 nor 32)", UserError);
  CHECK_THROWS_WITH_AS(
      infer(Prim::scatter_add, {"f32[1,32]", "i64[1,32]"}, {{"dim", 1}, {"size", -1}}),
      "size: dimension -1 is negative", UserError);
}

// ---- linalg -----------------------------------------------------------------------------

TEST_CASE("matmul multiplies (M, K) by (K, N), batch dims last") {
  CHECK(infer(Prim::matmul, {"f32[4,3]", "f32[4,5]"}, {{"transpose_a", true}}) == "f32[3,5]");
  CHECK(infer(Prim::matmul, {"f32[3,4]", "f32[5,4]"}, {{"transpose_b", true}}) == "f32[3,5]");
  CHECK(infer(Prim::matmul, {"f64[4,3]", "f64[5,4]"},
              {{"transpose_a", true}, {"transpose_b", true}}) == "f64[3,5]");
  CHECK(infer(Prim::matmul, {"f32[3,4,7,2]", "f32[4,5,7,2]"}) == "f32[3,5,7,2]");
  CHECK(infer(Prim::matmul, {"f32[3,0]", "f32[0,5]"}) == "f32[3,5]");
  CHECK(infer(Prim::matmul, {"f32[0,2]", "f32[2,1]"}) == "f32[0,1]");
  CHECK_THROWS_WITH_AS(infer(Prim::matmul, {"i64[3,4]", "i64[4,5]"}),
                       "the arguments must be f32 or f64, got i64[3,4]", UserError);
  CHECK_THROWS_WITH_AS(
      infer(Prim::matmul, {"f32[3,4]", "f64[4,5]"}),
      "arguments must have one dtype, got f32[3,4] and f64[4,5]; convert one first", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::matmul, {"f32[3]", "f32[3,5]"}),
                       "a must be a matrix or a batch of matrices (rank >= 2), got f32[3]",
                       UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::matmul, {"f32[3,4]", "f32[]"}),
                       "b must be a matrix or a batch of matrices (rank >= 2), got f32[]",
                       UserError);
  CHECK_THROWS_WITH_AS(
      infer(Prim::matmul, {"f32[3,4]", "f32[5,6]"}),
      "a f32[3,4] gives A 3x4 and b f32[5,6] gives B 5x6; their inner dims differ (4 vs 5)",
      UserError);
  CHECK_THROWS_WITH_AS(
      infer(Prim::matmul, {"f32[3,4]", "f32[4,5]"}, {{"transpose_a", true}}),
      "a f32[3,4] gives A 4x3 and b f32[4,5] gives B 4x5; their inner dims differ (3 vs 4)",
      UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::matmul, {"f32[3,4,2]", "f32[4,5,3]"}),
                       "batch dims of a f32[3,4,2] and b f32[4,5,3] differ ([2] vs [3])",
                       UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::matmul, {"f32[3,4,1]", "f32[4,5]"}),
                       "batch dims of a f32[3,4,1] and b f32[4,5] differ ([1] vs [])", UserError);
}

TEST_CASE("attention takes (features, length, slices...) and one (keys, queries) mask") {
  CHECK(infer(Prim::attention, {"f64[8,5]", "f64[8,7]", "f64[3,7]", "bool[7,5]"}) ==
        "f64[3,5] f64[5]");
  CHECK_THROWS_WITH_AS(
      infer(Prim::attention, {"f32[8,5,2]", "f32[4,7,2]", "f32[3,7,2]", "bool[7,5]"}),
      "q f32[8,5,2] and k f32[4,7,2] must have the same feature dim", UserError);
  CHECK_THROWS_WITH_AS(
      infer(Prim::attention, {"f32[8,5,2]", "f32[8,7,2]", "f32[3,6,2]", "bool[7,5]"}),
      "k f32[8,7,2] and v f32[3,6,2] must have the same length", UserError);
  CHECK_THROWS_WITH_AS(
      infer(Prim::attention, {"f32[8,5,2]", "f32[8,7,3]", "f32[3,7,2]", "bool[7,5]"}),
      "the dims after the first two of q f32[8,5,2], k f32[8,7,3] and v f32[3,7,2] must match",
      UserError);
  CHECK_THROWS_WITH_AS(
      infer(Prim::attention, {"f32[8,5,2]", "f32[8,7,2]", "f32[3,7,2]", "bool[5,7]"}),
      "mask must be bool[7,5] (keys by queries), got bool[5,7]", UserError);
  CHECK_THROWS_WITH_AS(
      infer(Prim::attention, {"f32[8,5]", "f32[8,0]", "f32[3,0]", "bool[0,5]"}),
      "q f32[8,5], k f32[8,0] and v f32[3,0] must have a feature and a key at least", UserError);
  CHECK_THROWS_WITH_AS(
      infer(Prim::attention_backward,
            {"f32[8,5]", "f32[8,7]", "f32[3,7]", "bool[7,5]", "f32[3,5]", "f32[3,5]", "f32[3,5]"}),
      "lse must be f32[5] as attention gives it, got f32[3,5]", UserError);
}
