#include "random_checks.h"

#include <cmath>
#include <set>

namespace ytape::onnx_conformance {

namespace {

// As ONNX's runner compares floats (conformance.cc).
bool near(double got, double want) {
  return got == want || std::abs(got - want) <= 1e-7 + 1e-3 * std::abs(want);
}

std::string bernoulli(const std::vector<Tensor>& inputs, const Tensor& y) {
  const Tensor& p = inputs.at(0);
  for (int64_t i = 0; i < y.size(); ++i) {
    double v = element_value(y, i), pi = element_value(p, i);
    if (v != 0 && v != 1) return fmt::format("element {} is {}, not 0 or 1", i, v);
    if ((pi == 0 && v != 0) || (pi == 1 && v != 1))
      return fmt::format("element {} is {} where p is {}", i, v, pi);
  }
  return "";
}

// y is 0 or x / (1 - ratio); the mask, when there is one, says which.
std::string dropout(const std::vector<Tensor>& inputs, const std::vector<Tensor>& got) {
  const Tensor &x = inputs.at(0), &y = got.at(0);
  double ratio = inputs.size() > 1 ? element_value(inputs[1], 0) : 0.5;
  for (int64_t i = 0; i < y.size(); ++i) {
    double v = element_value(y, i), kept = element_value(x, i) / (1 - ratio);
    if (v != 0 && !near(v, kept))
      return fmt::format("element {} is {}, neither 0 nor x / (1 - ratio) = {}", i, v, kept);
    if (got.size() < 2) continue;
    bool mask = element_value(got[1], i) != 0;
    if (mask ? !near(v, kept) : v != 0) {
      return fmt::format("element {} is {} where the mask is {} and x / (1 - ratio) is {}", i, v,
                         mask, kept);
    }
  }
  return "";
}

float attr_float(const onnx::NodeProto& n, const std::string& name, float fallback) {
  for (const onnx::AttributeProto& a : n.attribute()) {
    if (a.name() == name) return a.f();
  }
  return fallback;
}

std::string uniform(const onnx::NodeProto& n, const Tensor& y) {
  double low = attr_float(n, "low", 0), high = attr_float(n, "high", 1);
  for (int64_t i = 0; i < y.size(); ++i) {
    double v = element_value(y, i);
    if (!(v >= low && v <= high))
      return fmt::format("element {} is {}, outside [{}, {}]", i, v, low, high);
  }
  return "";
}

std::string normal(const Tensor& y) {
  for (int64_t i = 0; i < y.size(); ++i) {
    if (!std::isfinite(element_value(y, i)))
      return fmt::format("element {} is {}", i, element_value(y, i));
  }
  return "";
}

}  // namespace

std::string check_random(const onnx::ModelProto& model, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& got, const std::vector<Tensor>& want) {
  if (got.size() != want.size())
    return fmt::format("{} outputs, ONNX has {}", got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i].type() != want[i].type()) {
      return fmt::format("output {} is {} where ONNX has {}", i + 1, type_str(got[i].type()),
                         type_str(want[i].type()));
    }
  }
  std::set<std::string> ops;
  const onnx::NodeProto* last = nullptr;
  for (const onnx::NodeProto& n : model.graph().node()) {
    if (n.op_type() != "Constant") ops.insert(n.op_type()), last = &n;
  }
  using Ops = std::set<std::string>;
  std::string why;
  if (ops == Ops{"Bernoulli"} || ops == Ops{"Cast", "Greater", "RandomUniformLike"}) {
    why = bernoulli(inputs, got[0]);
  } else if (ops == Ops{"Dropout"}) {
    why = dropout(inputs, got);
  } else if (ops == Ops{"RandomUniform"} || ops == Ops{"RandomUniformLike"}) {
    why = uniform(*last, got[0]);
  } else if (ops == Ops{"RandomNormal"} || ops == Ops{"RandomNormalLike"}) {
    why = normal(got[0]);
  } else {
    return "random, and no check of the distribution of these op types is known";
  }
  return why.empty() ? "" : "output 1: " + why;
}

}  // namespace ytape::onnx_conformance
