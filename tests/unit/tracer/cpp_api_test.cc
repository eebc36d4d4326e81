// The C++ tracing API against the model language: each C++ program must record the tape
// the language records for the same program, op for op; and its errors.
#include "tracer/cpp_api.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "grad/grad.h"
#include "runtime/executor.h"
#include "samples/cpp/mlp_traced.h"
#include "tape/error.h"
#include "tape/print.h"
#include "tape/validate.h"
#include "tracer/program.h"
#include "tracer/trace.h"

namespace ytape::cpp::testing {

namespace {

// The text form without meta lines and locations: what the two tracers must agree on.
std::string normalized(const Tape& t) {
  validate(t);
  std::istringstream in(print_tape(t));
  std::string out, line;
  while (std::getline(in, line)) {
    if (line.starts_with("  meta ") || line.starts_with("  scope ")) continue;
    size_t comment = line.find("  # ");
    if (comment != std::string::npos) line.resize(comment);
    out += line + "\n";
  }
  return out;
}

Type type_of(const std::string& text) {
  Type t;
  std::string why;
  REQUIRE(parse_type(text, &t, &why));
  return t;
}

// The language's tape of `f` in `program`, traced on inputs of `types`.
std::string language_tape(const std::string& program, const std::vector<std::string>& types) {
  tracer::Program in;
  in.run_text("t.jl", program);
  return normalized(tracer::trace(in, "f", types).tape);
}

using Body = std::function<Traced(const std::vector<Traced>&)>;

// The C++ tape of `body` on inputs x, y, z of `types`, named as the language names them.
std::string cpp_tape(const std::vector<std::string>& types, const Body& body) {
  Tracer t("f");
  std::vector<Traced> xs;
  const char* names[] = {"x", "y", "z"};
  for (size_t i = 0; i < types.size(); ++i) xs.push_back(t.input(names[i], type_of(types[i])));
  t.output(body(xs), "out");
  return normalized(t.finish());
}

struct Case {
  std::string program;  // defines f(x[, y[, z]])
  std::vector<std::string> types;
  Body body;
};

void check_cases(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    CAPTURE(c.program);
    CHECK(cpp_tape(c.types, c.body) == language_tape(c.program, c.types));
  }
}

using V = const std::vector<Traced>&;

}  // namespace

TEST_CASE("the C++ MLP records the tape of samples/mlp.jl") {
  tracer::Program in;
  in.run_file(YTAPE_SOURCE_DIR "/samples/mlp.jl");
  std::string language = normalized(tracer::trace(in, "loss", {"model", "x", "labels"}).tape);
  Tape tape = samples::mlp_traced(32);
  CHECK(normalized(tape) == language);
  CHECK(language.find("gather(") != std::string::npos);
  REQUIRE(tape.files.size() == 1);
  CHECK(tape.files[0].ends_with("samples/cpp/mlp_traced.cc"));
}

TEST_CASE("operators are the elementwise ops, with weak number literals") {
  check_cases({
      {"f(x, y) = x + y", {"f32[2,3]", "f32[2,3]"}, [](V a) { return a[0] + a[1]; }},
      {"f(x, y) = x - y", {"f32[2,3]", "f32[2,3]"}, [](V a) { return a[0] - a[1]; }},
      {"f(x, y) = x .* y", {"f32[2,3]", "f32[2,3]"}, [](V a) { return a[0] * a[1]; }},
      {"f(x, y) = x ./ y", {"f64[2,3]", "f64[2,3]"}, [](V a) { return a[0] / a[1]; }},
      {"f(x) = 2.0 .* x .+ 1", {"f32[2]"}, [](V a) { return 2.0 * a[0] + 1.0; }},
      {"f(x) = 1.0 ./ x .- 0.5", {"f32[2]"}, [](V a) { return 1.0 / a[0] - 0.5; }},
      {"f(x) = -x", {"f32[2]"}, [](V a) { return -a[0]; }},
      {"f(x, y) = x * y", {"f32[]", "f32[3]"}, [](V a) { return a[0] * a[1]; }},
      {"f(x) = sum(x) / 2", {"f32[3]"}, [](V a) { return sum(a[0]) / 2.0; }},
      {"f(x) = x ./ 2", {"i64[3]"}, [](V a) { return a[0] / 2.0; }},
      {"f(x, y) = x .* y",
       {"f32[2]", "f32[2]"},
       [](V a) {
         Traced z = a[0];
         z *= a[1];
         return z;
       }},
  });
}

