// The fast kernels give the same bits at every thread count: a training run may change its
// thread count with the machine's load (train/threads.h) and stay deterministic.
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "kernel_harness.h"
#include "runtime/parallel.h"
#include "tape/attrs.h"

namespace ytape {

namespace {

using testing::random_tensor;
using testing::run_op_in_layouts;

// Runs `p` at 1, 2, 3 and 4 threads in each variant and layout and checks the outputs'
// bits are the same.
void check_invariant(Prim p, const std::vector<Tensor>& args, const Attrs& attrs,
                     const std::vector<std::vector<Layout>>& layout_sets) {
  int saved = num_threads();
  for (const std::vector<Layout>& layouts : layout_sets) {
    for (Variant v : {Variant::standard, Variant::faster}) {
      set_num_threads(1);
      std::vector<Tensor> want = run_op_in_layouts(p, args, attrs, layouts, KernelSet::fast, v);
      for (int threads : {2, 3, 4}) {
        set_num_threads(threads);
        std::vector<Tensor> got = run_op_in_layouts(p, args, attrs, layouts, KernelSet::fast, v);
        std::string_view prim = prim_name(p);
        CAPTURE(prim);
        CAPTURE(threads);
        CAPTURE(static_cast<int>(v));
        CAPTURE(layouts.size());
        for (size_t i = 0; i < got.size(); ++i) CHECK(same_bits(got[i], want[i]));
      }
    }
  }
  set_num_threads(saved);
}

struct Layer {
  int64_t size, cin, cout, k, stride, pad, batch;
};

}  // namespace

TEST_CASE("convolutions and their gradients give the same bits at any thread count") {
  // ResNet-18's shapes at batch 1 and 8, the digits CNN's, a grouped one.
  const Layer layers[] = {
      {224, 3, 64, 7, 2, 3, 1},  {56, 64, 64, 3, 1, 1, 1},   {56, 64, 64, 3, 1, 1, 8},
      {56, 64, 128, 1, 2, 0, 8}, {28, 128, 128, 3, 1, 1, 2}, {14, 256, 256, 3, 1, 1, 8},
      {7, 512, 512, 3, 1, 1, 8}, {28, 1, 32, 3, 1, 1, 64},   {14, 32, 32, 3, 1, 1, 64},
      {14, 32, 32, 3, 1, 1, 5},
  };
  uint64_t seed = 1;
  for (const Layer& l : layers) {
    CAPTURE(l.size);
    CAPTURE(l.cin);
    CAPTURE(l.cout);
    CAPTURE(l.batch);
    int64_t out = (l.size + 2 * l.pad - l.k) / l.stride + 1;
    Shape xs{l.size, l.size, l.cin, l.batch}, ws{l.k, l.k, l.cin, l.cout};
    Shape ys{out, out, l.cout, l.batch};
    Attrs attrs{{"stride", std::vector<int64_t>{l.stride, l.stride}},
                {"pad", std::vector<int64_t>{l.pad, l.pad, l.pad, l.pad}}};
    Tensor x = random_tensor({DType::f32, xs}, ++seed);
    Tensor w = random_tensor({DType::f32, ws}, ++seed);
    Tensor dy = random_tensor({DType::f32, ys}, ++seed);
    // Images plain, and blocked where their channels allow (as the executor keeps them).
    Layout p = Layout::plain, in = l.cin % 16 == 0 ? Layout::c16 : p;
    Layout out_l = l.cout % 16 == 0 ? Layout::c16 : p;
    check_invariant(Prim::conv2d, {x, w}, attrs, {{}, {in, p, out_l}});
    Attrs with_shape = attrs;
    with_shape.set("shape", xs);
    check_invariant(Prim::conv2d_backward_input, {dy, w}, with_shape, {{}, {out_l, p, in}});
    with_shape.set("shape", ws);
    check_invariant(Prim::conv2d_backward_filter, {x, dy}, with_shape, {{}, {in, out_l, p}});
  }
}

}  // namespace ytape

