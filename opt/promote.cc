#include "opt/promote.h"

#include <cstring>

#include "tape/builder.h"
#include "tape/float16.h"
#include "tape/validate.h"

namespace ytape {

namespace {

bool narrow(DType d) {
  return d == DType::f32 || d == DType::f16;
}

Type promoted(Type t) {
  if (narrow(t.dtype)) t.dtype = DType::f64;
  return t;
}

std::vector<uint8_t> widen(std::span<const uint8_t> bytes, DType from) {
  size_t size = dtype_size(from), n = bytes.size() / size;
  std::vector<uint8_t> out(n * sizeof(double));
  for (size_t i = 0; i < n; ++i) {
    uint16_t h;
    float f;
    std::memcpy(from == DType::f16 ? static_cast<void*>(&h) : &f, bytes.data() + i * size, size);
    double d = from == DType::f16 ? f16_to_f32(h) : f;
    std::memcpy(out.data() + i * sizeof(double), &d, sizeof d);
  }
  return out;
}

Attrs promoted(const Attrs& attrs) {
  Attrs out;
  for (const Attr& a : attrs) {
    const DType* d = std::get_if<DType>(&a.value);
    out.push_back(d && narrow(*d) ? Attr{a.name, DType::f64} : a);
  }
  return out;
}

}  // namespace

namespace {

// The promotion of `t`, its regions' too, unchecked (a region is not a tape of its own).
Tape promoted_tape(const Tape& t) {
  Builder b = Builder::like(t);
  b.reserve(t.ops.size(), t.types.size());
  VarMap map(t);
  for (const Op& op : t.ops) {
    b.set_loc(op.loc);
    switch (op.kind) {
      case OpKind::input:
        map.set(op.outs[0], b.input(op.name, promoted(t.type(op.outs[0]))));
        break;
      case OpKind::constant: {
        const Type& type = t.type(op.outs[0]);
        map.set(op.outs[0],
                b.constant(promoted(type),
                           narrow(type.dtype) ? RareBytes(widen(op.value, type.dtype)) : op.value));
        break;
      }
      case OpKind::call: {
        std::vector<Tape> regions;
        for (const Tape& r : op.regions) regions.push_back(promoted_tape(r));
        VarList outs =
            b.record(op.prim, map.map(op.args), promoted(op.attrs), std::move(regions)).outs;
        for (size_t i = 0; i < outs.size(); ++i) map.set(op.outs[i], outs[i]);
        break;
      }
    }
  }
  for (const Output& o : t.outputs) b.output(map[o.var], o.name);
  Tape out = b.finish();
  out.name = t.name;
  return out;
}

}  // namespace

Tape promote_to_f64(const Tape& t) {
  Tape promoted = promoted_tape(t);
  check_made(promoted, "promotion to f64");
  return promoted;
}

}  // namespace ytape