TEST_CASE("named binary functions broadcast and promote as the dotted operators") {
  check_cases({
      {"f(x, y) = x .+ y", {"f32[3,4]", "f32[3]"}, [](V a) { return add(a[0], a[1]); }},
      {"f(x, y) = x .- y", {"f32[3]", "f32[1,4]"}, [](V a) { return sub(a[0], a[1]); }},
      {"f(x, y) = x .+ y", {"f32[2]", "f64[2]"}, [](V a) { return add(a[0], a[1]); }},
      {"f(x) = x .+ 1.5", {"i64[3]"}, [](V a) { return add(a[0], 1.5); }},
      {"f(x) = max.(x, 0.0)", {"f32[3]"}, [](V a) { return max(a[0], 0.0); }},
      {"f(x, y) = min.(x, y)", {"f64[3]", "f64[3]"}, [](V a) { return min(a[0], a[1]); }},
      {"f(x) = x .^ 3.0", {"f32[3]"}, [](V a) { return pow(a[0], 3.0); }},
      {"f(x, y) = x .< y", {"f32[3]", "f32[3]"}, [](V a) { return lt(a[0], a[1]); }},
      {"f(x) = x .== 1.0", {"f32[3]"}, [](V a) { return eq(a[0], 1.0); }},
      {"f(x) = ifelse.(x .> 0.0, x, 0.0)",
       {"f32[3]"},
       [](V a) { return ifelse(gt(a[0], 0.0), a[0], 0.0); }},
  });
}

TEST_CASE("elementwise functions, activations and conversions") {
  using Unary = Traced (*)(const Traced&, Where);
  const std::pair<const char*, Unary> unaries[] = {
      {"abs", cpp::abs},     {"sign", cpp::sign},         {"exp", cpp::exp},
      {"log", cpp::log},     {"log1p", cpp::log1p},       {"expm1", cpp::expm1},
      {"sqrt", cpp::sqrt},   {"sin", cpp::sin},           {"cos", cpp::cos},
      {"tan", cpp::tan},     {"tanh", cpp::tanh},         {"sigmoid", cpp::sigmoid},
      {"relu", cpp::relu},   {"softplus", cpp::softplus}, {"abs2", cpp::abs2},
      {"swish", cpp::swish}, {"erf", cpp::erf},           {"floor", cpp::floor},
      {"ceil", cpp::ceil},   {"round", cpp::round},       {"asin", cpp::asin},
      {"acos", cpp::acos},   {"atan", cpp::atan},
  };
  std::vector<Case> cases;
  for (const auto& bound : unaries) {
    const auto& name = std::get<0>(bound);
    const auto& f = std::get<1>(bound);
    cases.push_back({fmt::format("f(x) = {}.(x)", name), {"f32[2,3]"}, [f](V a) {
                       return f(a[0], Where::current());
                     }});
  }
  cases.push_back({"f(x) = exp.(x)", {"i64[3]"}, [](V a) { return exp(a[0]); }});
  cases.push_back({"f(x) = abs.(x)", {"bool[3]"}, [](V a) { return abs(a[0]); }});
  cases.push_back({"f(x) = x .^ 2", {"f32[3]"}, [](V a) { return abs2(a[0]); }});
  cases.push_back({"f(x) = leakyrelu.(x)", {"f32[3]"}, [](V a) { return leakyrelu(a[0]); }});
  check_cases(cases);
}

