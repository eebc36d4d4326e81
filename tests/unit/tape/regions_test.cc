// Region ops (docs/regions.md): a scan built, inferred, validated and printed, and each
// rule of its signature refused with its message.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include "tape/builder.h"
#include "tape/digest.h"
#include "tape/error.h"
#include "tape/print.h"
#include "tape/validate.h"
#include "unit/tape/scan_tapes.h"

using namespace ytape;
using namespace ytape::testing;

namespace {

// The message of the UserError that building the scan of `body` over these operands
// throws.
std::string scan_error(const std::vector<Type>& operands, int64_t consts, int64_t carries,
                       int64_t length, Tape body) {
  Builder b;
  VarList args;
  for (size_t i = 0; i < operands.size(); ++i) {
    args.push_back(b.input(fmt::format("a{}", i), operands[i]));
  }
  body.name = "body";
  std::vector<Tape> regions;
  regions.push_back(std::move(body));
  AttrsOf<Prim::scan> a{.consts = consts, .carries = carries, .length = length};
  try {
    b.record(Prim::scan, args, a.to_attrs(), std::move(regions));
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a scan's results are its final carries and its ys stacked on a new last dim") {
  Tape t = rnn(16);
  validate(t);
  const Op& scan = t.ops.back();
  REQUIRE(scan.prim == Prim::scan);
  REQUIRE(scan.outs.size() == 2);
  CHECK(type_str(t.type(scan.outs[0])) == "f32[4,1]");
  CHECK(type_str(t.type(scan.outs[1])) == "f32[4,1,16]");
  CHECK(t.num_ops() == 1);  // the body is in the op, not on the tape
}

TEST_CASE("the printer indents a region under its op, with its yield") {
  CHECK(print_tape(rnn(3)) ==
        "tape rnn\n"
        "  in  %1::f32[4,4] w\n"
        "  in  %2::f32[4,1] h0\n"
        "  in  %3::f32[4,1,3] xs\n"
        "  %4, %5 = scan(%1, %2, %3; consts=1, carries=1, length=3)::(f32[4,1], f32[4,1,3])\n"
        "    body\n"
        "      in  %1::f32[4,4] w\n"
        "      in  %2::f32[4,1] h\n"
        "      in  %3::f32[4,1] x\n"
        "      %4 = matmul(%1, %2)::f32[4,1]\n"
        "      %5 = add(%4, %3)::f32[4,1]\n"
        "      %6 = tanh(%5)::f32[4,1]\n"
        "      yield %6, %6\n"
        "  out %4 h\n"
        "  out %5 hs\n");
}

TEST_CASE("the digest of a scan reads its body") {
  Builder b;
  Var w = b.input("w", {DType::f32, {4, 4}});
  Var h = b.input("h", {DType::f32, {4, 1}});
  b.input("x", {DType::f32, {4, 1}});
  Var next = b.sigmoid(b.matmul(w, h));
  b.output(next, "");
  b.output(next, "");
  CHECK(tape_digest(rnn(5)) == tape_digest(rnn(5)));
  CHECK(tape_digest(rnn(5)) != tape_digest(rnn(5, b.finish())));
}

TEST_CASE("a scan of length 0 gives its initial carries and empty ys") {
  Tape t = rnn(0);
  validate(t);
  CHECK(type_str(t.type(t.ops.back().outs[1])) == "f32[4,1,0]");
}

TEST_CASE("a scan's signature: each rule refused with its message") {
  const Type w{DType::f32, {4, 4}}, h{DType::f32, {4, 1}}, xs{DType::f32, {4, 1, 7}};
  CHECK(scan_error({w, h, xs}, 1, 1, 7, cell_body()).empty());
  CHECK(scan_error({w, h, xs}, 1, 1, 6, cell_body()) ==
        "scan: xs operand 3 is f32[4,1,7]; each xs is stacked on its last dim, of length=6");
  CHECK(scan_error({w, h, xs}, 2, 2, 7, cell_body()) ==
        "scan: consts=2 and carries=2 name more operands than the 3 given");
  CHECK(scan_error({w, h, xs}, INT64_MAX, INT64_MAX, 7, cell_body()) ==
        "scan: consts=9223372036854775807 and carries=9223372036854775807 name more operands "
        "than the 3 given");
  CHECK(scan_error({w, h, xs}, -1, 1, 7, cell_body()) ==
        "scan: consts, carries and length are counts, never negative");
  CHECK(scan_error({w, h, xs}, 1, 1, 7, cell_body(DType::f64)) ==
        "scan: the body takes (f64[4,4], f64[4,1], f64[4,1]), but the operands give it "
        "(f32[4,4], f32[4,1], f32[4,1]) (consts, carries, then a slice of each xs)");
  // The carry must come back with its type exactly: here the body yields it widened.
  Builder b;
  Var bw = b.input("w", w);
  Var bh = b.input("h", h);
  b.input("x", h);
  b.output(b.matmul(bw, bw), "");
  b.output(bh, "");
  CHECK(scan_error({w, h, xs}, 1, 1, 7, b.finish()) ==
        "scan: the body yields (f32[4,4], f32[4,1]), which must begin with the carries' types "
        "(f32[4,1])");
}

TEST_CASE("the validator checks a region like a tape, and what a region may hold") {
  Tape t = rnn(3);
  Op& matmul = t.ops.back().regions[0].ops[3];
  matmul.prim = Prim::exp;  // matmul's result renamed exp: 2 arguments
  matmul.attrs = Attrs();
  CHECK_THROWS_WITH_AS(validate(t),
                       "tape rnn: op 4 (%4, %5 = scan(%1, %2, %3; consts=1, carries=1, "
                       "length=3)::(f32[4,1], f32[4,1,3])): in its region body: tape body: op 4 "
                       "(%4 = exp(%1, %2)::f32[4,1]): exp takes 1 arguments, not 2",
                       UserError);
  Tape random = rnn(3);
  Op& r = random.ops.back().regions[0].ops[3];
  r.prim = Prim::rand;
  r.args.clear();
  r.attrs = AttrsOf<Prim::rand>{.dtype = DType::f32, .shape = {4, 1}, .seed = 1}.to_attrs();
  CHECK_THROWS_WITH_AS(validate(random),
                       "tape rnn: op 4 (%4, %5 = scan(%1, %2, %3; consts=1, carries=1, "
                       "length=3)::(f32[4,1], f32[4,1,3])): op 4 of its region body is rand: "
                       "effects and random draws are not run inside regions yet",
                       UserError);
  // The builder refuses it too, so no path makes such a tape (the JSON reader, the APIs).
  Tape body = random.ops.back().regions[0];
  CHECK_THROWS_WITH_AS(rnn(3, body), doctest::Contains("op 4 of its region body is rand"),
                       UserError);
  Tape filed = cell_body();
  filed.files.push_back("cell.jl");
  CHECK_THROWS_WITH_AS(rnn(3, filed), doctest::Contains("has files, scopes or meta of its own"),
                       UserError);
  Tape extra = rnn(3);
  extra.ops[0].regions.push_back(cell_body());  // an input given a region
  CHECK_THROWS_WITH_AS(
      validate(extra),
      "tape rnn: op 1 (in  %1::f32[4,4] w): only region ops (scan, cond, while_loop) hold regions",
      UserError);
}
