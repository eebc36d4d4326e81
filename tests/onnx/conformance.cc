// Runs ONNX's node tests (Debian's libonnx-testdata) through the importer and the runtime.
//
// usage: onnx_conformance DATA_DIR EXPECTED_FAILURES [REPORT]
//
// Each test directory holds model.onnx and test_data_set_*/{input,output}_N.pb. A test is
// imported with the inputs that the importer needs static (shapes, axes, pads) bound as
// constants to their values in the first data set, run on its other inputs, and its outputs
// compared with ONNX's as ONNX's own runner does (|got - want| <= 1e-7 + 1e-3 |want|, NaN equal to
// NaN). Outcomes: pass; random, when the tape draws random numbers (Bernoulli, a Dropout in
// training): ONNX's values come from another generator, so the outputs are checked for
// shape, dtype and their distribution's support instead (random_checks.h), never counted as
// passed; skip, when the importer refuses the model as beyond what ytape expresses (an op
// type without a rule, a dtype ytape lacks, an opset outside 13-17); fail otherwise; xfail, a
// failure listed in EXPECTED_FAILURES ("test_name  reason" per line, # comments). A test that
// passes (or is random) is then exported, imported back as any ONNX model and run again, which must
// pass too, and imported back as ytape's own (onnx/marks.h), which must give the same tape
// (inspect/diff.h). The exit code is 1 when a test fails that is not listed, or a listed one passes
// (the list must then shrink). REPORT gets one line per test, tab-separated: name, op types,
// outcome, reason; scripts/onnx_coverage.sh turns it into docs/onnx.md's table.
#include <onnx/onnx-data_pb.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "inspect/diff.h"
#include "onnx/export.h"
#include "onnx/import.h"
#include "random_checks.h"
#include "runtime/executor.h"
#include "runtime/file_dtype.h"
#include "runtime/inputs.h"
#include "runtime/tensor_file.h"

namespace fs = std::filesystem;
using namespace ytape;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Outcome {
  std::string kind, reason;
};

bool close_enough(const Tensor& got, const Tensor& want, std::string* why) {
  if (got.shape() != want.shape()) {
    *why = fmt::format("shape {} where ONNX has {}", type_str(got.type()), type_str(want.type()));
    return false;
  }
  bool floats = want.dtype() == DType::f32 || want.dtype() == DType::f64;
  for (int64_t i = 0; i < want.size(); ++i) {
    double g = element_value(got, i), w = element_value(want, i);
    bool ok = floats ? (std::isnan(w) ? std::isnan(g)
                                      : g == w || std::abs(g - w) <= 1e-7 + 1e-3 * std::abs(w))
                     : g == w;
    if (!ok) {
      *why = fmt::format("element {} is {}, ONNX has {}", i, g, w);
      return false;
    }
  }
  return true;
}

// The tensor of a data set's input_N.pb or output_N.pb.
Tensor read_set_tensor(const fs::path& set, const char* kind, size_t i) {
  fs::path p = set / fmt::format("{}_{}.pb", kind, i);
  return read_onnx_tensor(slurp(p), p.string());
}

// A graph value of a data set, as the tape holds it: its tensors, named as the tape's inputs
// and outputs are (a sequence `s` as `s[1]`, `s[2]`, ...), and whether it is present (false
// for an optional that is none).
struct SetValue {
  bool present = true;
  std::vector<std::pair<std::string, Tensor>> tensors;
};

// input_N.pb or output_N.pb of a set, as the graph value `v`'s type says it is serialized:
// a TensorProto, a SequenceProto or an OptionalProto.
SetValue read_set_value(const fs::path& set, const char* kind, size_t i,
                        const onnx::ValueInfoProto& v) {
  fs::path p = set / fmt::format("{}_{}.pb", kind, i);
  SetValue out;
  auto add = [&](const onnx::TensorProto& t, bool element) {
    std::string name = element ? fmt::format("{}[{}]", v.name(), out.tensors.size() + 1) : v.name();
    out.tensors.emplace_back(name, read_onnx_tensor(t.SerializeAsString(), p.string()));
  };
  auto add_sequence = [&](const onnx::SequenceProto& s) {
    for (const onnx::TensorProto& t : s.tensor_values()) add(t, true);
  };
  if (v.type().has_sequence_type()) {
    onnx::SequenceProto s;
    s.ParseFromString(slurp(p));
    add_sequence(s);
  } else if (v.type().has_optional_type()) {
    onnx::OptionalProto o;
    o.ParseFromString(slurp(p));
    out.present = o.has_tensor_value() || o.has_sequence_value();
    if (o.has_tensor_value()) add(o.tensor_value(), false);
    if (o.has_sequence_value()) add_sequence(o.sequence_value());
  } else {
    out.tensors.emplace_back(v.name(), read_set_tensor(set, kind, i));
  }
  return out;
}

