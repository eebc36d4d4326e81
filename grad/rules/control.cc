// VJP rules of the control family (docs/regions.md).
//
// scan: the forward keeps the carries each step was given (scan_keeping_carries); the
// backward is a scan the other way whose body is the forward body's VJP at that step: it
// recomputes the step from its carries and slices, and takes the cotangents of the next
// carries and of y_t to those of the carries, the consts (summed over the steps, as carries
// of the backward scan) and x_t. Only the carries are stored per step; the body's
// intermediate values are computed again, so memory grows as steps × carries.
#include <fmt/format.h>

#include "grad/backprop.h"
#include "grad/rules.h"

namespace ytape::grad {

namespace {

// The positions in `types` that are floats: only they have cotangents.
std::vector<size_t> floats(std::span<const Type> types) {
  std::vector<size_t> out;
  for (size_t i = 0; i < types.size(); ++i) {
    if (is_float(types[i].dtype)) out.push_back(i);
  }
  return out;
}

// The backward body: parameters (consts, dh, dc, h_t, x_t, dy_t), yields (dh', dc', dx_t),
// for the float carries (fk), consts (fc), xs (fx) and ys (fy).
struct ScanParts {
  size_t consts, carries, xs, ys;
  std::vector<size_t> fc, fk, fx, fy;
};

Tape backward_body(const Tape& body, const ScanParts& l) {
  std::vector<Type> params = body.input_types(), yields = body.output_types();
  Builder b;
  auto input = [&](std::string name, const Type& t) { return b.input(std::move(name), t); };
  std::vector<Var> consts, dh, dc, h, x, dy;
  for (size_t i = 0; i < l.consts; ++i)
    consts.push_back(input(fmt::format("c{}", i + 1), params[i]));
  for (size_t k : l.fk) dh.push_back(input(fmt::format("dh{}", k + 1), params[l.consts + k]));
  for (size_t i : l.fc) dc.push_back(input(fmt::format("dc{}", i + 1), params[i]));
  for (size_t k = 0; k < l.carries; ++k)
    h.push_back(input(fmt::format("h{}", k + 1), params[l.consts + k]));
  for (size_t j = 0; j < l.xs; ++j) {
    x.push_back(input(fmt::format("x{}", j + 1), params[l.consts + l.carries + j]));
  }
  for (size_t j : l.fy) dy.push_back(input(fmt::format("dy{}", j + 1), yields[l.carries + j]));
  // The step again, then its VJP.
  Backprop bp(b, body);
  for (size_t i = 0; i < params.size(); ++i) {
    Var now = i < l.consts               ? consts[i]
              : i < l.consts + l.carries ? h[i - l.consts]
                                         : x[i - l.consts - l.carries];
    bp.bind_input(body.ops[i].outs[0], now, true);
  }
  bp.forward();
  for (size_t n = 0; n < l.fk.size(); ++n) bp.seed(body.outputs[l.fk[n]].var, dh[n]);
  for (size_t n = 0; n < l.fy.size(); ++n) bp.seed(body.outputs[l.carries + l.fy[n]].var, dy[n]);
  bp.backward();
  auto cot = [&](size_t param) {
    Cotangent c = bp.cotangent(body.ops[param].outs[0]);
    return c ? *c : zeros(b, params[param]);
  };
  for (size_t k : l.fk) b.output(cot(l.consts + k), "");
  for (size_t n = 0; n < l.fc.size(); ++n) b.output(b.add(dc[n], cot(l.fc[n])), "");
  for (size_t j : l.fx) b.output(cot(l.consts + l.carries + j), "");
  Tape t = b.finish();
  t.name = "body";
  return t;
}

std::vector<Cotangent> scan_vjp(Builder& b, const RuleArgs& r) {
  const auto a = attrs_of<Prim::scan>(r.op.attrs);
  const Tape& body = r.op.regions[0];
  std::vector<Type> params = body.input_types(), yields = body.output_types();
  ScanParts l{static_cast<size_t>(a.consts), static_cast<size_t>(a.carries), 0, 0, {}, {}, {}, {}};
  l.xs = params.size() - l.consts - l.carries;
  l.ys = yields.size() - l.carries;
  l.fc = floats(std::span(params).first(l.consts));
  l.fk = floats(std::span(params).subspan(l.consts, l.carries));
  l.fx = floats(std::span(params).subspan(l.consts + l.carries));
  l.fy = floats(std::span(yields).subspan(l.carries));
  // Operands of the backward scan: consts; dh, dc; then stacked h, xs, dy.
  VarList consts, carries, xs;
  for (size_t i = 0; i < l.consts; ++i) consts.push_back(r.args[i]);
  for (size_t k : l.fk) carries.push_back(r.cots[k] ? *r.cots[k] : zeros(b, params[l.consts + k]));
  for (size_t i : l.fc) carries.push_back(zeros(b, params[i]));
  for (size_t k = 0; k < l.carries; ++k) xs.push_back(r.outs[l.carries + l.ys + k]);
  for (size_t j = 0; j < l.xs; ++j) xs.push_back(r.args[l.consts + l.carries + j]);
  for (size_t j : l.fy) {
    const Cotangent& dy = r.cots[l.carries + j];
    xs.push_back(dy ? *dy : zeros(b, b.type(r.outs[l.carries + j])));
  }
  std::vector<Var> back = b.scan(consts, carries, xs, backward_body(body, l), a.length, !a.reverse);
  std::vector<Cotangent> dx(r.args.size());
  size_t next = 0;
  for (size_t k : l.fk) dx[l.consts + k] = back[next++];
  for (size_t i : l.fc) dx[i] = back[next++];
  for (size_t j : l.fx) dx[l.consts + l.carries + j] = back[next++];
  return dx;
}

}  // namespace

VarList scan_keeping_carries(Builder& b, const Op& op, const VarList& args) {
  const auto a = attrs_of<Prim::scan>(op.attrs);
  Tape body = op.regions[0];
  for (int64_t k = 0; k < a.carries; ++k)
    body.outputs.push_back({body.ops[a.consts + k].outs[0], ""});
  std::vector<Tape> regions;
  regions.push_back(std::move(body));
  return b.record(Prim::scan, args, op.attrs, std::move(regions)).outs;
}

void register_control_rules(RuleTable& t) {
  t.set(Prim::scan, scan_vjp);
}

}  // namespace ytape::grad
