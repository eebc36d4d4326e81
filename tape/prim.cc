#include "tape/prim.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "tape/error.h"
#include "tape/op_attrs.h"

namespace ytape {

namespace {

struct Registry {
  std::vector<PrimInfo> infos;
  std::vector<Prim> prims;
  // find_prim's table: each primitive's index in the first free slot from its name's slot
  // (linear probing), -1 where free. Readers look a primitive up per op, and hashing the
  // whole name cost the JSON reader a tenth of its time; the length and three characters
  // tell the names apart in most slots.
  static constexpr size_t kSlots = 512;  // a power of two, several times the primitives
  std::array<int16_t, kSlots> slots{};

  static size_t slot(std::string_view n) {
    auto at = [&](size_t i) { return static_cast<size_t>(static_cast<unsigned char>(n[i])); };
    return (n.size() * 131 + at(0) * 31 + at(n.size() / 2) * 7 + at(n.size() - 1)) & (kSlots - 1);
  }

  Registry() {
    using namespace prim_flags;
    constexpr int VARIADIC = kVariadic;
#define ATTR(kind, name) AttrSpec{#name, YTAPE_ATTR_KIND_##kind, std::nullopt},
#define ATTR_OR(kind, name, dflt)         \
  AttrSpec{#name, YTAPE_ATTR_KIND_##kind, \
           AttrValue(YTAPE_ATTR_TYPE_##kind{YTAPE_ATTR_UNPAREN dflt})},
#define X(name_, family_, arity_, outputs_, flags_, dtypes_, cost_, attrs_)                        \
  infos.push_back(PrimInfo{                                                                        \
      #name_, Family::family_, arity_, outputs_, flags_, DTypes::dtypes_, Cost::cost_, {attrs_}}); \
  prims.push_back(Prim::name_);
#include "tape/ops.def"
#undef X
#undef ATTR_OR
#undef ATTR
    (void)VARIADIC;
    slots.fill(-1);
    for (size_t i = 0; i < infos.size(); ++i) {
      size_t k = slot(infos[i].name);
      while (slots[k] >= 0) k = (k + 1) & (kSlots - 1);
      slots[k] = static_cast<int16_t>(i);
    }
  }

  std::optional<Prim> find(std::string_view name) const {
    if (name.empty()) return std::nullopt;
    for (size_t k = slot(name); slots[k] >= 0; k = (k + 1) & (kSlots - 1)) {
      if (infos[slots[k]].name == name) return prims[slots[k]];
    }
    return std::nullopt;
  }
};

const Registry& registry() {
  static const Registry r;
  return r;
}

}  // namespace

std::string_view family_name(Family f) {
  static constexpr std::string_view kNames[kNumFamilies] = {
#define FAMILY(f) #f,
#include "tape/families.def"
#undef FAMILY
  };
  return kNames[static_cast<int>(f)];
}

std::optional<Prim> plain_form(Prim variant) {
#define X(name, family, arity, outputs, flags, dtypes, cost, attrs)
#define VARIANT(v, plain) \
  if (variant == Prim::v) return Prim::plain;
#include "tape/ops.def"
#undef VARIANT
#undef X
  return std::nullopt;
}

std::optional<Prim> variant_of(Prim plain) {
#define X(name, family, arity, outputs, flags, dtypes, cost, attrs)
#define VARIANT(v, plain_prim) \
  if (plain == Prim::plain_prim) return Prim::v;
#include "tape/ops.def"
#undef VARIANT
#undef X
  return std::nullopt;
}

const PrimInfo& prim_info(Prim p) {
  return registry().infos[static_cast<size_t>(p)];
}

std::optional<Prim> find_prim(std::string_view name) {
  return registry().find(name);
}

std::span<const Prim> all_prims() {
  return registry().prims;
}

std::vector<Prim> elementwise_prims(int arity, DTypes dtypes) {
  std::vector<Prim> out;
  for (Prim p : all_prims()) {
    const PrimInfo& info = prim_info(p);
    if (info.elementwise() && info.arity == arity && info.dtypes == dtypes) out.push_back(p);
  }
  return out;
}

Attrs normalize_attrs(Prim p, const Attrs& attrs) {
  const PrimInfo& info = prim_info(p);
  for (const Attr& a : attrs) {
    bool known = std::any_of(info.attrs.begin(), info.attrs.end(),
                             [&](const AttrSpec& s) { return s.name == a.name; });
    if (!known) {
      if (info.attrs.empty()) user_error("takes no attributes, but '{}' is given", a.name);
      std::vector<std::string_view> names;
      for (const AttrSpec& s : info.attrs) names.push_back(s.name);
      user_error("has no attribute '{}' (it takes {})", a.name, fmt::join(names, ", "));
    }
  }
  Attrs out;
  for (const AttrSpec& spec : info.attrs) {
    const AttrValue* v = attrs.find(spec.name);
    if (v == nullptr) {
      if (!spec.default_value)
        user_error("needs attribute '{}' ({})", spec.name, attr_kind_name(spec.kind));
      out.push_back({spec.name, *spec.default_value});
      continue;
    }
    if (spec.kind == AttrKind::float_ && attr_kind(*v) == AttrKind::int_) {
      out.push_back({spec.name, static_cast<double>(std::get<int64_t>(*v))});
      continue;
    }
    if (attr_kind(*v) != spec.kind) {
      user_error("attribute '{}' must be {}, not {} {}", spec.name, attr_kind_name(spec.kind),
                 attr_kind_name(attr_kind(*v)), attr_value_str(*v));
    }
    out.push_back({spec.name, *v});
  }
  return out;
}

std::string attrs_problem(Prim p, const Attrs& attrs) {
  const PrimInfo& info = prim_info(p);
  size_t i = 0;
  for (const Attr& a : attrs) {
    if (i >= info.attrs.size() || info.attrs[i].name != a.name) {
      try {
        normalize_attrs(p, attrs);
      } catch (const UserError& e) {
        return e.what();
      }
      return fmt::format("attributes are not in schema order (expected {})",
                         i < info.attrs.size() ? info.attrs[i].name : "no more");
    }
    if (attr_kind(a.value) != info.attrs[i].kind) {
      return fmt::format("attribute '{}' must be {}, not {} {}", a.name,
                         attr_kind_name(info.attrs[i].kind), attr_kind_name(attr_kind(a.value)),
                         attr_value_str(a.value));
    }
    ++i;
  }
  if (i < info.attrs.size()) {
    return fmt::format("needs attribute '{}' ({})", info.attrs[i].name,
                       attr_kind_name(info.attrs[i].kind));
  }
  return {};
}

}  // namespace ytape
