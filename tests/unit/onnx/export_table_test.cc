// The export's table against the op list: every primitive has an ONNX form or is refused for
// a reason listed here, so that a primitive added without one fails here rather than in a
// user's export; and each row of onnx/namesakes.def exports as one node of its op and
// imports back as its primitive.
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

#include <map>

#include "inspect/diff.h"
#include "onnx/export.h"
#include "onnx/export_rules.h"
#include "onnx/import.h"
#include "tape/builder.h"

namespace ytape::onnx_test {

namespace {

using onnx_export::export_table;
using onnx_export::namesake_of;

// The primitives without an ONNX form, each with why.
const std::map<Prim, std::string_view> kRefused = {
    {Prim::print, "an effect: it writes to the run's output, which no ONNX op does"},
    {Prim::guard, "an effect: it stops the run with its message, which no ONNX op does"},
    {Prim::allreduce, "ONNX describes one process's graph: it has no collective ops"},
    {Prim::shard, "ONNX describes one process's graph: it has no rank to take a block for"},
    {Prim::allgather, "ONNX describes one process's graph: it has no collective ops"},
};

}  // namespace

TEST_CASE("every primitive exports, or is refused for a reason listed here") {
  for (Prim p : all_prims()) {
    auto refused = kRefused.find(p);
    bool has_rule = export_table().rule(p) != nullptr;
    if (refused == kRefused.end()) {
      CHECK_MESSAGE(has_rule, prim_name(p),
                    " has no ONNX form: add its row to onnx/namesakes.def or its rule to "
                    "onnx/export_rules/",
                    family_name(prim_info(p).family),
                    ".cc, or list it in kRefused with the reason it has none");
    } else {
      CHECK_MESSAGE(!has_rule, prim_name(p), " exports: take it off kRefused (", refused->second,
                    ")");
    }
  }
}

TEST_CASE("a refused primitive's export is an error naming the op") {
  Builder b("t");
  Var x = b.input("x", Type{DType::boolean, {}});
  b.guard(x, {.message = std::string("x")});
  b.output(x, "y");
  CHECK_THROWS_WITH_AS(export_onnx(b.finish()), "op 2 (guard): guard has no ONNX form here",
                       UnsupportedError);
}

TEST_CASE("each namesake exports as one unmarked node of its op and imports back as itself") {
  for (Prim p : all_prims()) {
    std::string_view op_type = namesake_of(p);
    if (op_type.empty()) continue;
    INFO(prim_name(p), " as ", op_type);
    Builder b("t");
    std::vector<Var> args;
    for (int i = 0; i < prim_info(p).arity; ++i) {
      DType d = p == Prim::select && i == 0 ? DType::boolean : DType::f32;
      args.push_back(b.input(fmt::format("x{}", i + 1), Type{d, {3, 2}}));
    }
    b.output(b.call1(p, args), "y");
    Tape t = b.finish();
    std::string bytes = export_onnx(t);
    onnx::ModelProto model;
    REQUIRE(model.ParseFromString(bytes));
    REQUIRE(model.graph().node_size() == 2);  // the op, and the output's Identity
    CHECK(model.graph().node(0).op_type() == op_type);
    CHECK(model.graph().node(0).doc_string().empty());
    Tape back = import_onnx(bytes, "namesake.onnx").tape;
    TapeDiff diff = diff_tapes(t, back);
    INFO(diff_str(t, back, diff, {}));
    CHECK(diff.same());
  }
}

}  // namespace ytape::onnx_test
