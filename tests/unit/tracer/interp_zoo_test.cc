// What running FluxML's model-zoo scripts (vision/vae_mnist, mlp_mnist, conv_mnist,
// convmixer_cifar10) as published asked of the language and the prelude beyond their
// data: each case a gap they showed, with the meaning of the package that defines it.
#include <doctest/doctest.h>

#include "tests/unit/tracer/interp_helpers.h"

namespace ytape::tracer::testing {

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

TEST_CASE("ProgressMeter's Progress and next! count the steps; DrWatson's struct2dict") {
  std::string p = R"(
p = Progress(3)
for loss in (1.0, 0.5)
  next!(p; showvalues=[(:loss, loss)])
end
mutable struct Args
  η
  epochs
end
)";
  CHECK(eval_show(p, "p.counter, p.n") == "(2, 3)");
  CHECK(eval_show(p, "d = struct2dict(Args(0.1, 3)); d[:η], d[:epochs], length(d)") ==
        "(0.1, 3, 2)");
}

TEST_CASE("a name written with a combining mark is the composed one, as Julia reads it") {
  // conv_mnist.jl's ŷ is y and U+0302; a program may spell it either way.
  CHECK(eval_show("y\u0302 = 2.0\ng(x) = x * \u0177", "g(3.0), y\u0302 == \u0177") ==
        "(6.0, true)");
}

TEST_CASE("paths: ispath, isdir, isfile and joinpath answer; mkpath is refused") {
  // Tests run in the build folder's tests/; the folder "." always exists.
  CHECK(eval_show("", "ispath(\".\"), isdir(\".\"), isfile(\".\"), ispath(\"no/such/path\")") ==
        "(true, true, false, false)");
  CHECK(
      eval_show("", "joinpath(\"runs/\", \"model.bson\"), joinpath(\"output\", \"epoch_1.png\")") ==
      "(\"runs/model.bson\", \"output/epoch_1.png\")");
  CHECK(eval_show("", "joinpath(\"a\", \"b\", \"c.jl\"), joinpath(\"a\", \"/b\")") ==
        "(\"a/b/c.jl\", \"/b\")");
  CHECK(run_error("mkpath(\"runs\")").find("mkpath('runs'): the tracer writes no files") !=
        std::string::npos);
  CHECK(run_error("ispath(1)").find("ispath takes a path, a String, got an Int64") !=
        std::string::npos);
}

}  // namespace ytape::tracer::testing
