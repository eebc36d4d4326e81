// Forward mode of region ops (grad/jvp.h): a scan, a cond or a while_loop carries its
// tangents inside itself. Each region is replaced by its own jvp (every float parameter
// given a tangent), its parameters and yields reordered so that each group of operands
// (consts, carries, xs) is followed by the tangents of its float members: one loop that
// computes values and tangents together, storing nothing, where a while_loop needs no
// bound on its trips.
#include <fmt/format.h>

#include "grad/jvp.h"
#include "grad/rules.h"
#include "tape/error.h"
#include "tape/op_attrs.h"

namespace ytape::grad {

namespace {

// A group of a region op's operands (or of a region's yields): [first, first + size).
struct Group {
  size_t first, size;
};

// The jvp of region `r` with every float parameter given a tangent: parameters (r's, then
// a tangent per float one), yields (r's, then a tangent per float one). Parameters are
// renamed p1, p2, ... first, so that choosing them by name chooses each alone.
Tape region_jvp(const Tape& r) {
  Tape named = r;
  for (size_t i = 0; i < named.num_inputs(); ++i) named.ops[i].name = fmt::format("p{}", i + 1);
  return jvp(named);
}

// Per element of `types`: the index among j's tangent inputs (or outputs) of its tangent,
// counted from `base`; ~0 for a non-float one.
std::vector<size_t> tangent_index(const std::vector<Type>& types, size_t base) {
  std::vector<size_t> out;
  for (const Type& t : types) out.push_back(is_float(t.dtype) ? base++ : ~size_t{0});
  return out;
}

// Each group's members, then their tangents (of the float ones), as indices into the
// members (`index`) and their tangents (`tangent`).
std::vector<size_t> interleaved(const std::vector<Group>& groups,
                                const std::vector<size_t>& tangent) {
  std::vector<size_t> order;
  for (const Group& g : groups) {
    for (size_t i = g.first; i < g.first + g.size; ++i) order.push_back(i);
    for (size_t i = g.first; i < g.first + g.size; ++i) {
      if (tangent[i] != ~size_t{0}) order.push_back(tangent[i]);
    }
  }
  return order;
}

// `j` (a region_jvp) as a region taking its inputs in the order `take` and yielding its
// outputs in the order `give`; named `name`.
Tape reordered(const Tape& j, const std::vector<size_t>& take, const std::vector<size_t>& give,
               const std::string& name) {
  Builder b;
  std::vector<Var> args(j.num_inputs());
  for (size_t k = 0; k < take.size(); ++k)
    args[take[k]] = b.input(fmt::format("p{}", k + 1), j.type(j.ops[take[k]].outs[0]));
  std::vector<Var> out = inline_region(b, j, args);
  for (size_t g : give) b.output(out[g], "");
  Tape t = b.finish();
  t.name = name;
  return t;
}

// The groups' vars with, after each group, the tangents of its float members (zeros for
// those without one).
VarList with_tangents(Builder& b, const std::vector<Group>& groups, const VarList& vars,
                      const std::vector<std::optional<Var>>& tangents) {
  VarList out;
  for (const Group& g : groups) {
    for (size_t i = g.first; i < g.first + g.size; ++i) out.push_back(vars[i]);
    for (size_t i = g.first; i < g.first + g.size; ++i) {
      if (!is_float(b.type(vars[i]).dtype)) continue;
      out.push_back(tangents[i] ? *tangents[i] : zeros(b, b.type(vars[i])));
    }
  }
  return out;
}

// A while_loop's condition in the loop's tangent form: it takes the parameters in the
// order `take` (indices into its own, then into their tangents) and reads the values alone.
Tape values_only(const Tape& cond, const std::vector<size_t>& take,
                 const std::vector<Type>& types) {
  std::vector<size_t> tangent = tangent_index(types, types.size()),
                      owner(take.size() + types.size());
  for (size_t i = 0; i < types.size(); ++i) {
    if (tangent[i] != ~size_t{0}) owner[tangent[i]] = i;
  }
  Builder b;
  std::vector<Var> values(types.size());
  for (size_t k = 0; k < take.size(); ++k) {
    size_t x = take[k];
    Var v = b.input(fmt::format("p{}", k + 1), types[x < types.size() ? x : owner[x]]);
    if (x < types.size()) values[x] = v;
  }
  b.output(inline_region(b, cond, values)[0], "");
  Tape t = b.finish();
  t.name = cond.name;
  return t;
}

size_t floats(const Builder& b, const VarList& vars, Group g) {
  size_t n = 0;
  for (size_t i = g.first; i < g.first + g.size; ++i) n += is_float(b.type(vars[i]).dtype);
  return n;
}

}  // namespace

void Tangents::differentiate_region(const Op& op) {
  const VarList args = map_.map(op.args);
  std::vector<std::optional<Var>> given;
  for (Var a : op.args) given.push_back(tan_[a.id]);
  const size_t n = args.size();
  // The operand groups, and the result groups the region yields in the same order.
  std::vector<Group> in, out;
  Attrs attrs = op.attrs;
  std::vector<Tape> regions;
  if (op.prim == Prim::scan) {
    auto a = attrs_of<Prim::scan>(op.attrs);
    const auto c = static_cast<size_t>(a.consts), k = static_cast<size_t>(a.carries);
    in = {{0, c}, {c, k}, {c + k, n - c - k}};
    out = {{0, k}, {k, op.outs.size() - k}};
    a.consts += static_cast<int64_t>(floats(b_, args, in[0]));
    a.carries += static_cast<int64_t>(floats(b_, args, in[1]));
    attrs = a.to_attrs();
  } else if (op.prim == Prim::cond) {
    in = {{0, 1}, {1, n - 1}};
    out = {{0, op.outs.size()}};
  } else {
    auto a = attrs_of<Prim::while_loop>(op.attrs);
    const auto c = static_cast<size_t>(a.consts);
    in = {{0, c}, {c, n - c}};
    out = {{0, n - c}};
    a.consts += static_cast<int64_t>(floats(b_, args, in[0]));
    attrs = a.to_attrs();
  }
  // The regions' parameters are the operands but a cond's selector.
  const size_t skip = op.prim == Prim::cond ? 1 : 0;
  std::vector<Group> params = in;
  if (skip) params.erase(params.begin());
  for (Group& g : params) g.first -= skip;
  for (size_t r = 0; r < op.regions.size(); ++r) {
    const Tape& region = op.regions[r];
    std::vector<Type> types = region.input_types(), yields = region.output_types();
    std::vector<size_t> take = interleaved(params, tangent_index(types, types.size()));
    if (op.prim == Prim::while_loop && r == 0) {
      regions.push_back(values_only(region, take, types));
      continue;
    }
    Tape j = region_jvp(region);
    std::vector<Group> gives =
        op.prim == Prim::while_loop ? std::vector<Group>{{0, yields.size()}} : out;
    std::vector<size_t> give = interleaved(gives, tangent_index(yields, yields.size()));
    regions.push_back(reordered(j, take, give, region.name));
  }
  VarList operands = with_tangents(b_, in, args, given);  // a cond's selector has none
  const Op& made = b_.record(op.prim, operands, attrs, std::move(regions));
  VarList res = made.outs;
  // Results: each result group, then the tangents of its float members.
  size_t at = 0;
  for (const Group& g : out) {
    for (size_t i = g.first; i < g.first + g.size; ++i) map_.set(op.outs[i], res[at++]);
    for (size_t i = g.first; i < g.first + g.size; ++i) {
      if (is_float(t_.type(op.outs[i]).dtype)) tan_[op.outs[i].id] = res[at++];
    }
  }
}

}  // namespace ytape::grad
