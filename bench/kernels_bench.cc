// Times the dense kernels (conv, pool, norm, linalg) at every distinct op shape of
// ResNet-18 at 224x224, batch 1, and weighs them by how often one pass of the network uses
// them, so that the totals estimate the dense part of a forward and a backward pass.
//
//   bench_kernels [--threads N] [--seconds S] [--filter TEXT] [--json] [--kernels fast|reference]
//
// Each op runs until it has taken S seconds (default 0.3) and at least 5 times; the
// minimum time is reported, the least noisy statistic on a shared machine. --json prints
// one object per op and line instead of the table, with the op's primitive, argument
// shapes and attributes, which bench/compare_torch_kernels.py reads to time the same op
// in PyTorch.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "runtime/kernels/kernel.h"
#include "runtime/parallel.h"

namespace ytape {
namespace {

struct Case {
  std::string name;
  Prim prim;
  std::vector<Type> args;
  Type out;  // the first output; other outputs are (C,) statistics or indices of out's shape
  Attrs attrs;
  int count;         // uses in one pass of ResNet-18
  bool forward;      // part of the forward pass (else of the backward pass)
  double flops = 0;  // 0 where the op is bound by memory, not arithmetic
  Attrs hint{};      // facts the op does not carry but PyTorch needs (max pool's window)
};

Case& add(std::vector<Case>& cases, std::string name, Prim prim, std::vector<Type> args, Type out,
          Attrs attrs, int count, bool forward) {
  cases.push_back(
      {std::move(name), prim, std::move(args), std::move(out), std::move(attrs), count, forward});
  return cases.back();
}

Type f32(Shape s) {
  return Type{DType::f32, std::move(s)};
}

std::vector<int64_t> pair(int64_t v) {
  return {v, v};
}

// The three conv ops of one ResNet-18 layer shape: square input of size `in`, k x k
// kernel, symmetric pad.
void add_conv(std::vector<Case>& cases, int64_t in, int64_t cin, int64_t cout, int64_t k,
              int64_t stride, int count, bool input_grad) {
  int64_t pad = k / 2, out = (in + 2 * pad - k) / stride + 1;
  Type x = f32({in, in, cin, 1}), w = f32({k, k, cin, cout}), y = f32({out, out, cout, 1});
  const std::vector<int64_t> pads{pad, pad, pad, pad};
  Attrs attrs = AttrsOf<Prim::conv2d>{.stride = pair(stride), .pad = pads}.to_attrs();
  std::string name = fmt::format("{}x{}/{} {}->{} @{}", k, k, stride, cin, cout, in);
  double flops = 2.0 * out * out * cout * k * k * cin;
  Attrs with_x =
      AttrsOf<Prim::conv2d_backward_input>{.shape = x.shape, .stride = pair(stride), .pad = pads}
          .to_attrs();
  Attrs with_w =
      AttrsOf<Prim::conv2d_backward_filter>{.shape = w.shape, .stride = pair(stride), .pad = pads}
          .to_attrs();
  add(cases, "conv2d " + name, Prim::conv2d, {x, w}, y, attrs, count, true).flops = flops;
  add(cases, "conv2d_bwd_input " + name, Prim::conv2d_backward_input, {y, w}, x, with_x,
      input_grad ? count : 0, false)
      .flops = flops;
  add(cases, "conv2d_bwd_filter " + name, Prim::conv2d_backward_filter, {x, y}, w, with_w, count,
      false)
      .flops = flops;
}

void add_batchnorm(std::vector<Case>& cases, int64_t size, int64_t c, int count) {
  Type x = f32({size, size, c, 1}), v = f32({c});
  std::string name = fmt::format("{}x{}x{}", size, size, c);
  add(cases, "batchnorm " + name, Prim::batchnorm_with_stats, {x, v, v}, x, {}, count, true);
  add(cases, "batchnorm_bwd " + name, Prim::batchnorm_backward, {x, x, v, v, v}, x, {}, count,
      false);
}

void add_pools(std::vector<Case>& cases) {
  Attrs pool = AttrsOf<Prim::max_pool2d_with_indices>{
      .window = pair(3),
      .stride = pair(2),
      .pad = {1, 1, 1,
              1}}.to_attrs();
  Type px = f32({112, 112, 64, 1}), py = f32({56, 56, 64, 1});
  add(cases, "max_pool2d 3x3/2 112x112x64", Prim::max_pool2d_with_indices, {px}, py, pool, 1, true);
  add(cases, "max_pool2d_bwd 3x3/2 112x112x64", Prim::max_pool2d_backward,
      {py, Type{DType::i64, py.shape}}, px,
      AttrsOf<Prim::max_pool2d_backward>{.shape = px.shape}.to_attrs(), 1, false)
      .hint = pool;
  // The global average pool before the classifier.
  Attrs global = AttrsOf<Prim::avg_pool2d>{.window = pair(7), .stride = pair(7)}.to_attrs();
  Type gx = f32({7, 7, 512, 1}), gy = f32({1, 1, 512, 1});
  Attrs global_bwd =
      AttrsOf<Prim::avg_pool2d_backward>{.shape = gx.shape, .window = pair(7), .stride = pair(7)}
          .to_attrs();
  add(cases, "avg_pool2d 7x7 7x7x512", Prim::avg_pool2d, {gx}, gy, global, 1, true);
  add(cases, "avg_pool2d_bwd 7x7 7x7x512", Prim::avg_pool2d_backward, {gy}, gx, global_bwd, 1,
      false);
}

// The classifier: W (1000, 512) times features (512, 1), and its two gradients.
void add_matmuls(std::vector<Case>& cases) {
  Type w = f32({1000, 512}), f = f32({512, 1}), o = f32({1000, 1});
  double flops = 2.0 * 1000 * 512;
  add(cases, "matmul 1000x512 * 512x1", Prim::matmul, {w, f}, o, {}, 1, true).flops = flops;
  add(cases, "matmul dW 1000x1 * (512x1)'", Prim::matmul, {o, f}, w,
      AttrsOf<Prim::matmul>{.transpose_b = true}.to_attrs(), 1, false)
      .flops = flops;
  add(cases, "matmul dx (1000x512)' * 1000x1", Prim::matmul, {w, o}, f,
      AttrsOf<Prim::matmul>{.transpose_a = true}.to_attrs(), 1, false)
      .flops = flops;
}

std::vector<Case> resnet18_cases() {
  std::vector<Case> cases;
  add_conv(cases, 224, 3, 64, 7, 2, 1, false);  // the stem: no gradient for the image
  add_conv(cases, 56, 64, 64, 3, 1, 4, true);
  for (int64_t c = 64; c < 512; c *= 2) {
    int64_t in = 56 * 64 / c;
    add_conv(cases, in, c, 2 * c, 3, 2, 1, true);
    add_conv(cases, in, c, 2 * c, 1, 2, 1, true);  // the downsampling shortcut
    add_conv(cases, in / 2, 2 * c, 2 * c, 3, 1, 3, true);
  }
  add_pools(cases);
  add_batchnorm(cases, 112, 64, 1);
  add_batchnorm(cases, 56, 64, 4);
  add_batchnorm(cases, 28, 128, 5);
  add_batchnorm(cases, 14, 256, 5);
  add_batchnorm(cases, 7, 512, 5);
  add_matmuls(cases);
  return cases;
}

// The kernels timed: the fast set, or the reference set with --kernels reference.
const KernelTable* timed_kernels = &kernel_table(KernelSet::fast);

Op make_op(Prim p, const Attrs& attrs) {
  Op op;
  op.kind = OpKind::call;
  op.prim = p;
  op.attrs = normalize_attrs(p, attrs);
  return op;
}

void fill_random(Tensor& t, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(0.5f, 1.5f);
  for (float& v : t.span<float>()) v = u(rng);
}

// The outputs of a case: its first output, then (C,) statistics for batch norm and an
// index tensor for max pooling.
std::vector<Tensor> make_outputs(const Case& c) {
  std::vector<Tensor> outs{Tensor(c.out)};
  if (c.prim == Prim::batchnorm_with_stats || c.prim == Prim::batchnorm_backward) {
    outs.emplace_back(c.args[2]);
    outs.emplace_back(c.args[2]);
  } else if (c.prim == Prim::max_pool2d_with_indices) {
    outs.emplace_back(Type{DType::i64, c.out.shape});
  }
  return outs;
}

// Realistic indices for the max pool gradient: those of the forward op on random data.
Tensor pool_indices(const Case& c, std::mt19937& rng) {
  Op op = make_op(Prim::max_pool2d_with_indices, c.hint);
  Tensor x(c.out);
  fill_random(x, rng);
  Tensor y(c.args[0]), idx(c.args[1]);
  const Tensor* args[] = {&x};
  Tensor* outs[] = {&y, &idx};
  timed_kernels->kernels[int(op.prim)](KernelCall{op, args, outs});
  return idx;
}

// Minimum time of one call in milliseconds.
double time_case(const Case& c, double seconds) {
  std::mt19937 rng(42);
  std::vector<Tensor> args;
  for (const Type& t : c.args) {
    args.emplace_back(t);
    if (t.dtype == DType::f32) fill_random(args.back(), rng);
  }
  if (c.prim == Prim::max_pool2d_backward) args[1] = pool_indices(c, rng);
  std::vector<Tensor> outs = make_outputs(c);
  std::vector<const Tensor*> arg_ptrs;
  for (const Tensor& a : args) arg_ptrs.push_back(&a);
  std::vector<Tensor*> out_ptrs;
  for (Tensor& o : outs) out_ptrs.push_back(&o);
  Op op = make_op(c.prim, c.attrs);
  Kernel kernel = timed_kernels->kernels[int(c.prim)];
  KernelCall call{op, arg_ptrs, out_ptrs};
  using Clock = std::chrono::steady_clock;
  for (int i = 0; i < 2; ++i) kernel(call);
  double best = std::numeric_limits<double>::infinity(), total = 0;
  for (int reps = 0; reps < 5 || (total < seconds && reps < 10000); ++reps) {
    auto start = Clock::now();
    kernel(call);
    double s = std::chrono::duration<double>(Clock::now() - start).count();
    best = std::min(best, s);
    total += s;
  }
  return best * 1e3;
}

std::string shapes_json(const std::vector<Type>& types) {
  std::vector<std::string> parts;
  for (const Type& t : types) parts.push_back(fmt::format("[{}]", fmt::join(t.shape, ",")));
  return fmt::format("[{}]", fmt::join(parts, ","));
}

std::string attrs_json(const Attrs& attrs) {
  std::vector<std::string> parts;
  for (const Attr& a : attrs) {
    parts.push_back(fmt::format("{}: {}", quoted(a.name), attr_value_str(a.value)));
  }
  return fmt::format("{{{}}}", fmt::join(parts, ", "));
}

void print_json(const Case& c, double ms) {
  fmt::print(
      "{{\"name\": {}, \"prim\": {}, \"args\": {}, \"out\": [{}], \"attrs\": {}, "
      "\"hint\": {}, \"count\": {}, \"pass\": \"{}\", \"flops\": {}, \"ms\": {}}}\n",
      quoted(c.name), quoted(prim_name(c.prim)), shapes_json(c.args), fmt::join(c.out.shape, ","),
      attrs_json(normalize_attrs(c.prim, c.attrs)), attrs_json(c.hint), c.count,
      c.forward ? "forward" : "backward", c.flops, ms);
  std::fflush(stdout);
}

struct Options {
  int threads = 2;
  double seconds = 0.3;
  std::string filter;
  bool json = false;
  KernelSet kernels = KernelSet::fast;
};

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    bool has_value = i + 1 < argc;
    if (a == "--json") {
      o.json = true;
    } else if (a == "--threads" && has_value) {
      o.threads = std::atoi(argv[++i]);
    } else if (a == "--seconds" && has_value) {
      o.seconds = std::atof(argv[++i]);
    } else if (a == "--filter" && has_value) {
      o.filter = argv[++i];
    } else if (a == "--kernels" && has_value &&
               (argv[i + 1] == std::string("fast") || argv[i + 1] == std::string("reference"))) {
      o.kernels = argv[++i] == std::string("fast") ? KernelSet::fast : KernelSet::reference;
    } else {
      fmt::print(stderr,
                 "usage: bench_kernels [--threads N] [--seconds S] [--filter TEXT] [--json]\n"
                 "                     [--kernels fast|reference]\n");
      std::exit(2);
    }
  }
  return o;
}

