// Semantic diff of two tapes (`ytape diff`): ops are aligned by what they compute, not by
// their var numbers, so renumbering or reordering alone is no difference and one op inserted
// at the top is one added op.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tape/tape.h"

namespace ytape {

/// What happened to one op or output between tape A and tape B.
enum class Change : uint8_t { removed, added, changed };

inline constexpr size_t kNoIndex = ~size_t{0};

/// One op of A that B lacks (removed), one of B that A lacks (added), or an op of A and
/// the op of B in its place that computes something else (changed: another primitive,
/// attribute, constant value, input type or name, or other arguments).
struct OpChange {
  Change change;
  size_t a = kNoIndex;  ///< index into A's ops; kNoIndex when added
  size_t b = kNoIndex;  ///< index into B's ops; kNoIndex when removed
};

/// An output (by name) only in A, only in B, or in both but naming values that differ.
struct OutputChange {
  Change change;
  size_t a = kNoIndex;  ///< index into A's outputs
  size_t b = kNoIndex;  ///< index into B's outputs
};

/// A metadata key whose values differ; nullopt where a tape lacks the key.
struct MetaChange {
  std::string key;
  std::optional<std::string> a, b;
};

/// How tape B differs from tape A.
struct TapeDiff {
  /// Changed ops in reading order: B's order, each removed op of A placed before the first
  /// op of B aligned to an op of A after it.
  std::vector<OpChange> ops;
  std::vector<OutputChange> outputs;  ///< in A's output order, then outputs only in B
  /// The outputs both tapes name come in another order.
  bool outputs_reordered = false;
  /// Name and metadata: shown, but not a difference in what the tapes compute.
  bool name_differs = false;
  std::vector<MetaChange> meta;
  /// For each op of B, the op of A it is aligned with (equal or changed), or kNoIndex.
  std::vector<size_t> a_of_b;

  /// True when the tapes compute the same thing: no op, input or output differs. Names,
  /// metadata, source locations and the order of independent ops or of inputs do not count.
  bool same() const { return ops.empty() && outputs.empty() && !outputs_reordered; }
};

/// Aligns B with A and lists what differs. Both tapes must be valid.
///
/// Inputs are aligned by name, and every other op by what it computes: primitive,
/// attributes (or a constant's type and bytes) and the values it reads, bottom-up, so that
/// equal ops in any order and under any numbering align; repeated equal ops align in order.
/// Ops that still differ are then paired top-down from the outputs (by name) and from
/// effects: the ops that produce the same output, or the same argument of two aligned ops,
/// are the same op changed; an op whose arguments come from changed ops but which is
/// otherwise equal is aligned without being a change, so an edit shows only where it was
/// made. Commutative arguments may come in either order. Linear in the size of the tapes
/// (expected, with hashing).
TapeDiff diff_tapes(const Tape& a, const Tape& b);

/// How reports name an op's kind: "input", "const", or its primitive.
std::string_view diff_op_name(const Op& op);

/// How the two tapes are named in reports (file names).
struct DiffLabels {
  std::string a = "a";
  std::string b = "b";
};

/// The text report: "--- A" and "+++ B", then one line per difference in the text form of
/// tape/print.h, "-" for A and "+" for B, each op with its source location; a changed op is
/// a "-" line followed by a "+" line. Empty when nothing differs, not even names or metadata.
std::string diff_str(const Tape& a, const Tape& b, const TapeDiff& d, const DiffLabels& labels);

/// Counts of removed and added ops per primitive ("input" and "const" for those ops), a
/// changed op counting as one of each, then a summary line. Empty when the tapes are the same.
std::string diff_stat(const Tape& a, const Tape& b, const TapeDiff& d);

/// The report as one JSON object, one difference per line (docs/tools.md describes it);
/// with `stat_only` (`--stat --json`), its summary and per-primitive counts alone.
std::string diff_json(const Tape& a, const Tape& b, const TapeDiff& d, const DiffLabels& labels,
                      bool stat_only = false);

}  // namespace ytape
