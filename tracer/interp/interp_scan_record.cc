// One attempt at tracing a loop as a scan, and the scan op it records
// (tracer/interp/interp_scan.cc says which loops).
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "tape/error.h"
#include "tracer/interp/interp.h"
#include "tracer/interp/scan_trace.h"

namespace ytape::tracer {

std::string unique_name(std::string base, std::set<std::string>& used) {
  std::string name = base;
  for (int k = 2; !used.insert(name).second; ++k) name = fmt::format("{}#{}", base, k);
  return name;
}

void Interpreter::bind_carry(ScanCarry& c, Env& scope, bool may_retype, std::set<std::string>& used,
                             FieldsBack& fields) {
  std::string base = c.object == nullptr
                         ? c.name
                         : static_cast<const StructObj&>(*c.object).type->name + "." + c.name;
  c.params.clear();
  c.param_names.clear();
  std::vector<Value> values;
  for (size_t k = 0; k < c.leaves.size(); ++k) {
    const Value& leaf = c.leaves[k];
    std::string name =
        unique_name(c.leaves.size() == 1 ? base : fmt::format("{}.{}", base, k + 1), used);
    Type type = value_type(leaf);
    c.params.push_back(builder_->capture(name, type));
    c.param_names.push_back(name);
    level_->stands_for.emplace(name, leaf);
    // An untyped literal is itself in a first attempt, which finds the dtype it takes.
    bool probe = may_retype && weak_float(leaf);
    values.push_back(probe ? leaf : Value::traced(c.params.back(), type, leaf.is_number()));
  }
  size_t k = 0;
  Value v = with_leaves(c.init, values, k);
  if (c.object == nullptr) {
    scope.vars[c.name] = std::move(v);
  } else {
    fields.set(c, std::move(v));
  }
}

Interpreter::ScanAttempt Interpreter::attempt_scan(const ScanLoop& loop,
                                                   std::vector<ScanCarry>& carries,
                                                   bool may_retype) {
  ScanAttempt out;
  size_t depth = levels_.size();
  auto stream = this->stream();
  ScanTrace st;
  st.range = loop.range;
  st.carries = &carries;
  auto scope = std::make_shared<Env>();
  scope->parent = loop.env;
  FieldsBack fields;
  try {
    begin_nested_trace();
    st.level = trace_level();
    std::set<std::string> used{loop.index};
    for (ScanCarry& c : carries) bind_carry(c, *scope, may_retype, used, fields);
    st.index = builder_->capture(loop.index, Type{DType::i64, {}});
    level_->stands_for.emplace(loop.index, Value::integer(loop.range.at(0)));
    scope->vars[loop.index] = Value::traced(st.index, Type{DType::i64, {}}, true);
    scan_ = &st;
    scan_scope_ = scope.get();
    st.first_serial = next_serial() + 1;
    std::optional<Value> y = loop.run(scope);
    if (signal_ != Signal::none)
      not_a_scan("it leaves an iteration early (break, continue, return)");
    if (this->stream() != stream) not_a_scan("it draws random numbers while tracing");
    std::vector<Var> yields;
    out.retyped = settle_carries(carries, *scope, may_retype, yields);
    if (y && !y->is_tensor() && !y->is_number())
      not_a_scan(
          fmt::format("an iteration gives {}; a scan stacks arrays and numbers", a_type_name(*y)));
    if (y) yields.push_back(var_of(*y));
    for (const Op& op : builder_->tape().ops) {
      if (op.kind == OpKind::call && prim_info(op.prim).effectful()) {
        not_a_scan(
            fmt::format("its body records {}, which a scan cannot hold yet", prim_name(op.prim)));
      }
    }
    bool traced = !out.retyped.empty() || !level_->captures.empty() || !st.slices.empty();
    for (const ScanCarry& c : carries) {
      for (const Value& v : c.leaves) traced = traced || (v.is_tensor() && v.tensor().traced);
    }
    if (!traced) not_a_scan("");  // concrete work, which runs as it is unrolled
    if (out.retyped.empty()) {
      NestedTape nested = end_nested_trace();
      scan_ = nullptr;
      scan_scope_ = nullptr;
      fields.now();  // the trace's own record of a field's first value must see it
      out.ys = record_scan(loop, st, nested, carries, yields);
      return out;
    }
  } catch (const NotAScan& a) {
    out.reason = a.reason;
    out.object = a.object;
    out.field = a.field;
    out.settles = a.settles;
  } catch (const UserError& u) {
    out.reason = u.what();
  }
  abandon_scan(depth, stream);
  return out;
}

namespace {

// The types of a carried value's arrays and numbers: "f32[16,8]", "(f32[16,8], f32[16,8])".
std::string types_of(const std::vector<Value>& leaves) {
  std::string out;
  for (const Value& v : leaves) out += (out.empty() ? "" : ", ") + type_str(value_type(v));
  return leaves.size() == 1 ? out : "(" + out + ")";
}

}  // namespace

std::vector<std::pair<size_t, DType>> Interpreter::settle_carries(
    const std::vector<ScanCarry>& carries, const Env& scope, bool may_retype,
    std::vector<Var>& yields) {
  std::vector<std::pair<size_t, DType>> retyped;
  for (size_t i = 0; i < carries.size(); ++i) {
    const ScanCarry& c = carries[i];
    const Value& v = c.current(scope);
    std::vector<Value> leaves;
    std::string form;
    bool carriable = flatten_carried(v, leaves, form);
    bool probed = may_retype && c.leaves.size() == 1 && weak_float(c.leaves[0]);
    if (carriable && form == c.form && !probed) {
      for (const Value& leaf : leaves) yields.push_back(var_of(leaf));
    } else if (may_retype && c.init.is_number() && v.is_number()) {
      retyped.emplace_back(i, value_type(v).dtype);
    } else {
      std::string before = carriable ? types_of(c.leaves) : a_type_name(c.init);
      std::string after = carriable ? types_of(leaves) : a_type_name(v);
      throw NotAScan{
          fmt::format("'{}' is {} before an iteration and {} after it", c.name, before, after),
          nullptr, 0, carriable};
    }
  }
  return retyped;
}

void Interpreter::abandon_scan(size_t depth, std::pair<uint64_t, uint64_t> stream) {
  while (levels_.size() > depth) levels_.pop_back();
  enter_level();
  scan_ = nullptr;
  scan_scope_ = nullptr;
  signal_ = Signal::none;
  set_stream(stream);
}

// ---- the scan op ------------------------------------------------------------------------

std::string input_name(const Tape& t, Var v) {
  for (const Op& op : t.ops) {
    if (op.kind != OpKind::input) break;
    if (op.outs[0] == v) return op.name;
  }
  return "";
}

namespace {

bool reads(const Tape& t, Var v, const std::vector<Var>& yields) {
  for (const Op& op : t.ops) {
    if (std::find(op.args.begin(), op.args.end(), v) != op.args.end()) return true;
  }
  return std::find(yields.begin(), yields.end(), v) != yields.end();
}

}  // namespace

std::vector<Value> Interpreter::record_scan(const ScanLoop& loop, const ScanTrace& st,
                                            const NestedTape& nested,
                                            const std::vector<ScanCarry>& carries,
                                            const std::vector<Var>& yields) {
  const Tape& tape = nested.builder->tape();
  std::vector<std::pair<Var, std::string>> params;
  std::set<std::string> used{loop.index};
  VarList consts, carried, xs;
  for (const ScanCarry& c : carries) {
    for (size_t k = 0; k < c.leaves.size(); ++k) {
      params.emplace_back(c.params[k], c.param_names[k]);
      used.insert(c.param_names[k]);
      carried.push_back(tape_var(c.leaves[k]));
    }
  }
  // A const that is an input of the tape keeps its name where no carry has it.
  for (size_t i = 0; i < nested.captures.size(); ++i) {
    Var outer = nested.captures[i].second;
    std::string name = input_name(builder_->tape(), outer);
    if (name.empty() || used.count(name) != 0) name = fmt::format("c.{}", i + 1);
    params.insert(params.begin() + static_cast<std::ptrdiff_t>(i),
                  {nested.captures[i].first, unique_name(name, used)});
    consts.push_back(outer);
  }
  record_scan_xs(loop, st, tape, yields, params, xs);
  Tape body = region_tape(tape, params, yields);
  here_ = loop.pos;
  builder_->set_loc(loc_of(op_pos()));  // a loop of the prelude takes the program's line
  check_op_limit();
  std::vector<Var> outs =
      builder_->scan(consts, carried, xs, std::move(body), st.range.length(), st.range.step < 0);
  size_t k = set_carries(carries, outs, loop.env, loop.pos);
  std::vector<Value> ys;
  for (; k < outs.size(); ++k) ys.push_back(Value::traced(outs[k], builder_->type(outs[k])));
  return ys;
}

size_t Interpreter::set_carries(const std::vector<ScanCarry>& carries, std::span<const Var> outs,
                                const EnvPtr& env, Pos pos) {
  size_t k = 0;
  for (const ScanCarry& c : carries) {
    std::vector<Value> leaves;
    for (const Value& leaf : c.leaves) {
      Var v = outs[k++];
      leaves.push_back(Value::traced(v, builder_->type(v), leaf.is_number()));
    }
    size_t at = 0;
    Value v = with_leaves(c.init, leaves, at);
    if (c.object == nullptr) {
      set_var(c.name, std::move(v), env, pos);
    } else {
      Value instance;
      instance.kind = VKind::object;
      instance.obj = c.object;
      set_field(instance, c.name, std::move(v));
    }
  }
  return k;
}

void Interpreter::record_scan_xs(const ScanLoop& loop, const ScanTrace& st, const Tape& body,
                                 const std::vector<Var>& yields,
                                 std::vector<std::pair<Var, std::string>>& params, VarList& xs) {
  // A range that steps down is a reverse scan over the ascending positions.
  int64_t n = st.range.length();
  bool reverse = st.range.step < 0;
  int64_t first = reverse ? st.range.at(n - 1) : st.range.at(0);
  int64_t step = reverse ? -st.range.step : st.range.step;
  int64_t last = first + (n - 1) * step;
  here_ = loop.pos;
  if (reads(body, st.index, yields)) {
    params.emplace_back(st.index, loop.index);
    Tensor positions(Type{DType::i64, {n}});
    for (int64_t k = 0; k < n; ++k) positions.data<int64_t>()[k] = first + k * step;
    xs.push_back(var_of(Value::concrete(std::move(positions))));
  }
  for (size_t k = 0; k < st.slices.size(); ++k) {
    const ScanTrace::Slice& s = st.slices[k];
    params.emplace_back(s.param, fmt::format("x.{}", k + 1));
    Value v = s.array;
    if (v.tensor().type.shape != s.view) v = prim1<Prim::reshape>({v}, {.shape = s.view});
    if (first != 1 || step != 1 || last != s.view.back()) {
      std::vector<int64_t> start(s.view.size(), 1), stop(s.view), steps(s.view.size(), 1);
      start.back() = first;
      stop.back() = last;
      steps.back() = step;
      v = prim1<Prim::slice>({v}, {.start = start, .stop = stop, .step = steps});
    }
    xs.push_back(var_of(v));
  }
}

}  // namespace ytape::tracer
