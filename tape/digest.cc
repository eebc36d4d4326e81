#include "tape/digest.h"

#include <fmt/format.h>

#include "tape/attrs.h"
#include "tape/prim.h"

namespace ytape {

namespace {

// Each field is hashed with its length first, so that no two tapes hash one byte string.
class Hasher {
 public:
  void add(std::string_view field) {
    std::string length = fmt::format("{}:", field.size());
    h_ = fnv1a(field, fnv1a(length, h_));
  }
  void add(int64_t n) { add(std::string_view(fmt::format("{}", n))); }
  uint64_t value() const { return h_; }

 private:
  uint64_t h_ = kFnv1aBasis;
};

void add_op(Hasher& h, const Tape& t, const Op& op) {
  h.add(static_cast<int64_t>(op.kind));
  h.add(op.kind == OpKind::call ? prim_name(op.prim) : "");
  h.add(op.name);
  h.add(static_cast<int64_t>(op.args.size()));
  for (Var v : op.args) h.add(static_cast<int64_t>(v.id));
  h.add(static_cast<int64_t>(op.outs.size()));
  for (Var v : op.outs) {
    h.add(static_cast<int64_t>(v.id));
    h.add(v.id < t.types.size() ? type_str(t.types[v.id]) : "?");
  }
  h.add(static_cast<int64_t>(op.attrs.size()));
  for (const Attr& a : op.attrs) {
    h.add(a.name);
    h.add(attr_value_str(a.value));
  }
  h.add({reinterpret_cast<const char*>(op.value.data()), op.value.size()});
  // Only region ops add to the hash here, so that the digests of other tapes stay as
  // they were (checkpoints carry them).
  if (op.regions.empty()) return;
  h.add(static_cast<int64_t>(op.regions.size()));
  for (const Tape& r : op.regions) {
    h.add(r.name);
    h.add(static_cast<int64_t>(r.ops.size()));
    for (const Op& inner : r.ops) add_op(h, r, inner);
    h.add(static_cast<int64_t>(r.outputs.size()));
    for (const Output& o : r.outputs) h.add(static_cast<int64_t>(o.var.id));
  }
}

}  // namespace

uint64_t fnv1a(std::string_view bytes, uint64_t h) {
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string tape_digest(const Tape& t) {
  Hasher h;
  h.add(static_cast<int64_t>(t.ops.size()));
  for (const Op& op : t.ops) add_op(h, t, op);
  h.add(static_cast<int64_t>(t.outputs.size()));
  for (const Output& o : t.outputs) {
    h.add(o.name);
    h.add(static_cast<int64_t>(o.var.id));
  }
  return fmt::format("{:016x}", h.value());
}

}  // namespace ytape
