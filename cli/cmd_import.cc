#include <charconv>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/io.h"
#include "onnx/import.h"

namespace ytape::cli {

namespace {

struct ImportCliOptions {
  std::string model, out, weights;
  std::vector<std::string> dims, lengths;
  bool ignore_marks = false;
};

// `--dim NAME=SIZE` options as the importer's map.
std::map<std::string, int64_t> parse_dims(const std::vector<std::string>& dims) {
  std::map<std::string, int64_t> out;
  for (const std::string& d : dims) {
    size_t eq = d.find('=');
    int64_t size = -1;
    const char* end = d.data() + d.size();
    if (eq != std::string::npos && eq > 0) {
      auto [ptr, ec] = std::from_chars(d.data() + eq + 1, end, size);
      if (ec != std::errc() || ptr != end) size = -1;
    }
    if (size < 0) user_error("--dim {}: give a symbolic dim's size as NAME=N, as in batch=1", d);
    out[d.substr(0, eq)] = size;
  }
  return out;
}

// One `--length` value: N, `none`, or the tensors' ONNX shapes as `[2,3],[4]` ([] for a
// scalar), in ytape's layout; nullopt when it is none of those.
std::optional<OnnxSequenceInput> parse_length(std::string_view value) {
  OnnxSequenceInput s;
  if (value == "none") {
    s.present = false;
    return s;
  }
  const char *p = value.data(), *end = p + value.size();
  if (p == end || *p != '[') {
    auto [ptr, ec] = std::from_chars(p, end, s.length);
    if (ec != std::errc() || ptr != end || s.length < 0) return std::nullopt;
    return s;
  }
  while (p != end) {
    if (*p++ != '[') return std::nullopt;
    Shape shape;
    while (p != end && *p != ']') {
      int64_t d = -1;
      auto [ptr, ec] = std::from_chars(p, end, d);
      if (ec != std::errc() || d < 0) return std::nullopt;
      shape.insert(shape.begin(), d);  // ONNX's order reversed
      p = ptr != end && *ptr == ',' && ptr + 1 != end && ptr[1] != ']' ? ptr + 1 : ptr;
    }
    if (p == end) return std::nullopt;
    s.shapes.push_back(shape);
    if (++p == end) break;
    if (*p++ != ',' || p == end) return std::nullopt;
  }
  s.length = static_cast<int64_t>(s.shapes.size());
  return s;
}

// `--length NAME=...` options as the importer's sequence inputs.
std::map<std::string, OnnxSequenceInput> parse_lengths(const std::vector<std::string>& lengths) {
  std::map<std::string, OnnxSequenceInput> out;
  for (const std::string& l : lengths) {
    size_t eq = l.find('=');
    std::optional<OnnxSequenceInput> s;
    if (eq != std::string::npos && eq > 0) s = parse_length(std::string_view(l).substr(eq + 1));
    if (!s) {
      user_error(
          "--length {}: give a sequence input's length as NAME=N, as in seq=3, or its "
          "tensors' shapes as NAME=[2,3],[4] (ONNX's order), or an optional input's absence "
          "as NAME=none",
          l);
    }
    out[l.substr(0, eq)] = *s;
  }
  return out;
}

}  // namespace

Run setup_import(CLI::App& sub) {
  auto o = std::make_shared<ImportCliOptions>();
  sub.add_option("MODEL", o->model, "ONNX model (.onnx), opset 13 to 17")->required();
  sub.add_option("-o,--output", o->out, "Write the tape (JSON) here instead of standard output");
  sub.add_option("--weights", o->weights,
                 "Write the initializers (the tape's weight inputs) to this safetensors file");
  sub.add_option("--dim", o->dims,
                 "Size of a symbolic input dim (dim_param) as NAME=N, as in batch=1; repeatable");
  sub.add_option("--length", o->lengths,
                 "Length of a sequence input as NAME=N (its tensors become inputs NAME[1] to "
                 "NAME[N]), or its tensors' shapes where the model leaves them open, as "
                 "NAME=[2,3],[4]; an optional input's absence as NAME=none, or NAME=1 (a "
                 "tensor) or NAME=N (a sequence) when it holds a value; repeatable");
  sub.add_flag("--ignore-marks", o->ignore_marks,
               "Read a model that ytape exported as any other: its nodes, not the primitives "
               "its marks name (docs/onnx.md)");
  return [o] {
    refuse_overwrites({{"MODEL", o->model}}, {{"-o", o->out}, {"--weights", o->weights}});
    OnnxImportOptions options;
    options.dims = parse_dims(o->dims);
    options.sequences = parse_lengths(o->lengths);
    options.read_marks = !o->ignore_marks;
    OnnxImport imported = import_onnx(read_file(o->model), source_name(o->model), options);
    // The weights first: a tape is never left without the values it was written with.
    if (!o->weights.empty()) write_safetensors_file(o->weights, imported.weights);
    write_tape_file(o->out, imported.tape);
    return kOk;
  };
}

}  // namespace ytape::cli
