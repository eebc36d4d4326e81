#include "inspect/stats.h"

#include <doctest/doctest.h>

#include "tape/builder.h"
#include "unit/tape/branch_tapes.h"

using namespace ytape;

namespace {

Tape layer() {
  Builder b("layer");
  Var w = b.input("model.dense.weight", {DType::f32, {4, 3}});
  Var bias = b.input("model.dense.bias", {DType::f32, {4}});
  Var x = b.input("x", {DType::f32, {3, 2}});
  b.input("labels", {DType::i64, {2}});
  Var h = b.add(b.matmul(w, x), bias);
  Var y = b.mul(b.relu(h), b.constant(DType::f32, 0.5));
  b.output(b.sum(y, {.dims = {1, 2}}), "loss");
  b.output(x, "x");
  return b.finish();
}

}  // namespace

TEST_CASE("stats: counts, FLOPs and parameters") {
  TapeStats s = tape_stats(layer());
  CHECK(s.inputs == 4);
  CHECK(s.constants == 1);
  CHECK(s.calls == 5);
  CHECK(s.outputs == 2);
  CHECK(s.flops == 2 * 4 * 2 * 3 + 8 + 8 + 8 + 8);  // the sum reads 8 elements
  CHECK(s.parameters == 12 + 4 + 6);                // float inputs only
  REQUIRE(s.groups.size() == 2);
  CHECK(s.groups[0].prefix == "model");
  CHECK(s.groups[0].inputs == 2);
  CHECK(s.groups[0].elements == 16);
  CHECK(s.groups[1].prefix == "x");
  CHECK(s.input_bytes == (12 + 4 + 6) * 4 + 2 * 8);
  CHECK(s.constant_bytes == 4);
  CHECK(s.output_bytes == 4);  // the input x is no new memory
  REQUIRE(s.prims.size() == 6);
  CHECK(s.prims[0].name == "matmul");
  CHECK(s.prims.back().name == "const");
}

TEST_CASE("stats: the report") {
  CHECK(stats_str(tape_stats(layer()), 64) ==
        "tape layer: 4 inputs, 1 constant, 5 calls, 2 outputs\n"
        "\n"
        "primitive      ops  FLOPs   share\n"
        "matmul           1     48   60.0%\n"
        "relu             1      8   10.0%\n"
        "add              1      8   10.0%\n"
        "mul              1      8   10.0%\n"
        "sum              1      8   10.0%\n"
        "const            1      0    0.0%\n"
        "total            6     80  80 FLOP\n"
        "\n"
        "parameters (elements of float inputs): 22\n"
        "  model               16  2 inputs\n"
        "  x                    6  1 input\n"
        "\n"
        "memory                                          bytes\n"
        "  intermediate buffers (runtime plan)              64  64 B\n"
        "  inputs                                          104  104 B\n"
        "  constants                                         4  4 B\n"
        "  outputs                                           4  4 B\n"
        "  total                                           176  176 B\n");
  CHECK(grouped(1234567) == "1,234,567");
  CHECK(grouped(-1000) == "-1,000");
  CHECK(grouped(12) == "12");
}

TEST_CASE("stats: a scan that may skip steps is counted at its length, and says so") {
  const std::string note = "(scan: one that may skip steps";
  for (bool mask : {false, true}) {
    TapeStats s = tape_stats(testing::skipping_scan(mask));
    CHECK(s.skipping_scans);
    CHECK(stats_str(s, -1).find(note) != std::string::npos);
  }
  CHECK(stats_str(tape_stats(layer()), -1).find(note) == std::string::npos);
}
