#include "grad/segments.h"

#include <cmath>

#include "tape/builder.h"
#include "tape/op_attrs.h"

namespace ytape::grad {

namespace {

constexpr int64_t kShortest = 16;  // shorter scans store little; cutting them saves little

// The divisor of `length` nearest its square root, in 2..length/2; 0 where there is none.
int64_t segment_length(int64_t length) {
  int64_t best = 0;
  const double root = std::sqrt(static_cast<double>(length));
  for (int64_t k = 2; k * k <= length; ++k) {
    if (length % k != 0) continue;
    for (int64_t d : {k, length / k}) {
      if (best == 0 || std::abs(static_cast<double>(d) - root) < std::abs(best - root)) best = d;
    }
  }
  return best;
}

// `s` with its last dim `length` cut into (k, length / k).
Shape cut(Shape s, int64_t k) {
  int64_t length = s.back();
  s.back() = k;
  s.push_back(length / k);
  return s;
}

// The scan `op` (of `t`, args read through `map`) written on `b` as a scan of segments.
void write_segmented(Builder& b, const Tape& t, const Op& op, int64_t k, VarMap& map) {
  const auto a = attrs_of<Prim::scan>(op.attrs);
  const Tape& body = op.regions[0];
  const auto first_x = static_cast<size_t>(a.consts + a.carries);
  Builder outer;
  VarList consts, carries, xs;
  std::vector<Type> params = body.input_types();
  for (size_t i = 0; i < params.size(); ++i) {
    Type type = params[i];
    if (i >= first_x) type.shape.push_back(k);
    Var p = outer.input(body.ops[i].name, type);
    (i < static_cast<size_t>(a.consts) ? consts : i < first_x ? carries : xs).push_back(p);
  }
  for (Var y : outer.scan(consts, carries, xs, body, k, a.reverse)) outer.output(y, "");
  VarList args = map.map(op.args);
  for (size_t i = first_x; i < args.size(); ++i)
    args[i] = b.reshape(args[i], {.shape = cut(b.type(args[i]).shape, k)});
  auto whole = a;
  whole.length = a.length / k;
  std::vector<Tape> regions;
  regions.push_back(outer.finish());
  regions[0].name = "body";
  VarList outs = b.record(Prim::scan, args, whole.to_attrs(), std::move(regions)).outs;
  for (size_t j = 0; j < op.outs.size(); ++j) {
    Var v = outs[j];
    if (j >= static_cast<size_t>(a.carries)) v = b.reshape(v, {.shape = t.type(op.outs[j]).shape});
    map.set(op.outs[j], v);
  }
}

}  // namespace

Tape segment_scans(const Tape& t) {
  Builder b = Builder::like(t);
  VarMap map(t);
  for (const Op& op : t.ops) {
    int64_t k = 0;
    if (op.kind == OpKind::call && op.prim == Prim::scan) {
      const auto a = attrs_of<Prim::scan>(op.attrs);
      if (a.length >= kShortest && !skips_steps(a)) k = segment_length(a.length);
    }
    b.set_loc(op.loc);
    if (k == 0) {
      copy_op(b, t, op, map);
    } else {
      write_segmented(b, t, op, k, map);
    }
  }
  for (const Output& o : t.outputs) b.output(map[o.var], o.name);
  return b.finish();
}

}  // namespace ytape::grad
