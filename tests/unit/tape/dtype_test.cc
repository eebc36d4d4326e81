#include "tape/dtype.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "tape/attrs.h"
#include "tape/error.h"
#include "tape/op_attrs.h"
#include "tape/prim.h"

using namespace ytape;

TEST_CASE("dtype names round trip") {
  for (DType d : {DType::f32, DType::f64, DType::i64, DType::boolean, DType::f16}) {
    DType back{};
    CHECK(parse_dtype(dtype_name(d), &back));
    CHECK(back == d);
  }
  DType unused{};
  CHECK_FALSE(parse_dtype("f8", &unused));
  CHECK(dtype_size(DType::f32) == 4);
  CHECK(dtype_size(DType::boolean) == 1);
}

TEST_CASE("types parse and print") {
  Type t;
  std::string why;
  REQUIRE(parse_type("f32[224,224,3,1]", &t, &why));
  CHECK(t.dtype == DType::f32);
  CHECK(t.shape == Shape{224, 224, 3, 1});
  CHECK(type_str(t) == "f32[224,224,3,1]");
  REQUIRE(parse_type("f64[]", &t, &why));
  CHECK(t.rank() == 0);
  CHECK(t.size() == 1);
  REQUIRE(parse_type("bool[0,3]", &t, &why));
  CHECK(t.size() == 0);
}

TEST_CASE("bad types are refused with a reason") {
  Type t;
  std::string why;
  CHECK_FALSE(parse_type("f32", &t, &why));
  CHECK(why == "'f32' is not a type such as f32[3,4]");
  CHECK_FALSE(parse_type("f8[3]", &t, &why));
  CHECK(why == "unknown dtype 'f8' (expected f32, f64, f16, i64 or bool)");
  CHECK_FALSE(parse_type("f32[3,x]", &t, &why));
  CHECK(why == "bad dimension 'x' in type 'f32[3,x]'");
  CHECK_FALSE(parse_type("f32[3,]", &t, &why));
  CHECK(why == "trailing comma in type 'f32[3,]'");
  CHECK_FALSE(parse_type("f32[-3]", &t, &why));
  CHECK(why == "bad type 'f32[-3]': dimension -3 is negative");
  CHECK_FALSE(parse_type("f32[1000000000,1000000000]", &t, &why));
  CHECK(why ==
        "bad type 'f32[1000000000,1000000000]': shape [1000000000,1000000000] has more "
        "than 2^48 elements");
  CHECK_FALSE(parse_type("f32[99999999999999999999]", &t, &why));
  CHECK(why == "bad dimension '99999999999999999999' in type 'f32[99999999999999999999]'");
}

TEST_CASE("a shape is sane or not whatever the order of its dims, zeros included") {
  // An empty tensor's shape cannot hide a huge one behind its zero: a permutation would
  // bring the large dims to the front, where every prefix product overflows (the ONNX fuzz
  // target's finding: DepthToSpace of an empty image with blocksize 2^32).
  int64_t big = int64_t{1} << 40;
  CHECK(shape_problem({0, 1 << 20, 1 << 20}) == "");
  CHECK(shape_problem({1 << 20, 0, 1 << 20}) == "");
  CHECK(shape_problem({0, big, big}) ==
        "shape [0,1099511627776,1099511627776]: its nonzero dims multiply to more than 2^48");
  CHECK(shape_problem({big, big, 0}) ==
        "shape [1099511627776,1099511627776,0]: its nonzero dims multiply to more than 2^48");
  CHECK(shape_problem({big, big}) ==
        "shape [1099511627776,1099511627776] has more than 2^48 elements");
}

TEST_CASE("floats print in shortest round-trip form") {
  CHECK(float_str(1.0) == "1.0");
  CHECK(float_str(0.1) == "0.1");
  CHECK(float_str(1e-05) == "1e-05");
  CHECK(float_str(-2.5) == "-2.5");
  CHECK(float_str(1.0 / 0.0) == "inf");
  CHECK(float_str(-1.0 / 0.0) == "-inf");
  CHECK(float_str(0.0 / 0.0) == "nan");
  CHECK(std::stod(float_str(0.1 + 0.2)) == 0.1 + 0.2);
}

TEST_CASE("attribute values print") {
  CHECK(attr_value_str(int64_t{3}) == "3");
  CHECK(attr_value_str(std::vector<int64_t>{1, 2}) == "[1,2]");
  CHECK(attr_value_str(true) == "true");
  CHECK(attr_value_str(std::string("a\"b\n")) == "\"a\\\"b\\n\"");
  CHECK(attr_value_str(DType::i64) == "i64");
}

TEST_CASE("the op list is consistent") {
  int index = 0;
  for (Prim p : all_prims()) {
    CAPTURE(prim_name(p));
    CHECK(static_cast<int>(p) == index++);  // each once, in the list's order
    CHECK(find_prim(prim_name(p)) == p);
    const PrimInfo& info = prim_info(p);
    if (info.arity == kVariadic)
      CHECK(
          (p == Prim::concat || p == Prim::print || p == Prim::allreduce || info.holds_regions()));
    // Only region ops have as many outputs as their regions give, and allreduce one per
    // argument.
    CHECK((info.outputs == kVariadic) == (info.holds_regions() || p == Prim::allreduce));
    if (info.elementwise()) {  // unary, binary or select, one value out
      CHECK(info.arity >= 1);
      CHECK(info.arity <= 3);
      CHECK(info.outputs == 1);
    }
    // Effects are the only ops without outputs: an op nobody can read must not be pure.
    if (info.outputs == 0) CHECK(info.effectful());
    // A multi-output variant takes its plain form's arguments and attributes, and adds
    // outputs after the plain one.
    if (std::optional<Prim> plain = plain_form(p)) {
      CHECK(variant_of(*plain) == p);
      CHECK(prim_info(*plain).arity == info.arity);
      CHECK(prim_info(*plain).outputs < info.outputs);
      CHECK(prim_info(*plain).attrs.size() == info.attrs.size());
      CHECK_FALSE(plain_form(*plain).has_value());
    }
  }
  CHECK_FALSE(find_prim("input").has_value());
  CHECK_FALSE(find_prim("const").has_value());
  CHECK(prim_info(Prim::add).commutative());
  CHECK_FALSE(prim_info(Prim::sub).commutative());
  CHECK(prim_info(Prim::randn).random());
  CHECK_FALSE(prim_info(Prim::argmax).differentiable());
}

