// The importer's RNN, GRU and LSTM against a naive f64 reference written from ONNX's
// equations (row-major, one loop per sum), for each direction and both layouts; the
// imported LSTM's gradient against finite differences; the errors of what is refused.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "check/gradcheck.h"
#include "model.h"
#include "onnx/import.h"

namespace ytape::onnx_test {

namespace {

using Vec = std::vector<double>;

struct Act {
  std::string name;
  double alpha = 0, beta = 0;
};

// One node to import, and the values of its inputs.
struct Case {
  explicit Case(std::string op_, std::string direction_ = "forward", int layout_ = 0)
      : op(std::move(op_)), direction(std::move(direction_)), layout(layout_) {}
  std::string op;  // RNN, GRU, LSTM
  std::string direction;
  int layout;
  int64_t S = 3, B = 2, I = 3, H = 2;
  bool optional_inputs = true;  // B, initial_h, and the LSTM's initial_c and P
  int linear_before_reset = 0;
  std::optional<double> clip;
  std::vector<Act> acts;  // empty: the defaults

  int64_t D() const { return direction == "bidirectional" ? 2 : 1; }
  int64_t G() const { return op == "RNN" ? 1 : op == "GRU" ? 3 : 4; }
  std::vector<int64_t> x_shape() const {
    return layout == 0 ? std::vector<int64_t>{S, B, I} : std::vector<int64_t>{B, S, I};
  }
  std::vector<int64_t> state_shape() const {
    return layout == 0 ? std::vector<int64_t>{D(), B, H} : std::vector<int64_t>{B, D(), H};
  }
};

double uniform(uint64_t& s) {
  s = s * 6364136223846793005ULL + 1442695040888963407ULL;
  return static_cast<double>(s >> 11) * 0x1.0p-53 * 2 - 1;
}

Vec random_values(int64_t n, uint64_t& seed) {
  Vec v(n);
  for (double& x : v) x = uniform(seed);
  return v;
}

double activation(const Act& a, double x) {
  const std::string& f = a.name;
  if (f == "Relu") return std::max(0.0, x);
  if (f == "Tanh") return std::tanh(x);
  if (f == "Sigmoid") return 1 / (1 + std::exp(-x));
  if (f == "Affine") return a.alpha * x + a.beta;
  if (f == "LeakyRelu") return x >= 0 ? x : a.alpha * x;
  if (f == "ThresholdedRelu") return x >= a.alpha ? x : 0;
  if (f == "ScaledTanh") return a.alpha * std::tanh(a.beta * x);
  if (f == "HardSigmoid") return std::min(std::max(a.alpha * x + a.beta, 0.0), 1.0);
  if (f == "Elu") return x >= 0 ? x : a.alpha * (std::exp(x) - 1);
  if (f == "Softsign") return x / (1 + std::abs(x));
  if (f == "Softplus") return std::log(1 + std::exp(x));
  FAIL("no activation " << f);
  return 0;
}

// The node's activations, the defaults filled in.
std::vector<Act> activations(const Case& c) {
  if (!c.acts.empty()) return c.acts;
  std::vector<Act> one = c.op == "RNN"   ? std::vector<Act>{{"Tanh"}}
                         : c.op == "GRU" ? std::vector<Act>{{"Sigmoid"}, {"Tanh"}}
                                         : std::vector<Act>{{"Sigmoid"}, {"Tanh"}, {"Tanh"}};
  std::vector<Act> all = one;
  if (c.D() == 2) all.insert(all.end(), one.begin(), one.end());
  return all;
}

struct Inputs {
  Vec x, w, r, b, h0, c0, p;
};

Inputs random_inputs(const Case& c, uint64_t seed) {
  const int64_t GH = c.G() * c.H;
  Inputs in;
  in.x = random_values(c.S * c.B * c.I, seed);
  in.w = random_values(c.D() * GH * c.I, seed);
  in.r = random_values(c.D() * GH * c.H, seed);
  in.b = random_values(c.D() * 2 * GH, seed);
  in.h0 = random_values(c.D() * c.B * c.H, seed);
  in.c0 = random_values(c.D() * c.B * c.H, seed);
  in.p = random_values(c.D() * 3 * c.H, seed);
  return in;
}

struct Outputs {
  Vec y, y_h, y_c;
};

// ONNX's equations, literally, on row-major arrays.
Outputs reference(const Case& c, const Inputs& in) {
  const int64_t S = c.S, B = c.B, I = c.I, H = c.H, D = c.D(), GH = c.G() * H;
  std::vector<Act> acts = activations(c);
  const size_t per = acts.size() / D;
  auto X = [&](int64_t t, int64_t b, int64_t i) {
    return in.x[c.layout == 0 ? (t * B + b) * I + i : (b * S + t) * I + i];
  };
  auto state = [&](int64_t d, int64_t b, int64_t j) {
    return c.layout == 0 ? (d * B + b) * H + j : (b * D + d) * H + j;
  };
  auto f = [&](const Act& a, double x) {
    if (c.clip) x = std::min(std::max(x, -*c.clip), *c.clip);
    return activation(a, x);
  };
  Outputs out{Vec(S * D * B * H), Vec(D * B * H), Vec(D * B * H)};
  for (int64_t d = 0; d < D; ++d) {
    const Act* act = &acts[d * per];
    auto W = [&](int64_t row, int64_t i) { return in.w[(d * GH + row) * I + i]; };
    auto R = [&](int64_t row, int64_t m) { return in.r[(d * GH + row) * H + m]; };
    auto Wb = [&](int64_t row) { return c.optional_inputs ? in.b[d * 2 * GH + row] : 0.0; };
    auto Rb = [&](int64_t row) { return c.optional_inputs ? in.b[d * 2 * GH + GH + row] : 0.0; };
    auto P = [&](int64_t k, int64_t j) {
      return c.optional_inputs ? in.p[d * 3 * H + k * H + j] : 0.0;
    };
    std::vector<Vec> h(B, Vec(H)), cell(B, Vec(H));
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t j = 0; j < H; ++j) {
        h[b][j] = c.optional_inputs ? in.h0[state(d, b, j)] : 0;
        cell[b][j] = c.optional_inputs && c.op == "LSTM" ? in.c0[state(d, b, j)] : 0;
      }
    }
    for (int64_t step = 0; step < S; ++step) {
      int64_t t = c.direction == "reverse" || d == 1 ? S - 1 - step : step;
      for (int64_t b = 0; b < B; ++b) {
        Vec xw(GH), hr(GH);  // Xt W' + Wb, Ht-1 R' + Rb
        for (int64_t row = 0; row < GH; ++row) {
          xw[row] = Wb(row), hr[row] = Rb(row);
          for (int64_t i = 0; i < I; ++i) xw[row] += X(t, b, i) * W(row, i);
          for (int64_t m = 0; m < H; ++m) hr[row] += h[b][m] * R(row, m);
        }
        Vec hn(H), z(H), r(H);
        for (int64_t j = 0; j < H; ++j) {
          if (c.op == "RNN") hn[j] = f(act[0], xw[j] + hr[j]);
          if (c.op == "GRU") {
            z[j] = f(act[0], xw[j] + hr[j]);
            r[j] = f(act[0], xw[H + j] + hr[H + j]);
          }
          if (c.op == "LSTM") {
            double& C = cell[b][j];
            double ig = f(act[0], xw[j] + hr[j] + P(0, j) * C);
            double fg = f(act[0], xw[2 * H + j] + hr[2 * H + j] + P(2, j) * C);
            double cg = f(act[1], xw[3 * H + j] + hr[3 * H + j]);
            C = fg * C + ig * cg;
            double og = f(act[0], xw[H + j] + hr[H + j] + P(1, j) * C);
            hn[j] = og * f(act[2], C);
          }
        }
        if (c.op == "GRU") {
          for (int64_t j = 0; j < H; ++j) {
            double pre = xw[2 * H + j];
            if (c.linear_before_reset) {
              pre += r[j] * hr[2 * H + j];
            } else {
              pre += Rb(2 * H + j);
              for (int64_t m = 0; m < H; ++m) pre += r[m] * h[b][m] * R(2 * H + j, m);
            }
            hn[j] = (1 - z[j]) * f(act[1], pre) + z[j] * h[b][j];
          }
        }
        h[b] = hn;
        for (int64_t j = 0; j < H; ++j) {
          int64_t at =
              c.layout == 0 ? ((t * D + d) * B + b) * H + j : ((b * S + t) * D + d) * H + j;
          out.y[at] = h[b][j];
        }
      }
    }
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t j = 0; j < H; ++j) {
        out.y_h[state(d, b, j)] = h[b][j];
        out.y_c[state(d, b, j)] = cell[b][j];
      }
    }
  }
  return out;
}

