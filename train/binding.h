// What each input of a step or eval tape takes during training, and where each output
// goes: the naming conventions of docs/training.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/tensor.h"
#include "tape/tape.h"
#include "train/data.h"

namespace ytape {

/// Where an input's value comes from in each step.
enum class InputRole {
  data,     ///< a batch of the data tensor of the same name
  carried,  ///< the value an output of the previous step produced (initially --init's)
  fixed,    ///< --init's value, every step
};

/// One input of a tape, as training feeds it.
struct BoundInput {
  std::string name;
  Type type;
  InputRole role = InputRole::fixed;
  size_t output = 0;  ///< carried only: the index of the output that carries into it
};

/// How a tape's inputs and outputs meet the data and the carried state.
struct Binding {
  std::vector<BoundInput> inputs;  ///< in the tape's order
  int64_t batch = 0;               ///< B: the last dim of every data input
  /// The output reported as the loss: `out.loss`, else `loss`, else the first float scalar
  /// output that carries nothing; none when there is no such output.
  std::optional<size_t> loss;
};

/// The name of the input of `t` that output `output` carries to: P for an output named
/// `out.P` or `P` where P is an input's name (`out.P` is tried first); "" when none.
std::string carried_input_name(const Tape& t, std::string_view output);

/// For `run --carry` and `plan --carry`: (output, input) for each output of `t` that
/// carries into an input by the names above, by index into its outputs and its inputs.
/// UserError (naming `source`) when none does, or as bind_step for two outputs carrying
/// into one input or an output whose type differs from its input's.
std::vector<std::pair<uint32_t, uint32_t>> carry_pairs(const Tape& t, std::string_view source);

/// Binds a training step tape (`source` names it in messages) to `data`: inputs named
/// like a data tensor take its batches, inputs that an output carries to are carried, the
/// rest fixed. Throws UserError, naming the input or output and what to fix, when no input
/// takes data; a data input's dims (but the last) differ from the data's (its dtype may:
/// convert_data); data inputs disagree on the batch size or it exceeds the samples; an output would
/// carry to a data input, or two outputs to one input, or its type differs from the input's; or
/// `out.loss` / `loss` is not a float scalar.
Binding bind_step(const Tape& t, std::string_view source, const DataSet& data);

/// Binds an eval tape to `data`: data inputs as bind_step; every other input fixed; no
/// output carries and there is no loss. The same errors for the data inputs.
Binding bind_eval(const Tape& t, std::string_view source, const DataSet& data);

/// Converts each data tensor of `data` that a data input of `b` takes in another dtype to
/// the input's (convert_exact: a U8 image to an f32 input), or throws UserError naming the
/// tensor and the first value that does not fit.
void convert_data(const Binding& b, DataSet& data);

/// Whether `type` is a float scalar (f32[] or f64[]): what the loss and metrics must be.
bool is_float_scalar(const Type& type);

}  // namespace ytape
