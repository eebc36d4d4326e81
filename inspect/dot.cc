#include "inspect/dot.h"

#include <fmt/format.h>

#include <string_view>
#include <unordered_map>

#include "tape/print.h"
#include "tape/strings.h"

namespace ytape {

namespace {

// A Graphviz string: quoted, with `"` and `\` escaped and line breaks as \n.
std::string dot_quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : printable_lines(s)) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out + '"';
}

std::string types_of(const Tape& t, const Op& op) {
  if (op.outs.size() == 1) return type_str(t.type(op.outs[0]));
  std::string out = "(";
  for (size_t k = 0; k < op.outs.size(); ++k)
    out += (k > 0 ? ", " : "") + type_str(t.type(op.outs[k]));
  return out + ")";
}

std::string node(const Tape& t, size_t index) {
  const Op& op = t.ops[index];
  std::string label, style;
  switch (op.kind) {
    case OpKind::input:
      label = fmt::format("{}\n{}", op.name, types_of(t, op));
      style = "shape=ellipse, fillcolor=\"#d6e9ff\"";
      break;
    case OpKind::constant: {
      const Type& type = t.type(op.outs[0]);
      std::string value =
          type.rank() == 0 ? fmt::format(" {}", literal_str(op, type.dtype, 0)) : "";
      label = fmt::format("const{}\n{}", value, types_of(t, op));
      style = "fillcolor=\"#eeeeee\"";
      break;
    }
    case OpKind::call:
      label = std::string(prim_name(op.prim));
      if (!op.outs.empty()) label = fmt::format("{}\n{}", label, types_of(t, op));
      if (prim_info(op.prim).effectful()) style = "shape=hexagon, fillcolor=\"#fff3b0\"";
      break;
  }
  std::string out = fmt::format("op{} [label={}, tooltip={}", index + 1, dot_quoted(label),
                                dot_quoted(print_op(t, op)));
  if (!style.empty()) out += ", " + style;
  return out + "];\n";
}

}  // namespace

std::string tape_dot(const Tape& t) {
  std::string out = fmt::format("digraph {} {{\n", dot_quoted(t.name.empty() ? "tape" : t.name));
  out +=
      "  node [shape=box, style=\"rounded,filled\", fillcolor=white, fontname=\"Helvetica\", "
      "fontsize=10];\n";
  out += "  edge [fontsize=8, arrowsize=0.6];\n";
  // Clusters in order of first appearance; ops without a location and inputs stay outside.
  std::vector<std::vector<size_t>> clusters;
  std::vector<Loc> cluster_locs;
  std::unordered_map<uint64_t, size_t> cluster_of;
  for (size_t i = 0; i < t.ops.size(); ++i) {
    const Op& op = t.ops[i];
    if (op.kind == OpKind::input || !op.loc.known()) {
      out += "  " + node(t, i);
      continue;
    }
    uint64_t key = (uint64_t{op.loc.file} << 32) | op.loc.line;
    auto [it, fresh] = cluster_of.try_emplace(key, clusters.size());
    if (fresh) {
      clusters.emplace_back();
      cluster_locs.push_back(op.loc);
    }
    clusters[it->second].push_back(i);
  }
  for (size_t k = 0; k < clusters.size(); ++k) {
    out += fmt::format(
        "  subgraph cluster_{} {{\n    label={};\n    style=\"rounded,dashed\";\n"
        "    color=\"#999999\";\n    fontsize=9;\n",
        k + 1, dot_quoted(t.loc_str(cluster_locs[k])));
    for (size_t i : clusters[k]) out += "    " + node(t, i);
    out += "  }\n";
  }
  for (size_t j = 0; j < t.outputs.size(); ++j) {
    out += fmt::format("  out{} [label={}, shape=house, fillcolor=\"#ffd8a8\"];\n", j + 1,
                       dot_quoted(t.outputs[j].name));
  }
  // Edges, from the op defining each argument.
  std::vector<size_t> def_op(t.types.size(), 0), def_index(t.types.size(), 0);
  for (size_t i = 0; i < t.ops.size(); ++i) {
    for (size_t k = 0; k < t.ops[i].outs.size(); ++k) {
      def_op[t.ops[i].outs[k].id] = i;
      def_index[t.ops[i].outs[k].id] = k;
    }
  }
  auto edge = [&](Var v, std::string_view to) {
    size_t from = def_op[v.id];
    out += fmt::format("  op{} -> {}", from + 1, to);
    if (t.ops[from].outs.size() > 1) out += fmt::format(" [taillabel=\"{}\"]", def_index[v.id] + 1);
    out += ";\n";
  };
  for (size_t i = 0; i < t.ops.size(); ++i) {
    for (Var a : t.ops[i].args) edge(a, fmt::format("op{}", i + 1));
  }
  for (size_t j = 0; j < t.outputs.size(); ++j) edge(t.outputs[j].var, fmt::format("out{}", j + 1));
  return out + "}\n";
}

}  // namespace ytape
