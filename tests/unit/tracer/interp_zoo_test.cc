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