TEST_CASE("matmul is the language's * of arrays") {
  check_cases({
      {"f(x, y) = x * y", {"f32[3,4]", "f32[4,5]"}, [](V a) { return matmul(a[0], a[1]); }},
      {"f(x, y) = x * y", {"f32[3,4]", "f32[4]"}, [](V a) { return matmul(a[0], a[1]); }},
      {"f(x, y) = x * y", {"f32[3]", "f32[1,4]"}, [](V a) { return matmul(a[0], a[1]); }},
      {"f(x, y) = x * y", {"f32[3,4]", "f64[4,2]"}, [](V a) { return matmul(a[0], a[1]); }},
      {"f(x, y, z) = relu.(x * y .+ z)",
       {"f32[4,3]", "f32[3,2]", "f32[4]"},
       [](V a) { return relu(add(matmul(a[0], a[1]), a[2])); }},
  });
}

TEST_CASE("reductions keep the reduced dims as Julia does") {
  const std::vector<std::string> x = {"f32[2,3,4]"};
  check_cases({
      {"f(x) = sum(x)", x, [](V a) { return sum(a[0]); }},
      {"f(x) = sum(x; dims=2)", x, [](V a) { return sum(a[0], {2}); }},
      {"f(x) = sum(x; dims=(3, 1))", x,
       [](V a) {
         return sum(a[0], {3, 1});
       }},
      {"f(x) = sum(x; dims=(2, 5))", x,
       [](V a) {
         return sum(a[0], {2, 5});
       }},
      {"f(x) = mean(x)", x, [](V a) { return mean(a[0]); }},
      {"f(x) = mean(x; dims=(2, 3))", x,
       [](V a) {
         return mean(a[0], {2, 3});
       }},
      {"f(x) = maximum(x; dims=1)", x, [](V a) { return maximum(a[0], {1}); }},
      {"f(x) = minimum(x)", x, [](V a) { return minimum(a[0]); }},
      {"f(x) = sum(x)", {"bool[3]"}, [](V a) { return sum(a[0]); }},
      {"f(x) = sum(x)", {"f32[]"}, [](V a) { return sum(a[0]); }},
  });
}

TEST_CASE("shapes, softmax, gather, losses and any primitive") {
  check_cases({
      {"f(x) = reshape(x, 4, :)",
       {"f32[2,3,4]"},
       [](V a) {
         return reshape(a[0], {4, -1});
       }},
      {"f(x) = reshape(x, 2, 3, 4)",
       {"f32[2,3,4]"},
       [](V a) {
         return reshape(a[0], {2, 3, 4});
       }},
      {"f(x) = permutedims(x, (2, 1, 3))",
       {"f32[2,3,4]"},
       [](V a) {
         return permutedims(a[0], {2, 1, 3});
       }},
      {"f(x) = x'", {"f32[2,3]"}, [](V a) { return transpose(a[0]); }},
      {"f(x) = transpose(x)", {"f32[3]"}, [](V a) { return transpose(a[0]); }},
      {"f(x) = softmax(x)", {"f32[3,4]"}, [](V a) { return softmax(a[0]); }},
      {"f(x) = logsoftmax(x; dims=2)", {"f32[3,4]"}, [](V a) { return logsoftmax(a[0], {2}); }},
      {"f(x) = logsumexp(x; dims=1)", {"f32[3,4]"}, [](V a) { return logsumexp(a[0]); }},
      {"f(x, y) = Prim.gather(x, y; dim=1)",
       {"f32[3,4]", "i64[1,4]"},
       [](V a) { return gather(a[0], a[1], 1); }},
      {"f(x, y) = logitcrossentropy_labels(x, y)",
       {"f32[10,4]", "i64[4]"},
       [](V a) { return logitcrossentropy_labels(a[0], a[1]); }},
      {"f(x, y) = mse(x, y)", {"f32[3,4]", "f32[3,4]"}, [](V a) { return mse(a[0], a[1]); }},
      {"f(x, y) = Prim.conv2d(x, y; stride=(2, 2))",
       {"f32[8,8,3,1]", "f32[3,3,3,4]"},
       [](V a) {
         return a[0].tracer()->call1(Prim::conv2d, {a[0], a[1]}, {{"stride", Dims{2, 2}}});
       }},
  });
}

