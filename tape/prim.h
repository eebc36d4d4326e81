// Primitives: the enum and the static facts of each, all derived from ops.def.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tape/attrs.h"

namespace ytape {

enum class Prim : uint16_t {
#define X(name, family, arity, outputs, flags, attrs) name,
#include "tape/ops.def"
#undef X
};

inline constexpr int kNumPrims = 0
#define X(name, family, arity, outputs, flags, attrs) +1
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
}  // namespace prim_flags

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
  int outputs;  ///< number of outputs
  uint32_t flags;
  std::vector<AttrSpec> attrs;

  bool elementwise() const { return flags & prim_flags::EW; }
  bool commutative() const { return flags & prim_flags::COMM; }
  bool differentiable() const { return flags & prim_flags::DIFF; }
  bool effectful() const { return flags & prim_flags::EFFECT; }
  bool random() const { return flags & prim_flags::RANDOM; }
};

const PrimInfo& prim_info(Prim p);
inline std::string_view prim_name(Prim p) {
  return prim_info(p).name;
}
/// Looks a primitive up by name; nullopt if there is none.
std::optional<Prim> find_prim(std::string_view name);
/// Every primitive in op-list order.
std::span<const Prim> all_prims();

/// Checks `attrs` against the schema of `p`, fills in defaults, converts integer values
/// given for float attributes, and returns them in schema order. Throws UserError naming
/// the attribute when one is unknown, missing or of the wrong kind.
Attrs normalize_attrs(Prim p, const Attrs& attrs);

/// Empty if `attrs` is exactly what `normalize_attrs` returns (complete, in schema
/// order, of the right kinds); otherwise what is wrong.
std::string attrs_problem(Prim p, const Attrs& attrs);

}  // namespace ytape
