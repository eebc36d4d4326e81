// The graph's inputs and outputs as the tape's: a tensor is one input or output, a
// sequence or an optional as many as it holds tensors (docs/onnx.md, Sequences and
// optionals).
#pragma once

#include <onnx/onnx_pb.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "onnx/importer.h"

namespace ytape::onnx_import {

/// The tape type of a declared tensor type, its symbolic dims sized by `dims`. Throws
/// UserError naming the dim (and `--dim`) when one has no size.
Type declared_type(const onnx::TypeProto_Tensor& t, const std::map<std::string, int64_t>& dims);

/// Whether a graph input of type `t` is a sequence or an optional.
bool is_sequence_or_optional(const onnx::TypeProto& t);

/// Defines the graph input `v`, a sequence or an optional, as the tape inputs that
/// `options.sequences` gives it (`NAME[1]` ... `NAME[N]`; an optional tensor: `NAME`).
/// UserError when the options give it no structure, or one that disagrees with its type.
void define_sequence_input(Importer& im, const onnx::ValueInfoProto& v,
                           const OnnxImportOptions& options);

/// Throws UserError when `options.sequences` names what is not a sequence or optional
/// input of `g`.
void check_sequence_options(const onnx::GraphProto& g, const OnnxImportOptions& options);

/// The tape's outputs for the graph output `out`, each named: a tensor as itself (one of a
/// narrower integer type wrapped into its range), a sequence's elements as `NAME[1]` ...,
/// an optional's value, none for none.
std::vector<std::pair<std::string, Var>> output_tensors(Importer& im,
                                                        const onnx::ValueInfoProto& out);

}  // namespace ytape::onnx_import
