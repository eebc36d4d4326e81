#include "tape/builder.h"

#include <algorithm>
#include <cstring>

#include "tape/error.h"
#include "tape/infer.h"

namespace ytape {

namespace {

// Every field of a scope, for the table's index (paths and layer texts hold no NUL).
std::string scope_key(const Scope& s) {
  std::string key = s.path;
  key += '\0';
  key += s.layer;
  for (uint32_t n : {s.made.file, s.made.line, s.call.file, s.call.line, s.parent}) {
    key += '\0';
    key += std::to_string(n);
  }
  return key;
}

}  // namespace

Builder::Builder(std::string name) {
  tape_.name = std::move(name);
}

Builder Builder::like(const Tape& t) {
  Builder b(t.name);
  b.tape_.meta = t.meta;
  for (const std::string& f : t.files) b.intern_file(f);
  // Copied as they are (a table read from a file may repeat a scope), indices kept.
  b.tape_.scopes = t.scopes;
  for (size_t i = 0; i < t.scopes.size(); ++i)
    b.scope_index_.try_emplace(scope_key(t.scopes[i]), static_cast<uint32_t>(i + 1));
  return b;
}

uint32_t Builder::intern_file(std::string_view path) {
  auto [it, added] = file_index_.try_emplace(std::string(path), 0);
  if (added) {
    tape_.files.emplace_back(path);
    it->second = static_cast<uint32_t>(tape_.files.size());
  }
  return it->second;
}

uint32_t Builder::intern_scope(const Scope& scope) {
  auto [it, added] = scope_index_.try_emplace(scope_key(scope), 0);
  if (added) {
    tape_.scopes.push_back(scope);
    it->second = static_cast<uint32_t>(tape_.scopes.size());
  }
  return it->second;
}

void Builder::add_meta(std::string key, std::string value) {
  tape_.meta.emplace_back(std::move(key), std::move(value));
}

void Builder::reserve(size_t ops, size_t vars) {
  tape_.ops.reserve(ops);
  tape_.types.reserve(vars);
  warm();
}

Var Builder::input(std::string name, Type type) {
  if (tape_.ops.size() != next_input_) {
    user_error("input '{}' comes after other ops; declare every input first", name);
  }
  std::string problem = shape_problem(type.shape);
  if (!problem.empty()) user_error("input '{}': {}", name, problem);
  Var v = capture(std::move(name), std::move(type));
  ++next_input_;
  return v;
}

Var Builder::capture(std::string name, Type type) {
  if (!input_names_.insert(name).second) user_error("two inputs are named '{}'", name);
  Op& op = append_leaf(OpKind::input, std::move(type));
  op.name = std::move(name);
  return op.outs[0];
}

// Big tapes have their next pages faulted in on another core (PageWarmer); a reserve()
// of a big tape starts it before the first op.
void Builder::warm() {
  // From about 350,000 ops.
  if (warmer_ == nullptr && tape_.ops.capacity() * sizeof(Op) < PageWarmer::kWorthFrom) return;
  if (warmer_ == nullptr) warmer_ = std::make_unique<PageWarmer>();
  warmer_->update(0, tape_.ops.data(), tape_.ops.size() * sizeof(Op),
                  tape_.ops.capacity() * sizeof(Op));
  warmer_->update(1, tape_.types.ids(), tape_.types.size() * sizeof(uint32_t),
                  tape_.types.capacity() * sizeof(uint32_t));
}

Op& Builder::append_op(size_t outs) {
  // Growing by 4 rather than 2 moves each op about a third as often. The room is only
  // reserved: pages not yet written are never touched, so it costs address space, not
  // memory.
  auto grow = [](auto& v, size_t more) {
    if (v.size() + more > v.capacity()) v.reserve(std::max<size_t>(4 * v.capacity(), 16) + more);
  };
  grow(tape_.ops, 1);
  grow(tape_.types, outs);
  if ((tape_.ops.size() & 1023) == 0) warm();
  Op& op = tape_.ops.emplace_back();
  op.loc = loc_;
  return op;
}

Op& Builder::append_leaf(OpKind kind, Type type) {
  Op& op = append_op(1);
  op.kind = kind;
  op.outs.push_back(Var{next_var_++});
  tape_.types.push_back(std::move(type));
  return op;
}

Var Builder::constant(Type type, RareBytes bytes) {
  if (type.rank() > 0) {  // a number's shape is fine; long scalar programs make many
    std::string problem = shape_problem(type.shape);
    if (!problem.empty()) user_error("constant: {}", problem);
  }
  if (static_cast<int64_t>(bytes.size()) != type.size() * dtype_size(type.dtype)) {
    internal_error("constant of type {} given {} bytes", type_str(type), bytes.size());
  }
  Op& op = append_leaf(OpKind::constant, std::move(type));
  op.value = std::move(bytes);
  return op.outs[0];
}

Var Builder::constant(DType dtype, double value, Shape shape) {
  Type type{dtype, std::move(shape)};
  int64_t n = type.size();
  int size = dtype_size(dtype);
  std::vector<uint8_t> bytes(n * size);
  std::array<uint8_t, 8> element = scalar_bytes(dtype, value);
  for (int64_t i = 0; i < n; ++i) std::memcpy(bytes.data() + i * size, element.data(), size);
  return constant(std::move(type), std::move(bytes));
}

void Builder::fail(Prim p, const std::string& why) const {
  std::string where = tape_.loc_str(loc_);
  if (where.empty()) user_error("{}: {}", prim_name(p), why);
  user_error("{}: {}: {}", where, prim_name(p), why);
}

const std::vector<Type>& Builder::infer(Prim p, const VarList& args, const Attrs& attrs,
                                        std::span<const Tape> regions) {
  bool numbers = attrs.empty() && regions.empty() && args.size() <= 3;
  for (size_t i = 0; numbers && i < args.size(); ++i) {
    numbers = tape_.types[args[i].id].rank() == 0;
  }
  ScalarInference* memo = nullptr;
  if (numbers) {
    if (scalar_inferences_.empty()) scalar_inferences_.resize(kNumPrims);
    memo = &scalar_inferences_[static_cast<int>(p)];
    bool same = memo->arity == static_cast<int>(args.size());
    for (size_t i = 0; same && i < args.size(); ++i) {
      same = memo->dtypes[i] == tape_.types[args[i].id].dtype;
    }
    if (same) return memo->outs;
  }
  // Inference reads the argument types side by side, as a span. One argument is read in
  // place; more are copied next to each other (two into a local pair, which spares a
  // vector but not the copies of their shapes).
  std::span<const Type> arg_types;
  Type two[2];
  std::vector<Type> many;
  if (args.size() == 1) {
    arg_types = {&tape_.types[args[0].id], 1};
  } else if (args.size() == 2) {
    two[0] = tape_.types[args[0].id];
    two[1] = tape_.types[args[1].id];
    arg_types = two;
  } else {
    many.reserve(args.size());
    for (Var a : args) many.push_back(tape_.types[a.id]);
    arg_types = many;
  }
  inferred_ = infer_types(p, arg_types, attrs, regions);
  if (memo == nullptr) return inferred_;
  memo->arity = static_cast<int>(args.size());
  for (size_t i = 0; i < args.size(); ++i) memo->dtypes[i] = arg_types[i].dtype;
  memo->outs = inferred_;
  return memo->outs;
}

const Op& Builder::record(Prim p, VarList args, const Attrs& attrs) {
  return record(p, std::move(args), attrs, {});
}

const Op& Builder::record(Prim p, VarList args, const Attrs& attrs, RareVector<Tape> regions) {
  const PrimInfo& info = prim_info(p);
  if (info.arity != kVariadic && static_cast<int>(args.size()) != info.arity) {
    fail(p, fmt::format("takes {} argument{}, got {}", info.arity, info.arity == 1 ? "" : "s",
                        args.size()));
  }
  for (Var a : args) {
    if (a.id >= next_var_) internal_error("{}: argument %{} is not defined", info.name, a.id + 1);
  }
  Attrs normal;
  const std::vector<Type>* out_types = nullptr;
  try {
    // Ops without attributes (most elementwise math) skip the normalization.
    if (!attrs.empty() || !info.attrs.empty()) normal = normalize_attrs(p, attrs);
    out_types = &infer(p, args, normal, regions);
  } catch (const UserError& e) {
    fail(p, e.what());
  }
  Op& op = append_op(out_types->size());
  op.kind = OpKind::call;
  op.prim = p;
  op.args = std::move(args);
  op.attrs = std::move(normal);
  op.regions = std::move(regions);
  op.outs.reserve(out_types->size());
  for (const Type& t : *out_types) {
    op.outs.push_back(Var{next_var_++});
    tape_.types.push_back(t);
  }
  return op;
}

std::vector<Var> Builder::call(Prim p, VarList args, const Attrs& attrs) {
  return record(p, std::move(args), attrs).outs.vector();
}

Var Builder::call1(Prim p, VarList args, const Attrs& attrs) {
  if (prim_info(p).outputs != 1) {
    internal_error("call1 of {}, which has {} outputs", prim_name(p), prim_info(p).outputs);
  }
  return record(p, std::move(args), attrs).outs[0];
}

std::vector<Var> Builder::scan(const VarList& consts, const VarList& carries, const VarList& xs,
                               Tape body, int64_t length, bool reverse) {
  VarList args = consts;
  for (Var v : carries) args.push_back(v);
  for (Var v : xs) args.push_back(v);
  AttrsOf<Prim::scan> attrs{.consts = static_cast<int64_t>(consts.size()),
                            .carries = static_cast<int64_t>(carries.size()),
                            .length = length,
                            .reverse = reverse};
  body.name = "body";
  std::vector<Tape> regions;
  regions.push_back(std::move(body));
  return record(Prim::scan, std::move(args), attrs.to_attrs(), std::move(regions)).outs.vector();
}

std::vector<Var> Builder::cond(Var selector, const VarList& operands, std::vector<Tape> branches) {
  VarList args{selector};
  for (Var v : operands) args.push_back(v);
  DType dtype = type(selector).dtype;
  for (size_t k = 0; k < branches.size(); ++k) branches[k].name = cond_branch_name(dtype, k);
  return record(Prim::cond, std::move(args), {}, std::move(branches)).outs.vector();
}

std::vector<Var> Builder::while_loop(const VarList& consts, const VarList& carries, Tape cond,
                                     Tape body, int64_t max_trips) {
  VarList args = consts;
  for (Var v : carries) args.push_back(v);
  AttrsOf<Prim::while_loop> attrs{.consts = static_cast<int64_t>(consts.size()),
                                  .max_trips = max_trips};
  cond.name = "cond";
  body.name = "body";
  std::vector<Tape> regions;
  regions.push_back(std::move(cond));
  regions.push_back(std::move(body));
  return record(Prim::while_loop, std::move(args), attrs.to_attrs(), std::move(regions))
      .outs.vector();
}

void Builder::output(Var v, std::string name) {
  if (v.id >= next_var_) internal_error("output '{}' is not a defined var", name);
  tape_.outputs.push_back({v, std::move(name)});
}

Tape Builder::finish() {
  warmer_.reset();
  Tape t = std::move(tape_);
  *this = Builder();
  return t;
}

VarList VarMap::map(const VarList& olds) const {
  VarList out;
  out.resize(olds.size());
  for (size_t i = 0; i < olds.size(); ++i) out[i] = (*this)[olds[i]];
  return out;
}

void copy_op(Builder& b, const Tape& src, const Op& op, VarMap& map) {
  b.set_loc(op.loc);
  switch (op.kind) {
    case OpKind::input:
      map.set(op.outs[0], b.input(op.name, src.type(op.outs[0])));
      return;
    case OpKind::constant:
      map.set(op.outs[0], b.constant(src.type(op.outs[0]), op.value));
      return;
    case OpKind::call: {
      const Op& copy = b.record(op.prim, map.map(op.args), op.attrs, op.regions);
      for (size_t i = 0; i < copy.outs.size(); ++i) map.set(op.outs[i], copy.outs[i]);
      return;
    }
  }
}

Tape region_tape(const Tape& nested, const std::vector<std::pair<Var, std::string>>& params,
                 const std::vector<Var>& yields) {
  Builder b;
  b.reserve(nested.ops.size(), nested.types.size());
  VarMap map(nested);
  for (const auto& [v, name] : params) map.set(v, b.input(name, nested.types[v.id]));
  for (const Op& op : nested.ops) {
    if (op.kind != OpKind::input) copy_op(b, nested, op, map);
  }
  for (Var y : yields) b.output(map[y], "");
  Tape region = b.finish();
  region.files.clear();
  region.scopes.clear();
  return region;
}

std::vector<Var> inline_region(Builder& b, const Tape& r, std::span<const Var> args) {
  VarMap map(r);
  for (size_t i = 0; i < args.size(); ++i) map.set(r.ops[i].outs[0], args[i]);
  for (size_t i = r.num_inputs(); i < r.ops.size(); ++i) copy_op(b, r, r.ops[i], map);
  std::vector<Var> out;
  for (const Output& o : r.outputs) out.push_back(map[o.var]);
  return out;
}

Tape copy_tape(const Tape& t) {
  Builder b = Builder::like(t);
  b.reserve(t.ops.size(), t.types.size());
  VarMap map(t);
  for (const Op& op : t.ops) copy_op(b, t, op, map);
  for (const Output& o : t.outputs) b.output(map[o.var], o.name);
  return b.finish();
}

}  // namespace ytape