TEST_CASE("ops carry the C++ file and line that recorded them") {
  std::string file = __FILE__;
  std::string dir = file.substr(0, file.rfind('/') + 1);
  Tracer t("f", {.source_root = dir});
  Traced x = t.input("x", type_of("f32[3]"));
  int line = __LINE__ + 1;
  Traced y = exp(x) * 2.0;
  t.output(y, "out");
  Tape tape = t.finish();
  CHECK(tape.files == std::vector<std::string>{"cpp_api_test.cc"});
  REQUIRE(tape.ops.size() == 4);
  for (size_t i = 1; i < tape.ops.size(); ++i) {
    CHECK(tape.loc_str(tape.ops[i].loc) == fmt::format("cpp_api_test.cc:{}", line));
  }
  Tracer quiet("f", {.locations = false});
  Traced z = quiet.input("x", type_of("f32[3]"));
  quiet.output(exp(z), "out");
  CHECK(quiet.finish().files.empty());
}

// The message of the UserError `f` throws, or "no error".
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}

TEST_CASE("a shape mismatch names both shapes and the C++ line") {
  std::string file = __FILE__;
  Tracer t("f", {.source_root = file.substr(0, file.rfind('/') + 1)});
  Traced x = t.input("x", type_of("f32[2,3]"));
  Traced y = t.input("y", type_of("f32[3,2]"));
  // Each call on a line of its own: within a macro's arguments Clang gives the line where the
  // macro ends.
  int line = __LINE__ + 1;
  std::string mul_error = error_of([&] { x* y; });
  CHECK(mul_error ==
        fmt::format("cpp_api_test.cc:{}: '*' of shapes [2,3] and [3,2]: the shapes must be equal, "
                    "or one side a scalar (mul(a, b) broadcasts; matmul(a, b) is the matrix "
                    "product)",
                    line));
  line = __LINE__ + 1;
  std::string add_error = error_of([&] { add(x, y); });
  CHECK(add_error ==
        fmt::format("cpp_api_test.cc:{}: add: shapes f32[2,3] and f32[3,2] do not broadcast "
                    "(dim 1: 2 vs 3)",
                    line));
  CHECK_THROWS_WITH_AS(x + y, doctest::Contains("'+' of shapes [2,3] and [3,2]"), UserError);
  CHECK_THROWS_WITH_AS(matmul(x, x), doctest::Contains("matmul:"), UserError);
  CHECK_THROWS_WITH_AS(matmul(sum(x), x), doctest::Contains("matmul of shapes [] and [2,3]"),
                       UserError);
  CHECK_THROWS_WITH_AS(reshape(x, {4, -1}),
                       doctest::Contains("cannot reshape 6 elements to [4,-1]"), UserError);
  CHECK_THROWS_WITH_AS(sum(x, {0}), doctest::Contains("dims must be >= 1"), UserError);
}

TEST_CASE("values of two tracers do not mix, and a finished tracer records no more") {
  Tracer a("a"), b("b");
  Traced x = a.input("x", type_of("f32[3]"));
  Traced y = b.input("y", type_of("f32[3]"));
  CHECK_THROWS_WITH_AS(x + y, doctest::Contains("two different Tracers"), UserError);
  CHECK_THROWS_WITH_AS(max(x, y), doctest::Contains("two different Tracers"), UserError);
  CHECK_THROWS_WITH_AS(matmul(x, y), doctest::Contains("two different Tracers"), UserError);
  CHECK_THROWS_WITH_AS(a.call1(Prim::exp, {y}), doctest::Contains("another Tracer"), UserError);
  CHECK_THROWS_WITH_AS(a.output(y, "out"), doctest::Contains("another Tracer"), UserError);
  Traced empty;
  CHECK_THROWS_WITH_AS(exp(empty), doctest::Contains("an empty Traced value"), UserError);
  CHECK_THROWS_WITH_AS(x * empty, doctest::Contains("an empty Traced value"), UserError);
  a.output(exp(x), "out");
  a.finish();
  CHECK_THROWS_WITH_AS(exp(x), doctest::Contains("finished its tape"), UserError);
}

