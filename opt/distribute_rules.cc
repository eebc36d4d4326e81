// The rules of `distribute` per primitive (opt/distribute_impl.h): how an op runs on
// values split across the ranks. An op without a rule, or whose rule declines, runs
// replicated on gathered arguments: always right, only slower.
#include <algorithm>
#include <array>

#include "opt/distribute_impl.h"
#include "tape/op_attrs.h"

namespace ytape::dist {

namespace {

// The first split argument's dim, or 0.
int split_dim(const Distributor& d, const Op& op) {
  for (Var a : op.args) {
    if (d.place(a).kind == Place::split) return d.place(a).dim;
  }
  return 0;
}

// Emits `op` on `args` with `attrs`; every output split along `dim`.
void emit_split(Distributor& d, const Op& op, VarList args, const Attrs& attrs, int dim) {
  const Op& now = d.b().record(op.prim, std::move(args), attrs);
  for (size_t i = 0; i < now.outs.size(); ++i) d.set(op.outs[i], now.outs[i], Place::along(dim));
}

bool summable(const Type& t) {
  return t.dtype == DType::f32 || t.dtype == DType::f64 || t.dtype == DType::i64;
}

// Elementwise, with broadcasting: arguments with the split dim take their block of it;
// those that broadcast along it (extent 1) are whole.
bool elementwise(Distributor& d, const Op& op) {
  const int dim = split_dim(d, op);
  if (dim == 0) return false;
  VarList args;
  for (Var a : op.args) args.push_back(d.extent(a, dim) == 1 ? d.replicated(a) : d.split(a, dim));
  emit_split(d, op, std::move(args), op.attrs, dim);
  return true;
}

// sum, maximum, minimum over `dims` (dropped): across the split dim, each rank's result
// is a part, summed (or maxed) over the ranks.
bool reduce(Distributor& d, const Op& op) {
  const Var x = op.args[0];
  if (d.place(x).kind != Place::split) return false;
  const int dim = d.place(x).dim;
  std::vector<int64_t> dims = op.prim == Prim::sum       ? attrs_of<Prim::sum>(op.attrs).dims
                              : op.prim == Prim::maximum ? attrs_of<Prim::maximum>(op.attrs).dims
                                                         : attrs_of<Prim::minimum>(op.attrs).dims;
  const bool across = std::find(dims.begin(), dims.end(), dim) != dims.end();
  if (across) {
    if (!summable(d.old().type(x))) return false;
    const Var part = d.b().record(op.prim, {d.split(x, dim)}, op.attrs).outs[0];
    if (op.prim == Prim::sum) {
      d.set_partial(op.outs[0], part);
    } else {
      d.set_reduced(op.outs[0], part, op.prim == Prim::maximum ? "max" : "min");
    }
    return true;
  }
  const int dropped = static_cast<int>(
      std::count_if(dims.begin(), dims.end(), [dim](int64_t k) { return k < dim; }));
  emit_split(d, op, {d.split(x, dim)}, op.attrs, dim - dropped);
  return true;
}

// softmax and log_softmax keep the shape; argmax drops its dim. Across the split dim they
// run replicated.
bool normalize(Distributor& d, const Op& op) {
  const Var x = op.args[0];
  if (d.place(x).kind != Place::split) return false;
  const int dim = d.place(x).dim;
  if (op.prim == Prim::argmax) {
    const int64_t k = attrs_of<Prim::argmax>(op.attrs).dim;
    if (k == dim) return false;
    emit_split(d, op, {d.split(x, dim)}, op.attrs, k < dim ? dim - 1 : dim);
    return true;
  }
  const auto& dims = op.prim == Prim::softmax ? attrs_of<Prim::softmax>(op.attrs).dims
                                              : attrs_of<Prim::log_softmax>(op.attrs).dims;
  if (std::find(dims.begin(), dims.end(), dim) != dims.end()) return false;
  emit_split(d, op, {d.split(x, dim)}, op.attrs, dim);
  return true;
}

// A reshape keeps a split of the last dim, the slowest, when its new last dim is a
// multiple of the ranks: each rank's block is then a block of that dim too.
bool reshape(Distributor& d, const Op& op) {
  const Var x = op.args[0];
  const Place p = d.place(x);
  auto at = attrs_of<Prim::reshape>(op.attrs);
  if (p.kind != Place::split || p.dim != d.old().type(x).rank() || at.shape.empty() ||
      at.shape.back() % d.ranks() != 0) {
    return false;
  }
  at.shape.back() /= d.ranks();
  emit_split(d, op, {d.split(x, p.dim)}, at.to_attrs(), static_cast<int>(at.shape.size()));
  return true;
}

bool permutedims(Distributor& d, const Op& op) {
  const Var x = op.args[0];
  const Place p = d.place(x);
  if (p.kind != Place::split) return false;
  const auto& perm = attrs_of<Prim::permutedims>(op.attrs).perm;
  const int out = static_cast<int>(std::find(perm.begin(), perm.end(), p.dim) - perm.begin()) + 1;
  emit_split(d, op, {d.split(x, p.dim)}, op.attrs, out);
  return true;
}

bool broadcast_to(Distributor& d, const Op& op) {
  const Var x = op.args[0];
  const Place p = d.place(x);
  if (p.kind != Place::split) return false;
  auto at = attrs_of<Prim::broadcast_to>(op.attrs);
  at.shape[p.dim - 1] /= d.ranks();
  emit_split(d, op, {d.split(x, p.dim)}, at.to_attrs(), p.dim);
  return true;
}

// A slice that keeps all of the split dim.
bool slice(Distributor& d, const Op& op) {
  const Var x = op.args[0];
  const Place p = d.place(x);
  if (p.kind != Place::split) return false;
  auto at = attrs_of<Prim::slice>(op.attrs);
  const size_t k = static_cast<size_t>(p.dim - 1);
  if (at.start[k] != 1 || at.step[k] != 1 || at.stop[k] != d.extent(x, p.dim)) return false;
  at.stop[k] /= d.ranks();
  emit_split(d, op, {d.split(x, p.dim)}, at.to_attrs(), p.dim);
  return true;
}

bool concat(Distributor& d, const Op& op) {
  const int dim = split_dim(d, op);
  if (dim == 0 || attrs_of<Prim::concat>(op.attrs).dim == dim) return false;
  VarList args;
  for (Var a : op.args) args.push_back(d.split(a, dim));
  emit_split(d, op, std::move(args), op.attrs, dim);
  return true;
}

bool pad(Distributor& d, const Op& op) {
  const Var x = op.args[0];
  const Place p = d.place(x);
  if (p.kind != Place::split) return false;
  const auto at = attrs_of<Prim::pad>(op.attrs);
  const size_t k = static_cast<size_t>(p.dim - 1);
  if (at.lo[k] != 0 || at.hi[k] != 0 || at.interior[k] != 0) return false;
  emit_split(d, op, {d.split(x, p.dim)}, op.attrs, p.dim);
  return true;
}

bool pass_through(Distributor& d, const Op& op) {
  const Place p = d.place(op.args[0]);
  if (p.kind != Place::split) return false;
  emit_split(d, op, {d.split(op.args[0], p.dim)}, op.attrs, p.dim);
  return true;
}

// matmul: A (m x k) times B (k x n), either stored transposed, over batch dims 3.. that
// both have. A split batch dim splits both and the result (attention's heads and
// sequences); for matrices, a split m or n splits the result and a split k on both sides
// makes each rank's product a part of the sum.
bool matmul(Distributor& d, const Op& op) {
  const Var a = op.args[0], b = op.args[1];
  const int batch = split_dim(d, op);
  if (batch >= 3) {
    emit_split(d, op, {d.split(a, batch), d.split(b, batch)}, op.attrs, batch);
    return true;
  }
  if (d.old().type(a).rank() != 2 || d.old().type(b).rank() != 2) return false;
  const auto at = attrs_of<Prim::matmul>(op.attrs);
  const int a_m = at.transpose_a ? 2 : 1, a_k = 3 - a_m;
  const int b_k = at.transpose_b ? 2 : 1, b_n = 3 - b_k;
  const Place pa = d.place(a), pb = d.place(b);
  const bool sa = pa.kind == Place::split, sb = pb.kind == Place::split;
  if (sa && pa.dim == a_k && (!sb || pb.dim == b_k)) {
    if (!summable(d.old().type(op.outs[0]))) return false;
    const Var part = d.b().record(op.prim, {d.split(a, a_k), d.split(b, b_k)}, op.attrs).outs[0];
    d.set_partial(op.outs[0], part);
    return true;
  }
  if (sb && pb.dim == b_k && !sa) {
    if (!summable(d.old().type(op.outs[0]))) return false;
    const Var part = d.b().record(op.prim, {d.split(a, a_k), d.split(b, b_k)}, op.attrs).outs[0];
    d.set_partial(op.outs[0], part);
    return true;
  }
  if (sa && pa.dim == a_m) {
    emit_split(d, op, {d.split(a, a_m), d.replicated(b)}, op.attrs, 1);
    return true;
  }
  if (sb && pb.dim == b_n) {
    emit_split(d, op, {d.replicated(a), d.split(b, b_n)}, op.attrs, 2);
    return true;
  }
  return false;
}

// attention and attention_backward: a split slice dim (3..) splits every tensor along it
// but the mask, which every slice shares; an lse (the forward's second output, the
// backward's sixth argument), without the features' dim, along the dim before it.
bool attention(Distributor& d, const Op& op) {
  auto lse_like = [](size_t i) { return i == 5; };
  int batch = 0;
  for (size_t i = 0; i < op.args.size(); ++i) {
    const Place p = d.place(op.args[i]);
    if (i == 3 || p.kind != Place::split) continue;
    const int dim = lse_like(i) ? p.dim + 1 : p.dim;
    if (dim < 3 || (batch != 0 && dim != batch)) return false;
    batch = dim;
  }
  if (batch == 0) return false;
  VarList args;
  for (size_t i = 0; i < op.args.size(); ++i) {
    if (i == 3) {
      args.push_back(d.replicated(op.args[i]));
    } else {
      args.push_back(d.split(op.args[i], lse_like(i) ? batch - 1 : batch));
    }
  }
  const Op& now = d.b().record(op.prim, std::move(args), op.attrs);
  for (size_t k = 0; k < now.outs.size(); ++k) {
    const bool lse = op.prim == Prim::attention && k == 1;
    d.set(op.outs[k], now.outs[k], Place::along(lse ? batch - 1 : batch));
  }
  return true;
}

// Ops on images (WHCN) that treat each image alone: split along N, the 4th dim, the other
// arguments (weights) whole. `shape` attributes name the global batch: each rank's is its
// block's.
template <Prim P>
Attrs local_shape(const Op& op, int ranks) {
  auto at = attrs_of<P>(op.attrs);
  at.shape[3] /= ranks;
  return at.to_attrs();
}

bool per_image(Distributor& d, const Op& op) {
  const Var x = op.args[0];
  if (d.place(x).kind != Place::split || d.place(x).dim != 4) return false;
  VarList args{d.split(x, 4)};
  for (size_t i = 1; i < op.args.size(); ++i) {
    // max_pool2d_backward's positions are split as the gradient is; a weight is whole.
    const bool batch =
        d.old().type(op.args[i]).rank() == 4 && d.extent(op.args[i], 4) == d.extent(x, 4);
    args.push_back(batch && op.prim == Prim::max_pool2d_backward ? d.split(op.args[i], 4)
                                                                 : d.replicated(op.args[i]));
  }
  Attrs attrs = op.attrs;
  if (op.prim == Prim::conv2d_backward_input) {
    attrs = local_shape<Prim::conv2d_backward_input>(op, d.ranks());
  } else if (op.prim == Prim::max_pool2d_backward) {
    attrs = local_shape<Prim::max_pool2d_backward>(op, d.ranks());
  } else if (op.prim == Prim::avg_pool2d_backward) {
    attrs = local_shape<Prim::avg_pool2d_backward>(op, d.ranks());
  }
  emit_split(d, op, std::move(args), attrs, 4);
  return true;
}

// The filter's gradient sums over the images: each rank's is a part.
bool conv2d_backward_filter(Distributor& d, const Op& op) {
  const Var x = op.args[0], dy = op.args[1];
  if (d.place(x).kind != Place::split && d.place(dy).kind != Place::split) return false;
  if (!summable(d.old().type(op.outs[0]))) return false;
  const Var part = d.b().record(op.prim, {d.split(x, 4), d.split(dy, 4)}, op.attrs).outs[0];
  d.set_partial(op.outs[0], part);
  return true;
}

// The block of `v` along `dim`, or all of it where it broadcasts along `dim`.
Var block_or_whole(Distributor& d, Var v, int dim) {
  return d.extent(v, dim) == 1 ? d.replicated(v) : d.split(v, dim);
}

// Both arguments' blocks along `along` (whole where they broadcast along it), the result
// split so; returns true, the rule having applied.
bool emit_blocks(Distributor& d, const Op& op, int along) {
  emit_split(d, op, {block_or_whole(d, op.args[0], along), block_or_whole(d, op.args[1], along)},
             op.attrs, along);
  return true;
}

// gather(x, idx; dim): split along another dim, x and idx take their blocks: the labels'
// scores of a batch. Split along `dim` itself, only idx may be (x whole): the rows it picks
// are split, as the embeddings of a batch of tokens.
bool gather(Distributor& d, const Op& op) {
  const Var x = op.args[0], idx = op.args[1];
  const int dim = static_cast<int>(attrs_of<Prim::gather>(op.attrs).dim);
  const int along = split_dim(d, op);
  if (along == 0) return false;
  if (along != dim) return emit_blocks(d, op, along);
  if (d.place(x).kind == Place::split) return false;
  emit_split(d, op, {d.replicated(x), d.split(idx, dim)}, op.attrs, dim);
  return true;
}

// scatter_add(y, idx; dim, size), gather's transpose: split along another dim, a block of
// the result; split along `dim`, each rank adds its block's rows into the whole result,
// a part of the sum (an embedding table's gradient).
bool scatter_add(Distributor& d, const Op& op) {
  const Var y = op.args[0], idx = op.args[1];
  const int dim = static_cast<int>(attrs_of<Prim::scatter_add>(op.attrs).dim);
  const int along = split_dim(d, op);
  if (along == 0) return false;
  if (along != dim) return emit_blocks(d, op, along);
  if (!summable(d.old().type(op.outs[0]))) return false;
  const Var part = d.b().record(op.prim, {d.split(y, dim), d.split(idx, dim)}, op.attrs).outs[0];
  d.set_partial(op.outs[0], part);
  return true;
}

std::array<Rule, kNumPrims> make_rules() {
  std::array<Rule, kNumPrims> rules{};
  for (int i = 0; i < kNumPrims; ++i) {
    const Prim p = static_cast<Prim>(i);
    if (prim_info(p).elementwise()) rules[i] = elementwise;
  }
  auto set = [&](Prim p, Rule r) { rules[static_cast<int>(p)] = r; };
  set(Prim::sum, reduce);
  set(Prim::maximum, reduce);
  set(Prim::minimum, reduce);
  set(Prim::argmax, normalize);
  set(Prim::softmax, normalize);
  set(Prim::log_softmax, normalize);
  set(Prim::reshape, reshape);
  set(Prim::permutedims, permutedims);
  set(Prim::broadcast_to, broadcast_to);
  set(Prim::slice, slice);
  set(Prim::concat, concat);
  set(Prim::pad, pad);
  set(Prim::stop_gradient, pass_through);
  set(Prim::matmul, matmul);
  set(Prim::attention, attention);
  set(Prim::attention_backward, attention);
  set(Prim::gather, gather);
  set(Prim::scatter_add, scatter_add);
  for (Prim p :
       {Prim::conv2d, Prim::conv2d_backward_input, Prim::max_pool2d, Prim::max_pool2d_with_indices,
        Prim::max_pool2d_backward, Prim::avg_pool2d, Prim::avg_pool2d_backward}) {
    set(p, per_image);
  }
  set(Prim::conv2d_backward_filter, conv2d_backward_filter);
  register_norm_rules(rules);
  return rules;
}

}  // namespace

Rule rule_of(Prim p) {
  static const std::array<Rule, kNumPrims> rules = make_rules();
  return rules[static_cast<int>(p)];
}

}  // namespace ytape::dist
