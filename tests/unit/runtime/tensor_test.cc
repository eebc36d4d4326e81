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

}  // namespace
}  // namespace ytape
