// Primitives: the enum and the static facts of each, all derived from ops.def.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tape/attrs.h"
#include "tape/dtype.h"

namespace ytape {

enum class Prim : uint16_t {
#define X(name, family, arity, outputs, flags, dtypes, cost, attrs) name,
#include "tape/ops.def"
#undef X
};

inline constexpr int kNumPrims = 0
#define X(name, family, arity, outputs, flags, dtypes, cost, attrs) +1
#include "tape/ops.def"
#undef X
    ;

/// Rule families: each stage splits its per-primitive rules into files of these names.
enum class Family : uint8_t {
#define FAMILY(f) f,
#include "tape/families.def"
#undef FAMILY
};
inline constexpr int kNumFamilies = 0
#define FAMILY(f) +1
#include "tape/families.def"
#undef FAMILY
    ;
std::string_view family_name(Family f);

/// The plain primitive whose output a multi-output variant computes first
/// (max_pool2d_with_indices -> max_pool2d), for the VARIANT rows of ops.def; nullopt for
/// any other primitive.
std::optional<Prim> plain_form(Prim variant);
/// The multi-output variant of a plain primitive (batchnorm -> batchnorm_with_stats).
std::optional<Prim> variant_of(Prim plain);

/// Flags of a primitive (bit set).
namespace prim_flags {
inline constexpr uint32_t NONE = 0;
inline constexpr uint32_t EW = 1u << 0;      ///< elementwise: output i depends on inputs at i
inline constexpr uint32_t COMM = 1u << 1;    ///< commutative in its two arguments
inline constexpr uint32_t DIFF = 1u << 2;    ///< has a gradient rule
inline constexpr uint32_t EFFECT = 1u << 3;  ///< never merged, removed or reordered
inline constexpr uint32_t RANDOM = 1u << 4;  ///< draws random numbers
/// Discontinuous: its result jumps where its arguments change a little (floor, a
/// comparison, argmax; rem, where x/y crosses an integer).
inline constexpr uint32_t JUMP = 1u << 5;
/// Continuous, but its slope jumps where it chooses (relu's side of zero, max's argument,
/// a pooling window's maximum).
inline constexpr uint32_t KINK = 1u << 6;
}  // namespace prim_flags

/// The dtypes a primitive computes on: those of its data arguments (index arguments are
/// i64 and conditions bool whatever the class), or of its result where it takes none.
enum class DTypes : uint8_t {
  floating,  ///< f32, f64, f16
  numeric,   ///< the floats and i64
  any,       ///< every dtype, bool included
  ordered,   ///< numeric arguments, a bool result (lt, le, gt, ge)
  equality,  ///< arguments of any dtype, a bool result (eq, ne)
  boolean,   ///< bool only (guard's condition)
};

/// Whether an op of class `c` takes data arguments of dtype `d`.
constexpr bool accepts(DTypes c, DType d) {
  switch (c) {
    case DTypes::floating:
      return is_float(d);
    case DTypes::numeric:
    case DTypes::ordered:
      return is_numeric(d);
    case DTypes::any:
    case DTypes::equality:
      return true;
    case DTypes::boolean:
      return d == DType::boolean;
  }
  return false;
}

/// Whether ops of class `c` compare: their result is bool, whatever their arguments.
constexpr bool compares(DTypes c) {
  return c == DTypes::ordered || c == DTypes::equality;
}

/// The `dtypes` column of ops.def at compile time, for code that instantiates templates by
/// it (the elementwise kernels); prim_info(p).dtypes is the same.
constexpr DTypes dtypes_of(Prim p) {
  constexpr DTypes kDTypes[] = {
#define X(name, family, arity, outputs, flags, dtypes, cost, attrs) DTypes::dtypes,
#include "tape/ops.def"
#undef X
  };
  return kDTypes[static_cast<int>(p)];
}

/// How op_flops (tape/cost.h) counts a primitive's work: the `cost` column of ops.def.
enum class Cost : uint8_t {
  elements,         ///< one per output element (arithmetic and data movement)
  reads,            ///< one per element of the first argument (reductions)
  region,           ///< the body's cost times its trips (scan)
  matmul,           ///< a multiply-add per term of each output's dot product
  attention,        ///< the multiply-adds of its products as unfused matmuls compute them
  conv,             ///< a multiply-add per weight tap of each element on the output side
  window,           ///< one per input element that a pooling window reads
  window_backward,  ///< dx zeroed, then each dy spread over its window
  index_backward,   ///< dx zeroed, then each dy added at its index
};

inline constexpr int kVariadic = -1;

/// One attribute of a primitive's schema.
struct AttrSpec {
  std::string name;
  AttrKind kind;
  std::optional<AttrValue> default_value;  ///< absent: the attribute is required
};

/// Static facts of a primitive.
struct PrimInfo {
  std::string_view name;
  Family family;
  int arity;    ///< number of arguments, or kVariadic
  int outputs;  ///< number of outputs, or kVariadic (region ops)
  uint32_t flags;
  DTypes dtypes;  ///< the dtypes it computes on
  Cost cost;      ///< how op_flops counts its work
  std::vector<AttrSpec> attrs;

  bool elementwise() const { return flags & prim_flags::EW; }
  /// Whether its ops hold tapes (Op::regions): the control family.
  bool holds_regions() const { return family == Family::control; }
  bool commutative() const { return flags & prim_flags::COMM; }
  bool differentiable() const { return flags & prim_flags::DIFF; }
  bool effectful() const { return flags & prim_flags::EFFECT; }
  bool random() const { return flags & prim_flags::RANDOM; }
  bool jump() const { return flags & prim_flags::JUMP; }
  bool kink() const { return flags & prim_flags::KINK; }
  /// Whether its data arguments may be of dtype `d` (see DTypes).
  bool accepts(DType d) const { return ytape::accepts(dtypes, d); }
  /// Whether it compares: its result is bool.
  bool compares() const { return ytape::compares(dtypes); }
};

const PrimInfo& prim_info(Prim p);
inline std::string_view prim_name(Prim p) {
  return prim_info(p).name;
}
/// Looks a primitive up by name; nullopt if there is none.
std::optional<Prim> find_prim(std::string_view name);
/// Every primitive in op-list order.
std::span<const Prim> all_prims();
/// The elementwise primitives of `arity` whose row has `dtypes`, in op-list order.
std::vector<Prim> elementwise_prims(int arity, DTypes dtypes);

/// Checks `attrs` against the schema of `p`, fills in defaults, converts integer values
/// given for float attributes, and returns them in schema order. Throws UserError naming
/// the attribute when one is unknown, missing or of the wrong kind.
Attrs normalize_attrs(Prim p, const Attrs& attrs);

/// Empty if `attrs` is exactly what `normalize_attrs` returns (complete, in schema
/// order, of the right kinds); otherwise what is wrong.
std::string attrs_problem(Prim p, const Attrs& attrs);

}  // namespace ytape
