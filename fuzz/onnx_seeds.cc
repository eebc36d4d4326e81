// Seeds for the ONNX fuzz target from ONNX's node tests: for each test folder holding a
// model.onnx, the model as it is (NAME.onnx) and, where its first data set has tensor
// inputs, the model with those values as initializers of the same names (NAME.static.onnx),
// so that the importer folds them and the mutations of their elements reach the rules that
// read static inputs (Range's bounds, Reshape's shape, Pad's pads, ...).
// usage: onnx_seeds NODE_TESTS_DIR OUT_DIR   (scripts/fuzz.sh runs it)
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

namespace fs = std::filesystem;

namespace {

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Input k's value of the first data set, when it is a tensor (not a sequence or optional).
bool input_value(const fs::path& test, int k, onnx::TensorProto* t) {
  fs::path p = test / "test_data_set_0" / ("input_" + std::to_string(k) + ".pb");
  if (!fs::exists(p)) return false;
  std::string bytes = read(p);
  return t->ParseFromString(bytes) && t->data_type() != 0;
}

// The model with its tensor inputs' values as initializers; false when it has none.
bool make_static(const fs::path& test, onnx::ModelProto& model) {
  onnx::GraphProto* g = model.mutable_graph();
  bool any = false;
  for (int k = 0; k < g->input_size(); ++k) {
    if (!g->input(k).type().has_tensor_type()) continue;
    onnx::TensorProto t;
    if (!input_value(test, k, &t)) continue;
    t.set_name(g->input(k).name());
    *g->add_initializer() = t;
    any = true;
  }
  return any;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: onnx_seeds NODE_TESTS_DIR OUT_DIR\n";
    return 2;
  }
  fs::path out = argv[2];
  int written = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(argv[1])) {
    fs::path model_path = e.path() / "model.onnx";
    if (!fs::exists(model_path)) continue;
    std::string name = e.path().filename().string(), bytes = read(model_path);
    std::ofstream(out / (name + ".onnx"), std::ios::binary) << bytes;
    ++written;
    onnx::ModelProto model;
    if (!model.ParseFromString(bytes) || !make_static(e.path(), model)) continue;
    std::ofstream(out / (name + ".static.onnx"), std::ios::binary) << model.SerializeAsString();
    ++written;
  }
  std::cout << written << " seeds\n";
  return 0;
}
