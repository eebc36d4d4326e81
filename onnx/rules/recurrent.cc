// RNN, GRU and LSTM, unrolled over their static sequence length. Per direction, the input
// projection X W' (plus the biases) is one matmul over every step at once; then, step by
// step, a matmul with R, the gates' activations and the elementwise updates; the steps'
// hidden states are concatenated into Y. Gradients come from those primitives' rules.
//
// Tape shapes are ONNX's reversed: X [S, B, I] is (I, B, S), W [D, G H, I] is (I, G H, D),
// so one direction's W is the (I, G H) matrix W' and X W' is matmul(W, X) with W transposed.
// A step's states h and c are (H, B); its gates' pre-activations (G H, B), gate k the rows
// k H + 1 .. (k + 1) H.
#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <vector>

#include "onnx/importer.h"
#include "onnx/rules/arith.h"
#include "tape/attrs.h"

namespace ytape::onnx_import {

namespace {

// Every step is unrolled into ops: a longer sequence is refused rather than built into a
// tape of millions of ops.
constexpr int64_t kMaxSteps = 4096;

enum class Cell { rnn, gru, lstm };

struct Activation {
  std::string name;  // lower case
  double alpha = 0, beta = 0;
};

// What the node says, checked against its inputs' shapes.
struct Spec {
  Cell cell = Cell::rnn;
  int gates = 1;  // 1, 3 (GRU: z, r, h) or 4 (LSTM: i, o, f, c)
  int64_t steps = 0, batch = 0, input = 0, hidden = 0;
  int directions = 1;
  bool reverse = false;      // direction "reverse" (its one direction runs backwards)
  bool batch_first = false;  // layout 1
  bool linear_before_reset = false;
  std::optional<double> clip;
  std::vector<Activation> acts;  // per direction: f (, g (, h))
  DType dtype = DType::f32;
};

// One direction's weights and states, as tape vars.
struct Direction {
  Var w, r, r_h;  // (I, G H), (H, G H); GRU: r is (H, 2 H) for z and r, r_h (H, H)
  std::optional<Var> bias, rb_h, p_i, p_o, p_f;
  Var h, c;
  std::vector<Var> hs;  // the hidden state after each step, in time order
};

std::string onnx_shape_str(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

// ---- activations ---------------------------------------------------------------------

// Which of alpha and beta each activation takes, and their defaults: those of the ONNX ops
// of the same name (Affine's and ScaledTanh's from ONNX's experimental ops).
struct ActivationInfo {
  const char* name;
  bool alpha, beta;
  std::optional<double> alpha0, beta0;
};
const ActivationInfo kActivations[] = {
    {"relu", false, false, {}, {}},       {"tanh", false, false, {}, {}},
    {"sigmoid", false, false, {}, {}},    {"affine", true, true, 1.0, 0.0},
    {"leakyrelu", true, false, 0.01, {}}, {"thresholdedrelu", true, false, 1.0, {}},
    {"scaledtanh", true, true, {}, {}},   {"hardsigmoid", true, true, 0.2, 0.5},
    {"elu", true, false, 1.0, {}},        {"softsign", false, false, {}, {}},
    {"softplus", false, false, {}, {}},
};

std::vector<double> attr_floats(const Node& n, std::string_view name) {
  std::vector<double> out;
  if (const onnx::AttributeProto* a = find_attr(n, name)) {
    for (float f : a->floats()) out.push_back(std::stod(float32_str(f)));
  }
  return out;
}

// The activations by name, each taking the next of activation_alpha (activation_beta)
// when it has an alpha (a beta), in order, else its default.
std::vector<Activation> read_activations(const Node& n, std::vector<std::string> names) {
  if (const onnx::AttributeProto* a = find_attr(n, "activations")) {
    if (static_cast<size_t>(a->strings_size()) != names.size())
      user_error("activations lists {} functions, not {}", a->strings_size(), names.size());
    names.assign(a->strings().begin(), a->strings().end());
  }
  std::vector<double> alphas = attr_floats(n, "activation_alpha");
  std::vector<double> betas = attr_floats(n, "activation_beta");
  size_t next_alpha = 0, next_beta = 0;
  std::vector<Activation> acts;
  for (const std::string& given : names) {
    std::string name = given;
    for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    const ActivationInfo* info = nullptr;
    for (const ActivationInfo& i : kActivations) info = name == i.name ? &i : info;
    if (!info) user_error("activation '{}' is not one of the recurrent ops' functions", given);
    Activation act{name};
    if (info->alpha) {
      std::optional<double> v = next_alpha < alphas.size() ? alphas[next_alpha++] : info->alpha0;
      if (!v) user_error("activation '{}' needs its alpha in activation_alpha", given);
      act.alpha = *v;
    }
    if (info->beta) {
      std::optional<double> v = next_beta < betas.size() ? betas[next_beta++] : info->beta0;
      if (!v) user_error("activation '{}' needs its beta in activation_beta", given);
      act.beta = *v;
    }
    acts.push_back(act);
  }
  return acts;
}

using arith::add, arith::k, arith::mul;

// The activation of x, clipped to [-clip, clip] first when the node has a clip.
Var activate(Importer& im, const Spec& s, const Activation& a, Var x) {
  if (s.clip) x = im.op<Prim::min>({im.op<Prim::max>({x, k(im, x, -*s.clip)}), k(im, x, *s.clip)});
  const std::string& f = a.name;
  if (f == "relu") return im.op<Prim::relu>({x});
  if (f == "tanh") return im.op<Prim::tanh>({x});
  if (f == "sigmoid") return im.op<Prim::sigmoid>({x});
  if (f == "softplus") return im.op<Prim::softplus>({x});
  // One op per statement where two would be arguments of one call (C++ leaves their order
  // open; the tape's must not depend on the compiler).
  auto affine = [&] {
    Var ax = mul(im, x, k(im, x, a.alpha));
    return add(im, ax, k(im, x, a.beta));
  };
  if (f == "affine") return affine();
  if (f == "scaledtanh") {
    Var t = im.op<Prim::tanh>({mul(im, x, k(im, x, a.beta))});
    return mul(im, k(im, x, a.alpha), t);
  }
  if (f == "hardsigmoid")
    return im.op<Prim::min>({im.op<Prim::max>({affine(), k(im, x, 0)}), k(im, x, 1)});
  if (f == "softsign") {
    Var one = k(im, x, 1);
    return im.op<Prim::div>({x, add(im, one, im.op<Prim::abs>({x}))});
  }
  if (f == "thresholdedrelu")
    return im.op<Prim::select>({im.op<Prim::ge>({x, k(im, x, a.alpha)}), x, k(im, x, 0)});
  // leakyrelu, elu: x if x >= 0, else alpha x or alpha (e^x - 1)
  Var neg = f == "elu" ? im.op<Prim::expm1>({x}) : x;
  return im.op<Prim::select>(
      {im.op<Prim::lt>({x, k(im, x, 0)}), mul(im, neg, k(im, x, a.alpha)), x});
}

// ---- reading the node ----------------------------------------------------------------

// Input `i`, which must have the ONNX shape `want` and the dtype of X.
Var checked_input(Importer& im, const Node& n, int i, const Spec& s, const Shape& want,
                  const char* what) {
  Var v = im.input(n, i);
  if (im.onnx_shape(v) != want) {
    user_error("{} has shape {}, not {}", what, onnx_shape_str(im.onnx_shape(v)),
               onnx_shape_str(want));
  }
  if (im.type(v).dtype != s.dtype)
    user_error("{} is {}, X is {}", what, dtype_name(im.type(v).dtype), dtype_name(s.dtype));
  return v;
}

// The sizes from X and R, the attributes, checked.
Spec read_spec(Importer& im, const Node& n, Cell cell) {
  Spec s;
  s.cell = cell;
  s.gates = cell == Cell::rnn ? 1 : cell == Cell::gru ? 3 : 4;
  Var x = im.input(n, 0), r = im.input(n, 2);
  s.dtype = im.type(x).dtype;
  if (s.dtype != DType::f32 && s.dtype != DType::f64)
    user_error("X is {}, not a float type", dtype_name(s.dtype));
  Shape xs = im.onnx_shape(x), rs = im.onnx_shape(r);
  if (xs.size() != 3) user_error("X has shape {}, not one of rank 3", onnx_shape_str(xs));
  if (rs.size() != 3) user_error("R has shape {}, not one of rank 3", onnx_shape_str(rs));
  int64_t layout = attr_int(n, "layout", 0);
  if (layout != 0 && layout != 1) user_error("layout is {}, not 0 or 1", layout);
  s.batch_first = layout == 1;
  s.steps = xs[s.batch_first ? 1 : 0], s.batch = xs[s.batch_first ? 0 : 1], s.input = xs[2];
  s.hidden = attr_int(n, "hidden_size", rs[2]);
  if (s.hidden <= 0 || s.hidden > (int64_t{1} << 40))
    user_error("hidden_size is {}, not a positive size", s.hidden);
  if (s.steps < 1 || s.steps > kMaxSteps) {
    throw UnsupportedError(
        fmt::format("a sequence of {} steps is not supported: ytape unrolls 1 to {} steps", s.steps,
                    kMaxSteps));
  }
  std::string direction = attr_string(n, "direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    user_error("direction is '{}', not forward, reverse or bidirectional", direction);
  s.directions = direction == "bidirectional" ? 2 : 1;
  s.reverse = direction == "reverse";
  if (find_attr(n, "clip")) {
    s.clip = attr_float(n, "clip", 0);
    if (!(*s.clip > 0)) user_error("clip is {}, not a positive threshold", *s.clip);
  }
  s.linear_before_reset = cell == Cell::gru && attr_int(n, "linear_before_reset", 0) != 0;
  if (cell == Cell::lstm && attr_int(n, "input_forget", 0) != 0)
    unsupported("input_forget = 1 (coupled input and forget gates)");
  std::vector<std::string> names{"Sigmoid", "Tanh", "Tanh"};  // LSTM's f, g, h
  if (cell == Cell::rnn) names = {"Tanh"};
  if (cell == Cell::gru) names = {"Sigmoid", "Tanh"};
  std::vector<std::string> both = names;
  if (s.directions == 2) both.insert(both.end(), names.begin(), names.end());
  s.acts = read_activations(n, both);
  return s;
}

// sequence_lens, when given, must be static and seq_length for every sequence: the
// recurrence is unrolled to that length for all.
void check_sequence_lens(Importer& im, const Node& n, const Spec& s) {
  if (!im.has_input(n, 4)) return;
  std::vector<int64_t> lens;
  try {
    lens = im.static_ints(n, 4);
  } catch (const UnsupportedError& e) {
    throw UnsupportedError(std::string(e.what()) +
                               "; sequences of varying length are not supported, so "
                               "sequence_lens must be a constant equal to seq_length",
                           e.needs_static());
  }
  if (static_cast<int64_t>(lens.size()) != s.batch)
    user_error("sequence_lens has {} lengths for a batch of {}", lens.size(), s.batch);
  for (int64_t len : lens) {
    if (len != s.steps) {
      throw UnsupportedError(fmt::format(
          "sequence_lens has a length {} where seq_length is {}: sequences of varying length "
          "are not supported",
          len, s.steps));
    }
  }
}

// ---- building ------------------------------------------------------------------------

// Entry `d` of ytape dim `dim`, that dim dropped.
Var pick(Importer& im, Var x, int dim, int64_t d) {
  Var y = im.slice(x, dim, d, 1);
  Shape s = im.type(y).shape;
  s.erase(s.begin() + dim - 1);
  return im.reshape(y, s);
}

// The initial state (input `i`): direction d's (H, B) slice, or zeros.
Var initial_state(Importer& im, const Node& n, int i, const Spec& s, int d, const char* what) {
  if (!im.has_input(n, i)) {
    return im.op<Prim::fill>({}, {.value = 0, .dtype = s.dtype, .shape = {s.hidden, s.batch}});
  }
  Shape want = s.batch_first ? Shape{s.batch, s.directions, s.hidden}
                             : Shape{s.directions, s.batch, s.hidden};
  // Tape shape (H, B, D), or (H, D, B) with layout 1.
  return pick(im, checked_input(im, n, i, s, want, what), s.batch_first ? 2 : 3, d);
}

// Direction d's weights, biases and initial states.
Direction load_direction(Importer& im, const Node& n, const Spec& s, int d) {
  const int64_t H = s.hidden, GH = s.gates * H;
  Direction dir;
  dir.w = pick(im, checked_input(im, n, 1, s, {s.directions, GH, s.input}, "W"), 3, d);
  Var r = pick(im, checked_input(im, n, 2, s, {s.directions, GH, H}, "R"), 3, d);
  dir.r = s.cell == Cell::gru ? im.slice(r, 2, 0, 2 * H) : r;
  if (s.cell == Cell::gru) dir.r_h = im.slice(r, 2, 2 * H, H);
  if (im.has_input(n, 3)) {
    Var b = pick(im, checked_input(im, n, 3, s, {s.directions, 2 * GH}, "B"), 2, d);
    Var wb = im.slice(b, 1, 0, GH), rb = im.slice(b, 1, GH, GH);
    if (s.linear_before_reset) {
      // Rbh is added inside r (.) (...); the others go with X W'.
      dir.rb_h = im.slice(rb, 1, 2 * H, H);
      rb = im.op<Prim::pad>({im.slice(rb, 1, 0, 2 * H)}, {.lo = {0}, .hi = {H}, .interior = {0}});
    }
    dir.bias = add(im, wb, rb);
  }
  if (s.cell == Cell::lstm && im.has_input(n, 7)) {
    Var p = pick(im, checked_input(im, n, 7, s, {s.directions, 3 * H}, "P"), 2, d);
    dir.p_i = im.slice(p, 1, 0, H), dir.p_o = im.slice(p, 1, H, H);
    dir.p_f = im.slice(p, 1, 2 * H, H);
  }
  dir.h = initial_state(im, n, 5, s, d, "initial_h");  // input 6 of each of the three
  if (s.cell == Cell::lstm) dir.c = initial_state(im, n, 6, s, d, "initial_c");
  return dir;
}

// Rows of gate `g` of pre-activations (G H, B).
Var gate(Importer& im, const Spec& s, Var pre, int g) {
  return im.slice(pre, 1, g * s.hidden, s.hidden);
}
Var recurrent(Importer& im, Var r, Var h) {
  return im.op<Prim::matmul>({r, h}, {.transpose_a = true});
}
// x + p (.) c with p a peephole (H), broadcast over the batch.
Var peep(Importer& im, Var x, const std::optional<Var>& p, Var c) {
  return p ? add(im, x, mul(im, *p, c)) : x;
}

// One step of direction `d` on the input projection xw (G H, B) of its time step.
void step(Importer& im, const Spec& s, int d, Direction& dir, Var xw) {
  const Activation* act = &s.acts[d * (s.acts.size() / s.directions)];
  if (s.cell == Cell::rnn) {
    dir.h = activate(im, s, act[0], add(im, xw, recurrent(im, dir.r, dir.h)));
    return;
  }
  if (s.cell == Cell::lstm) {
    Var pre = add(im, xw, recurrent(im, dir.r, dir.h));
    Var i = activate(im, s, act[0], peep(im, gate(im, s, pre, 0), dir.p_i, dir.c));
    Var f = activate(im, s, act[0], peep(im, gate(im, s, pre, 2), dir.p_f, dir.c));
    Var cell = activate(im, s, act[1], gate(im, s, pre, 3));
    Var kept = mul(im, f, dir.c);
    dir.c = add(im, kept, mul(im, i, cell));
    Var o = activate(im, s, act[0], peep(im, gate(im, s, pre, 1), dir.p_o, dir.c));
    dir.h = mul(im, o, activate(im, s, act[2], dir.c));
    return;
  }
  Var xzr = im.slice(xw, 1, 0, 2 * s.hidden);
  Var zr = add(im, xzr, recurrent(im, dir.r, dir.h));
  Var z = activate(im, s, act[0], gate(im, s, zr, 0));
  Var r = activate(im, s, act[0], gate(im, s, zr, 1));
  Var pre = gate(im, s, xw, 2);
  if (s.linear_before_reset) {
    Var rec = recurrent(im, dir.r_h, dir.h);
    if (dir.rb_h) rec = add(im, rec, *dir.rb_h);
    pre = add(im, pre, mul(im, r, rec));
  } else {
    pre = add(im, pre, recurrent(im, dir.r_h, mul(im, r, dir.h)));
  }
  Var hh = activate(im, s, act[1], pre);
  Var keep = im.op<Prim::sub>({k(im, z, 1), z});
  Var fresh = mul(im, keep, hh);
  dir.h = add(im, fresh, mul(im, z, dir.h));
}

// Runs direction d over the sequence x, the tape's (I, B S) with step t's batch the
// columns t B + 1 .. (t + 1) B.
void run_direction(Importer& im, const Spec& s, int d, Direction& dir, Var x) {
  Var xw = im.op<Prim::matmul>({dir.w, x}, {.transpose_a = true});  // (G H, B S)
  if (dir.bias) xw = add(im, xw, *dir.bias);
  bool backwards = s.reverse || d == 1;
  dir.hs.assign(s.steps, Var{});
  for (int64_t i = 0; i < s.steps; ++i) {
    int64_t t = backwards ? s.steps - 1 - i : i;
    step(im, s, d, dir, im.slice(xw, 2, t * s.batch, s.batch));
    dir.hs[t] = dir.h;
  }
}

// Y, Y_h and Y_c from each direction's states, in the node's layout.
void set_outputs(Importer& im, const Node& n, const Spec& s, const std::vector<Direction>& dirs) {
  const int64_t H = s.hidden, B = s.batch;
  // Tape shapes: Y (H, B, D, S) or (H, D, S, B); Y_h and Y_c (H, B, D) or (H, D, B).
  int dir_dim = s.batch_first ? 2 : 3;
  Shape state = s.batch_first ? Shape{H, 1, B} : Shape{H, B, 1};
  std::vector<Var> ys, hs, cs;
  for (const Direction& dir : dirs) {
    Var y = im.op<Prim::concat>(dir.hs, {.dim = 2});  // (H, B S)
    if (s.batch_first) {
      y = im.op<Prim::permutedims>({im.reshape(y, {H, B, s.steps})}, {.perm = {1, 3, 2}});
      ys.push_back(im.reshape(y, {H, 1, s.steps, B}));
    } else {
      ys.push_back(im.reshape(y, {H, B, 1, s.steps}));
    }
    hs.push_back(im.reshape(dir.h, state));
    if (s.cell == Cell::lstm) cs.push_back(im.reshape(dir.c, state));
  }
  auto joined = [&](const std::vector<Var>& parts, int dim) {
    return parts.size() == 1 ? parts[0] : im.op<Prim::concat>(parts, {.dim = dim});
  };
  im.set_output(n, 0, joined(ys, s.batch_first ? 2 : 3));
  im.set_output(n, 1, joined(hs, dir_dim));
  if (s.cell == Cell::lstm) im.set_output(n, 2, joined(cs, dir_dim));
}

template <Cell C>
void recurrence(Importer& im, const Node& n) {
  Spec s = read_spec(im, n, C);
  check_sequence_lens(im, n, s);
  Var x = im.input(n, 0);  // (I, B, S), or (I, S, B) with layout 1
  if (s.batch_first) x = im.op<Prim::permutedims>({x}, {.perm = {1, 3, 2}});
  x = im.reshape(x, {s.input, s.batch * s.steps});
  std::vector<Direction> dirs;
  for (int d = 0; d < s.directions; ++d) {
    dirs.push_back(load_direction(im, n, s, d));
    run_direction(im, s, d, dirs.back(), x);
  }
  set_outputs(im, n, s, dirs);
}

}  // namespace

void add_recurrent_rules(Rules& r) {
  r["RNN"] = recurrence<Cell::rnn>;
  r["GRU"] = recurrence<Cell::gru>;
  r["LSTM"] = recurrence<Cell::lstm>;
}

}  // namespace ytape::onnx_import
