#include "samples/cpp/mlp_traced.h"

#include <fmt/format.h>

#include <vector>

#include "tracer/cpp_api.h"

namespace ytape::samples {

namespace {

using cpp::Traced;

// Flux's Dense layer, as the prelude defines it: y = σ.(W * x .+ b), W of shape (out, in).
struct Dense {
  Traced weight;
  Traced bias;
  bool has_relu = false;

  Traced operator()(const Traced& x) const {
    Traced y = add(matmul(weight, x), bias);
    return has_relu ? relu(y) : y;
  }
};

}  // namespace

Tape mlp_traced(int64_t batch) {
  // Locations relative to the repository, as the language's samples/mlp.jl:14.
  cpp::Tracer t("loss", {.source_root = YTAPE_SOURCE_DIR "/"});
  // Inputs in the order the language lifts the arguments of loss(model, x, labels).
  const int64_t sizes[] = {784, 256, 256, 10};
  std::vector<Dense> model;
  for (int l = 0; l < 3; ++l) {
    std::string name = fmt::format("model.layers.{}", l + 1);
    Traced w = t.input(name + ".weight", {DType::f32, {sizes[l + 1], sizes[l]}});
    Traced b = t.input(name + ".bias", {DType::f32, {sizes[l + 1]}});
    model.push_back({w, b, l < 2});
  }
  Traced x = t.input("x", {DType::f32, {784, batch}});
  Traced labels = t.input("labels", {DType::i64, {batch}});

  Traced h = x;
  for (const Dense& layer : model) h = layer(h);
  t.output(logitcrossentropy_labels(h, labels), "out");
  return t.finish();
}

}  // namespace ytape::samples
