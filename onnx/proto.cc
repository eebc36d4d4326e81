#include "onnx/proto.h"

#include <cstring>

#include "onnx/import.h"

namespace ytape::onnx_import {

namespace {

using onnx::TensorProto_DataType;

template <typename T, typename Field>
void copy_field(const Field& field, Tensor& out) {
  T* data = out.data<T>();
  for (int64_t i = 0; i < out.size(); ++i) data[i] = static_cast<T>(field.Get(static_cast<int>(i)));
}

// Little-endian raw bytes of elements of `bytes_each` bytes, into `out`'s dtype.
void copy_raw(const std::string& raw, int32_t elem_type, Tensor& out) {
  auto read = [&](int64_t i, auto sample) {
    decltype(sample) v;
    std::memcpy(&v, raw.data() + i * sizeof(v), sizeof(v));
    return v;
  };
  for (int64_t i = 0; i < out.size(); ++i) {
    switch (elem_type) {
      case TensorProto_DataType::TensorProto_DataType_FLOAT:
        out.data<float>()[i] = read(i, float{});
        break;
      case TensorProto_DataType::TensorProto_DataType_DOUBLE:
        out.data<double>()[i] = read(i, double{});
        break;
      case TensorProto_DataType::TensorProto_DataType_INT64:
        out.data<int64_t>()[i] = read(i, int64_t{});
        break;
      case TensorProto_DataType::TensorProto_DataType_BOOL:
        out.data<bool>()[i] = read(i, uint8_t{}) != 0;
        break;
      case TensorProto_DataType::TensorProto_DataType_FLOAT16:
        out.data<uint16_t>()[i] = read(i, uint16_t{});
        break;
      case TensorProto_DataType::TensorProto_DataType_INT32:
        out.data<int64_t>()[i] = read(i, int32_t{});
        break;
      case TensorProto_DataType::TensorProto_DataType_INT16:
        out.data<int64_t>()[i] = read(i, int16_t{});
        break;
      case TensorProto_DataType::TensorProto_DataType_INT8:
        out.data<int64_t>()[i] = read(i, int8_t{});
        break;
      case TensorProto_DataType::TensorProto_DataType_UINT8:
        out.data<int64_t>()[i] = read(i, uint8_t{});
        break;
      case TensorProto_DataType::TensorProto_DataType_UINT16:
        out.data<int64_t>()[i] = read(i, uint16_t{});
        break;
      case TensorProto_DataType::TensorProto_DataType_UINT32:
        out.data<int64_t>()[i] = read(i, uint32_t{});
        break;
      default:
        internal_error("copy_raw: element type {}", elem_type);
    }
  }
}

int raw_size(int32_t elem_type) {
  switch (elem_type) {
    case TensorProto_DataType::TensorProto_DataType_DOUBLE:
    case TensorProto_DataType::TensorProto_DataType_INT64:
      return 8;
    case TensorProto_DataType::TensorProto_DataType_FLOAT:
    case TensorProto_DataType::TensorProto_DataType_INT32:
    case TensorProto_DataType::TensorProto_DataType_UINT32:
      return 4;
    case TensorProto_DataType::TensorProto_DataType_INT16:
    case TensorProto_DataType::TensorProto_DataType_UINT16:
    case TensorProto_DataType::TensorProto_DataType_FLOAT16:
      return 2;
    default:
      return 1;
  }
}

// The number of values in the typed repeated field that holds elements of `elem_type` when
// there is no raw data; with `out`, of that many elements, also copies them there.
int64_t copy_typed(const onnx::TensorProto& t, Tensor* out) {
  auto copy = [&](const auto& field, auto tag) {
    if (out != nullptr) copy_field<decltype(tag)>(field, *out);
    return static_cast<int64_t>(field.size());
  };
  switch (t.data_type()) {
    case TensorProto_DataType::TensorProto_DataType_FLOAT:
      return copy(t.float_data(), float{});
    case TensorProto_DataType::TensorProto_DataType_DOUBLE:
      return copy(t.double_data(), double{});
    case TensorProto_DataType::TensorProto_DataType_INT64:
      return copy(t.int64_data(), int64_t{});
    case TensorProto_DataType::TensorProto_DataType_UINT32:
      return copy(t.uint64_data(), int64_t{});
    case TensorProto_DataType::TensorProto_DataType_BOOL:
      return copy(t.int32_data(), bool{});
    case TensorProto_DataType::TensorProto_DataType_FLOAT16:  // the bits, in int32_data
      return copy(t.int32_data(), uint16_t{});
    default:  // the narrower integers travel in int32_data
      return copy(t.int32_data(), int64_t{});
  }
}

}  // namespace

std::string onnx_dtype_name(int32_t elem_type) {
  static const char* names[] = {"undefined",  "float",   "uint8",  "int8",   "uint16",
                                "int16",      "int32",   "int64",  "string", "bool",
                                "float16",    "double",  "uint32", "uint64", "complex64",
                                "complex128", "bfloat16"};
  if (elem_type >= 0 && elem_type < static_cast<int32_t>(std::size(names))) return names[elem_type];
  return fmt::format("type {}", elem_type);
}

std::optional<DType> to_dtype(int32_t elem_type, bool widen_ints) {
  switch (elem_type) {
    case TensorProto_DataType::TensorProto_DataType_FLOAT:
      return DType::f32;
    case TensorProto_DataType::TensorProto_DataType_DOUBLE:
      return DType::f64;
    case TensorProto_DataType::TensorProto_DataType_INT64:
      return DType::i64;
    case TensorProto_DataType::TensorProto_DataType_BOOL:
      return DType::boolean;
    case TensorProto_DataType::TensorProto_DataType_FLOAT16:
      return DType::f16;
    case TensorProto_DataType::TensorProto_DataType_INT32:
    case TensorProto_DataType::TensorProto_DataType_INT16:
    case TensorProto_DataType::TensorProto_DataType_INT8:
    case TensorProto_DataType::TensorProto_DataType_UINT8:
    case TensorProto_DataType::TensorProto_DataType_UINT16:
    case TensorProto_DataType::TensorProto_DataType_UINT32:
      if (widen_ints) return DType::i64;
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

int32_t to_onnx_dtype(DType d) {
  switch (d) {
    case DType::f32:
      return TensorProto_DataType::TensorProto_DataType_FLOAT;
    case DType::f64:
      return TensorProto_DataType::TensorProto_DataType_DOUBLE;
    case DType::i64:
      return TensorProto_DataType::TensorProto_DataType_INT64;
    case DType::boolean:
      return TensorProto_DataType::TensorProto_DataType_BOOL;
    case DType::f16:
      return TensorProto_DataType::TensorProto_DataType_FLOAT16;
  }
  internal_error("to_onnx_dtype: dtype {}", static_cast<int>(d));
}

Tensor tensor_of(const onnx::TensorProto& t, const std::string& where) {
  std::optional<DType> dtype = to_dtype(t.data_type(), true);
  if (!dtype) {
    throw UnsupportedError(
        fmt::format("{}element type {} is not one of ytape's (f32, f64, f16, i64, bool)", where,
                    onnx_dtype_name(t.data_type())));
  }
  if (t.data_location() == onnx::TensorProto_DataLocation_EXTERNAL) {
    throw UnsupportedError(where + "tensors with external data are not supported");
  }
  Shape shape(t.dims().rbegin(), t.dims().rend());
  if (std::string why = shape_problem(shape); !why.empty()) user_error("{}{}", where, why);
  // The data must be there before the tensor is allocated: a model may claim any size.
  int64_t n = num_elements(shape);
  if (t.has_raw_data()) {
    if (static_cast<int64_t>(t.raw_data().size()) != n * raw_size(t.data_type())) {
      user_error("{}raw data of {} bytes for {} elements of {}", where, t.raw_data().size(), n,
                 onnx_dtype_name(t.data_type()));
    }
    Tensor out(Type{*dtype, shape});
    copy_raw(t.raw_data(), t.data_type(), out);
    return out;
  }
  int64_t have = copy_typed(t, nullptr);
  if (have != n) user_error("{}{} values for {} elements", where, have, n);
  Tensor out(Type{*dtype, shape});
  copy_typed(t, &out);
  return out;
}

}  // namespace ytape::onnx_import
