// Every differentiable primitive's rule against central differences in f64, on shapes
// with broadcasting, size-1 and rank-0 cases; then the same for second derivatives.
#include "grad/rules.h"

#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <set>

#include "check/gradcheck.h"
#include "grad/grad.h"
#include "grad/jvp.h"
#include "opt/promote.h"
#include "runtime/eval.h"
#include "runtime/executor.h"
#include "runtime/random.h"
#include "tape/builder.h"
#include "tape/print.h"
#include "tape/validate.h"

namespace ytape::grad {

namespace {

// How the values of one input are made.
// inner: in (-0.8, 0.8), where asin and acos are smooth and finite differences stay accurate.
enum class Gen { away, positive, small, inner, index, boolean };

struct Arg {
  Type type;
  Gen gen = Gen::away;
  int64_t max_index = 1;  // Gen::index: values in 1..max_index
};

struct Case {
  std::string label;
  std::vector<Arg> args;
  std::function<std::vector<Var>(Builder&, const std::vector<Var>&)> build;
};

Arg f64(Shape s, Gen g = Gen::away) {
  return {Type{DType::f64, std::move(s)}, g};
}
Arg index(Shape s, int64_t max) {
  return {Type{DType::i64, std::move(s)}, Gen::index, max};
}
Arg boolean(Shape s) {
  return {Type{DType::boolean, std::move(s)}, Gen::boolean};
}

std::vector<Var> op(Builder& b, Prim p, const std::vector<Var>& x, const Attrs& attrs = {}) {
  return b.call(p, x, attrs);
}

Case unary(Prim p, Shape s, Gen g = Gen::away) {
  std::string label = fmt::format("{}{}", prim_name(p), shape_str(s));
  return {label, {f64(s, g)}, [p](Builder& b, const std::vector<Var>& x) { return op(b, p, x); }};
}

Case binary(Prim p, Shape a, Shape c, Gen g = Gen::away) {
  std::string label = fmt::format("{}{}{}", prim_name(p), shape_str(a), shape_str(c));
  return {label, {f64(a, g), f64(c, g)}, [p](Builder& b, const std::vector<Var>& x) {
            return op(b, p, x);
          }};
}

Case with(Prim p, std::vector<Arg> args, Attrs attrs, std::string note = "") {
  std::string label = fmt::format("{} {}", prim_name(p), note);
  return {label, std::move(args),
          [p, attrs](Builder& b, const std::vector<Var>& x) { return op(b, p, x, attrs); }};
}

using Ints = std::vector<int64_t>;

std::vector<Case> elementwise_cases() {
  std::vector<Case> cases;
  for (Prim p : {Prim::neg, Prim::exp, Prim::expm1, Prim::abs, Prim::sin, Prim::cos, Prim::tanh,
                 Prim::sigmoid, Prim::relu, Prim::softplus, Prim::erf, Prim::atan, Prim::gelu}) {
    cases.push_back(unary(p, {3, 4}));
    cases.push_back(unary(p, {}));
  }
  for (Prim p : {Prim::log, Prim::log1p, Prim::sqrt})
    cases.push_back(unary(p, {3, 2}, Gen::positive));
  cases.push_back(unary(Prim::tan, {3, 2}, Gen::small));
  for (Prim p : {Prim::asin, Prim::acos}) {
    cases.push_back(unary(p, {3, 4}, Gen::inner));
    cases.push_back(unary(p, {}, Gen::inner));
  }
  for (Prim p : {Prim::add, Prim::sub, Prim::mul, Prim::div, Prim::max, Prim::min}) {
    cases.push_back(binary(p, {3, 4}, {3, 4}));
    cases.push_back(binary(p, {3, 4}, {3}));
    cases.push_back(binary(p, {3, 1}, {1, 4}));
    cases.push_back(binary(p, {}, {2, 3}));
  }
  cases.push_back(binary(Prim::pow, {3, 4}, {3, 4}, Gen::positive));
  cases.push_back(binary(Prim::pow, {3, 4}, {}, Gen::positive));
  // Values in +-[0.2, 1.7]: quotients up to 8.5 in size, either sign; a step across a jump
  // is a kink (check/kinks.h), retried elsewhere.
  cases.push_back(binary(Prim::rem, {3, 4}, {3, 4}));
  cases.push_back(binary(Prim::rem, {3, 4}, {3}));
  cases.push_back(binary(Prim::rem, {}, {2, 3}));
  cases.push_back(with(Prim::select, {boolean({3, 4}), f64({3, 1}), f64({})}, {}));
  cases.push_back(with(Prim::convert, {f64({2, 3})}, {{"dtype", DType::f64}}));
  return cases;
}

std::vector<Case> reduce_cases() {
  std::vector<Case> cases;
  cases.push_back(with(Prim::sum, {f64({3, 4, 2})}, {{"dims", Ints{2}}}, "dims=[2]"));
  cases.push_back(with(Prim::sum, {f64({3, 4, 2})}, {{"dims", Ints{3, 1}}}, "dims=[3,1]"));
  cases.push_back(with(Prim::sum, {f64({})}, {{"dims", Ints{}}}, "rank 0"));
  for (Prim p : {Prim::maximum, Prim::minimum, Prim::softmax, Prim::log_softmax}) {
    cases.push_back(with(p, {f64({3, 4})}, {{"dims", Ints{1}}}, "dims=[1]"));
    cases.push_back(with(p, {f64({3, 4, 2})}, {{"dims", Ints{1, 3}}}, "dims=[1,3]"));
  }
  return cases;
}

std::vector<Case> shape_cases() {
  std::vector<Case> cases;
  cases.push_back(with(Prim::reshape, {f64({3, 4})}, {{"shape", Ints{2, 6}}}));
  cases.push_back(with(Prim::permutedims, {f64({2, 3, 4})}, {{"perm", Ints{3, 1, 2}}}));
  cases.push_back(with(Prim::broadcast_to, {f64({3, 1})}, {{"shape", Ints{3, 4, 2}}}));
  cases.push_back(with(Prim::broadcast_to, {f64({})}, {{"shape", Ints{2, 2}}}, "rank 0"));
  cases.push_back(with(Prim::slice, {f64({7, 5})},
                       {{"start", Ints{2, 1}}, {"stop", Ints{7, 5}}, {"step", Ints{2, 2}}}));
  cases.push_back(with(Prim::slice, {f64({4, 3})},
                       {{"start", Ints{3, 1}}, {"stop", Ints{2, 3}}, {"step", Ints{1, 1}}},
                       "empty"));
  cases.push_back(
      with(Prim::concat, {f64({2, 3}), f64({2, 1}), f64({2, 2})}, {{"dim", int64_t{2}}}));
  cases.push_back(
      with(Prim::pad, {f64({3, 2})},
           {{"lo", Ints{1, 0}}, {"hi", Ints{2, 1}}, {"interior", Ints{1, 2}}, {"value", 1.5}}));
  return cases;
}

std::vector<Case> index_cases() {
  std::vector<Case> cases;
  cases.push_back(with(Prim::gather, {f64({4, 3}), index({2, 3}, 4)}, {{"dim", int64_t{1}}}));
  cases.push_back(
      with(Prim::gather, {f64({4, 3}), index({1, 5}, 3)}, {{"dim", int64_t{2}}}, "broadcast"));
  cases.push_back(with(Prim::scatter_add, {f64({2, 3}), index({2, 3}, 4)},
                       {{"dim", int64_t{1}}, {"size", int64_t{4}}}));
  return cases;
}

std::vector<Case> linalg_cases() {
  std::vector<Case> cases;
  auto mm = [](bool ta, bool tb) { return Attrs{{"transpose_a", ta}, {"transpose_b", tb}}; };
  cases.push_back(with(Prim::matmul, {f64({3, 4}), f64({4, 2})}, mm(false, false)));
  cases.push_back(with(Prim::matmul, {f64({4, 3}), f64({4, 2})}, mm(true, false), "ta"));
  cases.push_back(with(Prim::matmul, {f64({3, 4}), f64({2, 4})}, mm(false, true), "tb"));
  cases.push_back(with(Prim::matmul, {f64({4, 3}), f64({2, 4})}, mm(true, true), "ta tb"));
  cases.push_back(
      with(Prim::matmul, {f64({3, 4, 2}), f64({4, 5, 2})}, mm(false, false), "batched"));
  // Query i sees keys 1..i+2 (every query one at least); q (3, 4, 2), k (3, 5, 2), v (2, 5, 2).
  auto causal = [](Builder& b) {
    Var key = b.iota({.dtype = DType::i64, .shape = {5, 4}, .dim = 1});
    Var query = b.iota({.dtype = DType::i64, .shape = {5, 4}, .dim = 2});
    return b.le(key, b.add(query, b.constant(DType::i64, 2)));
  };
  // The output alone (the attention_backward op), and with lse (through the expansion).
  cases.push_back({"attention",
                   {f64({3, 4, 2}), f64({3, 5, 2}), f64({2, 5, 2})},
                   [causal](Builder& b, const std::vector<Var>& x) {
                     return std::vector<Var>{b.attention(x[0], x[1], x[2], causal(b))[0]};
                   }});
  cases.push_back({"attention and lse",
                   {f64({3, 4, 2}), f64({3, 5, 2}), f64({2, 5, 2})},
                   [causal](Builder& b, const std::vector<Var>& x) {
                     return b.attention(x[0], x[1], x[2], causal(b));
                   }});
  // The backward as a function of all its arguments: out and lse need not be attention's.
  cases.push_back({"attention_backward",
                   {f64({3, 4, 2}), f64({3, 5, 2}), f64({2, 5, 2}), f64({2, 4, 2}), f64({4, 2}),
                    f64({2, 4, 2})},
                   [causal](Builder& b, const std::vector<Var>& x) {
                     return b.attention_backward(x[0], x[1], x[2], causal(b), x[3], x[4], x[5]);
                   }});
  return cases;
}

Attrs conv_geometry() {
  return {{"stride", Ints{2, 1}},
          {"pad", Ints{1, 0, 1, 1}},
          {"dilation", Ints{1, 2}},
          {"groups", int64_t{2}}};
}

std::vector<Case> conv_cases() {
  std::vector<Case> cases;
  // x (6,5,4,2), w (3,2,2,4): output (3,5,4,2) with this geometry.
  cases.push_back(with(Prim::conv2d, {f64({6, 5, 4, 2}), f64({3, 2, 2, 4})}, conv_geometry()));
  cases.push_back(with(Prim::conv2d, {f64({4, 4, 2, 1}), f64({3, 3, 2, 3})}, {}, "plain"));
  Attrs in = conv_geometry(), filter = conv_geometry();
  in.set("shape", Ints{6, 5, 4, 2});
  filter.set("shape", Ints{3, 2, 2, 4});
  cases.push_back(with(Prim::conv2d_backward_input, {f64({3, 5, 4, 2}), f64({3, 2, 2, 4})}, in));
  cases.push_back(
      with(Prim::conv2d_backward_filter, {f64({6, 5, 4, 2}), f64({3, 5, 4, 2})}, filter));
  return cases;
}

std::vector<Case> pool_cases() {
  std::vector<Case> cases;
  Attrs pool{{"window", Ints{2, 3}}, {"stride", Ints{2, 2}}, {"pad", Ints{1, 0, 0, 1}}};
  // x (5,6,2,2) gives (3,3,2,2).
  cases.push_back(with(Prim::max_pool2d, {f64({5, 6, 2, 2})}, pool));
  cases.push_back(with(Prim::max_pool2d_with_indices, {f64({5, 6, 2, 2})}, pool));
  cases.push_back(with(Prim::max_pool2d_backward, {f64({3, 3, 2, 2}), index({3, 3, 2, 2}, 30)},
                       {{"shape", Ints{5, 6, 2, 2}}}));
  cases.push_back(with(Prim::avg_pool2d, {f64({5, 6, 2, 2})}, pool));
  Attrs back = pool;
  back.set("shape", Ints{5, 6, 2, 2});
  cases.push_back(with(Prim::avg_pool2d_backward, {f64({3, 3, 2, 2})}, back));
  return cases;
}

std::vector<Case> norm_cases() {
  std::vector<Case> cases;
  Attrs eps{{"eps", 1e-3}};
  cases.push_back(with(Prim::batchnorm, {f64({3, 4, 2, 2}), f64({2}), f64({2})}, eps, "WHCN"));
  cases.push_back(with(Prim::batchnorm, {f64({3, 5}), f64({3}), f64({3})}, eps, "(C,N)"));
  cases.push_back(with(Prim::batchnorm_with_stats, {f64({3, 4, 2, 2}), f64({2}), f64({2})}, eps));
  cases.push_back(with(
      Prim::batchnorm_backward,
      {f64({3, 4, 2, 2}), f64({3, 4, 2, 2}), f64({2}), f64({2}), f64({2}, Gen::positive)}, {}));
  return cases;
}

std::vector<Case> all_cases() {
  std::vector<Case> all;
  for (auto cases : {elementwise_cases(), reduce_cases(), shape_cases(), index_cases(),
                     linalg_cases(), conv_cases(), pool_cases(), norm_cases()}) {
    all.insert(all.end(), cases.begin(), cases.end());
  }
  return all;
}

Tape case_tape(const Case& c) {
  Builder b(c.label);
  std::vector<Var> x;
  for (size_t i = 0; i < c.args.size(); ++i)
    x.push_back(b.input(fmt::format("x{}", i + 1), c.args[i].type));
  std::vector<Var> outs = c.build(b, x);
  for (size_t k = 0; k < outs.size(); ++k) b.output(outs[k], fmt::format("y{}", k + 1));
  return b.finish();
}

Tensor values(const Arg& a, uint64_t seed) {
  Tensor t(a.type);
  for (int64_t i = 0; i < t.size(); ++i) {
    double u = uniform_f64(seed, i);  // [0, 1)
    switch (a.gen) {
      case Gen::away:
        t.data<double>()[i] = (u < 0.5 ? -1 : 1) * (0.2 + 2 * std::abs(u - 0.5) * 1.5);
        break;
      case Gen::positive:
        t.data<double>()[i] = 0.3 + 1.5 * u;
        break;
      case Gen::small:
        t.data<double>()[i] = 2 * u - 1;
        break;
      case Gen::inner:
        t.data<double>()[i] = 1.6 * u - 0.8;
        break;
      case Gen::index:
        t.data<int64_t>()[i] = 1 + static_cast<int64_t>(u * a.max_index);
        break;
      case Gen::boolean:
        t.data<bool>()[i] = u < 0.5;
        break;
    }
  }
  return t;
}

TensorMap case_inputs(const Case& c, const Tape& t) {
  TensorMap inputs;
  for (size_t i = 0; i < c.args.size(); ++i)
    inputs.emplace_back(t.ops[i].name, values(c.args[i], 100 + i));
  return inputs;
}

void check_case(const Tape& t, const TensorMap& inputs, double rtol) {
  check::GradcheckOptions o;
  o.max_elements = 1'000'000;  // every element
  o.rtol = rtol;
  check::GradcheckResult r = check::gradcheck(t, inputs, o);
  INFO(print_tape(t));
  INFO(check::gradcheck_table(r));
  CHECK(r.ok);
}

}  // namespace

TEST_CASE("every differentiable primitive has a rule, and the others none") {
  const RuleTable& t = rules();
  for (Prim p : all_prims()) {
    bool has = t.rule(p) != nullptr || (variant_of(p) && t.rule(*variant_of(p)) != nullptr);
    CAPTURE(prim_name(p));
    CHECK(has == prim_info(p).differentiable());
  }
}

TEST_CASE("the table covers every differentiable primitive") {
  std::set<Prim> covered;
  for (const Case& c : all_cases()) {
    for (const Op& op : case_tape(c).ops) {
      if (op.kind == OpKind::call) covered.insert(op.prim);
    }
  }
  for (Prim p : all_prims()) {
    CAPTURE(prim_name(p));
    // A region op's cases build its regions: tests/unit/grad/scan_grad_test.cc.
    if (prim_info(p).holds_regions()) continue;
    if (prim_info(p).differentiable()) CHECK(covered.count(p) == 1);
  }
}

TEST_CASE("first derivatives match finite differences") {
  for (const Case& c : all_cases()) {
    SUBCASE(c.label.c_str()) {
      Tape t = case_tape(c);
      check_case(t, case_inputs(c, t), 1e-6);
    }
  }
}

TEST_CASE("the rules are dtype-generic: in f16 every case's gradient is f16 and runs") {
  // Inputs rounded to f16, so that the f64 gradient at the same point is the reference;
  // f16 keeps about three digits, and each op rounds.
  for (Case c : all_cases()) {
    SUBCASE(c.label.c_str()) {
      TensorMap at, at16;
      for (size_t i = 0; i < c.args.size(); ++i) {
        Tensor v = values(c.args[i], 100 + i);
        if (c.args[i].type.dtype == DType::f64) {
          c.args[i].type.dtype = DType::f16;
          v = evaluate(Prim::convert, std::span(&v, 1), {{"dtype", DType::f16}})[0];
          at16.emplace_back(fmt::format("x{}", i + 1), v);
          v = evaluate(Prim::convert, std::span(&v, 1), {{"dtype", DType::f64}})[0];
        } else {
          at16.emplace_back(fmt::format("x{}", i + 1), v);
        }
        at.emplace_back(fmt::format("x{}", i + 1), v);
      }
      Tape t16 = case_tape(c);
      Tape g16 = gradient(t16, {{}, true});
      validate(g16);
      Tape g = gradient(promote_to_f64(t16), {{}, true});
      for (size_t i = at.size(); i < g.num_inputs(); ++i) {
        Tensor seed = Tensor(g.type(g.ops[i].outs[0]));
        for (int64_t k = 0; k < seed.size(); ++k) seed.data<double>()[k] = 0.5 + 0.25 * (k % 3);
        at.emplace_back(g.ops[i].name, seed);
        DType d = g16.type(g16.ops[i].outs[0]).dtype;  // f64 where the output is
        at16.emplace_back(g.ops[i].name,
                          evaluate(Prim::convert, std::span(&seed, 1), {{"dtype", d}})[0]);
      }
      std::vector<Tensor> got = Executor(g16).run(at16), want = Executor(g).run(at);
      for (size_t k = 0; k < got.size(); ++k) {
        CAPTURE(g16.outputs[k].name);
        const Output& out = g16.outputs[k];
        CHECK(got[k].dtype() == g16.type(out.var).dtype);
        if (out.name.starts_with("grad.x")) {  // the gradient of input i has its dtype
          size_t i = std::stoul(out.name.substr(6)) - 1;
          CHECK(got[k].dtype() == c.args[i].type.dtype);
        }
        if (got[k].dtype() != DType::f16) continue;
        double scale = 0;
        for (int64_t i = 0; i < want[k].size(); ++i) {
          scale = std::max(scale, std::abs(element_value(want[k], i)));
        }
        for (int64_t i = 0; i < want[k].size(); ++i) {
          double w = element_value(want[k], i), h = element_value(got[k], i);
          CHECK(std::abs(h - w) <= 2e-2 * (1 + scale));
        }
      }
    }
  }
}

TEST_CASE("second derivatives match finite differences") {
  // The gradient tape (a VJP with seed inputs) is itself checked, so every op that a rule
  // emits is differentiated once more.
  for (const Case& c : all_cases()) {
    SUBCASE(c.label.c_str()) {
      Tape t = case_tape(c);
      Tape g = gradient(t, {{}, true});
      validate(g);
      TensorMap inputs = case_inputs(c, t);
      for (size_t i = inputs.size(); i < g.num_inputs(); ++i) {
        Arg seed = f64(g.type(g.ops[i].outs[0]).shape, Gen::small);
        inputs.emplace_back(g.ops[i].name, values(seed, 500 + i));
      }
      check_case(g, inputs, 1e-5);
    }
  }
}

}  // namespace ytape::grad

