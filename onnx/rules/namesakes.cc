// The import of the namesakes (onnx/namesakes.def): a node of the op is the primitive over
// the node's first inputs. The rows marked `wider` have rules of their own elsewhere.
#include "onnx/importer.h"

namespace ytape::onnx_import {

namespace {

enum class NamesakeImport { same, floats, wider };

template <Prim P>
void same(Importer& im, const Node& n) {
  std::vector<Var> args;
  for (int i = 0; i < prim_info(P).arity; ++i) args.push_back(im.input(n, i));
  im.set_output(n, 0, im.emit(P, args));
}

// The ONNX op may take integers (Erf does), which the primitive does not: such a node is
// beyond ytape, not a model's error, and the conformance run counts it as skipped.
template <Prim P>
void floats(Importer& im, const Node& n) {
  DType d = im.type(im.input(n, 0)).dtype;
  if (!is_float(d)) unsupported(n.op_type() + " of " + std::string(dtype_name(d)));
  same<P>(im, n);
}

template <Prim P, NamesakeImport I>
void add_rule(Rules& r, const char* op_type) {
  if constexpr (I != NamesakeImport::wider) {
    auto [at, added] = r.emplace(op_type, I == NamesakeImport::same ? same<P> : floats<P>);
    if (!added) {
      internal_error("ONNX op {} has two import rules: a namesake's and another", at->first);
    }
  }
}

}  // namespace

void add_namesake_rules(Rules& r) {
#define NAMESAKE(prim, op_type, import) add_rule<Prim::prim, NamesakeImport::import>(r, op_type);
#include "onnx/namesakes.def"
#undef NAMESAKE
}

}  // namespace ytape::onnx_import
