// Data loading and training loops at top level: DataLoader and what iterates it (first,
// last, collect over iterate methods), MLUtils' chunk, randperm, sort, Flux.train!.
#include <doctest/doctest.h>

#include "tests/unit/tracer/interp_helpers.h"

namespace ytape::tracer::testing {

TEST_CASE("DataLoader batches along the last dim, shuffled from the program's seed") {
  std::string p = R"(
X = reshape(collect(1.0:12.0), 2, 6)
Y = collect(1:6)
)";
  CHECK(eval_show(p, "[b[2] for b in Flux.DataLoader((X, Y); batchsize=4)]") ==
        "[[1, 2, 3, 4], [5, 6]]");
  CHECK(eval_show(p, "[b for b in DataLoader(X; batchsize=4, partial=false)]") ==
        "[[1.0 3.0 5.0 7.0; 2.0 4.0 6.0 8.0]]");
  CHECK(eval_show(p,
                  "length(DataLoader(X; batchsize=4)), length(DataLoader(X; batchsize=4, "
                  "partial=false)), numobs((X, Y)), getobs(X, [3])") == "(2, 1, 6, [5.0; 6.0;;])");
  // A shuffled pass visits every observation once; the same seed, the same order.
  std::string shuffled =
      "seed!(2); v = vcat([b[2] for b in DataLoader((X, Y); batchsize=4, shuffle=true)]...)";
  CHECK(eval_show(p + shuffled, "sort(v) == Y, v == Y") == "(true, false)");
  CHECK(eval_show(p + shuffled, "v") == eval_show(p + shuffled, "v"));
}

TEST_CASE("randperm, sort and sortperm") {
  CHECK(eval_show("seed!(1)", "p = randperm(50); sort(p) == collect(1:50), p != collect(1:50)") ==
        "(true, true)");
  CHECK(eval_show("",
                  "sort([3.0, NaN, -1.0, 2.0]), sortperm([3, 1, 2]), sort([3, 1, 2]; rev=true)") ==
        "([-1.0, 2.0, 3.0, NaN], [2, 3, 1], [3, 2, 1])");
  CHECK(eval_show("", "sortperm([2, 1, 2, 1])") == "[2, 4, 1, 3]");  // stable
  CHECK(trace_error("f(x) = sort(x)", "f", {"f32[3]"}).find("no primitive sorts") !=
        std::string::npos);
  CHECK(trace_error("f(x) = x[randperm(3)]", "f", {"f32[3]"}).find("randperm inside a traced") !=
        std::string::npos);
}

TEST_CASE("Flux.train! steps gradient and update! over the batches") {
  std::string p = R"(
using Flux
seed!(3)
X = rand(Float32, 4, 10)
Y = Float32.(Flux.onehotbatch([i % 3 for i in 1:10], 0:2))
loss(m, x, y) = Flux.logitcrossentropy(m(x), y)
make() = (seed!(5); Chain(Dense(4 => 8, relu), Dense(8 => 3)))
data = DataLoader((X, Y); batchsize=4)
a = make()
opt_a = Flux.setup(Adam(0.01), a)
l0 = loss(a, X, Y)
for epoch in 1:10
  Flux.train!(loss, a, data, opt_a)
end
# The same by hand: gradient and update per batch.
b = make()
opt_b = Optimisers.setup(Adam(0.01), b)
for epoch in 1:10, (x, y) in data
  g = gradient(m -> loss(m, x, y), b)[1]
  opt_b, b = Optimisers.update(opt_b, b, g)
end
)";
  CHECK(eval_show(p, "loss(a, X, Y) < 0.9 * l0, a.layers[1].weight == b.layers[1].weight") ==
        "(true, true)");
}

TEST_CASE("first, last and collect take any struct with iterate methods: a DataLoader's batches") {
  std::string p = R"(
X = reshape(collect(1.0:12.0), 2, 6)
Y = collect(1:6)
d = DataLoader((X, Y); batchsize=4)
struct Countdown
  n
end
iterate(c::Countdown, k=c.n) = k == 0 ? nothing : (k, k - 1)
)";
  // vae_mnist's `original, _ = first(get_data(args.sample_size^2))`.
  CHECK(eval_show(p, "x, y = first(d); size(x), y") == "((2, 4), [1, 2, 3, 4])");
  CHECK(eval_show(p, "length(collect(d)), last(d)[2]") == "(2, [5, 6])");
  CHECK(eval_show(p, "first(Countdown(3)), collect(Countdown(3)), last(Countdown(2))") ==
        "(3, [3, 2, 1], 1)");
  CHECK(run_error(p + "first(nothing)").find("cannot iterate over a Nothing") != std::string::npos);
}

TEST_CASE("MLUtils' chunk: n parts of cld(size, n) slices along dims, the last shorter") {
  std::string p = "x = reshape(collect(1:10), 2, 5)";
  CHECK(eval_show(p, "chunk(x, 2)") == "[[1 3 5; 2 4 6], [7 9; 8 10]]");
  CHECK(eval_show(p, "chunk(x, 2; dims=1)") == "[[1 3 5 7 9], [2 4 6 8 10]]");
  // Fewer parts than asked when they do not divide it, as MLUtils'.
  CHECK(eval_show(p, "length(chunk(x, 4)), [size(c) for c in chunk(x, 4)]") ==
        "(3, [(2, 2), (2, 2), (2, 1)])");
  // vae_mnist's convert_to_image: columns of 784 pixels, chunked, each tiled as 28 rows.
  std::string image = R"(
Gray.(permutedims(vcat(reshape.(chunk(sigmoid.(x |> cpu), y_size), 28, :)...), (2, 1)))
)";
  CHECK(eval_show("x = zeros(Float32, 28^2, 4); y_size = 2", "img = " + image +
                                                                 "; size(img), "
                                                                 "img[1, 1], eltype(img)") ==
        "((56, 56), 0.5f0, Float32)");
}

}  // namespace ytape::tracer::testing
