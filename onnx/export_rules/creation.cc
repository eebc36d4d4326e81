// Export rules of the creation family: ops of no arguments, whose shapes and dtypes are
// attributes.
#include "onnx/export_rules.h"
#include "onnx/proto.h"
#include "tape/op_attrs.h"

namespace ytape::onnx_export {

namespace {

void fill(Exporter& ex, const Op& op) {
  const auto a = attrs_of<Prim::fill>(op.attrs);
  ex.name(op.outs[0], filled(ex, a.dtype, a.shape, a.value));
}
// iota: Range(1, n + 1) along the dim, in f32 for f16 (Range has no half), reshaped to
// that axis and expanded to the shape.
void iota(Exporter& ex, const Op& op) {
  const auto a = attrs_of<Prim::iota>(op.attrs);
  int64_t n = a.shape[a.dim - 1];
  DType range = a.dtype == DType::f16 ? DType::f32 : a.dtype;
  std::string x =
      ex.node("Range", {ex.scalar(range, 1), ex.scalar(range, static_cast<double>(n) + 1),
                        ex.scalar(range, 1)})
          .output(0);
  if (a.dtype != range) {
    onnx::NodeProto& c = ex.node("Cast", {x});
    set_attr(c, "to", int64_t{onnx_import::to_onnx_dtype(a.dtype)});
    x = c.output(0);
  }
  Shape along(a.shape.size(), 1);
  along[a.dim - 1] = n;
  x = ex.node("Reshape", {x, ex.ints(reversed(along))}).output(0);
  done(ex, op, ex.node("Expand", {x, ex.ints(reversed(a.shape))}));
}

// RandomUniform (in [0, 1)) and RandomNormal (standard): ONNX's runtimes draw other
// numbers of the same distribution; the seed, rounded to a float, keeps their draws
// repeatable, and the mark keeps it exact for ytape.
// A number is drawn as one element and reshaped: an attribute's empty list of ints does
// not survive protobuf (it reads as no list), so `shape` cannot say [].
template <Prim P>
void random(Exporter& ex, const Op& op) {
  const auto a = attrs_of<P>(op.attrs);
  bool number = a.shape.empty();
  onnx::NodeProto& n = ex.node(P == Prim::rand ? "RandomUniform" : "RandomNormal", {});
  set_attr(n, "dtype", int64_t{onnx_import::to_onnx_dtype(a.dtype)});
  set_attr(n, "shape", number ? std::vector<int64_t>{1} : reversed(a.shape));
  set_attr(n, "seed", static_cast<float>(a.seed));
  if (!number) return done(ex, op, n);
  std::string drawn = n.output(0);  // n may move when the next nodes are added
  done(ex, op, ex.node("Reshape", {drawn, ex.ints({})}));
}

}  // namespace

void register_creation_export(ExportTable& t) {
  t.set(Prim::fill, fill);
  t.set(Prim::iota, iota);
  t.set(Prim::rand, random<Prim::rand>);
  t.set(Prim::randn, random<Prim::randn>);
}

}  // namespace ytape::onnx_export
