// ONNX import: an ONNX model (opset 13 to 17) becomes a tape (docs/onnx.md).
//
// ONNX tensors are row-major; ytape's are column-major. An ONNX tensor of shape
// (d1, ..., dr) is, byte for byte, the ytape tensor of shape (dr, ..., d1), as in tensor
// files: NCHW images are WHCN, and ONNX axis a of a rank-r tensor is ytape dim r - a
// (1-based). Every attribute that names axes, or lists per-axis values, is mapped so.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "runtime/tensor.h"
#include "tape/error.h"
#include "tape/tape.h"

namespace ytape {

/// What the importer refuses because ytape cannot express it (an op type it has no rule
/// for, a dtype ytape lacks, an attribute value with no equivalent), as opposed to a
/// malformed model. The conformance test counts these as skipped, not failed.
class UnsupportedError : public UserError {
 public:
  explicit UnsupportedError(const std::string& message, std::string needs_static = "")
      : UserError(message), needs_static_(std::move(needs_static)) {}
  /// The ONNX value that had to be known at import, when that is the reason (a Reshape's
  /// shape given as a graph input): binding it with OnnxImportOptions::constant_inputs helps.
  const std::string& needs_static() const { return needs_static_; }

 private:
  std::string needs_static_;
};

/// The structure of a graph input that is a sequence or an optional, which its ONNX type
/// leaves open and a tape needs static: the input becomes `length` tensor inputs of the tape,
/// `NAME[1]` to `NAME[length]`, or, for an optional tensor, the one input `NAME` or none.
struct OnnxSequenceInput {
  /// Whether an optional input holds a value (a sequence input always does).
  bool present = true;
  /// How many tensors: a sequence's length (a present optional's sequence's too); a present
  /// optional tensor has 1.
  int64_t length = 0;
  /// Each tensor's shape, in ytape's layout (ONNX's reversed), where the model's element
  /// type leaves it open (ONNX's test data declare none); empty: each of the declared shape,
  /// whose symbolic dims `dims` sizes. The element type is the model's.
  std::vector<Shape> shapes;
};

struct OnnxImportOptions {
  /// Graph inputs to treat as constants, by name, in ytape's layout: their values fold
  /// into the tape (a Reshape's target shape, a Pad's pads given as inputs).
  TensorMap constant_inputs;
  /// Sizes of the graph inputs' symbolic dims (`dim_param`, such as a batch size exported
  /// as dynamic), by name: a tape's shapes are static.
  std::map<std::string, int64_t> dims;
  /// The structure of the graph's sequence and optional inputs, by name: each such input
  /// must have one (importing names the input that lacks it).
  std::map<std::string, OnnxSequenceInput> sequences;
  /// A model that ytape exported (producer "ytape") imports as the tape it came from: the
  /// primitives its marks name (onnx/marks.h) in place of their nodes, nothing folded or
  /// removed as dead, every initializer an input. False reads it as any other model.
  bool read_marks = true;
};

/// An imported model: the tape, and the values of its initializers.
struct OnnxImport {
  /// Inputs: the graph's inputs in order, then its floating-point initializers in order
  /// (named as in the model; a sequence input `s` as `s[1]`, `s[2]`, ...). Integer and
  /// bool initializers (shapes, axes, indices) are constants of the tape. Outputs: the
  /// graph's outputs, named as in the model (a sequence output as its tensors, `s[1]`,
  /// `s[2]`, ...; an optional output that is none as no output).
  Tape tape;
  /// The initializers that are inputs of the tape, by name, in the tape's layout.
  TensorMap weights;
};

/// Imports the serialized ModelProto `bytes`; `source` names it in messages. The same bytes
/// give the same tape and weights. Throws UnsupportedError for what ytape cannot express
/// and UserError for a malformed model; either message reads "<source>: node 'NAME' (OP,
/// opset N): ..." when a node is at fault.
OnnxImport import_onnx(std::string_view bytes, std::string_view source,
                       const OnnxImportOptions& options = {});

/// Reads a tensor serialized as an ONNX TensorProto (a conformance test's input_0.pb),
/// in ytape's layout. Throws UserError naming `source` when it cannot.
Tensor read_onnx_tensor(std::string_view bytes, std::string_view source);

/// The op types the importer has rules for, sorted.
std::vector<std::string> onnx_supported_ops();

}  // namespace ytape