int inputs_through_files = 0;  // inputs checked by through_tensor_files
int inputs_widened = 0;        // of them, in a dtype the tape widens (u8, i32, bf16, ...)

// The safetensors dtype of an ONNX tensor's element type, where safetensors has one.
std::optional<FileDType> file_dtype_of_onnx(int32_t type) {
  using P = onnx::TensorProto;
  switch (type) {
    case P::BOOL:
      return FileDType::boolean;
    case P::UINT8:
      return FileDType::u8;
    case P::UINT16:
      return FileDType::u16;
    case P::UINT32:
      return FileDType::u32;
    case P::UINT64:
      return FileDType::u64;
    case P::INT8:
      return FileDType::i8;
    case P::INT16:
      return FileDType::i16;
    case P::INT32:
      return FileDType::i32;
    case P::INT64:
      return FileDType::i64;
    case P::FLOAT16:
      return FileDType::f16;
    case P::BFLOAT16:
      return FileDType::bf16;
    case P::FLOAT:
      return FileDType::f32;
    case P::DOUBLE:
      return FileDType::f64;
    default:
      return std::nullopt;
  }
}

// The tensor inputs of a data set fed as a user feeds them: each written to a safetensors
// file in its own ONNX dtype (U8 images, I32 ids, BF16 weights) and read back by `ytape
// run`'s reader for the tape (runtime/inputs.h), which converts them to the tape's dtypes;
// the result must be the bits the .pb files widen to. Returns what differs, or "".
std::string through_tensor_files(const fs::path& set, const onnx::ModelProto& model,
                                 const Tape& tape, const TensorMap& inputs) {
  for (int i = 0; i < model.graph().input_size(); ++i) {
    const onnx::ValueInfoProto& v = model.graph().input(i);
    fs::path p = set / fmt::format("input_{}.pb", i);
    auto given = std::find_if(inputs.begin(), inputs.end(),
                              [&](const auto& in) { return in.first == v.name(); });
    if (!v.type().has_tensor_type() || !fs::exists(p) || given == inputs.end()) continue;
    onnx::TensorProto proto;
    proto.ParseFromString(slurp(p));
    std::optional<FileDType> dtype = file_dtype_of_onnx(proto.data_type());
    if (!dtype) continue;
    std::vector<uint8_t> file = write_safetensors({*given}, {}, *dtype);
    TensorMap back = load_inputs({reinterpret_cast<const char*>(file.data()), file.size()},
                                 "in.safetensors", tape);
    const Tensor& a = given->second;
    const Tensor& b = back.at(0).second;
    if (a.type() != b.type() || std::memcmp(a.raw(), b.raw(), static_cast<size_t>(a.bytes())) != 0)
      return fmt::format("input {} as {} in safetensors reads back as {}", v.name(),
                         file_dtype_name(*dtype), type_str(b.type()));
    ++inputs_through_files;
    inputs_widened += *dtype != file_dtype_of(a.dtype());
  }
  return "";
}

bool draws_random(const Tape& t) {
  return std::any_of(t.ops.begin(), t.ops.end(), [](const Op& op) {
    return op.kind == OpKind::call && prim_info(op.prim).random();
  });
}

