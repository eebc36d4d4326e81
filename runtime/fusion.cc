#include "runtime/fusion.h"

#include <algorithm>
#include <span>

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
constexpr uint32_t kNoIndex = ~uint32_t{0};

// What the matcher knows of the tape: who makes each var, how often it is read, and which
// ops a group has taken already.
class Matcher {
 public:
  Matcher(const Tape& t, const KernelTable& table) : t_(t), table_(table) {
    maker_.assign(t.types.size(), kNone);
    reads_.assign(t.types.size(), 0);
    taken_.assign(t.ops.size(), false);
    gather_.reads.assign(t.types.size(), 0);
    gather_.last_reader.assign(t.types.size(), 0);
    gather_.result.assign(t.types.size(), kNoIndex);
    gather_.arg.assign(t.types.size(), kNoIndex);
    for (size_t i = 0; i < t.ops.size(); ++i) {
      for (Var v : t.ops[i].outs) maker_[v.id] = i;
      for (Var a : t.ops[i].args) ++reads_[a.id];
    }
    // The ops that read each var, in tape order, one entry per argument (a CSR table).
    first_reader_.assign(t.types.size() + 1, 0);
    for (const Op& op : t.ops) {
      for (Var a : op.args) ++first_reader_[a.id + 1];
    }
    for (size_t v = 0; v < t.types.size(); ++v) first_reader_[v + 1] += first_reader_[v];
    readers_.resize(first_reader_.back());
    std::vector<uint32_t> next(first_reader_.begin(), first_reader_.end() - 1);
    for (size_t i = 0; i < t.ops.size(); ++i) {
      for (Var a : t.ops[i].args) readers_[next[a.id]++] = static_cast<uint32_t>(i);
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
    const RareBytes& bytes = t_.ops[i].value;
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

  // Whether `v`, an argument of an op with a group's output shape, is neither of that
  // shape nor one element: the kernel gathers it per block (ElementwiseProgram).
  bool broadcast(Var v, const Shape& shape) const {
    const Type& type = t_.type(v);
    return type.size() != 1 && type.shape != shape;
  }

  // An op that an elementwise group of output shape `shape` can take: elementwise (or a
  // broadcast_to, whose argument the group reads as it reads a bias) with a row function
  // and one result of that shape (its arguments broadcast to it; the kernel follows at most
  // kMaxGatherRank dims). A relu that batch norm's fusion would take is left to it.
  bool chainable(const Op& op, const Shape& shape) const {
    if (op.kind != OpKind::call ||
        !(prim_info(op.prim).elementwise() || op.prim == Prim::broadcast_to) ||
        op.outs.size() != 1 || op.args.empty() || op.args.size() > 3 ||
        t_.type(op.outs[0]).shape != shape) {
      return false;
    }
    DType d = t_.type(op.args.back()).dtype;
    if (table_.rows[KernelTable::entry(op.prim)][static_cast<int>(d)] == nullptr) return false;
    if (shape.size() > ElementwiseProgram::kMaxGatherRank) {
      for (Var a : op.args) {
        if (broadcast(a, shape)) return false;
      }
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

  // The elementwise group whose result is op i's, grown from i through the producers of its
  // arguments, latest first (when an op is visited, every later reader of its result has
  // been decided): a producer joins when the group can take it, only the group reads its
  // result, and the group still fits the kernel (fits). A group stops growing where it
  // would no longer fit, rather than failing whole: a gather then costs what it takes, and
  // each op is taken once, so matching is linear in the tape; failing whole made every op
  // of a long chain's gradient gather the rest of the chain again (quadratic, issue #42).
  bool match_elementwise(size_t i, const Op& op, FusedGroup& g) {
    if (op.outs.size() != 1 || !available(Fusion::elementwise)) return false;  // effects have none
    const Type& type = t_.type(op.outs[0]);
    if (!chainable(op, type.shape) || type.size() < 2) return false;
    Gather& s = gather_;
    s.clear();
    s.shape = type.shape;
    s.live.push_back(0);  // the last op writes the group's output, in no slot
    join(i);
    size_t last = kNone;
    while (!s.heap.empty()) {
      std::pop_heap(s.heap.begin(), s.heap.end());
      size_t p = s.heap.back();
      s.heap.pop_back();
      if (p == last) continue;
      last = p;
      const Op& m = t_.ops[p];
      if (taken_[p] || !chainable(m, type.shape) || !read_after(m.outs[0], i) || !fits(m)) {
        continue;
      }
      take(p);
    }
    if (s.members.size() < 2) return false;
    ElementwiseProgram program;
    VarList args, outs = op.outs;
    if (!compile(program, args, outs)) return false;
    g = {Fusion::elementwise, &op, i, {s.members.rbegin(), s.members.rend() - 1}, args, outs};
    g.program = std::move(program);
    return true;
  }

  // Whether the group, run where op `at` is, may take the op that makes v: the reads of v
  // up to `at` are all the group's. A value also read later (a LayerNorm's centred values,
  // kept for its backward) is an extra output of the group, at most kMaxOutputs of them.
  bool read_after(Var v, size_t at) const {
    const Gather& s = gather_;
    if (s.reads[v.id] == reads_[v.id]) return true;
    if (s.outs == ElementwiseProgram::kMaxOutputs) return false;
    auto begin = readers_.begin() + first_reader_[v.id];
    auto end = readers_.begin() + first_reader_[v.id + 1];
    return std::upper_bound(begin, end, static_cast<uint32_t>(at)) - begin ==
           static_cast<std::ptrdiff_t>(s.reads[v.id]);
  }

  // Adds op m to the gathered group as its earliest member: the vars it reads are the
  // group's, and their producers are candidates.
  void join(size_t m) {
    Gather& s = gather_;
    auto number = static_cast<uint32_t>(s.members.size());
    s.members.push_back(m);
    for (Var a : t_.ops[m].args) {
      if (s.reads[a.id]++ > 0) continue;
      s.touched.push_back(a.id);
      s.last_reader[a.id] = number;
      ++s.args;
      s.broadcasts += broadcast(a, s.shape) ? 1 : 0;
      if (maker_[a.id] != kNone) {
        s.heap.push_back(maker_[a.id]);
        std::push_heap(s.heap.begin(), s.heap.end());
      }
    }
  }

  // Whether the group still fits the kernel with producer p joined: at most kMaxArgs
  // arguments, kMaxGathered of them broadcast, and at most kMaxSlots results held at any
  // member's step. p's result is held from p to its last reader, and while each member but
  // the last runs its own result takes one more (as compile allocates them).
  bool fits(const Op& p) const {
    const Gather& s = gather_;
    size_t args = s.args - 1;  // p's result is the group's own now
    int broadcasts = s.broadcasts;
    for (size_t a = 0; a < p.args.size(); ++a) {
      bool seen = s.reads[p.args[a].id] > 0;
      for (size_t b = 0; b < a; ++b) seen = seen || p.args[b] == p.args[a];
      args += seen ? 0 : 1;
      broadcasts += !seen && broadcast(p.args[a], s.shape) ? 1 : 0;
    }
    return args <= ElementwiseProgram::kMaxArgs && broadcasts <= ElementwiseProgram::kMaxGathered &&
           s.full < s.last_reader[p.outs[0].id];
  }

  // Joins producer p, which fits: the members from its result's last reader on hold it too.
  void take(size_t p) {
    Gather& s = gather_;
    uint32_t now = static_cast<uint32_t>(s.members.size());
    for (uint32_t k = s.last_reader[t_.ops[p].outs[0].id]; k < now; ++k) {
      if (++s.live[k] == ElementwiseProgram::kMaxSlots) s.full = std::max<int64_t>(s.full, k);
    }
    s.live.push_back(1);
    --s.args;
    Var v = t_.ops[p].outs[0];
    s.outs += s.reads[v.id] == reads_[v.id] ? 0 : 1;
    join(p);
  }

  // The program of the gathered members (in tape order: the reverse of their numbers; the
  // last one's result is the group's first output), the group's arguments in the order
  // they are first read, and its outputs: the last result, then those read after the
  // group too, which are written there. Each other result takes a free slot and frees its
  // arguments' slots after its op: a slot is never read and written by one op, whose
  // elements may differ in size. False when the program needs more slots than there are,
  // or more arguments than a step's layouts can say (fits keeps gathers within both).
  bool compile(ElementwiseProgram& program, VarList& args, VarList& outs) {
    Gather& s = gather_;
    const size_t n = s.members.size();
    std::vector<int> free_slots;
    for (size_t k = 0; k < n; ++k) {
      const Op& m = t_.ops[s.members[n - 1 - k]];
      ElementwiseProgram::Instruction ins{};
      ins.row =
          table_.rows[KernelTable::entry(m.prim)][static_cast<int>(t_.type(m.args.back()).dtype)];
      ins.num_args = static_cast<int>(m.args.size());
      for (size_t a = 0; a < m.args.size(); ++a) {
        uint32_t id = m.args[a].id;
        if (s.result[id] != kNoIndex) {
          ins.args[a] = {true, s.result[id]};
          continue;
        }
        if (s.arg[id] == kNoIndex) {
          s.arg[id] = static_cast<uint32_t>(args.size());
          args.push_back(m.args[a]);
        }
        ins.args[a] = {false, s.arg[id]};
      }
      const uint32_t id = m.outs[0].id;
      ins.slot = -1;
      if (k + 1 < n && s.reads[id] != reads_[id]) {
        ins.slot = -1 - static_cast<int>(outs.size());
        outs.push_back(m.outs[0]);
      } else if (k + 1 < n) {
        if (free_slots.empty()) free_slots.push_back(program.slots++);
        ins.slot = free_slots.back();
        free_slots.pop_back();
      }
      if (k + 1 < n) s.result[id] = static_cast<uint32_t>(k);
      for (const ElementwiseProgram::Operand& o : std::span(ins.args, ins.num_args)) {
        if (!o.result) continue;
        uint32_t read = t_.ops[s.members[n - 1 - o.index]].outs[0].id;
        // Its last reader in tape order is the first member numbered that reads it.
        if (n - 1 - s.last_reader[read] == k) {
          if (program.instructions[o.index].slot >= 0) {
            free_slots.push_back(program.instructions[o.index].slot);
          }
          s.last_reader[read] = static_cast<uint32_t>(n);  // read twice by this op: freed once
        }
      }
      program.instructions.push_back(ins);
    }
    return program.slots <= ElementwiseProgram::kMaxSlots &&
           args.size() <= ElementwiseProgram::kMaxArgs;
  }

  // An elementwise group of three ops or more wins over the patterns below; one of two
  // only where none of them matches (relu_backward and add_relu are single passes).
  bool match(size_t i, const Op& op, FusedGroup& g) {
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

  // One elementwise gather's state. Members are numbered in the order they join (0: the
  // op the group ends with), which is reverse tape order. The per-var vectors are sized to
  // the tape once and reset through `touched`, so that a gather costs what it visits.
  struct Gather {
    std::vector<int> reads;             // per var: reads by the members
    std::vector<uint32_t> last_reader;  // per var read: the member that reads it last
    std::vector<uint32_t> result, arg;  // per var read: its instruction or argument (compile)
    std::vector<uint32_t> touched;      // the vars read
    std::vector<size_t> members;        // op indices, by number
    std::vector<int> live;              // per member: the slots held while it runs
    std::vector<size_t> heap;           // candidate producers, a max-heap of op indices
    Shape shape;                        // the group's output's
    size_t args = 0;                    // vars the members read that no member makes
    int broadcasts = 0;                 // those of them that broadcast
    int outs = 0;                       // members' results read after the group too
    int64_t full = -1;                  // the highest member whose step holds every slot

    void clear() {
      for (uint32_t v : touched) reads[v] = 0, result[v] = arg[v] = kNoIndex;
      touched.clear(), members.clear(), live.clear(), heap.clear();
      args = 0, broadcasts = 0, outs = 0, full = -1;
    }
  };

  const Tape& t_;
  const KernelTable& table_;
  Gather gather_;
  std::vector<size_t> maker_;                     // per var: the op that makes it
  std::vector<int> reads_;                        // per var: reads by ops and by the tape's outputs
  std::vector<uint32_t> first_reader_, readers_;  // per var: its reading ops (CSR)
  std::vector<bool> taken_;                       // per op
};

}  // namespace

std::vector<FusedGroup> find_fusions(const Tape& t, const KernelTable& table) {
  return Matcher(t, table).run();
}

}  // namespace ytape