TEST_CASE("scan traces its body once, as a region of the tape") {
  // The recurrent cell of tests/unit/tape/scan_tapes.h, written with the tracing API.
  cpp::Tracer t("rnn", {.locations = false});
  cpp::Traced w = t.input("w", {DType::f32, {4, 4}});
  cpp::Traced h0 = t.input("h0", {DType::f32, {4, 1}});
  cpp::Traced xs = t.input("xs", {DType::f32, {4, 1, 16}});
  int calls = 0;
  std::vector<cpp::Traced> r =
      t.scan({w}, {h0}, {xs}, 16, [&](const cpp::ScanArgs& a) -> cpp::ScanStep {
        ++calls;
        cpp::Traced h = cpp::tanh(cpp::matmul(a.consts[0], a.carries[0]) + a.xs[0]);
        return {{h}, {h}};
      });
  t.output(r[0], "h");
  t.output(r[1], "hs");
  Tape tape = t.finish();
  CHECK(calls == 1);
  CHECK(print_tape(tape) ==
        "tape rnn\n"
        "  in  %1::f32[4,4] w\n"
        "  in  %2::f32[4,1] h0\n"
        "  in  %3::f32[4,1,16] xs\n"
        "  %4, %5 = scan(%1, %2, %3; consts=1, carries=1, length=16)::(f32[4,1], f32[4,1,16])\n"
        "    body\n"
        "      in  %1::f32[4,4] const1\n"
        "      in  %2::f32[4,1] carry1\n"
        "      in  %3::f32[4,1] x1\n"
        "      %4 = matmul(%1, %2)::f32[4,1]\n"
        "      %5 = add(%4, %3)::f32[4,1]\n"
        "      %6 = tanh(%5)::f32[4,1]\n"
        "      yield %6, %6\n"
        "  out %4 h\n"
        "  out %5 hs\n");
}

TEST_CASE("scan: a body's locations name the outer tape's files; outer values are refused") {
  cpp::Tracer t("located");
  cpp::Traced h0 = t.input("h0", {DType::f64, {3}});
  cpp::Traced outside = cpp::exp(h0);
  std::vector<cpp::Traced> r = t.scan({}, {h0}, {}, 5, [](const cpp::ScanArgs& a) -> cpp::ScanStep {
    return {{cpp::sin(a.carries[0])}, {}};
  });
  t.output(r[0], "h");
  Tape tape = t.finish();
  REQUIRE(tape.files.size() == 1);
  CHECK(tape.ops.back().regions[0].files.empty());
  CHECK(tape.ops.back().regions[0].ops.back().loc.file == 1);
  cpp::Tracer u("capture", {.locations = false});
  cpp::Traced c0 = u.input("c0", {DType::f64, {3}});
  cpp::Traced captured = cpp::exp(c0);
  CHECK_THROWS_WITH_AS(u.scan({}, {c0}, {}, 2,
                              [&](const cpp::ScanArgs&) -> cpp::ScanStep {
                                return {{captured}, {}};
                              }),
                       "scan: a region gives back a value it was not given nor made; pass "
                       "values from outside it as operands",
                       UserError);
  (void)outside;
}

