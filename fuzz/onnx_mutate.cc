#include "fuzz/onnx_mutate.h"

#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace ytape::fuzz {

namespace {

using Rng = std::mt19937_64;
// One number (or list) of the model that a mutation may change.
using Slot = std::function<void(Rng&)>;

template <typename T>
T pick(Rng& rng, std::initializer_list<T> values) {
  return values.begin()[std::uniform_int_distribution<size_t>(0, values.size() - 1)(rng)];
}

// Sizes, counts and indices break at the edges of int32 and int64, at 0 and -1, and where a
// product or a sum of them overflows; a neighbour of the old value stays near the model.
int64_t interesting_int(Rng& rng, int64_t old) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min(),
                    kMax = std::numeric_limits<int64_t>::max();
  switch (rng() % 6) {
    case 0:
      return static_cast<int64_t>(rng());
    case 1:
      return static_cast<int64_t>(static_cast<uint64_t>(old) + pick<uint64_t>(rng, {1, 2, ~0ull}));
    case 2:
      return static_cast<int64_t>(0 - static_cast<uint64_t>(old));
    default:
      return pick<int64_t>(rng, {0,
                                 -1,
                                 1,
                                 2,
                                 3,
                                 -2,
                                 7,
                                 255,
                                 256,
                                 65536,
                                 (int64_t{1} << 31) - 1,
                                 int64_t{1} << 31,
                                 -(int64_t{1} << 31),
                                 int64_t{1} << 32,
                                 (int64_t{1} << 32) + 1,
                                 int64_t{1} << 48,
                                 (int64_t{1} << 48) + 1,
                                 int64_t{1} << 62,
                                 -(int64_t{1} << 62),
                                 kMin,
                                 kMax,
                                 kMin + 1});
  }
}

double interesting_float(Rng& rng, double old) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  switch (rng() % 5) {
    case 0:
      return std::ldexp(std::uniform_real_distribution<double>(-1, 1)(rng),
                        static_cast<int>(rng() % 80) - 40);
    case 1:
      return old * pick<double>(rng, {-1, 2, 0.5, 1e10});
    default:
      return pick<double>(rng, {0.0, -0.0, 1, -1, 0.5, 2, 1e-45, 1e30, -1e30, 3.4e38, 1e300,
                                std::numeric_limits<double>::quiet_NaN(), kInf, -kInf, 4294967296.0,
                                4.611686018427388e18, 9.3e18});
  }
}

template <typename T>
size_t index_in(Rng& rng, const T& list) {
  return std::uniform_int_distribution<size_t>(0, list.size() - 1)(rng);
}

// A repeated number field: one element changed, or the list one longer or shorter.
template <typename T>
Slot list_slot(google::protobuf::RepeatedField<T>* list) {
  return [list](Rng& rng) {
    auto value = [&rng](T old) {
      if constexpr (std::is_floating_point_v<T>) {
        return static_cast<T>(interesting_float(rng, old));
      } else {
        return static_cast<T>(interesting_int(rng, static_cast<int64_t>(old)));
      }
    };
    int what = static_cast<int>(rng() % 8);
    if (list->empty() || what == 0) return list->Add(value(1));
    if (what == 1) return list->RemoveLast();
    auto i = static_cast<int>(index_in(rng, *list));
    list->Set(i, value(list->Get(i)));
  };
}

// Raw little-endian elements of `T`: one of them changed.
template <typename T>
Slot raw_slot(std::string* raw) {
  return [raw](Rng& rng) {
    size_t n = raw->size() / sizeof(T);
    if (n == 0) return;
    size_t i = std::uniform_int_distribution<size_t>(0, n - 1)(rng);
    T v;
    std::memcpy(&v, raw->data() + i * sizeof(T), sizeof(T));
    if constexpr (std::is_floating_point_v<T>) {
      v = static_cast<T>(interesting_float(rng, v));
    } else {
      v = static_cast<T>(interesting_int(rng, static_cast<int64_t>(v)));
    }
    std::memcpy(raw->data() + i * sizeof(T), &v, sizeof(T));
  };
}