namespace ytape::grad {

namespace {

// Whether the tangent outputs `got` (after `t`'s outputs among `j`'s) agree with central
// differences of `t` at `x` along the tangents of `with`, at one of three steps.
bool tangents_match(const Tape& t, const Tape& j, const TensorMap& x, const TensorMap& with,
                    const std::vector<Tensor>& got) {
  for (double h : {1e-6, 1e-5, 1e-4}) {
    auto moved = [&](double by) {
      TensorMap p = x;
      for (size_t i = x.size(); i < with.size(); ++i) {
        const std::string name = with[i].first.substr(std::string("tangent.").size());
        for (auto& [n, v] : p) {
          if (n != name) continue;
          Tensor w(v.type());  // tensors share their bytes when copied
          for (int64_t k = 0; k < v.size(); ++k)
            w.data<double>()[k] = v.data<double>()[k] + by * with[i].second.data<double>()[k];
          v = std::move(w);
        }
      }
      return Executor(t).run(p);
    };
    std::vector<Tensor> plus = moved(h), minus = moved(-h);
    bool ok = true;
    size_t next = t.outputs.size();
    for (size_t k = 0; k < t.outputs.size(); ++k) {
      if (!is_float(t.type(t.outputs[k].var).dtype)) continue;
      const Tensor& a = got[next++];
      for (int64_t e = 0; e < a.size(); ++e) {
        double fd = (element_value(plus[k], e) - element_value(minus[k], e)) / (2 * h);
        double an = element_value(a, e);
        ok = ok && std::abs(an - fd) <= 1e-7 + 1e-5 * std::max(std::abs(an), std::abs(fd));
      }
    }
    if (ok) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("forward mode: every case's jvp matches central differences along a tangent") {
  for (const Case& c : all_cases()) {
    SUBCASE(c.label.c_str()) {
      Tape t = case_tape(c);
      Tape j = jvp(t);
      validate(j);
      TensorMap x = case_inputs(c, t), with = x;
      for (size_t i = t.num_inputs(); i < j.num_inputs(); ++i) {
        Arg v = f64(j.type(j.ops[i].outs[0]).shape, Gen::small);
        with.emplace_back(j.ops[i].name, values(v, 700 + i));
      }
      INFO(print_tape(j));
      CHECK(tangents_match(t, j, x, with, Executor(j).run(with)));
    }
  }
}

}  // namespace ytape::grad
