// The facts of each row of tape/ops.def (its flags, dtypes and cost) against each other, and
// against what inference and the cost model do with every primitive's good case: a row that
// says one thing while a stage does another fails here. The kernels' rows are checked against
// the same column in tests/unit/runtime/, the decisions of KINK and JUMP ops in
// tests/unit/check/.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "tape/builder.h"
#include "tape/cost.h"
#include "unit/tape/infer_cases.h"
#include "unit/tape/infer_helpers.h"

using namespace ytape;
using namespace ytape::testing;

namespace {

constexpr DType kDTypes[] = {DType::f32, DType::f64, DType::i64, DType::boolean, DType::f16};

std::vector<Type> parsed(const Good& g) {
  std::vector<Type> types;
  for (std::string_view a : g.args) {
    Type t;
    std::string why;
    REQUIRE_MESSAGE(parse_type(a, &t, &why), why);
    types.push_back(std::move(t));
  }
  return types;
}

// The arguments whose dtype the dtypes column speaks of: those of the dtype of the first float
// argument, or all where none is float (index arguments are i64, conditions bool).
std::vector<size_t> data_args(const std::vector<Type>& args) {
  std::vector<size_t> data;
  for (const Type& t : args) {
    if (!is_float(t.dtype)) continue;
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i].dtype == t.dtype) data.push_back(i);
    }
    return data;
  }
  for (size_t i = 0; i < args.size(); ++i) data.push_back(i);
  return data;
}

// The output types of the good case with its data, or its result for an op that takes no
// arguments (its dtype attribute), of dtype `d`; nullopt when inference refuses them.
std::optional<std::vector<Type>> infer_as(const Good& g, DType d) {
  std::vector<Type> args = parsed(g);
  for (size_t i : data_args(args)) args[i].dtype = d;
  Attrs attrs = normalize_attrs(g.prim, g.attrs);
  if (args.empty()) attrs.set("dtype", d);
  try {
    return infer_types(g.prim, args, attrs);
  } catch (const UserError&) {
    return std::nullopt;
  }
}

}  // namespace

TEST_CASE("the flags of every row agree with each other") {
  for (Prim p : all_prims()) {
    const PrimInfo& info = prim_info(p);
    CAPTURE(info.name);
    CHECK_FALSE((info.jump() && info.kink()));
    // A kink is a point where an op with a gradient has none.
    if (info.kink()) CHECK(info.differentiable());
    // A bool result jumps and has no gradient.
    if (info.compares()) {
      CHECK(info.elementwise());
      CHECK(info.arity == 2);
      CHECK(info.jump());
      CHECK_FALSE(info.differentiable());
    }
    if (info.differentiable()) CHECK(info.accepts(DType::f64));
    if (info.elementwise()) CHECK(info.cost == Cost::elements);
    if (info.random()) CHECK(info.effectful());
  }
}

TEST_CASE("inference takes exactly the dtypes of each row, and a comparison gives bool") {
  for (const Good& g : good_cases()) {
    const PrimInfo& info = prim_info(g.prim);
    for (DType d : kDTypes) {
      CAPTURE(info.name);
      CAPTURE(dtype_name(d));
      std::optional<std::vector<Type>> out = infer_as(g, d);
      CHECK(out.has_value() == info.accepts(d));
      if (!out || out->empty()) continue;
      if (info.compares()) {
        CHECK(out->at(0).dtype == DType::boolean);
      } else if (info.elementwise() && g.prim != Prim::convert) {
        CHECK(out->at(0).dtype == d);
      }
    }
  }
}

TEST_CASE("an op costs one per output element exactly when its row says elements") {
  for (const Good& g : good_cases()) {
    const PrimInfo& info = prim_info(g.prim);
    CAPTURE(info.name);
    Builder b("cost");
    std::vector<Var> args;
    for (const Type& t : parsed(g)) args.push_back(b.input("x" + std::to_string(args.size()), t));
    b.call(g.prim, args, g.attrs);
    Tape t = b.finish();
    const Op& op = t.ops.back();
    double elements = 0;
    for (Var v : op.outs) elements += static_cast<double>(t.type(v).size());
    CHECK((op_flops(t, op) == elements) == (info.cost == Cost::elements));
  }
}