Tensor f64_tensor(const std::vector<int64_t>& onnx_shape, const Vec& v) {
  Tensor t(Type{DType::f64, Shape(onnx_shape.rbegin(), onnx_shape.rend())});
  std::copy(v.begin(), v.end(), t.data<double>());
  return t;
}

void set_float(onnx::NodeProto& n, const std::string& name, double v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto_AttributeType_FLOAT);
  a->set_f(static_cast<float>(v));
}

// The node with f64 graph inputs, and the values that feed them.
Model model_of(const Case& c, const Inputs& in, TensorMap* feed) {
  Model m(14);
  const int64_t D = c.D(), GH = c.G() * c.H;
  auto input = [&](const std::string& name, const std::vector<int64_t>& shape, const Vec& v) {
    m.input(name, shape, onnx::TensorProto_DataType_DOUBLE);
    feed->emplace_back(name, f64_tensor(shape, v));
  };
  input("X", c.x_shape(), in.x);
  input("W", {D, GH, c.I}, in.w);
  input("R", {D, GH, c.H}, in.r);
  std::vector<std::string> ins{"X", "W", "R"};
  if (c.optional_inputs) {
    input("B", {D, 2 * GH}, in.b);
    input("h0", c.state_shape(), in.h0);
    ins.insert(ins.end(), {"B", "", "h0"});
    if (c.op == "LSTM") {
      input("c0", c.state_shape(), in.c0);
      input("P", {D, 3 * c.H}, in.p);
      ins.insert(ins.end(), {"c0", "P"});
    }
  }
  std::vector<std::string> outs{"Y", "Y_h"};
  if (c.op == "LSTM") outs.push_back("Y_c");
  onnx::NodeProto& n = m.node(c.op, ins, outs, "cell");
  set_int(n, "hidden_size", c.H);
  set_string(n, "direction", c.direction);
  set_int(n, "layout", c.layout);
  if (c.op == "GRU") set_int(n, "linear_before_reset", c.linear_before_reset);
  if (c.clip) set_float(n, "clip", *c.clip);
  if (!c.acts.empty()) {
    auto* names = n.add_attribute();
    names->set_name("activations");
    names->set_type(onnx::AttributeProto_AttributeType_STRINGS);
    auto* alphas = n.add_attribute();
    alphas->set_name("activation_alpha");
    alphas->set_type(onnx::AttributeProto_AttributeType_FLOATS);
    auto* betas = n.add_attribute();
    betas->set_name("activation_beta");
    betas->set_type(onnx::AttributeProto_AttributeType_FLOATS);
    for (const Act& a : c.acts) {
      names->add_strings(a.name);
      // Consumed in order by the functions that take them.
      if (a.name == "Affine" || a.name == "LeakyRelu" || a.name == "ThresholdedRelu" ||
          a.name == "ScaledTanh" || a.name == "HardSigmoid" || a.name == "Elu")
        alphas->add_floats(static_cast<float>(a.alpha));
      if (a.name == "Affine" || a.name == "ScaledTanh" || a.name == "HardSigmoid")
        betas->add_floats(static_cast<float>(a.beta));
    }
  }
  for (const std::string& o : outs) m.output(o);
  return m;
}