// Runs one data set: the inputs the tape has, by position in the graph's inputs. A tape
// that draws random numbers is checked for its distribution (random_checks.h), its outcome
// "random"; any other compared with ONNX's outputs.
Outcome run_set(const fs::path& set, const onnx::ModelProto& model, const OnnxImport& imported) {
  TensorMap inputs;
  std::vector<Tensor> all_inputs;
  std::set<std::string> wanted;
  for (const Op& op : imported.tape.ops)
    if (op.kind == OpKind::input) wanted.insert(op.name);
  for (int i = 0; i < model.graph().input_size(); ++i) {
    const onnx::ValueInfoProto& v = model.graph().input(i);
    if (!fs::exists(set / fmt::format("input_{}.pb", i))) continue;
    for (auto& [name, t] : read_set_value(set, "input", i, v).tensors) {
      if (v.type().has_tensor_type()) all_inputs.push_back(t);
      if (wanted.count(name)) inputs.emplace_back(name, t);
    }
  }
  std::string why = through_tensor_files(set, model, imported.tape, inputs);
  if (!why.empty()) return {"fail", why};
  for (const auto& w : imported.weights) inputs.push_back(w);
  Executor executor(imported.tape);
  std::vector<Tensor> outs = executor.run(inputs), wants;
  for (int i = 0; i < model.graph().output_size(); ++i) {
    for (auto& [name, t] : read_set_value(set, "output", i, model.graph().output(i)).tensors)
      wants.push_back(t);
  }
  if (outs.size() != wants.size())
    return {"fail", fmt::format("{} output tensors, ONNX has {}", outs.size(), wants.size())};
  if (draws_random(imported.tape)) {
    std::string why = onnx_conformance::check_random(model, all_inputs, outs, wants);
    return why.empty() ? Outcome{"random", ""} : Outcome{"fail", why};
  }
  for (size_t i = 0; i < outs.size(); ++i) {
    std::string why;
    if (!close_enough(outs[i], wants[i], &why))
      return {"fail", fmt::format("output {}: {}", i + 1, why)};
  }
  return {"pass", ""};
}

// Imports the model, binding as constants the graph inputs that the importer needs static
// (a Reshape's shape, a Slice's starts), with their values in the data set `set`.
OnnxImport import_binding(const std::string& bytes, const fs::path& dir,
                          const onnx::ModelProto& model, const fs::path& set) {
  OnnxImportOptions options;
  // The sequence and optional inputs' structure, and the inputs' symbolic dims, as the data
  // set has them.
  for (int i = 0; i < model.graph().input_size(); ++i) {
    const onnx::ValueInfoProto& v = model.graph().input(i);
    const auto& dims = v.type().tensor_type().shape().dim();
    bool symbolic =
        std::any_of(dims.begin(), dims.end(), [](const auto& d) { return !d.dim_param().empty(); });
    bool structured = v.type().has_sequence_type() || v.type().has_optional_type();
    if (!(symbolic || structured) || !fs::exists(set / fmt::format("input_{}.pb", i))) continue;
    SetValue value = read_set_value(set, "input", i, v);
    if (!structured) {
      Shape shape = value.tensors[0].second.shape();  // ONNX's reversed
      for (int d = 0; d < dims.size() && d < static_cast<int>(shape.size()); ++d) {
        if (!dims[d].dim_param().empty())
          options.dims[dims[d].dim_param()] = shape[shape.size() - 1 - d];
      }
      continue;
    }
    OnnxSequenceInput& s = options.sequences[v.name()];
    s.present = value.present;
    s.length = static_cast<int64_t>(value.tensors.size());
    for (const auto& [name, t] : value.tensors) s.shapes.push_back(t.shape());
  }
  for (;;) {
    try {
      return import_onnx(bytes, (dir / "model.onnx").string(), options);
    } catch (const UnsupportedError& e) {
      int input = -1;
      for (int i = 0; i < model.graph().input_size(); ++i) {
        if (model.graph().input(i).name() == e.needs_static()) input = i;
      }
      bool bound = std::any_of(options.constant_inputs.begin(), options.constant_inputs.end(),
                               [&](const auto& b) { return b.first == e.needs_static(); });
      if (input < 0 || bound) throw;
      fs::path p = set / fmt::format("input_{}.pb", input);
      options.constant_inputs.emplace_back(e.needs_static(),
                                           read_onnx_tensor(slurp(p), p.string()));
    }
  }
}

