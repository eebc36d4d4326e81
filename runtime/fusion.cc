#include "runtime/fusion.h"

#include <algorithm>
#include <queue>
#include <span>
#include <unordered_map>

namespace ytape {

std::string_view fusion_name(Fusion f) {
  switch (f) {
    case Fusion::batchnorm_relu:
      return "batchnorm+relu";
    case Fusion::relu_mask_batchnorm_backward:
      return "relu_backward+batchnorm_backward";
    case Fusion::relu_backward:
      return "relu_backward";
    case Fusion::add_relu:
      return "add+relu";
    case Fusion::elementwise:
      return "elementwise";
  }
  return "?";
}

namespace {

constexpr size_t kNone = ~size_t{0};

// What the matcher knows of the tape: who makes each var, how often it is read, and which
// ops a group has taken already.
class Matcher {
 public:
  Matcher(const Tape& t, const KernelTable& table) : t_(t), table_(table) {
    maker_.assign(t.types.size(), kNone);
    reads_.assign(t.types.size(), 0);
    taken_.assign(t.ops.size(), false);
    for (size_t i = 0; i < t.ops.size(); ++i) {
      for (Var v : t.ops[i].outs) maker_[v.id] = i;
      for (Var a : t.ops[i].args) ++reads_[a.id];
    }
    for (const Output& o : t.outputs) ++reads_[o.var.id];
  }

  // Visits the ops from the last, so that a group anchored at a later op claims its
  // producers before a smaller group anchored at one of them could.
  std::vector<FusedGroup> run() {
    std::vector<FusedGroup> groups;
    for (size_t i = t_.ops.size(); i-- > 0;) {
      const Op& op = t_.ops[i];
      if (taken_[i] || op.kind != OpKind::call) continue;
      FusedGroup g{};
      if (match(i, op, g)) {
        taken_[i] = true;
        for (size_t o : g.others) taken_[o] = true;
        groups.push_back(std::move(g));
      }
    }
    std::reverse(groups.begin(), groups.end());
    return groups;
  }

 private:
  bool available(Fusion f) const { return table_.kernels[KernelTable::entry(f)] != nullptr; }

  // The call op that makes `v` as its only output, with `prim`, untaken, and whose
  // value only the group reads; null otherwise.
  const Op* sole_producer(Var v, Prim prim) const {
    size_t i = maker_[v.id];
    if (i == kNone || taken_[i] || reads_[v.id] != 1) return nullptr;
    const Op& op = t_.ops[i];
    if (op.kind != OpKind::call || op.prim != prim || op.outs[0] != v) return nullptr;
    return &op;
  }

  bool is_float(Var v) const {
    DType d = t_.type(v).dtype;
    return d == DType::f32 || d == DType::f64;
  }

  // A constant single element +0 of v's dtype.
  bool is_zero(Var c, Var like) const {
    size_t i = maker_[c.id];
    if (i == kNone || t_.ops[i].kind != OpKind::constant) return false;
    const Type& type = t_.type(c);
    if (type.size() != 1 || type.dtype != t_.type(like).dtype) return false;
    const std::vector<uint8_t>& bytes = t_.ops[i].value;
    return std::all_of(bytes.begin(), bytes.end(), [](uint8_t b) { return b == 0; });
  }

  // `v` is select(gt(z, 0), g, 0) with z and g of v's type; sets the two ops and z, g.
  bool relu_mask(Var v, bool sole, const Op** select, const Op** gt, Var* z, Var* g) const {
    size_t i = maker_[v.id];
    if (i == kNone || taken_[i]) return false;
    const Op& s = t_.ops[i];
    if (s.kind != OpKind::call || s.prim != Prim::select || (sole && reads_[v.id] != 1)) {
      return false;
    }
    const Op* c = sole_producer(s.args[0], Prim::gt);
    if (c == nullptr || !is_float(v)) return false;
    const Type& type = t_.type(v);
    if (t_.type(s.args[1]) != type || t_.type(c->args[0]) != type) return false;
    if (!is_zero(s.args[2], v) || !is_zero(c->args[1], v)) return false;
    *select = &s, *gt = c, *z = c->args[0], *g = s.args[1];
    return true;
  }

