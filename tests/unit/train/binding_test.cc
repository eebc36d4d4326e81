#include "train/binding.h"

#include <doctest/doctest.h>

#include "tape/error.h"
#include "unit/train/helpers.h"

using namespace ytape;
using namespace ytape::testing;

TEST_CASE("inputs named like data take batches; out.P and P carry to input P") {
  Tape t = mean_step(4);
  Binding b = bind_step(t, "step.json", ramp_data(10));
  REQUIRE(b.inputs.size() == 4);
  CHECK(b.batch == 4);
  CHECK(b.inputs[0].name == "w");
  CHECK(b.inputs[0].role == InputRole::carried);
  CHECK(b.inputs[0].output == 0);
  CHECK(b.inputs[1].role == InputRole::fixed);
  CHECK(b.inputs[2].role == InputRole::data);
  CHECK(b.inputs[3].role == InputRole::carried);  // "count" carries to itself
  CHECK(b.inputs[3].output == 2);
  REQUIRE(b.loss.has_value());
  CHECK(*b.loss == 1);
  CHECK(carried_input_name(t, "out.w") == "w");
  CHECK(carried_input_name(t, "count") == "count");
  CHECK(carried_input_name(t, "out.loss") == "");
}

TEST_CASE("without out.loss or loss, the loss is the first float scalar that carries nothing") {
  Builder b("step");
  Var x = b.input("x", f32({3, 2}));
  Var s = b.input("s", f32({}));
  b.output(b.add(s, b.constant(DType::f32, 1.0)), "s");
  b.output(b.sum(x, {.dims = {1, 2}}), "total");
  Tape t = b.finish();
  Binding bound = bind_step(t, "step.json", make_data_set({{"x", Tensor(f32({3, 5}))}}, "d"));
  REQUIRE(bound.loss.has_value());
  CHECK(*bound.loss == 1);
}

TEST_CASE("binding errors say what to fix") {
  DataSet data = ramp_data(10);
  CHECK_THROWS_WITH_AS(bind_step(mean_step(11), "step.json", data),
                       "step.json: the batch size of 'x' is 11, but train.safetensors holds 10 "
                       "samples",
                       UserError);
  Builder wrong("step");
  wrong.output(wrong.input("x", f32({3, 4})), "y");
  CHECK_THROWS_WITH_AS(
      bind_step(wrong.finish(), "step.json", data),
      "step.json: input 'x' is f32[3,4], but a batch of 4 samples of 'x' in "
      "train.safetensors (f32[2,10]) is f32[2,4]: the input must have the data's dims, "
      "with the batch size as its last dim",
      UserError);
  Builder none("step");
  none.output(none.input("z", f32({2})), "z");
  CHECK_THROWS_WITH_AS(bind_step(none.finish(), "step.json", data),
                       "step.json: no input is named like a tensor of train.safetensors (x): "
                       "inputs named after a data tensor take its batches",
                       UserError);
  Builder to_data("step");
  to_data.output(to_data.input("x", f32({2, 4})), "out.x");
  CHECK_THROWS_WITH_AS(bind_step(to_data.finish(), "step.json", data),
                       "step.json: output 'out.x' would carry to input 'x', which takes batches "
                       "of the data; rename the output",
                       UserError);
  Builder retyped("step");
  Var x = retyped.input("x", f32({2, 4}));
  retyped.input("w", f32({2}));
  retyped.output(x, "out.w");
  CHECK_THROWS_WITH_AS(bind_step(retyped.finish(), "step.json", data),
                       "step.json: output 'out.w' is f32[2,4] but the input 'w' it carries to is "
                       "f32[2]",
                       UserError);
  Builder twice("step");
  Var w = twice.input("w", f32({2}));
  twice.input("x", f32({2, 4}));
  twice.output(w, "out.w");
  twice.output(w, "w");
  CHECK_THROWS_WITH_AS(bind_step(twice.finish(), "step.json", data),
                       "step.json: outputs 'out.w' and 'w' both carry to input 'w'; keep one of "
                       "them",
                       UserError);
}