TEST_CASE("cond and while_loop trace each region once, from lambdas") {
  // Newton's square root, and a choice of its sign: every input from one tape.
  cpp::Tracer t("newton", {.locations = false});
  cpp::Traced a = t.input("a", {DType::f64, {}});
  cpp::Traced x0 = t.input("x0", {DType::f64, {}});
  int calls = 0;
  std::vector<cpp::Traced> root = t.while_loop(
      {a}, {x0},
      [&](const std::vector<cpp::Traced>& c, const std::vector<cpp::Traced>& k) {
        ++calls;
        return std::vector<cpp::Traced>{cpp::gt(cpp::abs(k[0] * k[0] - c[0]), 1e-12)};
      },
      [&](const std::vector<cpp::Traced>& c, const std::vector<cpp::Traced>& k) {
        ++calls;
        return std::vector<cpp::Traced>{(k[0] + c[0] / k[0]) * 0.5};
      },
      100);
  cpp::Traced positive = cpp::gt(a, 4.0);
  std::vector<cpp::Traced> y = t.cond(positive, {root[0]},
                                      {[&](const std::vector<cpp::Traced>& x) {
                                         ++calls;
                                         return std::vector<cpp::Traced>{x[0] * 2.0};
                                       },
                                       [&](const std::vector<cpp::Traced>& x) {
                                         ++calls;
                                         return std::vector<cpp::Traced>{-x[0]};
                                       }});
  t.output(y[0], "y");
  Tape tape = t.finish();
  CHECK(calls == 4);
  validate(tape);
  for (const auto& bound : {std::tuple{2.0, 1.5, -std::sqrt(2.0)}, {9.0, 1e9, 6.0}}) {
    const auto& av = std::get<0>(bound);
    const auto& x0v = std::get<1>(bound);
    const auto& want = std::get<2>(bound);
    CAPTURE(av);
    TensorMap inputs{{"a", Tensor(Type{DType::f64, {}})}, {"x0", Tensor(Type{DType::f64, {}})}};
    inputs[0].second.data<double>()[0] = av;
    inputs[1].second.data<double>()[0] = x0v;
    CHECK(Executor(tape).run(inputs)[0].data<double>()[0] == doctest::Approx(want).epsilon(1e-12));
  }
  cpp::Tracer u("capture", {.locations = false});
  cpp::Traced s = u.input("s", {DType::boolean, {}});
  cpp::Traced outside = cpp::exp(u.input("v", {DType::f64, {}}));
  auto leak = [&](const std::vector<cpp::Traced>&) { return std::vector<cpp::Traced>{outside}; };
  CHECK_THROWS_WITH_AS(u.cond(s, {}, {leak, leak}),
                       "cond: a region gives back a value it was not given nor made; pass "
                       "values from outside it as operands",
                       UserError);
}

TEST_CASE("a custom rule from two lambdas: the body runs, grad uses the pullback") {
  // A straight-through rounding: round(x) forward, the identity backward.
  cpp::Tracer t("ste");
  cpp::Traced x = t.input("x", {DType::f64, {3}});
  std::vector<cpp::Traced> r = t.custom_rule(
      "round_ste", {x},
      [](const std::vector<cpp::Traced>& in) {
        return std::vector<cpp::Traced>{cpp::round(in[0])};
      },
      [](const std::vector<cpp::Traced>&, const std::vector<cpp::Traced>&,
         const std::vector<cpp::Traced>& dy) { return std::vector<cpp::Traced>{dy[0]}; });
  t.output(sum(r[0] * x), "y");
  Tape tape = t.finish();
  validate(tape);
  CHECK(print_tape(tape).find("custom_rule(%1; name=\"round_ste\", rule=\"") != std::string::npos);
  TensorMap inputs{{"x", Tensor(Type{DType::f64, {3}})}};
  for (int k = 0; k < 3; ++k) inputs[0].second.data<double>()[k] = 0.4 + k;
  std::vector<Tensor> g = Executor(grad::gradient(tape)).run(inputs);
  // d/dx of round(x) * x with round's derivative taken as 1: x + round(x).
  for (int k = 0; k < 3; ++k) CHECK(g[1].data<double>()[k] == doctest::Approx(0.4 + 2.0 * k));
}

}  // namespace ytape::cpp::testing
