// The marks that let a model exported by ytape import back as the very tape it came from.
//
// Most primitives export as one ONNX node of the same meaning that imports back as that
// primitive (Relu, Add, Where, ...). The others become a few nodes (batchnorm_backward in
// plain arithmetic, gather as Expand, Sub and GatherElements, ...), which import as the
// equivalent plain ops, not as the primitive. So the exporter marks the first node of each
// such group with the op it computes: its doc_string reads
//
//   ytape {"op":"gather","attrs":{"dim":1},"args":["%t9","%t11"],"outs":["%t16"],"nodes":5,
//          "digest":"9c1f0a..."}
//
// (the primitive, its attributes, the ONNX names of its arguments and outputs, how many
// nodes, from this one on, compute it, and a digest of those nodes; a region op's mark
// adds "regions", each the canonical JSON text of one of its tapes). The importer rebuilds
// the primitive from the mark and skips those nodes; the nodes themselves are what any other
// ONNX consumer runs. A group whose nodes no longer match the digest (another tool edited
// the model) is imported from its nodes: they, not the mark, say what the model computes.
#pragma once

#include <onnx/onnx_pb.h>

#include <optional>
#include <string>
#include <vector>

#include "tape/attrs.h"
#include "tape/prim.h"
#include "tape/tape.h"

namespace ytape::onnx_marks {

/// A primitive as a mark names it.
struct Mark {
  Prim prim;
  Attrs attrs;
  std::vector<std::string> args, outs;
  int nodes = 1;
  std::string digest;        ///< group_digest of the nodes, when the mark was written
  RareVector<Tape> regions;  ///< a region op's (a while_loop's), written as tape JSON
};

/// A digest of the `nodes` nodes of `g` from `first` on (each node whole, but for the first
/// one's doc_string, which holds the mark): 16 hex digits of a 64-bit FNV-1a hash. An empty
/// string when the graph has fewer nodes.
std::string group_digest(const onnx::GraphProto& g, int first, int nodes);

/// The doc_string of the first node of a group.
std::string mark_text(const Mark& m);

/// The mark of `node`, if its doc_string holds one. Throws UserError when it starts as a
/// mark but is not a valid one (bad JSON, an unknown primitive, attributes not of its
/// schema, a number of arguments or outputs it does not take, no digest).
std::optional<Mark> read_mark(const onnx::NodeProto& node);

}  // namespace ytape::onnx_marks