TEST_CASE("attributes are normalized against the schema") {
  Attrs a = normalize_attrs(Prim::conv2d, {{"groups", int64_t{2}}});
  REQUIRE(a.size() == 5);
  const auto conv = attrs_of<Prim::conv2d>(a);
  CHECK(conv.stride == std::vector<int64_t>{1, 1});
  CHECK(conv.pad == std::vector<int64_t>{0, 0, 0, 0});
  CHECK(conv.dilation == std::vector<int64_t>{1, 1});
  CHECK(conv.groups == 2);
  CHECK(conv.algorithm == "auto");
  CHECK(attrs_problem(Prim::conv2d, a) == "");
  Attrs f = normalize_attrs(
      Prim::fill,
      {{"shape", std::vector<int64_t>{2}}, {"dtype", DType::f32}, {"value", int64_t{1}}});
  CHECK(attrs_of<Prim::fill>(f).value == 1.0);
  CHECK_THROWS_WITH_AS(normalize_attrs(Prim::sum, {}), "needs attribute 'dims' (ints)", UserError);
  CHECK_THROWS_WITH_AS(normalize_attrs(Prim::sum, {{"dims", int64_t{1}}}),
                       "attribute 'dims' must be ints, not int 1", UserError);
  CHECK_THROWS_WITH_AS(normalize_attrs(Prim::sum, {{"dim", int64_t{1}}}),
                       "has no attribute 'dim' (it takes dims)", UserError);
  CHECK_THROWS_WITH_AS(normalize_attrs(Prim::add, {{"dim", int64_t{1}}}),
                       "takes no attributes, but 'dim' is given", UserError);
}

TEST_CASE("scalar_bytes encodes one element as convert would") {
  auto f32 = [](double v) {
    float f;
    std::memcpy(&f, scalar_bytes(DType::f32, v).data(), 4);
    return f;
  };
  auto i64 = [](std::array<uint8_t, 8> bytes) {
    int64_t i;
    std::memcpy(&i, bytes.data(), 8);
    return i;
  };
  CHECK(f32(0.1) == 0.1f);
  CHECK(i64(scalar_bytes(DType::i64, -2.9)) == -2);
  CHECK(i64(scalar_bytes(DType::i64, std::nan(""))) == 0);
  CHECK(i64(scalar_bytes(DType::i64, 1e300)) == std::numeric_limits<int64_t>::max());
  CHECK(i64(scalar_bytes(DType::i64, -1e300)) == std::numeric_limits<int64_t>::min());
  CHECK(i64(scalar_bytes(int64_t{(1LL << 53) + 1})) == (1LL << 53) + 1);  // not via a double
  CHECK(scalar_bytes(DType::boolean, 0.5)[0] == 1);
  CHECK(scalar_bytes(DType::boolean, 0.0)[0] == 0);
}

TEST_CASE("the op list's variants map both ways") {
  CHECK(plain_form(Prim::max_pool2d_with_indices) == Prim::max_pool2d);
  CHECK(variant_of(Prim::batchnorm) == Prim::batchnorm_with_stats);
  CHECK_FALSE(plain_form(Prim::batchnorm).has_value());
  CHECK_FALSE(variant_of(Prim::add).has_value());
  CHECK(family_name(prim_info(Prim::conv2d).family) == "conv");
}

// The struct of P lists the schema's attributes in order with the schema's defaults, and
// reads back what it writes.
template <Prim P>
void check_attrs_struct() {
  CAPTURE(prim_name(P));
  const AttrsOf<P> defaults{};
  Attrs written = defaults.to_attrs();
  const std::vector<AttrSpec>& schema = prim_info(P).attrs;
  REQUIRE(written.size() == schema.size());
  size_t i = 0;
  for (const Attr& a : written) {
    CAPTURE(a.name);
    CHECK(a.name == schema[i].name);
    CHECK(attr_kind(a.value) == schema[i].kind);
    if (schema[i].default_value) CHECK(a.value == *schema[i].default_value);
    ++i;
  }
  CHECK(AttrsOf<P>::from(written) == defaults);
}

TEST_CASE("each primitive's attribute struct matches its schema") {
#define X(p, family, arity, outputs, flags, dtypes, cost, attrs) check_attrs_struct<Prim::p>();
#include "tape/ops.def"
#undef X
  // A set field is written, and read back.
  AttrsOf<Prim::conv2d> conv{.stride = {2, 2}, .groups = 4};
  Attrs written = conv.to_attrs();
  CHECK(attr_value_str(*written.find("stride")) == "[2,2]");
  CHECK(attr_value_str(*written.find("groups")) == "4");
  CHECK(attrs_of<Prim::conv2d>(written) == conv);
  CHECK(attrs_problem(Prim::conv2d, written) == "");
  // Reading attributes of another primitive is a bug, reported as one.
  CHECK_THROWS_AS(attrs_of<Prim::conv2d>(AttrsOf<Prim::max_pool2d>{}.to_attrs()), InternalError);
}
