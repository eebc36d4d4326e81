#include "tracer/interp/examples.h"

#include "runtime/eval.h"
#include "tape/error.h"

namespace ytape::tracer {

namespace {

constexpr uint32_t kNoOp = ~uint32_t{0};

}  // namespace

void ExampleValues::reset(const TensorMap& inputs) {
  clear();
  for (const auto& [name, t] : inputs) inputs_[name] = t;
}

void ExampleValues::clear() {
  inputs_.clear();
  resolve_ = nullptr;
  def_.clear();
  values_.clear();
  known_.clear();
  indexed_ = 0;
  ops_run_ = 0;
}

// Ops are only appended, so each op is indexed once over the whole trace.
void ExampleValues::index_new_ops(const Tape& tape) {
  def_.resize(tape.types.size(), kNoOp);
  values_.resize(tape.types.size());
  known_.resize(tape.types.size(), false);
  for (; indexed_ < tape.ops.size(); ++indexed_) {
    for (Var out : tape.ops[indexed_].outs) def_[out.id] = static_cast<uint32_t>(indexed_);
  }
}

void ExampleValues::run_op(const Tape& tape, const Op& op) {
  Var out0 = op.outs.front();
  switch (op.kind) {
    case OpKind::input: {
      auto it = inputs_.find(op.name);
      if (it == inputs_.end() && resolve_) it = inputs_.emplace(op.name, resolve_(op.name)).first;
      if (it == inputs_.end()) internal_error("no example value for input '{}'", op.name);
      values_[out0.id] = it->second;
      break;
    }
    case OpKind::constant:
      values_[out0.id] = Tensor::of_bytes(tape.type(out0), op.value);
      break;
    case OpKind::call: {
      std::vector<const Tensor*> args;
      for (Var a : op.args) args.push_back(&values_[a.id]);
      std::vector<Tensor> outs = evaluate(tape, op, args);  // print is silent here
      for (size_t i = 0; i < outs.size(); ++i) values_[op.outs[i].id] = std::move(outs[i]);
      break;
    }
  }
  for (Var o : op.outs) known_[o.id] = true;
  ++ops_run_;
}

const Tensor& ExampleValues::value(const Tape& tape, Var v) {
  index_new_ops(tape);
  // Depth-first over the cone with an explicit stack: a chain of 10^6 ops must not
  // overflow the C++ stack. An op runs once all its arguments are known.
  std::vector<Var> stack{v};
  while (!stack.empty()) {
    Var top = stack.back();
    if (known_[top.id]) {
      stack.pop_back();
      continue;
    }
    uint32_t at = def_[top.id];
    if (at == kNoOp) internal_error("var %{} has no defining op", top.id + 1);
    const Op& op = tape.ops[at];
    bool ready = true;
    for (Var a : op.args) {
      if (!known_[a.id]) {
        stack.push_back(a);
        ready = false;
      }
    }
    if (!ready) continue;
    run_op(tape, op);
    stack.pop_back();
  }
  return values_[v.id];
}

}  // namespace ytape::tracer
