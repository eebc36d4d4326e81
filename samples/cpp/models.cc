#include "samples/cpp/models.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "tape/builder.h"

namespace ytape::samples {

namespace {

// Locations point at the lines of this file that create the ops.
constexpr const char* kFile = "samples/cpp/models.cc";

Type f32(Shape s) {
  return {DType::f32, std::move(s)};
}
using Ints = std::vector<int64_t>;

// y = x * W + b for x (in, batch), W (in, out) as PyTorch's (out, in) reversed.
Var linear(Builder& b, Var x, Var w, Var bias) {
  Var y = b.matmul(w, x, {.transpose_a = true});
  return b.add(y, bias);
}

Var mean_cross_entropy(Builder& b, Var logits, Var labels, int64_t batch) {
  Var logp = b.log_softmax(logits, {.dims = {1}});
  Var idx = b.reshape(labels, {.shape = {1, batch}});
  Var picked = b.gather(logp, idx, {.dim = 1});
  Var total = b.sum(picked, {.dims = {1, 2}});
  return b.mul(total, b.constant(DType::f32, -1.0 / static_cast<double>(batch)));
}

}  // namespace

Tape mlp(int64_t batch) {
  Builder b("loss");
  b.add_meta("model", "mlp 784-256-256-10");
  Var x = b.input("x", f32({784, batch}));
  Var labels = b.input("labels", {DType::i64, {batch}});
  const int64_t sizes[] = {784, 256, 256, 10};
  std::vector<Var> w, bias;
  for (int l = 0; l < 3; ++l) {
    w.push_back(
        b.input(fmt::format("model.layers.{}.weight", l + 1), f32({sizes[l], sizes[l + 1]})));
    bias.push_back(b.input(fmt::format("model.layers.{}.bias", l + 1), f32({sizes[l + 1]})));
  }
  Var h = x;
  for (int l = 0; l < 3; ++l) {
    b.set_loc({b.intern_file(kFile), __LINE__});
    h = linear(b, h, w[l], bias[l]);
    if (l < 2) h = b.relu(h);
  }
  b.set_loc({b.intern_file(kFile), __LINE__});
  b.output(mean_cross_entropy(b, h, labels, batch), "loss");
  return b.finish();
}

namespace {

struct ResNetBuilder {
  Builder& b;
  std::vector<std::pair<std::string, Type>> params = {};  // declared first, used below
  std::vector<Var> vars = {};
  size_t next = 0;

  // Two passes over the same code: the first declares parameters (inputs must come
  // first), the second builds ops reading them in the same order.
  bool declaring = true;

  Var param(const std::string& name, Shape shape) {
    if (declaring) {
      params.emplace_back(name, f32(std::move(shape)));
      return Var{};
    }
    return vars[next++];
  }

  Var conv(Var x, const std::string& name, int64_t k, int64_t cin, int64_t cout, int64_t stride) {
    Var w = param(name + ".weight", {k, k, cin, cout});
    if (declaring) return x;
    int64_t p = k / 2;
    return b.conv2d(x, w, {.stride = {stride, stride}, .pad = {p, p, p, p}});
  }

  Var bn(Var x, const std::string& name, int64_t c) {
    Var scale = param(name + ".weight", {c});
    Var shift = param(name + ".bias", {c});
    if (declaring) return x;
    return b.batchnorm(x, scale, shift);
  }

  Var relu(Var x) { return declaring ? x : b.relu(x); }
  Var add(Var x, Var y) { return declaring ? x : b.add(x, y); }

  void at(uint32_t line) {
    if (!declaring) b.set_loc({b.intern_file(kFile), line});
  }

  Var block(Var x, const std::string& name, int64_t cin, int64_t cout, int64_t stride) {
    Var y = relu(bn(conv(x, name + ".conv1", 3, cin, cout, stride), name + ".bn1", cout));
    y = bn(conv(y, name + ".conv2", 3, cout, cout, 1), name + ".bn2", cout);
    Var skip = x;
    if (stride != 1 || cin != cout) {
      skip =
          bn(conv(x, name + ".downsample.1", 1, cin, cout, stride), name + ".downsample.2", cout);
    }
    return relu(add(y, skip));
  }

  Var forward(Var image, int64_t batch) {
    at(__LINE__);
    Var x = relu(bn(conv(image, "model.conv1", 7, 3, 64, 2), "model.bn1", 64));
    if (!declaring) {
      x = b.max_pool2d(x, {.window = {3, 3}, .stride = {2, 2}, .pad = {1, 1, 1, 1}});
    }
    const int64_t widths[] = {64, 64, 128, 256, 512};
    for (int layer = 1; layer <= 4; ++layer) {
      int64_t stride = layer == 1 ? 1 : 2;
      std::string name = fmt::format("model.layer{}", layer);
      at(__LINE__);
      x = block(x, name + ".1", widths[layer - 1], widths[layer], stride);
      at(__LINE__);
      x = block(x, name + ".2", widths[layer], widths[layer], 1);
    }
    Var w = param("model.fc.weight", {512, 1000});
    Var bias = param("model.fc.bias", {1000});
    if (declaring) return x;
    at(__LINE__);
    Var scale = b.constant(DType::f32, 1.0 / 49);
    Var pooled = b.mul(b.sum(x, {.dims = {1, 2}}), scale);
    Var logits = linear(b, b.reshape(pooled, {.shape = {512, batch}}), w, bias);
    return b.sum(logits, {.dims = {1, 2}});
  }
};

}  // namespace

Tape resnet18(int64_t batch) {
  Builder b("loss");
  b.add_meta("model", "resnet18");
  ResNetBuilder r{b};
  r.forward(Var{}, batch);
  for (const auto& [name, type] : r.params) r.vars.push_back(b.input(name, type));
  Var image = b.input("image", f32({224, 224, 3, batch}));
  r.declaring = false;
  b.output(r.forward(image, batch), "loss");
  return b.finish();
}

Tape scalar_chain(int64_t n) {
  Builder b("chain");
  b.reserve(static_cast<size_t>(n), static_cast<size_t>(n));
  b.set_loc({b.intern_file(kFile), __LINE__});
  std::vector<Var> recent = {b.input("x", {DType::f64, {}}), b.input("y", {DType::f64, {}})};
  const Prim unary[] = {Prim::sin, Prim::tanh, Prim::neg};
  const Prim binary[] = {Prim::add, Prim::mul, Prim::sub};
  uint64_t state = 42;
  for (int64_t i = 2; i < n; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;  // an LCG: reproducible
    Var a = recent[recent.size() - 1 - (state >> 60) % std::min<size_t>(recent.size(), 4)];
    Var c = recent[recent.size() - 1 - (state >> 50) % std::min<size_t>(recent.size(), 4)];
    Var v = (state >> 40) % 2 ? b.call1(unary[(state >> 30) % 3], {a})
                              : b.call1(binary[(state >> 30) % 3], {a, c});
    recent.push_back(v);
    if (recent.size() > 64) recent.erase(recent.begin(), recent.begin() + 32);
  }
  b.output(recent.back(), "z");
  return b.finish();
}

}  // namespace ytape::samples