int run(int argc, char** argv) {
  Options o = parse_options(argc, argv);
  set_num_threads(o.threads);
  timed_kernels = &kernel_table(o.kernels);
  if (!o.json) {
    fmt::print("dense kernels ({}) at ResNet-18 shapes, batch 1, {} threads, min of runs\n",
               o.kernels == KernelSet::fast ? "fast" : "reference", o.threads);
    fmt::print("{:<44} {:>5} {:>10} {:>9}\n", "op", "uses", "ms", "GFLOP/s");
  }
  double total[2] = {0, 0};
  for (const Case& c : resnet18_cases()) {
    if (c.name.find(o.filter) == std::string::npos) continue;
    double ms = time_case(c, o.seconds);
    total[c.forward ? 0 : 1] += c.count * ms;
    if (o.json) {
      print_json(c, ms);
    } else {
      std::string rate = c.flops > 0 ? fmt::format("{:9.1f}", c.flops / ms * 1e-6) : "";
      fmt::print("{:<44} {:>5} {:>10.3f} {:>9}\n", c.name, c.count, ms, rate);
    }
  }
  if (!o.json) {
    fmt::print("\nResNet-18 dense ops, weighted by uses: forward {:.2f} ms, backward {:.2f} ms\n",
               total[0], total[1]);
  }
  return 0;
}

}  // namespace
}  // namespace ytape

int main(int argc, char** argv) {
  return ytape::run(argc, argv);
}
