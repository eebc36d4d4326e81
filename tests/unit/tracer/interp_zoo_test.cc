// What running FluxML's model-zoo scripts (vision/vae_mnist, mlp_mnist, conv_mnist,
// convmixer_cifar10) as published asked of the language and the prelude beyond their
// data: each case a gap they showed, with the meaning of the package that defines it.
#include <doctest/doctest.h>

#include "tests/unit/tracer/interp_helpers.h"

namespace ytape::tracer::testing {

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
