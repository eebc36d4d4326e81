#include "runtime/tensor.h"

#include <doctest/doctest.h>

#include <cstring>
#include <vector>

namespace ytape {
namespace {

TEST_CASE("Tensor::of_bytes copies a constant's bytes and refuses a wrong count") {
  std::vector<double> values = {1.5, -2.0, 0.25};
  std::vector<uint8_t> bytes(values.size() * sizeof(double));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  Tensor t = Tensor::of_bytes({DType::f64, {3}}, bytes);
  bytes[0] ^= 0xff;  // the tensor holds a copy
  CHECK(t.span<double>()[0] == 1.5);
  CHECK(t.span<double>()[2] == 0.25);
  CHECK(Tensor::of_bytes({DType::f32, {0, 4}}, {}).size() == 0);
  CHECK_THROWS_AS(Tensor::of_bytes({DType::f64, {2}}, bytes), InternalError);
}

TEST_CASE("a tensor memory limit refuses what would exceed it, and frees count") {
  set_tensor_memory_limit(1 << 20);
  struct Unlimit {
    ~Unlimit() { set_tensor_memory_limit(INT64_MAX); }
  } unlimit;  // also when a check throws
  {
    Tensor a(Type{DType::f32, {128 * 1024}});  // 512 kB
    CHECK_THROWS_WITH_AS(Tensor(Type{DType::f32, {192 * 1024}}),
                         "out of memory allocating 786432 bytes: tensors may take 1048576 "
                         "bytes at once (--max-memory)",
                         UserError);
    Tensor b(Type{DType::f32, {64 * 1024}});  // fits beside a
  }
  Tensor c(Type{DType::f32, {200 * 1024}});  // a and b are freed
}

}  // namespace
}  // namespace ytape