  size_t index(const Op* op) const { return static_cast<size_t>(op - t_.ops.data()); }

  // An op that an elementwise group of output shape `shape` can take: elementwise with a
  // row function, one result of that shape, every argument of that shape or one element.
  // A relu that batch norm's fusion would take is left to it.
  bool chainable(const Op& op, const Shape& shape) const {
    if (op.kind != OpKind::call || !prim_info(op.prim).elementwise() || op.outs.size() != 1 ||
        op.args.empty() || op.args.size() > 3 || t_.type(op.outs[0]).shape != shape) {
      return false;
    }
    DType d = t_.type(op.args.back()).dtype;
    if (table_.rows[KernelTable::entry(op.prim)][static_cast<int>(d)] == nullptr) return false;
    for (Var a : op.args) {
      const Type& at = t_.type(a);
      if (at.size() != 1 && at.shape != shape) return false;
    }
    if (op.prim == Prim::relu && available(Fusion::batchnorm_relu)) {
      size_t m = maker_[op.args[0].id];
      if (m != kNone &&
          (t_.ops[m].prim == Prim::batchnorm || t_.ops[m].prim == Prim::batchnorm_with_stats)) {
        return false;
      }
    }
    return true;
  }

  // The elementwise group whose result is op i's: from i, every producer of an argument
  // that the group can take and whose result only the group reads, latest first (when an
  // op is visited, every later reader of its result has been decided).
  bool match_elementwise(size_t i, const Op& op, FusedGroup& g) const {
    const Type& type = t_.type(op.outs[0]);
    if (!available(Fusion::elementwise) || type.size() < 2 || !chainable(op, type.shape)) {
      return false;
    }
    std::vector<size_t> members{i};
    std::unordered_map<uint32_t, int> reads;  // of each var, by the members
    std::priority_queue<size_t> producers;
    auto take_args = [&](const Op& m) {
      for (Var a : m.args) {
        ++reads[a.id];
        if (maker_[a.id] != kNone) producers.push(maker_[a.id]);
      }
    };
    take_args(op);
    size_t last = kNone;
    while (!producers.empty()) {
      size_t p = producers.top();
      producers.pop();
      if (p == last) continue;
      last = p;
      const Op& m = t_.ops[p];
      if (taken_[p] || !chainable(m, type.shape) || reads[m.outs[0].id] != reads_[m.outs[0].id]) {
        continue;
      }
      members.push_back(p);
      take_args(m);
    }
    if (members.size() < 2) return false;
    std::sort(members.begin(), members.end());
    ElementwiseProgram program;
    VarList args;
    if (!compile(members, program, args)) return false;
    g = {Fusion::elementwise, &op, i, {members.begin(), members.end() - 1}, args, op.outs};
    g.program = std::move(program);
    return true;
  }