void tensor_slots(onnx::TensorProto* t, std::vector<Slot>& slots) {
  if (!t->int64_data().empty()) slots.push_back(list_slot(t->mutable_int64_data()));
  if (!t->int32_data().empty()) slots.push_back(list_slot(t->mutable_int32_data()));
  if (!t->float_data().empty()) slots.push_back(list_slot(t->mutable_float_data()));
  if (!t->double_data().empty()) slots.push_back(list_slot(t->mutable_double_data()));
  if (!t->raw_data().empty()) {
    std::string* raw = t->mutable_raw_data();
    switch (t->data_type()) {
      case onnx::TensorProto_DataType_INT64:
        slots.push_back(raw_slot<int64_t>(raw));
        break;
      case onnx::TensorProto_DataType_INT32:
        slots.push_back(raw_slot<int32_t>(raw));
        break;
      case onnx::TensorProto_DataType_FLOAT:
        slots.push_back(raw_slot<float>(raw));
        break;
      case onnx::TensorProto_DataType_DOUBLE:
        slots.push_back(raw_slot<double>(raw));
        break;
      default:
        break;
    }
  }
  // Rarely, a claimed shape that the data does not fill.
  slots.push_back([t](Rng& rng) {
    if (rng() % 4 != 0) return;
    if (t->dims().empty()) return t->add_dims(interesting_int(rng, 1));
    t->set_dims(static_cast<int>(index_in(rng, t->dims())), interesting_int(rng, t->dims(0)));
  });
}

void graph_slots(onnx::GraphProto* g, std::vector<Slot>& slots);

void attribute_slots(onnx::AttributeProto* a, std::vector<Slot>& slots) {
  switch (a->type()) {
    case onnx::AttributeProto_AttributeType_INT:
      slots.push_back([a](Rng& rng) { a->set_i(interesting_int(rng, a->i())); });
      break;
    case onnx::AttributeProto_AttributeType_FLOAT:
      slots.push_back(
          [a](Rng& rng) { a->set_f(static_cast<float>(interesting_float(rng, a->f()))); });
      break;
    case onnx::AttributeProto_AttributeType_INTS:
      slots.push_back(list_slot(a->mutable_ints()));
      break;
    case onnx::AttributeProto_AttributeType_FLOATS:
      slots.push_back(list_slot(a->mutable_floats()));
      break;
    case onnx::AttributeProto_AttributeType_TENSOR:
      tensor_slots(a->mutable_t(), slots);
      break;
    case onnx::AttributeProto_AttributeType_GRAPH:
      graph_slots(a->mutable_g(), slots);
      break;
    case onnx::AttributeProto_AttributeType_GRAPHS:
      for (onnx::GraphProto& g : *a->mutable_graphs()) graph_slots(&g, slots);
      break;
    default:
      break;
  }
}

void graph_slots(onnx::GraphProto* g, std::vector<Slot>& slots) {
  for (onnx::TensorProto& t : *g->mutable_initializer()) tensor_slots(&t, slots);
  for (onnx::NodeProto& n : *g->mutable_node()) {
    for (onnx::AttributeProto& a : *n.mutable_attribute()) attribute_slots(&a, slots);
  }
  for (onnx::ValueInfoProto& v : *g->mutable_input()) {
    if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) continue;
    auto* shape = v.mutable_type()->mutable_tensor_type()->mutable_shape();
    for (onnx::TensorShapeProto_Dimension& d : *shape->mutable_dim()) {
      if (d.has_dim_value())
        slots.push_back([&d](Rng& rng) { d.set_dim_value(interesting_int(rng, d.dim_value())); });
    }
  }
}

}  // namespace

size_t mutate_model(uint8_t* data, size_t size, size_t max_size, unsigned seed) {
  Rng rng(seed);
  onnx::ModelProto model;
  if (rng() % 4 == 0 || !model.ParseFromArray(data, static_cast<int>(size)))
    return LLVMFuzzerMutate(data, size, max_size);
  std::vector<Slot> slots;
  graph_slots(model.mutable_graph(), slots);
  for (onnx::OperatorSetIdProto& o : *model.mutable_opset_import()) {
    slots.push_back([&o](Rng& r) { o.set_version(interesting_int(r, o.version())); });
  }
  if (slots.empty()) return LLVMFuzzerMutate(data, size, max_size);
  // One number most of the time, now and then a few at once.
  int changes = rng() % 8 == 0 ? 2 + static_cast<int>(rng() % 3) : 1;
  for (int i = 0; i < changes; ++i) slots[index_in(rng, slots)](rng);
  std::string out = model.SerializeAsString();
  if (out.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

}  // namespace ytape::fuzz
