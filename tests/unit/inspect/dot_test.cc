#include "inspect/dot.h"

#include <doctest/doctest.h>

#include "tape/builder.h"

using namespace ytape;

TEST_CASE("dot: nodes, clusters by source line, multi-output edges, outputs") {
  Builder b("pool");
  Var x = b.input("img \"a\"", {DType::f32, {2, 2, 1, 1}});
  b.set_loc({b.intern_file("net.jl"), 7});
  std::vector<Var> p = b.max_pool2d_with_indices(
      x, {.window = std::vector<int64_t>{2, 2}, .stride = std::vector<int64_t>{2, 2}});
  b.set_loc({});
  Var s = b.sum(p[0], {.dims = {1, 2, 3, 4}});
  b.set_loc({b.intern_file("net.jl"), 7});
  Var m = b.mul(s, b.constant(DType::f32, 2.0));
  b.output(m, "y");
  b.output(p[1], "where");
  CHECK(
      tape_dot(b.finish()) ==
      "digraph \"pool\" {\n"
      "  node [shape=box, style=\"rounded,filled\", fillcolor=white, fontname=\"Helvetica\", "
      "fontsize=10];\n"
      "  edge [fontsize=8, arrowsize=0.6];\n"
      "  op1 [label=\"img \\\"a\\\"\\nf32[2,2,1,1]\", tooltip=\"in  %1::f32[2,2,1,1] img "
      "\\\"a\\\"\", shape=ellipse, fillcolor=\"#d6e9ff\"];\n"
      "  op3 [label=\"sum\\nf32[]\", tooltip=\"%4 = sum(%2; dims=[1,2,3,4])::f32[]\"];\n"
      "  subgraph cluster_1 {\n"
      "    label=\"net.jl:7\";\n"
      "    style=\"rounded,dashed\";\n"
      "    color=\"#999999\";\n"
      "    fontsize=9;\n"
      "    op2 [label=\"max_pool2d_with_indices\\n(f32[1,1,1,1], i64[1,1,1,1])\", "
      "tooltip=\"%2, %3 = max_pool2d_with_indices(%1; window=[2,2], stride=[2,2])::(f32[1,1,1,1], "
      "i64[1,1,1,1])\"];\n"
      "    op4 [label=\"const 2.0\\nf32[]\", tooltip=\"%5 = const(2.0)::f32[]\", "
      "fillcolor=\"#eeeeee\"];\n"
      "    op5 [label=\"mul\\nf32[]\", tooltip=\"%6 = mul(%4, %5)::f32[]\"];\n"
      "  }\n"
      "  out1 [label=\"y\", shape=house, fillcolor=\"#ffd8a8\"];\n"
      "  out2 [label=\"where\", shape=house, fillcolor=\"#ffd8a8\"];\n"
      "  op1 -> op2;\n"
      "  op2 -> op3 [taillabel=\"1\"];\n"
      "  op3 -> op5;\n"
      "  op4 -> op5;\n"
      "  op5 -> out1;\n"
      "  op2 -> out2 [taillabel=\"2\"];\n"
      "}\n");
}
