#include "runtime/lower_f16.h"

#include <cstring>

#include "tape/builder.h"
#include "tape/float16.h"
#include "tape/op_attrs.h"
#include "tape/validate.h"

namespace ytape {

namespace {

bool says_f16(const Attrs& attrs) {
  for (const Attr& a : attrs) {
    const DType* d = std::get_if<DType>(&a.value);
    if (d && *d == DType::f16) return true;
  }
  return false;
}

Attrs widened(const Attrs& attrs) {
  Attrs out;
  for (const Attr& a : attrs) {
    const DType* d = std::get_if<DType>(&a.value);
    out.push_back(d && *d == DType::f16 ? Attr{a.name, DType::f32} : a);
  }
  return out;
}

std::vector<uint8_t> widened(std::span<const uint8_t> bytes) {
  std::vector<uint8_t> out(bytes.size() * 2);
  for (size_t i = 0; i < bytes.size() / 2; ++i) {
    uint16_t h;
    std::memcpy(&h, bytes.data() + i * 2, 2);
    float f = f16_to_f32(h);
    std::memcpy(out.data() + i * 4, &f, 4);
  }
  return out;
}

// Builds the lowered tape. Each f16 value of the old tape has a wide f32 twin, which later
// ops read, and an f16 twin where one exists (an input, a rounded result), which tape
// outputs and prints read.
class Lowering {
 public:
  explicit Lowering(const Tape& t) : t_(t), b_(Builder::like(t)), wide_(t), narrow_(t) {
    b_.reserve(t.ops.size() * 3, t.types.size() * 3);
  }

  Tape run() {
    // Every input first, as a tape declares them; then their wide twins.
    size_t inputs = t_.num_inputs();
    std::vector<Var> declared;
    for (size_t i = 0; i < inputs; ++i) {
      b_.set_loc(t_.ops[i].loc);
      declared.push_back(b_.input(t_.ops[i].name, t_.type(t_.ops[i].outs[0])));
    }
    for (size_t i = 0; i < inputs; ++i) {
      b_.set_loc(t_.ops[i].loc);
      set_narrow(t_.ops[i].outs[0], declared[i]);
    }
    for (const Op& op : t_.ops) {
      b_.set_loc(op.loc);
      if (op.kind == OpKind::input) {
        continue;
      } else if (op.kind == OpKind::constant) {
        const Type& type = t_.type(op.outs[0]);
        wide_.set(op.outs[0], is_f16(op.outs[0])
                                  ? b_.constant(Type{DType::f32, type.shape}, widened(op.value))
                                  : b_.constant(type, op.value));
      } else {
        call(op);
      }
    }
    for (const Output& o : t_.outputs) b_.output(narrow(o.var), o.name);
    Tape lowered = b_.finish();
    check_made(lowered, "lowering f16 to f32");
    return lowered;
  }

 private:
  bool is_f16(Var v) const { return t_.type(v).dtype == DType::f16; }

  // `v` (an old f16 value) is `n` in the new tape; its wide twin is n widened.
  void set_narrow(Var v, Var n) {
    if (!is_f16(v)) {
      wide_.set(v, n);
      return;
    }
    narrow_.set(v, n);
    wide_.set(v, b_.convert(n, {.dtype = DType::f32}));
  }

  Var narrow(Var v) {
    if (!is_f16(v)) return wide_[v];
    // A constant has only its wide twin, which holds f16 values: this rounding is exact.
    if (!narrow_.has(v)) narrow_.set(v, b_.convert(wide_[v], {.dtype = DType::f16}));
    return narrow_[v];
  }

  void call(const Op& op) {
    if (op.prim == Prim::convert && attrs_of<Prim::convert>(op.attrs).dtype == DType::f16) {
      // One rounding from the source value, f64 included, not two through f32.
      set_narrow(op.outs[0], b_.convert(wide_[op.args[0]], {.dtype = DType::f16}));
      return;
    }
    if (!op.regions.empty()) {
      // Its regions take and yield f16 as the tape records them; the executor lowers
      // each region as it plans it.
      VarList args;
      for (Var a : op.args) args.push_back(narrow(a));
      VarList outs = b_.record(op.prim, args, op.attrs, op.regions).outs;
      for (size_t i = 0; i < outs.size(); ++i) set_narrow(op.outs[i], outs[i]);
      return;
    }
    VarList args;
    for (Var a : op.args) args.push_back(prim_info(op.prim).effectful() ? narrow(a) : wide_[a]);
    std::vector<Var> outs =
        b_.call(op.prim, args, says_f16(op.attrs) ? widened(op.attrs) : op.attrs);
    for (size_t i = 0; i < outs.size(); ++i) {
      set_narrow(op.outs[i],
                 is_f16(op.outs[i]) ? b_.convert(outs[i], {.dtype = DType::f16}) : outs[i]);
    }
  }

  const Tape& t_;
  Builder b_;
  VarMap wide_, narrow_;
};

}  // namespace

bool has_f16(const Tape& t) {
  for (const Type& type : t.types) {
    if (type.dtype == DType::f16) return true;
  }
  for (const Op& op : t.ops) {
    if (says_f16(op.attrs)) return true;
  }
  return false;
}

Tape lower_f16(const Tape& t) {
  return Lowering(t).run();
}

}  // namespace ytape