void check_close(const Tensor& got, const std::vector<int64_t>& onnx_shape, const Vec& want) {
  REQUIRE(got.shape() == Shape(onnx_shape.rbegin(), onnx_shape.rend()));
  std::span<const double> g = got.span<const double>();
  for (size_t i = 0; i < want.size(); ++i) {
    CAPTURE(i);
    CHECK(std::abs(g[i] - want[i]) <= 1e-12 * (1 + std::abs(want[i])));
  }
}

// Imports the case, runs it and compares Y, Y_h (and Y_c) with the reference.
void check_case(const Case& c) {
  CAPTURE(c.op);
  CAPTURE(c.direction);
  CAPTURE(c.layout);
  CAPTURE(c.linear_before_reset);
  CAPTURE(c.optional_inputs);
  Inputs in = random_inputs(c, 17);
  TensorMap feed;
  Model m = model_of(c, in, &feed);
  std::vector<Tensor> out = run(m.import(), feed);
  Outputs want = reference(c, in);
  std::vector<int64_t> y = c.layout == 0 ? std::vector<int64_t>{c.S, c.D(), c.B, c.H}
                                         : std::vector<int64_t>{c.B, c.S, c.D(), c.H};
  REQUIRE(out.size() == (c.op == "LSTM" ? 3u : 2u));
  check_close(out[0], y, want.y);
  check_close(out[1], c.state_shape(), want.y_h);
  if (c.op == "LSTM") check_close(out[2], c.state_shape(), want.y_c);
}

