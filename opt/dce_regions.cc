// DCE of region ops (opt/dce.h): what a scan, a cond or a while_loop computes that nothing
// reads goes, with the operands only it read. A carry stays while a kept result, or the
// loop's condition, depends on it through the body; each region is cut to the parameters
// and yields that stay.
#include <algorithm>

#include "opt/dce.h"
#include "tape/builder.h"
#include "tape/op_attrs.h"

namespace ytape {

namespace {

// Per parameter of region `r`: whether the yields `wanted` read it, through its ops.
std::vector<bool> params_read(const Tape& r, const std::vector<bool>& wanted) {
  std::vector<bool> live(r.types.size(), false);
  for (size_t j = 0; j < r.outputs.size(); ++j) {
    if (wanted[j]) live[r.outputs[j].var.id] = true;
  }
  for (size_t i = r.ops.size(); i-- > r.num_inputs();) {
    const Op& op = r.ops[i];
    bool needed = false;
    for (Var o : op.outs) needed = needed || live[o.id];
    if (!needed) continue;
    for (Var a : op.args) live[a.id] = true;
  }
  std::vector<bool> read(r.num_inputs());
  for (size_t i = 0; i < read.size(); ++i) read[i] = live[r.ops[i].outs[0].id];
  return read;
}

// `r` with only the parameters `params` and the yields `yields` says, and the ops those
// yields need.
Tape pruned(const Tape& r, const std::vector<bool>& params, const std::vector<bool>& yields) {
  std::vector<bool> live(r.types.size(), false);
  for (size_t j = 0; j < r.outputs.size(); ++j) {
    if (yields[j]) live[r.outputs[j].var.id] = true;
  }
  std::vector<bool> copy(r.ops.size(), false);
  for (size_t i = r.ops.size(); i-- > r.num_inputs();) {
    for (Var o : r.ops[i].outs) copy[i] = copy[i] || live[o.id];
    if (copy[i]) {
      for (Var a : r.ops[i].args) live[a.id] = true;
    }
  }
  Builder b;
  VarMap map(r);
  for (size_t i = 0; i < r.num_inputs(); ++i) {
    const Op& in = r.ops[i];
    if (params[i]) map.set(in.outs[0], b.input(in.name, r.type(in.outs[0])));
  }
  for (size_t i = r.num_inputs(); i < r.ops.size(); ++i) {
    if (copy[i]) copy_op(b, r, r.ops[i], map);
  }
  for (size_t j = 0; j < r.outputs.size(); ++j) {
    if (yields[j]) b.output(map[r.outputs[j].var], "");
  }
  Tape out = b.finish();
  out.name = r.name;
  return out;
}

std::vector<bool> outputs_used(const Op& op, const std::vector<bool>& used) {
  std::vector<bool> out;
  for (Var o : op.outs) out.push_back(used[o.id]);
  return out;
}

// Carries k of a loop are live where `live[k]`; adds those that the live carries' next
// values (yields `first + k` of `body`, whose carry parameters start at `param0`) read,
// to a fixed point. `extra` marks other yields of `body` that stay (a scan's ys).
void close_carries(const Tape& body, size_t param0, size_t first, std::vector<bool>& live,
                   const std::vector<bool>& extra) {
  for (bool grew = true; grew;) {
    std::vector<bool> wanted = extra;
    for (size_t k = 0; k < live.size(); ++k) wanted[first + k] = live[k];
    std::vector<bool> read = params_read(body, wanted);
    grew = false;
    for (size_t k = 0; k < live.size(); ++k) {
      if (!live[k] && read[param0 + k]) live[k] = grew = true;
    }
  }
}

RegionCut cut_scan(const Op& op, const std::vector<bool>& used) {
  auto a = attrs_of<Prim::scan>(op.attrs);
  const Tape& body = op.regions[0];
  const auto consts = static_cast<size_t>(a.consts), carries = static_cast<size_t>(a.carries);
  std::vector<bool> outs = outputs_used(op, used);
  std::vector<bool> live(outs.begin(), outs.begin() + static_cast<std::ptrdiff_t>(carries));
  if (a.running > 0) live[a.running - 1] = true;  // it decides which steps run
  std::vector<bool> ys(body.outputs.size(), false);
  for (size_t j = carries; j < outs.size(); ++j) ys[j] = outs[j];
  close_carries(body, consts, 0, live, ys);
  std::vector<bool> yields = ys;
  for (size_t k = 0; k < carries; ++k) yields[k] = outs[k] = live[k];
  std::vector<bool> params = params_read(body, yields);
  for (size_t k = 0; k < carries; ++k) params[consts + k] = live[k];
  if (a.mask > 0) params[consts + carries + a.mask - 1] = true;
  RegionCut cut{params, outs, {}, {}};
  cut.regions.push_back(pruned(body, params, yields));
  auto kept_before = [&](size_t from, int64_t n) {
    return std::count(params.begin() + from, params.begin() + from + n, true);
  };
  if (a.running > 0) a.running = kept_before(consts, a.running);
  if (a.mask > 0) a.mask = kept_before(consts + carries, a.mask);
  a.consts = kept_before(0, a.consts);
  a.carries = std::count(live.begin(), live.end(), true);
  cut.attrs = a.to_attrs();
  return cut;
}

RegionCut cut_cond(const Op& op, const std::vector<bool>& used) {
  std::vector<bool> outs = outputs_used(op, used);
  std::vector<bool> operands(op.args.size(), false);
  operands[0] = true;  // the selector
  for (const Tape& r : op.regions) {
    std::vector<bool> read = params_read(r, outs);
    for (size_t i = 0; i < read.size(); ++i) operands[i + 1] = operands[i + 1] || read[i];
  }
  std::vector<bool> params(operands.begin() + 1, operands.end());
  RegionCut cut{operands, outs, {}, op.attrs};
  for (const Tape& r : op.regions) cut.regions.push_back(pruned(r, params, outs));
  return cut;
}

RegionCut cut_while(const Op& op, const std::vector<bool>& used) {
  auto a = attrs_of<Prim::while_loop>(op.attrs);
  const Tape &test = op.regions[0], &body = op.regions[1];
  const auto consts = static_cast<size_t>(a.consts);
  std::vector<bool> live = outputs_used(op, used);
  std::vector<bool> tested = params_read(test, {true});
  for (size_t k = 0; k < live.size(); ++k) live[k] = live[k] || tested[consts + k];
  close_carries(body, consts, 0, live, std::vector<bool>(live.size(), false));
  std::vector<bool> params = params_read(body, live);
  for (size_t i = 0; i < consts; ++i) params[i] = params[i] || tested[i];
  for (size_t k = 0; k < live.size(); ++k) params[consts + k] = live[k];
  RegionCut cut{params, live, {}, {}};
  cut.regions.push_back(pruned(test, params, {true}));
  cut.regions.push_back(pruned(body, params, live));
  a.consts = std::count(params.begin(), params.begin() + a.consts, true);
  cut.attrs = a.to_attrs();
  return cut;
}

}  // namespace

bool RegionCut::changes() const {
  return std::find(operands.begin(), operands.end(), false) != operands.end() ||
         std::find(outputs.begin(), outputs.end(), false) != outputs.end();
}

std::optional<RegionCut> cut_region_op(const Op& op, const std::vector<bool>& used) {
  // A custom_rule's pullback reads its operands and results whatever the tape reads: it
  // is kept whole.
  if (op.kind != OpKind::call || op.regions.empty() || op.prim == Prim::custom_rule)
    return std::nullopt;
  RegionCut cut = op.prim == Prim::scan   ? cut_scan(op, used)
                  : op.prim == Prim::cond ? cut_cond(op, used)
                                          : cut_while(op, used);
  if (!cut.changes()) return std::nullopt;
  return cut;
}

}  // namespace ytape