  // The program of the members (in tape order; the last one's result is the group's) and
  // the group's arguments in the order they are first read. Each result takes a free slot
  // and frees its arguments' slots after its op: a slot is never read and written by one op,
  // whose elements may differ in size. False when the program needs more slots than there
  // are, or more arguments than a step's layouts can say.
  bool compile(const std::vector<size_t>& members, ElementwiseProgram& program,
               VarList& args) const {
    std::unordered_map<uint32_t, uint32_t> result_of, arg_of, last_read;
    for (size_t k = 0; k < members.size(); ++k) {
      for (Var a : t_.ops[members[k]].args) last_read[a.id] = static_cast<uint32_t>(k);
    }
    std::vector<int> free_slots;
    for (size_t k = 0; k < members.size(); ++k) {
      const Op& m = t_.ops[members[k]];
      ElementwiseProgram::Instruction ins{};
      ins.row =
          table_.rows[KernelTable::entry(m.prim)][static_cast<int>(t_.type(m.args.back()).dtype)];
      ins.num_args = static_cast<int>(m.args.size());
      for (size_t a = 0; a < m.args.size(); ++a) {
        uint32_t id = m.args[a].id;
        if (auto r = result_of.find(id); r != result_of.end()) {
          ins.args[a] = {true, r->second};
          continue;
        }
        auto [at, added] = arg_of.emplace(id, static_cast<uint32_t>(args.size()));
        if (added) args.push_back(m.args[a]);
        ins.args[a] = {false, at->second};
      }
      ins.slot = -1;
      if (k + 1 < members.size()) {
        if (free_slots.empty()) free_slots.push_back(program.slots++);
        ins.slot = free_slots.back();
        free_slots.pop_back();
        result_of[m.outs[0].id] = static_cast<uint32_t>(k);
      }
      for (const ElementwiseProgram::Operand& o : std::span(ins.args, ins.num_args)) {
        if (!o.result) continue;
        uint32_t id = t_.ops[members[o.index]].outs[0].id;
        if (last_read[id] == k) {
          free_slots.push_back(program.instructions[o.index].slot);
          last_read[id] = ~uint32_t{0};  // read twice by this op: freed once
        }
      }
      program.instructions.push_back(ins);
    }
    return program.slots <= ElementwiseProgram::kMaxSlots && args.size() <= 32;
  }

  // An elementwise group of three ops or more wins over the patterns below; one of two
  // only where none of them matches (relu_backward and add_relu are single passes).
  bool match(size_t i, const Op& op, FusedGroup& g) const {
    FusedGroup chain{};
    bool has_chain = match_elementwise(i, op, chain);
    if (has_chain && chain.others.size() >= 2) {
      g = std::move(chain);
      return true;
    }
    if (match_pattern(i, op, g)) return true;
    if (has_chain) g = std::move(chain);
    return has_chain;
  }

  bool match_pattern(size_t i, const Op& op, FusedGroup& g) const {
    const Op *select = nullptr, *gt = nullptr;
    Var z, grad;
    if (op.prim == Prim::batchnorm_backward && available(Fusion::relu_mask_batchnorm_backward) &&
        relu_mask(op.args[0], true, &select, &gt, &z, &grad)) {
      g = {Fusion::relu_mask_batchnorm_backward,
           &op,
           i,
           {index(select), index(gt)},
           {grad, op.args[1], op.args[2], op.args[3], op.args[4], z},
           op.outs};
      return true;
    }
    if (op.prim == Prim::select && available(Fusion::relu_backward) &&
        relu_mask(op.outs[0], false, &select, &gt, &z, &grad)) {
      g = {Fusion::relu_backward, &op, i, {index(gt)}, {z, grad}, op.outs};
      return true;
    }
    if (op.prim != Prim::relu || !is_float(op.args[0])) return false;
    for (Prim bn : {Prim::batchnorm, Prim::batchnorm_with_stats}) {
      const Op* b = sole_producer(op.args[0], bn);
      // The group runs where the batch norm is: the relu reads nothing else, and the
      // statistics may be read before the relu (a running mean computed in between).
      if (b != nullptr && available(Fusion::batchnorm_relu)) {
        VarList outs = b->outs;
        outs[0] = op.outs[0];
        g = {Fusion::batchnorm_relu, b, index(b), {i}, b->args, outs};
        return true;
      }
    }
    const Op* add = sole_producer(op.args[0], Prim::add);
    if (add != nullptr && available(Fusion::add_relu) &&
        t_.type(add->args[0]) == t_.type(op.args[0]) &&
        t_.type(add->args[1]) == t_.type(op.args[0])) {
      g = {Fusion::add_relu, add, i, {index(add)}, add->args, op.outs};
      return true;
    }
    return false;
  }

  const Tape& t_;
  const KernelTable& table_;
  std::vector<size_t> maker_;  // per var: the op that makes it
  std::vector<int> reads_;     // per var: reads by ops and by the tape's outputs
  std::vector<bool> taken_;    // per op
};

}  // namespace

std::vector<FusedGroup> find_fusions(const Tape& t, const KernelTable& table) {
  return Matcher(t, table).run();
}

}  // namespace ytape