const char* const kDirections[] = {"forward", "reverse", "bidirectional"};

}  // namespace

TEST_CASE("RNN, GRU and LSTM match ONNX's equations in each direction and both layouts") {
  for (const char* op : {"RNN", "GRU", "LSTM"}) {
    for (const char* direction : kDirections) {
      for (int layout : {0, 1}) {
        for (bool optional_inputs : {true, false}) {
          Case c(op, direction, layout);
          c.optional_inputs = optional_inputs;
          check_case(c);
          if (c.op == "GRU") {
            c.linear_before_reset = 1;
            check_case(c);
          }
        }
      }
    }
  }
}

TEST_CASE("the recurrent ops clip the activations' inputs and take ONNX's other activations") {
  for (const char* direction : kDirections) {
    Case rnn("RNN", direction, 1);
    rnn.clip = 0.5;
    check_case(rnn);
    rnn.acts = {{"Relu"}, {"LeakyRelu", 0.3}};
    if (rnn.D() == 1) rnn.acts.pop_back();
    check_case(rnn);
    Case gru("GRU", direction);
    gru.clip = 0.7;
    gru.acts = {{"HardSigmoid", 0.3, 0.4}, {"ScaledTanh", 1.5, 0.5}, {"Sigmoid"}, {"Softsign"}};
    if (gru.D() == 1) gru.acts.resize(2);
    check_case(gru);
    Case lstm("LSTM", direction);
    lstm.clip = 0.6;
    lstm.acts = {{"Sigmoid"},          {"Elu", 0.5},
                 {"Softplus"},         {"HardSigmoid", 0.1, 0.6},
                 {"Affine", 0.5, 0.1}, {"ThresholdedRelu", 0.2}};
    if (lstm.D() == 1) lstm.acts.resize(3);
    check_case(lstm);
  }
}

TEST_CASE("an activation's alpha and beta default to those of the ONNX op of its name") {
  Case c("GRU");
  c.acts = {{"LeakyRelu", 0.01}, {"HardSigmoid", 0.2, 0.5}};
  Inputs in = random_inputs(c, 5);
  TensorMap feed;
  Model m = model_of(c, in, &feed);
  onnx::NodeProto& n = *m.g().mutable_node(0);
  auto* attrs = n.mutable_attribute();
  attrs->erase(std::remove_if(attrs->begin(), attrs->end(),
                              [](const onnx::AttributeProto& a) {
                                return a.name() == "activation_alpha" ||
                                       a.name() == "activation_beta";
                              }),
               attrs->end());
  std::vector<Tensor> out = run(m.import(), feed);
  check_close(out[1], c.state_shape(), reference(c, in).y_h);
}

