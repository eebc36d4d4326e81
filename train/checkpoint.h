// Training checkpoints: the carried tensors and the position in the data, in one
// safetensors file whose "__metadata__" holds the position (docs/training.md).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/tensor.h"

namespace ytape {

/// Where a training run stands. Together with the run's identity and the carried tensors it
/// determines the rest of the run exactly.
struct Position {
  int64_t epoch = 1;        ///< the epoch in progress, 1-based; epochs + 1 once all are done
  int64_t step = 0;         ///< steps done in that epoch
  int64_t global_step = 0;  ///< steps done in all epochs
  double loss_sum = 0;      ///< sum of the losses of the epoch's steps so far (for its mean)
  friend bool operator==(const Position&, const Position&) = default;
};

/// What a resumed run must share with the run that wrote the checkpoint.
struct RunIdentity {
  uint64_t seed = 0;
  bool shuffle = true;
  int64_t batch = 0;    ///< the step tape's batch size
  int64_t samples = 0;  ///< the training data's N
  int64_t last = 0;     ///< the --keep-last tape's batch size (N mod batch); 0 without one
  std::string tape;     ///< tape_digest of the step tape; empty in checkpoints of format 1
  friend bool operator==(const RunIdentity&, const RunIdentity&) = default;
};

struct Checkpoint {
  TensorMap state;  ///< every carried input by name, in the step tape's order
  Position position;
  RunIdentity run;
};

/// The bytes of a checkpoint file: `state` as safetensors, with "__metadata__" holding
/// format = "ytape-train-checkpoint-2", step_tape (the step tape's digest), epoch, step,
/// global_step, loss_sum (shortest round-trip decimal), seed, shuffle (true/false),
/// batch_size, samples and, with a --keep-last tape, last_batch.
std::vector<uint8_t> write_checkpoint(const Checkpoint& c);

/// Reads what write_checkpoint wrote, and checkpoints of format 1 (no step_tape). Throws
/// UserError naming `source` when the file is not safetensors, or its metadata lacks an
/// entry or holds one that does not parse or is out of range (a negative step, an epoch
/// below 1, a batch size below 1). Whether the position fits the run is Trainer::resume's.
Checkpoint read_checkpoint(std::span<const uint8_t> bytes, std::string_view source);

}  // namespace ytape
