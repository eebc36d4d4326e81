// Losses: NegativeLogLikelihoodLoss, and SoftmaxCrossEntropyLoss, which is the same over a
// log-softmax. Input (N, C, d1, ...) is, on the tape, (..., d1, C, N): the class dim is the
// second to last, which the targets (..., d1, N) index once they have a 1 there.
#include <optional>

#include "onnx/importer.h"

namespace ytape::onnx_import {

namespace {

// w[t] for every target t (0-based, in range): w as (1, C, 1), gathered along dim 2.
Var per_target(Importer& im, Var w, Var t1) {
  Shape ts = im.type(t1).shape;
  Var flat = im.reshape(t1, {1, im.type(t1).size(), 1});
  Var picked = im.op<Prim::gather>({im.reshape(w, {1, im.type(w).size(), 1}), flat}, {.dim = 2});
  return im.reshape(picked, ts);
}

// -input[n, t, d] * weight[t], 0 where t is ignore_index; reduced as `reduction` says.
Var nll(Importer& im, const Node& n, Var x, Var target, std::optional<Var> weight) {
  Shape xs = im.type(x).shape, ts = im.type(target).shape;
  int r = static_cast<int>(xs.size());
  if (r < 2 || static_cast<int>(ts.size()) != r - 1)
    user_error("the target's rank is not the input's - 1");
  Shape with_class = ts;
  with_class.insert(with_class.end() - 1, 1);  // (..., d1, 1, N)
  Var t = im.reshape(target, with_class);
  DType dt = im.type(x).dtype;
  const onnx::AttributeProto* ignore = find_attr(n, "ignore_index");
  Var ignored;
  if (ignore) {
    ignored = im.op<Prim::eq>({t, im.scalar(DType::i64, static_cast<double>(ignore->i()))});
    t = im.op<Prim::select>({ignored, im.scalar(DType::i64, 0), t});
  }
  Var t1 = im.op<Prim::add>({t, im.scalar(DType::i64, 1)});
  Var loss = im.op<Prim::neg>({im.op<Prim::gather>({x, t1}, {.dim = r - 1})});
  std::optional<Var> w;
  if (weight) w = per_target(im, *weight, t1);
  if (ignore) w = im.op<Prim::select>({ignored, im.scalar(dt, 0), w ? *w : im.scalar(dt, 1)});
  bool weighted = w.has_value();
  if (weighted) loss = im.op<Prim::mul>({loss, *w});
  std::string reduction = attr_string(n, "reduction", "mean");
  std::vector<int64_t> all;
  for (int d = 1; d <= r; ++d) all.push_back(d);
  if (reduction == "none") return im.reshape(loss, ts);
  Var sum = im.op<Prim::sum>({loss}, {.dims = all});
  if (reduction == "sum") return sum;
  if (reduction != "mean") user_error("reduction '{}' is none of none, sum, mean", reduction);
  if (!weighted)
    return im.op<Prim::div>({sum, im.scalar(dt, static_cast<double>(im.type(target).size()))});
  Var total = im.op<Prim::sum>({im.op<Prim::broadcast_to>({*w}, {.shape = im.type(loss).shape})},
                               {.dims = all});
  return im.op<Prim::div>({sum, total});
}

std::optional<Var> weight_of(Importer& im, const Node& n) {
  return im.has_input(n, 2) ? std::optional(im.input(n, 2)) : std::nullopt;
}

void nll_loss(Importer& im, const Node& n) {
  im.set_output(n, 0, nll(im, n, im.input(n, 0), im.input(n, 1), weight_of(im, n)));
}

// loss = nll(log_softmax(scores) over the classes), and log_prob, the log-softmax.
void softmax_cross_entropy(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  Var log_prob = im.op<Prim::log_softmax>({x}, {.dims = {im.rank(x) - 1}});
  im.set_output(n, 0, nll(im, n, log_prob, im.input(n, 1), weight_of(im, n)));
  im.set_output(n, 1, log_prob);
}

}  // namespace

void add_loss_rules(Rules& r) {
  r["NegativeLogLikelihoodLoss"] = nll_loss;
  r["SoftmaxCrossEntropyLoss"] = softmax_cross_entropy;
}

}  // namespace ytape::onnx_import