TEST_CASE("a constant sequence_lens of seq_length everywhere imports; other lengths are refused") {
  auto model = [](std::vector<int64_t> lens, bool constant) {
    Model m(14);
    m.input("X", {3, 2, 1});
    m.input("W", {1, 4, 1});
    m.input("R", {1, 4, 1});
    if (constant)
      m.ints_initializer("lens", lens);
    else
      m.input("lens", {2}, onnx::TensorProto_DataType_INT64);
    set_int(m.node("LSTM", {"X", "W", "R", "", "lens"}, {"Y"}, "l"), "hidden_size", 1);
    m.output("Y");
    return m;
  };
  CHECK(model({3, 3}, true).import().tape.ops.size() > 0);
  CHECK(import_error(model({3, 2}, true)) ==
        "m.onnx: node 1 'l' (LSTM, opset 14): sequence_lens has a length 2 where seq_length is "
        "3: sequences of varying length are not supported");
  CHECK_THROWS_AS(model({3, 2}, true).import(), UnsupportedError);
  CHECK(import_error(model({3}, true)) ==
        "m.onnx: node 1 'l' (LSTM, opset 14): sequence_lens has 1 lengths for a batch of 2");
  std::string dynamic = import_error(model({}, false));
  CHECK(dynamic.find("input 5 'lens' must be static") != std::string::npos);
  CHECK(dynamic.find("sequence_lens must be a constant equal to seq_length") != std::string::npos);
}

TEST_CASE("bad recurrent nodes are one error naming the node") {
  auto lstm = [](std::vector<int64_t> w_shape) {
    Model m(14);
    m.input("X", {3, 2, 1});
    m.input("W", w_shape);
    m.input("R", {1, 8, 2});
    return m;
  };
  Model wrong = lstm({1, 4, 1});
  set_int(wrong.node("LSTM", {"X", "W", "R"}, {"Y"}, "l"), "hidden_size", 2);
  wrong.output("Y");
  CHECK(import_error(wrong) ==
        "m.onnx: node 1 'l' (LSTM, opset 14): W has shape [1, 4, 1], not "
        "[1, 8, 1]");
  Model coupled = lstm({1, 8, 1});
  set_int(coupled.node("LSTM", {"X", "W", "R"}, {"Y"}, "l"), "input_forget", 1);
  coupled.output("Y");
  CHECK(import_error(coupled) ==
        "m.onnx: node 1 'l' (LSTM, opset 14): input_forget = 1 "
        "(coupled input and forget gates) is not supported");
  Model odd = lstm({1, 8, 1});
  onnx::NodeProto& n = odd.node("LSTM", {"X", "W", "R"}, {"Y"}, "l");
  set_string(n, "direction", "sideways");
  odd.output("Y");
  CHECK(import_error(odd) ==
        "m.onnx: node 1 'l' (LSTM, opset 14): direction is 'sideways', "
        "not forward, reverse or bidirectional");
  Model unknown = lstm({1, 8, 1});
  auto* a = unknown.node("LSTM", {"X", "W", "R"}, {"Y"}, "l").add_attribute();
  a->set_name("activations");
  a->set_type(onnx::AttributeProto_AttributeType_STRINGS);
  for (const char* f : {"Sigmoid", "Tanh", "Swish"}) a->add_strings(f);
  unknown.output("Y");
  CHECK(import_error(unknown) ==
        "m.onnx: node 1 'l' (LSTM, opset 14): activation 'Swish' is "
        "not one of the recurrent ops' functions");
}

TEST_CASE("an imported bidirectional LSTM's gradient agrees with finite differences") {
  Case c("LSTM", "bidirectional");
  Inputs in = random_inputs(c, 3);
  TensorMap feed;
  OnnxImport imported = model_of(c, in, &feed).import();
  check::GradcheckResult r = check::gradcheck(imported.tape, feed, {});
  CHECK(r.inputs.size() == 7);  // X, W, R, B, initial_h, initial_c, P
  CHECK_MESSAGE(r.ok, check::gradcheck_table(r));
}

}  // namespace ytape::onnx_test