namespace ytape {

TEST_CASE("matrix products give the same bits at any thread count") {
  // Dense layers' products and their gradients: small and large inner dims, thin outputs.
  const int64_t sizes[][3] = {{128, 64, 784},   {784, 128, 64}, {10, 128, 64},   {128, 10, 64},
                              {1000, 1, 512},   {512, 1000, 1}, {16, 16, 65536}, {4, 4, 100000},
                              {256, 256, 256},  {8, 2048, 512}, {1, 1000, 512},  {64, 8, 50000},
                              {32, 32, 200000}, {2, 2, 300000}, {512, 2, 4096},  {3, 700, 2000}};
  uint64_t seed = 100;
  for (const auto& s : sizes) {
    const int64_t m = s[0], n = s[1], k = s[2];
    CAPTURE(m);
    CAPTURE(n);
    CAPTURE(k);
    Tensor a = testing::random_tensor({DType::f32, {m, k}}, ++seed);
    Tensor b = testing::random_tensor({DType::f32, {k, n}}, ++seed);
    check_invariant(Prim::matmul, {a, b}, {}, {{}});
  }
}

TEST_CASE("batched products give the same bits at any thread count") {
  // Attention's products per head and sequence (scores, their gradients, the values'),
  // which run side by side, one per thread, and a batch of large ones, which do not.
  struct Case {
    int64_t m, n, k, batch;
    bool ta, tb;
  };
  const Case cases[] = {{64, 64, 32, 128, false, false}, {64, 64, 32, 128, true, false},
                        {32, 64, 64, 128, false, true},  {256, 256, 64, 9, true, false},
                        {64, 256, 256, 5, false, false}, {512, 512, 512, 2, false, true},
                        {1, 64, 32, 16, false, false},   {64, 1, 32, 16, true, false}};
  uint64_t seed = 200;
  for (const Case& c : cases) {
    CAPTURE(c.m);
    CAPTURE(c.n);
    CAPTURE(c.k);
    CAPTURE(c.batch);
    Shape as = c.ta ? Shape{c.k, c.m, c.batch} : Shape{c.m, c.k, c.batch};
    Shape bs = c.tb ? Shape{c.n, c.k, c.batch} : Shape{c.k, c.n, c.batch};
    Tensor a = testing::random_tensor({DType::f32, as}, ++seed);
    Tensor b = testing::random_tensor({DType::f32, bs}, ++seed);
    Attrs attrs{{"transpose_a", c.ta}, {"transpose_b", c.tb}};
    check_invariant(Prim::matmul, {a, b}, attrs, {{}});
  }
}

TEST_CASE("softmax gives the same bits at any thread count") {
  // Attention's scores (rows of 64, many of them) and one long row.
  uint64_t seed = 300;
  for (const Shape& s : {Shape{64, 64, 4, 8}, Shape{70001}, Shape{60, 2048}}) {
    CAPTURE(shape_str(s));
    Tensor x = testing::random_tensor({DType::f32, s}, ++seed);
    Attrs attrs{{"dims", std::vector<int64_t>{1}}};
    check_invariant(Prim::softmax, {x}, attrs, {{}});
    check_invariant(Prim::log_softmax, {x}, attrs, {{}});
  }
}

TEST_CASE("sums over rows give the same bits at any thread count") {
  // A bias's gradient (128 or 512 columns over 2048 rows: the rows are split into parts
  // whose sums are added in order), LayerNorm's scale's (two dims reduced), and columns.
  uint64_t seed = 400;
  const std::pair<Shape, std::vector<int64_t>> cases[] = {{{128, 2048}, {2}},
                                                          {{512, 2048}, {2}},
                                                          {{128, 64, 32}, {2, 3}},
                                                          {{128, 2048}, {1}},
                                                          {{7, 30001}, {2}}};
  for (const auto& c : cases) {  // not a structured binding: Clang 14 cannot capture one
    const Shape& shape = c.first;
    CAPTURE(shape_str(shape));
    Tensor x = testing::random_tensor({DType::f32, shape}, ++seed);
    check_invariant(Prim::sum, {x}, {{"dims", c.second}}, {{}});
  }
}

}  // namespace ytape
