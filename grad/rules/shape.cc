// VJP rules of the shape primitives. x: the argument; g: the output's cotangent.
#include "grad/rules.h"

namespace ytape::grad {

namespace {

using Dx = std::vector<Cotangent>;

// dx = reshape(g, shape of x)
Dx reshape_vjp(Builder& b, const RuleArgs& r) {
  return {b.reshape(*r.cots[0], {.shape = b.type(r.args[0]).shape})};
}

// dx = permutedims(g, inverse of perm)
Dx permutedims_vjp(Builder& b, const RuleArgs& r) {
  const std::vector<int64_t> perm = attrs_of<Prim::permutedims>(r.op.attrs).perm;
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[perm[i] - 1] = static_cast<int64_t>(i) + 1;
  return {b.permutedims(*r.cots[0], {.perm = std::move(inverse)})};
}

// dx = g, summed over the broadcast dims by the driver
Dx broadcast_to_vjp(Builder&, const RuleArgs& r) {
  return {*r.cots[0]};
}

// dx = g padded back into place: start-1 zeros before, step-1 between, the rest after
Dx slice_vjp(Builder& b, const RuleArgs& r) {
  const Shape in = b.type(r.args[0]).shape;
  const Shape out = b.type(r.outs[0]).shape;
  const auto attrs = attrs_of<Prim::slice>(r.op.attrs);
  const std::vector<int64_t>& start = attrs.start;
  const std::vector<int64_t>& step = attrs.step;
  std::vector<int64_t> lo(in.size()), hi(in.size()), interior(in.size());
  for (size_t d = 0; d < in.size(); ++d) {
    lo[d] = start[d] - 1;
    interior[d] = step[d] - 1;
    hi[d] = in[d] - lo[d] - out[d] - std::max<int64_t>(out[d] - 1, 0) * interior[d];
  }
  return {b.pad(*r.cots[0],
                {.lo = std::move(lo), .hi = std::move(hi), .interior = std::move(interior)})};
}

// dxᵢ = the slice of g along dim that xᵢ filled
Dx concat_vjp(Builder& b, const RuleArgs& r) {
  int64_t dim = attrs_of<Prim::concat>(r.op.attrs).dim;
  const Shape out = b.type(r.outs[0]).shape;
  Dx dx(r.args.size());
  int64_t offset = 0;
  for (size_t i = 0; i < r.args.size(); ++i) {
    int64_t n = b.type(r.args[i]).shape[dim - 1];
    if (r.need[i]) {
      std::vector<int64_t> start(out.size(), 1), stop = out, step(out.size(), 1);
      start[dim - 1] = offset + 1;
      stop[dim - 1] = offset + n;
      dx[i] =
          b.slice(*r.cots[0],
                  {.start = std::move(start), .stop = std::move(stop), .step = std::move(step)});
    }
    offset += n;
  }
  return dx;
}

// dx = the elements of g that x's elements became: slice from lo+1 by interior+1
Dx pad_vjp(Builder& b, const RuleArgs& r) {
  const Shape in = b.type(r.args[0]).shape;
  const auto attrs = attrs_of<Prim::pad>(r.op.attrs);
  const std::vector<int64_t>& lo = attrs.lo;
  const std::vector<int64_t>& interior = attrs.interior;
  std::vector<int64_t> start(in.size()), stop(in.size()), step(in.size());
  for (size_t d = 0; d < in.size(); ++d) {
    start[d] = lo[d] + 1;
    step[d] = interior[d] + 1;
    stop[d] = in[d] == 0 ? lo[d] : start[d] + (in[d] - 1) * step[d];
  }
  return {b.slice(*r.cots[0],
                  {.start = std::move(start), .stop = std::move(stop), .step = std::move(step)})};
}

}  // namespace

void register_shape_rules(RuleTable& t) {
  t.set(Prim::reshape, reshape_vjp);
  t.set(Prim::permutedims, permutedims_vjp);
  t.set(Prim::broadcast_to, broadcast_to_vjp);
  t.set(Prim::slice, slice_vjp);
  t.set(Prim::concat, concat_vjp);
  t.set(Prim::pad, pad_vjp);
}

}  // namespace ytape::grad
