// The classic cases of reverse mode, traced from the model language, with exact values;
// and the driver's contract: activity, zeros, names, errors, linear structure.
#include <doctest/doctest.h>

#include <map>

#include "grad/grad.h"
#include "runtime/executor.h"
#include "tape/builder.h"
#include "tape/error.h"
#include "tape/print.h"
#include "tape/validate.h"
#include "tracer/program.h"
#include "tracer/trace.h"

namespace ytape::grad {

namespace {

using Values = std::map<std::string, std::vector<double>>;

std::vector<double> doubles(const Tensor& t) {
  std::vector<double> out;
  for (int64_t i = 0; i < t.size(); ++i) out.push_back(element_value(t, i));
  return out;
}

// Traces `entry` of `program` on the globals `args`, differentiates and runs the gradient
// tape on the example values: every output by name.
Values gradient_values(const std::string& program, const std::string& entry,
                       const std::vector<std::string>& args, const GradOptions& o = {}) {
  tracer::Program in;
  in.run_text("t.jl", program);
  tracer::Traced traced = tracer::trace(in, entry, args);
  Tape g = gradient(traced.tape, o);
  validate(g);
  std::vector<Tensor> outs = Executor(g).run(traced.inputs);
  Values v;
  for (size_t i = 0; i < outs.size(); ++i) v[g.outputs[i].name] = doubles(outs[i]);
  return v;
}

using D = std::vector<double>;

}  // namespace

TEST_CASE("an argument the output ignores gets an exact zero") {
  Values v = gradient_values("x = 2.0\ny = 3.0\nf(x, y) = x", "f", {"x", "y"});
  CHECK(v["grad.x"] == D{1});
  CHECK(v["grad.y"] == D{0});
}

TEST_CASE("a constant function has zero gradients") {
  Values v = gradient_values("x = [1.0, 2.0, 3.0]\nf(x) = 1.0", "f", {"x"});
  CHECK(v["grad.x"] == D{0, 0, 0});
}

TEST_CASE("indexing gives one-hot masks") {
  std::string program =
      "x = reshape([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0], 2, 3, 2)\n"
      "first(x) = x[1]\nat(x) = x[1, 2, 1]\ncolumn(x) = sum(x[:, 1, :])\n";
  CHECK(gradient_values(program, "first", {"x"})["grad.x"] ==
        D{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  CHECK(gradient_values(program, "at", {"x"})["grad.x"] == D{0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  CHECK(gradient_values(program, "column", {"x"})["grad.x"] ==
        D{1, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0});
}

TEST_CASE("broadcast arguments get gradients of their own shape") {
  std::string program =
      "a = reshape([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0], 3, 4)\nv = "
      "[1.0, 2.0, 3.0]\n"
      "col = reshape([1.0, 2.0, 3.0], 3, 1)\nrow = reshape([1.0, 2.0, 3.0, 4.0], 1, 4)\n"
      "s(x, y) = sum(x .+ y)\np(x, y) = sum(x .* y)\n";
  CHECK(gradient_values(program, "s", {"a", "v"})["grad.y"] == D{4, 4, 4});
  CHECK(gradient_values(program, "s", {"a", "col"})["grad.y"] == D{4, 4, 4});
  CHECK(gradient_values(program, "s", {"a", "row"})["grad.y"] == D{3, 3, 3, 3});
  // d/dy sum(x .* y) sums x over the broadcast dims.
  CHECK(gradient_values(program, "p", {"a", "v"})["grad.y"] == D{22, 26, 30});
  CHECK(gradient_values(program, "p", {"a", "row"})["grad.y"] == D{6, 15, 24, 33});
  Values v = gradient_values(program, "p", {"a", "col"});
  CHECK(v["grad.x"] == D{1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3});
  CHECK(v["grad.y"] == D{22, 26, 30});
}

TEST_CASE("a struct built and read inside the function") {
  std::string program =
      "struct Point\n  x\n  y\nend\n"
      "function f(x)\n  p = Point(x, x)\n  2 * p.x + 5 * p.y\nend\nx = 3.0\n";
  CHECK(gradient_values(program, "f", {"x"})["grad.x"] == D{7});
}

TEST_CASE("fan-out accumulates") {
  // d/dx (x*x + sin(x)*x) = 2x + cos(x) x + sin(x)
  Values v = gradient_values("x = 0.5\nf(x) = x * x + sin(x) * x", "f", {"x"});
  CHECK(v["grad.x"][0] ==
        doctest::Approx(1.0 + std::cos(0.5) * 0.5 + std::sin(0.5)).epsilon(1e-15));
}

TEST_CASE("--wrt takes names and dotted prefixes") {
  std::string program = "m = (a = [1.0, 2.0], ab = [3.0])\nf(m) = sum(m.a .* m.a) + sum(m.ab)\n";
  Values v = gradient_values(program, "f", {"m"}, {{"m.a"}, false});
  CHECK(v.count("grad.m.a") == 1);
  CHECK(v.count("grad.m.ab") == 0);
  CHECK(v["grad.m.a"] == D{2, 4});
  CHECK(gradient_values(program, "f", {"m"}, {{"m"}, false}).size() == 3);
}

TEST_CASE("integer inputs get zeros; only active ops get rules") {
  Builder b("f");
  Var x = b.input("x", Type{DType::f64, {3}});
  Var n = b.input("n", Type{DType::i64, {3}});
  Var c = b.input("c", Type{DType::f64, {3}});
  Var unused = b.exp(c);  // depends on no differentiated input
  Var y = b.sum(b.mul(b.mul(x, b.convert(n, {.dtype = DType::f64})), unused), {.dims = {1}});
  b.output(y, "y");
  Tape t = b.finish();
  GradStats stats;
  Tape g = gradient(t, {{"x", "n"}, false}, &stats);
  validate(g);
  CHECK(stats.rules == 3);  // sum, mul, mul: not exp or convert
  CHECK(print_op(g, g.ops.back()) == "%14 = fill(value=0.0, dtype=i64, shape=[3])::i64[3]");
  CHECK(g.outputs[2].name == "grad.n");
}

TEST_CASE("the gradient's errors") {
  Builder b("f");
  Var x = b.input("x", Type{DType::f32, {3}});
  b.output(b.exp(x), "y");
  Tape t = b.finish();
  CHECK_THROWS_WITH_AS(gradient(t),
                       "output 'y' has type f32[3]; the gradient needs a float scalar "
                       "(use --vjp for a vector-Jacobian product)",
                       UserError);
  CHECK_THROWS_WITH_AS(gradient(t, {{"z"}, true}),
                       "--wrt 'z' matches no input of tape 'f' (its inputs: x)", UserError);
  Tape v = gradient(t, {{}, true});
  CHECK(v.ops[1].name == "seed.y");
  CHECK(v.outputs[1].name == "grad.x");
  // Differentiating again: names already taken get one more prefix.
  Tape w = gradient(v, {{}, true});
  CHECK(w.ops[2].name == "seed.seed.y");  // after x, seed.y: the seed of output y
  CHECK(w.outputs.back().name == "grad.seed.y");
  CHECK(w.outputs[w.outputs.size() - 2].name == "grad.grad.x");
}

TEST_CASE("gradient ops keep the location of the op they differentiate") {
  tracer::Program in;
  in.run_text("t.jl", "x = [1.0, 2.0]\nfunction f(x)\n  y = sin.(x)\n  sum(y)\nend\n");
  Tape g = gradient(tracer::trace(in, "f", {"x"}).tape);
  for (const Op& op : g.ops) {
    if (op.kind == OpKind::call && op.prim == Prim::cos) CHECK(g.loc_str(op.loc) == "t.jl:3");
  }
}

}  // namespace ytape::grad