Outcome run_test(const fs::path& dir, const onnx::ModelProto& model) {
  std::string bytes = slurp(dir / "model.onnx");
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
  }
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) return {"skip", "no test data"};
  try {
    OnnxImport imported = import_binding(bytes, dir, model, sets[0]);
    std::string kind;  // pass or random
    for (const fs::path& set : sets) {
      Outcome o = run_set(set, model, imported);
      if (o.kind == "fail") return o;
      kind = o.kind;
    }
    // Exported and imported again, the tape must pass as well, where it exports.
    std::string exported;
    try {
      exported = export_onnx(imported.tape, imported.weights);
    } catch (const UnsupportedError& e) {
      return {kind, std::string("not exported: ") + e.what()};
    }
    // Read as any ONNX model, the exported nodes compute what the tape computes; read with
    // ytape's marks, they are the tape itself.
    OnnxImportOptions plain;
    plain.read_marks = false;
    OnnxImport back = import_onnx(exported, (dir / "exported.onnx").string(), plain);
    for (const fs::path& set : sets) {
      Outcome o = run_set(set, model, back);
      if (o.kind == "fail") return {o.kind, "after export: " + o.reason};
    }
    OnnxImport same = import_onnx(exported, (dir / "exported.onnx").string());
    if (!diff_tapes(imported.tape, same.tape).same()) {
      return {"fail", "exported and imported again, the tape differs (ytape diff shows how)"};
    }
    return {kind, "exported too"};
  } catch (const UnsupportedError& e) {
    return {"skip", e.what()};
  } catch (const std::exception& e) {
    return {"fail", e.what()};
  }
}

std::map<std::string, std::string> read_expected(const fs::path& p) {
  std::map<std::string, std::string> expected;
  std::ifstream in(p);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    size_t space = line.find_first_of(" \t");
    std::string reason =
        space == std::string::npos ? "" : line.substr(line.find_first_not_of(" \t", space));
    expected[line.substr(0, space)] = reason;
  }
  return expected;
}

std::string op_types(const onnx::ModelProto& model) {
  std::set<std::string> ops;
  for (const onnx::NodeProto& n : model.graph().node()) ops.insert(n.op_type());
  std::string s;
  for (const std::string& op : ops) s += (s.empty() ? "" : ",") + op;
  return s;
}

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  std::replace(s.begin(), s.end(), '\t', ' ');
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    fmt::print(stderr, "usage: onnx_conformance DATA_DIR EXPECTED_FAILURES [REPORT]\n");
    return 2;
  }
  fs::path root = argv[1];
  if (!fs::is_directory(root)) {
    fmt::print("no ONNX test data at {} (Debian's libonnx-testdata): skipped\n", root.string());
    return 77;
  }
  std::map<std::string, std::string> expected = read_expected(argv[2]);
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(root)) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  std::map<std::string, int> counts;
  std::string report;
  int unexpected = 0;
  for (const fs::path& dir : dirs) {
    std::string name = dir.filename().string();
    onnx::ModelProto model;
    std::string bytes = slurp(dir / "model.onnx");
    if (!model.ParseFromString(bytes)) continue;
    Outcome o = run_test(dir, model);
    auto listed = expected.find(name);
    if (listed != expected.end()) {
      if (o.kind == "fail")
        o = {"xfail", listed->second};
      else if (o.kind == "pass" || o.kind == "random") {
        fmt::print("{}: passes but is listed as an expected failure: remove it from the list\n",
                   name);
        ++unexpected;
      }
    }
    if (o.kind == "fail") {
      fmt::print("{}: FAILED: {}\n", name, one_line(o.reason));
      ++unexpected;
    }
    ++counts[o.kind];
    if (o.reason == "exported too") ++counts[o.kind + " exported"];
    report += fmt::format("{}\t{}\t{}\t{}\n", name, op_types(model), o.kind, one_line(o.reason));
  }
  fmt::print(
      "onnx conformance: {} passed ({} of them also exported and imported again), {} random, "
      "checked for shape, dtype and support, not values ({} of them also exported and "
      "imported again), {} failed, {} expected failures, {} skipped; {} inputs also fed through "
      "safetensors files in their own dtypes ({} widened on reading), read back to the same bits\n",
      counts["pass"], counts["pass exported"], counts["random"], counts["random exported"],
      counts["fail"], counts["xfail"], counts["skip"], inputs_through_files, inputs_widened);
  if (argc > 3) std::ofstream(argv[3]) << report;
  return unexpected == 0 ? 0 : 1;
}
