#include "onnx/marks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "io/json.h"
#include "tape/error.h"

namespace ytape::onnx_marks {

namespace {

using nlohmann::json;

constexpr std::string_view kPrefix = "ytape ";

// JSON has no infinities or NaN: floats that are not finite are written as ytape's text
// form writes them ("inf", "-inf", "nan").
nlohmann::ordered_json attr_json(const AttrValue& v) {
  using json = nlohmann::ordered_json;
  switch (attr_kind(v)) {
    case AttrKind::int_:
      return std::get<int64_t>(v);
    case AttrKind::ints:
      return std::get<std::vector<int64_t>>(v);
    case AttrKind::float_: {
      double d = std::get<double>(v);
      return std::isfinite(d) ? json(d) : json(float_str(d));
    }
    case AttrKind::bool_:
      return std::get<bool>(v);
    case AttrKind::string:
      return std::get<std::string>(v);
    case AttrKind::dtype:
      return std::string(dtype_name(std::get<DType>(v)));
  }
  return nullptr;
}

[[noreturn]] void bad(const std::string& what) {
  user_error("a bad ytape mark in the node's doc_string: {}", what);
}

AttrValue attr_value(const AttrSpec& spec, const json& j) {
  switch (spec.kind) {
    case AttrKind::int_:
      if (j.is_number_integer()) return j.get<int64_t>();
      break;
    case AttrKind::ints:
      if (j.is_array() &&
          std::all_of(j.begin(), j.end(), [](const json& e) { return e.is_number_integer(); })) {
        return j.get<std::vector<int64_t>>();
      }
      break;
    case AttrKind::float_:
      if (j.is_number()) return j.get<double>();
      if (j.is_string()) {
        std::string s = j.get<std::string>();
        if (s == "inf" || s == "-inf" || s == "nan") return std::strtod(s.c_str(), nullptr);
      }
      break;
    case AttrKind::bool_:
      if (j.is_boolean()) return j.get<bool>();
      break;
    case AttrKind::string:
      if (j.is_string()) return j.get<std::string>();
      break;
    case AttrKind::dtype: {
      DType d;
      if (j.is_string() && parse_dtype(j.get<std::string>(), &d)) return d;
      break;
    }
  }
  bad(fmt::format("attribute '{}' is not of kind {}", spec.name, attr_kind_name(spec.kind)));
}

Attrs read_attrs(Prim p, const json& j) {
  if (!j.is_object()) bad("\"attrs\" is not an object");
  Attrs attrs;
  for (const auto& item : j.items()) {
    // Not a structured binding: Clang 14 (the fuzz build) cannot capture one.
    const std::string& name = item.key();
    const auto& specs = prim_info(p).attrs;
    auto spec =
        std::find_if(specs.begin(), specs.end(), [&](const AttrSpec& s) { return s.name == name; });
    if (spec == specs.end()) bad(fmt::format("{} has no attribute '{}'", prim_name(p), name));
    attrs.set(name, attr_value(*spec, item.value()));
  }
  return normalize_attrs(p, attrs);
}

// The strings of list `key` of `j`; an absent list is empty where not `required`.
std::vector<std::string> names(const json& j, const char* key, bool required = true) {
  if (!required && !j.contains(key)) return {};
  if (!j.contains(key) || !j[key].is_array()) bad(fmt::format("no \"{}\" list", key));
  std::vector<std::string> out;
  for (const json& e : j[key]) {
    if (!e.is_string()) bad(fmt::format("\"{}\" holds a value that is not a name", key));
    out.push_back(e.get<std::string>());
  }
  return out;
}

Mark parse_mark(json& j) {
  if (!j.contains("op") || !j["op"].is_string()) bad("no \"op\"");
  std::optional<Prim> p = find_prim(j["op"].get<std::string>());
  if (!p) bad(fmt::format("no primitive is named '{}'", j["op"].get<std::string>()));
  Mark m{*p, read_attrs(*p, j.value("attrs", json::object())), names(j, "args"), names(j, "outs")};
  const PrimInfo& info = prim_info(*p);
  if (info.arity != kVariadic && static_cast<int>(m.args.size()) != info.arity) {
    bad(fmt::format("{} takes {} arguments, the mark names {}", info.name, info.arity,
                    m.args.size()));
  }
  if (info.outputs != kVariadic && static_cast<int>(m.outs.size()) != info.outputs) {
    bad(fmt::format("{} has {} outputs, the mark names {}", info.name, info.outputs,
                    m.outs.size()));
  }
  if (!j.contains("nodes") || !j["nodes"].is_number_integer() || j["nodes"].get<int64_t>() < 1) {
    bad("\"nodes\" is not a positive count");
  }
  m.nodes = static_cast<int>(std::min<int64_t>(j["nodes"].get<int64_t>(), 1 << 30));
  if (!j.contains("digest") || !j["digest"].is_string() || j["digest"].get<std::string>().empty()) {
    bad("no \"digest\"");
  }
  m.digest = j["digest"].get<std::string>();
  for (const std::string& text : names(j, "regions", false)) {
    m.regions.push_back(read_tape_json(text, "the mark's region"));
    for (Output& o : m.regions.back().outputs) o.name.clear();  // yields are unnamed
  }
  return m;
}

}  // namespace

// Keys in the order written, attributes in schema order, as the tape's JSON has them.
std::string mark_text(const Mark& m) {
  nlohmann::ordered_json attrs = nlohmann::ordered_json::object();
  for (const AttrSpec& spec : prim_info(m.prim).attrs) {
    if (const AttrValue* v = m.attrs.find(spec.name)) attrs[spec.name] = attr_json(*v);
  }
  nlohmann::ordered_json j = {{"op", std::string(prim_name(m.prim))},
                              {"attrs", attrs},
                              {"args", m.args},
                              {"outs", m.outs},
                              {"nodes", m.nodes},
                              {"digest", m.digest}};
  if (!m.regions.empty()) {
    std::vector<std::string> regions;
    for (Tape r : m.regions) {
      // Written as a tape, whose outputs have names of their own: y1, y2, ...
      for (size_t k = 0; k < r.outputs.size(); ++k) r.outputs[k].name = fmt::format("y{}", k + 1);
      regions.push_back(write_tape_json(r));
    }
    j["regions"] = regions;
  }
  return std::string(kPrefix) + j.dump();
}

std::string group_digest(const onnx::GraphProto& g, int first, int nodes) {
  if (first < 0 || nodes < 0 || nodes > g.node_size() - first) return "";
  uint64_t h = 14695981039346656037ull;  // FNV-1a
  for (int i = first; i < first + nodes; ++i) {
    onnx::NodeProto n = g.node(i);
    if (i == first) n.clear_doc_string();
    // The length first, so that no two groups hash one byte string.
    std::string bytes = n.SerializeAsString();
    bytes = std::to_string(bytes.size()) + ":" + bytes;
    for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  }
  return fmt::format("{:016x}", h);
}

std::optional<Mark> read_mark(const onnx::NodeProto& node) {
  const std::string& doc = node.doc_string();
  if (doc.rfind(kPrefix, 0) != 0) return std::nullopt;
  json j = json::parse(doc.begin() + static_cast<std::ptrdiff_t>(kPrefix.size()), doc.end(),
                       nullptr, false);
  if (j.is_discarded() || !j.is_object()) bad("not a JSON object");
  try {
    return parse_mark(j);
  } catch (const json::exception& e) {
    bad(e.what());
  }
}
}  // namespace ytape::onnx_marks
