// The prelude as Flux 0.14 defines it: losses with agg, layer constructors and keywords,
// train and test mode, recurrent layers, outputsize and @autosize. Expected values are
// computed independently (by hand or with plain formulas), not by the prelude.
#include <doctest/doctest.h>

#include <cmath>

#include "tests/unit/tracer/interp_helpers.h"

namespace ytape::tracer::testing {

TEST_CASE("Flux's losses: one-hot targets, agg, and the integer-label forms") {
  std::string p = R"(
p = [0.2 0.7; 0.8 0.3]
y = [1.0 0.0; 0.0 1.0]
z = [1.0 2.0; 3.0 0.5]
)";
  CHECK(eval_show(p,
                  "crossentropy(p, y), logitcrossentropy(z, y), "
                  "logitcrossentropy(z, y; agg=sum), logitcrossentropy_labels(z, [1, 2])") ==
        "(1.4067053583800173, 1.9141706445128626, 3.828341289025725, 1.9141706445128626)");
  CHECK(eval_show("",
                  "binarycrossentropy([0.9, 0.2], [1.0, 0.0]), "
                  "logitbinarycrossentropy([2.0, -1.0], [1.0, 0.0])") ==
        "(0.16425203348601775, 0.22009484928059764)");
  CHECK(eval_show("a = [1.0, 2.0, 5.0]; c = [1.5, 2.0, 2.0]",
                  "mae(a, c), huber_loss(a, c), hinge_loss([0.5, -2.0], [1.0, 1.0]), "
                  "mse(a, c; agg=sum), mse(a, c; agg=identity)") ==
        "(1.1666666666666667, 0.875, 1.75, 9.25, [0.25, 0.0, 9.0])");
  // Equal distributions: no divergence.
  CHECK(eval_show(p, "abs(kldivergence(p, p)) < 1e-12") == "true");
  CHECK(run_error(p + "logitcrossentropy(z, [1, 2])")
            .find("logitcrossentropy takes one-hot targets of the scores' size, as Flux's "
                  "(onehotbatch(labels, 1:2)); for integer labels use "
                  "logitcrossentropy_labels(scores, labels)") != std::string::npos);
}

TEST_CASE("xlogy is 0 at x = 0 but for NaN, and its derivative in x there is log y") {
  CHECK(eval_show("", "xlogy(0.0, 0.5), xlogy(0.0, 0.0), xlogy(0.0, Inf), xlogy(2.0, 3.0)") ==
        "(0.0, 0.0, 0.0, " + show(Value::floating(2 * std::log(3.0), DType::f64)) + ")");
  CHECK(eval_show("", "isnan(xlogy(0.0, NaN))") == "true");
  // Hard labels: d/dy of -y log(p + ϵ) - (1 - y) log(1 - p + ϵ) is log((1 - p + ϵ) / (p + ϵ))
  // at y = 0 and 1 as anywhere (it was 0 there, through the select of the 0).
  CHECK(eval_show("p = [0.3, 0.8]; ϵ = eps(1.0)",
                  "gradient(y -> binarycrossentropy(p, y; agg=sum), [0.0, 1.0])[1] ≈ "
                  "log.((1 .- p .+ ϵ) ./ (p .+ ϵ))") == "true");
  CHECK(eval_show("", "gradient(x -> xlogy(x, 2.0), 0.0)[1] == log(2.0)") == "true");
}

TEST_CASE("Flux's layer constructors and keywords") {
  std::string p = R"(
seed!(3)
d1 = Dense(2 => 3, tanh; bias=false)
d2 = Dense([1.0 2.0; 3.0 4.0], [0.5, -0.5], relu)
d3 = Dense([1.0 0.0; 0.0 2.0])
d4 = Dense(2 => 4; init=ones32)
x3 = reshape(collect(1.0:12.0), 2, 3, 2)
c1 = Conv((3, 3), 2 => 4; pad=SamePad())
c2 = Conv(ones(Float32, 1, 1, 2, 3), false)
dw = DepthwiseConv((3, 3), 2 => 4)
img = randn(Float32, 5, 6, 2, 1)
e = Embedding(4 => 3)
)";
  CHECK(eval_show(p, "d1.bias, d2([1.0, 1.0]), d3([1.0, 1.0]), d4.weight, size(d2(x3))") ==
        "(false, [3.5, 6.5], [1.0, 2.0], Float32[1.0 1.0; 1.0 1.0; 1.0 1.0; 1.0 1.0], "
        "(2, 3, 2))");
  // Dense on a 3-d input is the matrix product over the first dim.
  CHECK(eval_show(p, "d2(x3)[:, 2, 2] == relu.([1.0 2.0; 3.0 4.0] * [9.0, 10.0] .+ [0.5, -0.5])") ==
        "true");
  CHECK(eval_show(p,
                  "size(c1(img)), c1.pad, c2.bias, c2(img)[:, :, 1, 1] == "
                  "img[:, :, 1, 1] .+ img[:, :, 2, 1], dw.groups, size(dw.weight)") ==
        "((5, 6, 4, 1), (1, 1, 1, 1), false, true, 2, (3, 3, 1, 4))");
  CHECK(eval_show(p,
                  "e(2) == e.weight[:, 2], size(e([1 2; 3 4])), "
                  "e(Bool[0, 1, 0, 0]) == e.weight[:, 2]") == "(true, (3, 2, 2), true)");
}

// print and string write an instance as its type's show method does, as Julia's print
// calls show; a type without one prints its fields.
TEST_CASE("print and string go through show methods of the value's type") {
  std::string p = R"(
struct Foo
  a
end
Base.show(io::IO, f::Foo) = print(io, "Foo<", f.a, ">")
struct Bar
  b
end
)";
  CHECK(eval_show(p,
                  "string(Foo(1), \" \", Bar(2)), \"$(Foo(3))\", "
                  "string(Chain(Dense(2 => 3, relu), Dropout(0.5)))") ==
        "(\"Foo<1> Bar(2)\", \"Foo<3>\", \"Chain(Dense(2 => 3, relu), Dropout(0.5))\")");
  // While tracing, an instance holding traced values prints its fields, filled in by the
  // print op at run time; one without prints as its show method writes it.
  std::string text =
      trace_text(p + "f(x) = (println(Foo(x), Foo(2)); x)\nx = [1.0, 2.0]", "f", {"x"});
  CHECK(text.find("Foo({})Foo<2>") != std::string::npos);
}

// Flux's one-line show of layers, as sprint(show, layer) gives it (its tests ask for it).
TEST_CASE("sprint(show, layer) writes Flux's form of a layer") {
  std::string p = R"(
m = Chain(Conv((3, 3), 2 => 4, relu; pad=1), MaxPool((2, 2)), BatchNorm(4, relu),
          Dropout(0.5), MeanPool((2, 2); stride=1), Dense(10 => 3))
)";
  CHECK(eval_show(p, "sprint(show, m)") ==
        "\"Chain(Conv((3, 3), 2 => 4, relu, pad=1), MaxPool((2, 2)), BatchNorm(4, relu), "
        "Dropout(0.5), MeanPool((2, 2), stride=1), Dense(10 => 3))\"");
  CHECK(eval_show("", "sprint(show, ConvTranspose((3, 3), 2 => 4; groups=2))") ==
        "\"ConvTranspose((3, 3), 2 => 4, groups=2)\"");
  CHECK(eval_show("",
                  "sprint(show, CrossCor((3, 3), 2 => 4; stride=2, pad=(1, 0, 1, 0), "
                  "bias=false))") ==
        "\"CrossCor((3, 3), 2 => 4, pad=(1, 0, 1, 0), stride=2, bias=false)\"");
  CHECK(eval_show("", "sprint(show, Dense(2 => 3, tanh; bias=false)), sprint(show, (1, \"a\"))") ==
        "(\"Dense(2 => 3, tanh; bias=false)\", \"(1, \\\"a\\\")\")");
  CHECK(eval_show("",
                  "occursin(\"2 =>\", \"x 2 => 4\"), startswith(\"abc\", \"ab\"), "
                  "endswith(\"abc\", \"bc\"), occursin(\"z\", \"abc\")") ==
        "(true, true, true, false)");
  CHECK(run_error("occursin(1, \"a\")").find("occursin takes two strings, got an Int64") !=
        std::string::npos);
}

TEST_CASE("1-d convolutions: Conv((k,), in => out) over (W, C, N)") {
  std::string p = R"(
seed!(9)
c = Conv((3,), 2 => 4; pad=1)
x = randn(Float32, 10, 2, 3)
y = c(x)
w = c.weight
v = [sum(w[4 - k, i, o] * x[t + k - 2, i, 1] for k in 1:3, i in 1:2 if 1 <= t + k - 2 <= 10)
     for t in 1:10, o in 1:4]
)";
  // Conv is a true convolution, as Flux's: v reads the kernel backwards.
  CHECK(eval_show(p,
                  "size(y), maximum(abs.(v .- y[:, :, 1])) < 1e-5, "
                  "size(Conv((3,), 1 => 1; stride=2)(ones(Float32, 9, 1, 1)))") ==
        "((10, 4, 3), true, (4, 1, 1))");
}

TEST_CASE("ConvTranspose is the transpose of the Conv with its weight") {
  // <conv(y), x> == <y, convT(x)> for every x and y: the definition of the transpose.
  std::string p = R"(
seed!(2)
ct = ConvTranspose((3, 3), 2 => 4; stride=2, pad=1, bias=false, init=(d...) -> randn(d...))
c = Conv(ct.weight, false; stride=2, pad=1)
x = randn(5, 5, 2, 1)
y = randn(9, 9, 4, 1)
)";
  CHECK(eval_show(p, "size(ct(x)), abs(sum(c(y) .* x) - sum(y .* ct(x))) < 1e-10") ==
        "((9, 9, 4, 1), true)");
  CHECK(eval_show(p,
                  "size(ConvTranspose((4, 4), 3 => 5; stride=2, pad=SamePad())(ones(Float32, "
                  "6, 6, 3, 2)))") == "(12, 12, 5, 2)");  // stride times the input
}

TEST_CASE("NNlib's conv, DenseConvDims, ∇conv_data and ∇conv_filter") {
  // conv flips the kernel unless flipped=true, as Conv and CrossCor; the two gradients are
  // the transposes of the linear maps x -> conv(x, w) and w -> conv(x, w):
  // <conv(x, w), dy> == <x, ∇conv_data(dy, w)> == <w, ∇conv_filter(x, dy)>.
  std::string p = R"(
seed!(4)
x = randn(6, 5, 3, 2)
w = randn(3, 3, 3, 4)
cd = DenseConvDims(x, w; stride=2, padding=1)
dy = randn(size(conv(x, w, cd))...)
a = sum(conv(x, w, cd) .* dy)
)";
  CHECK(eval_show(p,
                  "conv(x, w; pad=1) ≈ Conv(w, false; pad=1)(x), "
                  "conv(x, w; flipped=true) ≈ CrossCor(w, false)(x), size(dy), "
                  "abs(a - sum(x .* ∇conv_data(dy, w, cd))) < 1e-10, "
                  "abs(a - sum(w .* ∇conv_filter(x, dy, cd))) < 1e-10, "
                  "collect(Float32, 1:3), collect(Int, (1.0, 2.0))") ==
        "(true, true, (3, 3, 4, 2), true, true, Float32[1.0, 2.0, 3.0], [1, 2])");
  check_gradient(p +
                 "f(x) = sum(conv(x, w; pad=1) .^ 2) + "
                 "sum(conv(x, w; stride=2, flipped=true, dilation=2))");
  check_gradient(p + "image = x; x = w\nf(x) = sum(conv(image, x; pad=(1, 0)) .^ 2)");
  check_gradient(p +
                 "f(x) = sum(∇conv_data(dy, w, cd) .* x .^ 2) + sum(∇conv_filter(x, dy, cd) .^ 2)");
}

TEST_CASE("Tridiagonal, ∇eachlastdim and Zygote's zero tangents, as Flux's tests use them") {
  std::string p = R"(
A = reshape(collect(1.0:16.0), 4, 4)
T = Tridiagonal(A)
x = rand(3, 2, 4)
y = collect(eachslice(x; dims=3))
z = [ZeroTangent(), x[:, :, 2], NoTangent(), x[:, :, 4]]
)";
  CHECK(eval_show(p,
                  "Matrix(T), T * [1.0, 2.0, 3.0, 4.0], size(T), T[2, 1], T[1, 3], "
                  "Tridiagonal([1.0], [2.0, 3.0], [4.0]) * [1.0, 1.0]") ==
        "([1.0 5.0 0.0 0.0; 2.0 6.0 10.0 0.0; 0.0 7.0 11.0 15.0; 0.0 0.0 12.0 16.0], "
        "[11.0, 44.0, 107.0, 100.0], (4, 4), 2.0, 0.0, [6.0, 4.0])");
  CHECK(eval_show(p,
                  "Flux.∇eachlastdim(y, x) == x, "
                  "Flux.∇eachlastdim(z, x) == cat(zeros(3, 2), x[:, :, 2], zeros(3, 2), "
                  "x[:, :, 4]; dims=3), Flux.Zygote.ZeroTangent() isa Zygote.AbstractZero") ==
        "(true, true, true)");
  // The gradient reaches the three diagonals only.
  check_gradient(
      "f(x) = sum(Tridiagonal(x) * [1.0, -2.0, 3.0, 0.5]) + sum(Tridiagonal(x .^ 2) * x)\n"
      "x = reshape(collect(0.1:0.1:1.6), 4, 4)");
}

TEST_CASE("normalization, pooling, containers and train/test mode") {
  std::string p = R"(
x = [1.0 4.0; 2.0 0.0; 6.0 2.0]
ln = LayerNorm(3)
img = reshape(collect(1.0:16.0), 4, 4, 1, 1)
par = Parallel(+, a -> a .* 2, b -> b .- 1)
ch = Chain(a -> a .+ 1, a -> a .* 3, sum)
drop = Dropout(0.5)
)";
  CHECK(eval_show(p, "ln(x)[:, 1]") ==
        "[-0.9258191078240638, -0.4629095539120319, 1.3887286617360959]");  // eps = 1f-5
  CHECK(eval_show(p,
                  "AdaptiveMeanPool((2, 2))(img)[:, :, 1, 1], "
                  "AdaptiveMaxPool((1, 2))(img)[:, :, 1, 1], GlobalMaxPool()(img)[1]") ==
        "([3.5 11.5; 5.5 13.5], [8.0 16.0], 16.0)");
  CHECK(eval_show(p,
                  "par(1.0), par(1.0, 5.0), par((1.0, 5.0)), ch[2](1.0), ch[1:2](1.0), "
                  "length(ch)") == "(2.0, 6.0, 6.0, 3.0, 6.0, 3)");
  CHECK(eval_show("c = Chain(enc = a -> a .+ 1, dec = a -> a .* 2)",
                  "c([1.0]), c[:dec]([1.0]), c.layers.enc([1.0]), c[1]([1.0]), length(c)") ==
        "([4.0], [2.0], [2.0], [2.0], 2)");
  // Dropout: in training mode each element is zero or x / (1 - p); testmode! turns it off.
  // Unset, it trains inside gradient only, as Flux's.
  CHECK(eval_show(p + "trainmode!(drop)",
                  "y = drop(ones(1000)); all((y .== 0) .| (y .== 2)), "
                  "300 < count(y .== 0) < 700") == "(true, true)");
  CHECK(eval_show(p,
                  "drop(ones(3)), drop.active, count(gradient(x -> sum(drop(x)), "
                  "ones(1000))[1] .== 0) > 300") == "([1.0, 1.0, 1.0], nothing, true)");
  CHECK(eval_show(p + "testmode!(Chain(drop))", "drop(ones(3)), drop.active") ==
        "([1.0, 1.0, 1.0], false)");
  CHECK(eval_show(p + "testmode!(drop); trainmode!(drop)", "drop.active") == "true");
}

TEST_CASE("gradients through the Flux layers match finite differences") {
  check_gradient(R"(
seed!(7)
init = (dims...) -> randn(dims...)  # Float64, for finite differences in f64
m = Chain(Conv((3, 3), 1 => 2, tanh; pad=SamePad(), init=init), LayerNorm((4, 4, 2)),
          AdaptiveMeanPool((2, 2)), Flux.flatten, Dense(8 => 3; bias=false, init=init))
t = [1.0 0 0; 0 1 0; 0 0 1; 1 0 0]'
function f(x)
  scores = m(reshape(x, 4, 4, 1, 1) .* [1.0, -1.0, 0.5, 2.0]')
  logitcrossentropy(scores, t) + huber_loss(scores, t .* 2; agg=sum)
end
x = Float64.(reshape(collect(1:16), 4, 4)) ./ 16
)");
}

TEST_CASE("recurrent layers: cells made stateful by Recur, reset!") {
  std::string p = R"(
accum(h, x) = (h + x, x)
acc = Recur(accum, 0)
steps = (acc(2), acc(3))
lstm = Recur(LSTMCell(reshape([0.5, -0.5, 1.0, 2.0], 4, 1), reshape([0.1, 0.2, 0.3, 0.4], 4, 1), [0.0, 1.0, 0.0, 0.0],
                      (zeros(1, 1), zeros(1, 1))))
gru = Recur(GRUCell(reshape([0.5, -0.5, 1.0], 3, 1), reshape([0.1, 0.2, 0.3], 3, 1), [0.0, 0.1, 0.2], zeros(1, 1)))
rnn = Recur(RNNCell(tanh, fill(0.5, 1, 1), fill(0.25, 1, 1), [0.1], zeros(1, 1)))
seq = [[1.0], [-2.0]]
outs = (lstm.(seq), gru.(seq), rnn.(seq))
)";
  CHECK(eval_show(p, "steps, acc.state") == "((2, 3), 5)");
  // Within rounding of the same formulas written out by hand (Python's math).
  std::string want =
      "[0.0032656600312317725, 0.15716251541766663, 0.4990987260140729, 0.1654028665852774, "
      "0.5370495669980353, -0.6444441069419306]";
  CHECK(eval_show(p,
                  "got = [outs[1][2][1], lstm.state[2][1], outs[2][1][1], outs[2][2][1], "
                  "outs[3][1][1], outs[3][2][1]]; maximum(abs.(got .- " +
                      want + "))  < 1e-15") == "true");
  // reset! walks a model; a batch of columns gives a state per column.
  CHECK(eval_show(p + "m = Chain(rnn, Dense(1 => 1)); Flux.reset!(m)",
                  "rnn.state == zeros(1, 1), "
                  "size(LSTM(3 => 4)(ones(Float32, 3, 5))), size(GRU(3 => 2)(ones(Float32, 3))), "
                  "LSTM(3 => 4).cell.b[5:8]") ==
        "(true, (4, 5), (2,), Float32[1.0, 1.0, 1.0, 1.0])");
  // Gradients through a sequence, the state carried from step to step.
  check_gradient(R"(
seed!(11)
init = (dims...) -> randn(dims...) .* 0.5
m = Chain(LSTM(2 => 3; init=init), GRU(3 => 2; init=init), RNN(2 => 2; init=init))
function f(x)
  Flux.reset!(m)
  sum(sum(abs2.(m(x[:, t]))) for t in 1:3)
end
x = [0.5 -1.0 0.3; 0.2 0.8 -0.6]
)");
}

TEST_CASE("more of Flux: params, activations, Scale, Maxout, Bilinear, norms, losses") {
  std::string p = R"(
seed!(4)
d = Dense(2 => 3)
m = Chain(d, Dense(3 => 2), d)
s = Flux.Scale(2)
mo = Maxout(a -> a .* 2, a -> a .+ 1)
bl = Bilinear((2, 3) => 2; init=(dims...) -> reshape(collect(1.0:prod(dims)), dims...))
x2, y3 = [1.0, -1.0], [0.5, 0.0, 2.0]
img = randn(4, 4, 4, 2)
)";
  // params: each array once (d appears twice in the chain).
  CHECK(eval_show(p,
                  "length(Flux.params(m)), size.(Tuple(Flux.params(m))), "
                  "length(Flux.activations(m, [1f0, 2f0]))") ==
        "(4, ((3, 2), (3,), (2, 3), (2,)), 3)");
  CHECK(eval_show(p, "s([2.0, 3.0]), mo([1.0, 5.0])") == "([2.0, 3.0], [2.0, 10.0])");
  // Bilinear: z[k] = x' W[k, :, :] y, checked against the sum written out.
  CHECK(eval_show(p,
                  "bl(x2, y3) == [sum(x2[i] * bl.weight[k, i, j] * y3[j] for i in 1:2, "
                  "j in 1:3) for k in 1:2]") == "true");
  CHECK(eval_show(p + "y = InstanceNorm(4)(img); g = GroupNorm(4, 2)(img)",
                  "maximum(abs.(mean(y; dims=(1, 2)))) < 1e-12, "
                  "maximum(abs.(mean(reshape(g, 4, 4, 2, 2, 2); dims=(1, 2, 3)))) < 1e-12") ==
        "(true, true)");
  CHECK(eval_show(p,
                  "a = AlphaDropout(0.5); testmode!(a); a(img) == img, "
                  "size(trainmode!(a)(img))") == "(true, (4, 4, 4, 2))");
  CHECK(eval_show("",
                  "label_smoothing([1.0 0.0; 0.0 1.0], 0.2), "
                  "binary_focal_loss([0.9, 0.2], [1.0, 0.0]), focal_loss([0.7, 0.3], "
                  "[1.0, 0.0]), tversky_loss([0.9, 0.2], [1.0, 0.0]), "
                  "siamese_contrastive_loss([0.5, 0.5], [1.0, 0.0])") ==
        "([0.9 0.1; 0.1 0.9], 0.004989673604573335, 0.03210074495448585, "
        "0.08212560386473444, 0.25)");
}

TEST_CASE("recurrent cells convert their input to the weights' element type, as Flux 0.14's") {
  CHECK(eval_show("x = rand(Float64, 2, 4)\nm1 = RNN(2 => 3)\nm2 = LSTM(2 => 3)\nm3 = GRU(2 => 3)",
                  "typeof(m1(x)), typeof(m1.state), typeof(m2(x)), typeof(m3(x))") ==
        "(Matrix{Float32}, Matrix{Float32}, Matrix{Float32}, Matrix{Float32})");
  CHECK(eval_show("m = RNN(2 => 3)\np = Parallel(vcat, Dense(2, 4), Dense(3, 6))",
                  "Flux.outputsize(m, (2, 4)), size(m.state), Flux.outputsize(Dense(10, 5), (10,); "
                  "padbatch=true), outputsize(p, (2,), (3,)), outputsize(p, ((2, 7), (3, 7)))") ==
        "((3, 4), (3, 1), (5, 1), (10,), (10, 7))");
}

TEST_CASE("recurrent layers over sequences; GRUv3; Flux's multigate and eachlastdim") {
  std::string p = R"(
seed!(3)
m = RNN(2 => 3)
x = rand(Float32, 2, 4, 5)
y = m(x)
Flux.reset!(m)
steps = [m(x[:, :, t]) for t in 1:5]
g = GRUv3(2 => 3)
)";
  CHECK(eval_show(p, "size(y), y[:, :, 5] == steps[5], size(g(x[:, :, 1])), size(g.cell.Wh)") ==
        "((3, 4, 5), true, (3, 4), (6, 3))");
  CHECK(eval_show("x = reshape(1:12, 6, 2)",
                  "Flux.multigate(x, 2, Val(3))[3], "
                  "length(Flux.eachlastdim(x)), selectdim(x, 2, 1)") ==
        "([5 11; 6 12], 2, [1, 2, 3, 4, 5, 6])");
  CHECK(eval_show("x = reshape(1:8, 2, 2, 2)\nidx = (1, :, 2)",
                  "x[idx...], eachslice(x; dims=3)[2] == x[:, :, 2]") == "([5, 7], true)");
  check_trace_matches(p + "f(x) = (Flux.reset!((m, g)); sum(abs2, m(x)) + sum(g(x[:, :, 2])))", "f",
                      {"x"});
}

TEST_CASE(
    "outputsize's needs: unsqueeze, NNlib's other activations, LayerNorm(a, b), channel checks") {
  CHECK(eval_show("",
                  "size(Flux.unsqueeze(dims=3)(ones(5, 7, 13))), size(LayerNorm(3, 2).scale), "
                  "size(LayerNorm(3, 2, tanh)(ones(3, 2))), "
                  "round.((lisht(1.0), logcosh(1.0), softshrink(0.7), trelu(0.5)); digits=4)") ==
        "((5, 7, 1, 13), (3, 2), (3, 2), (0.7616, 0.4338, 0.2, 0.0))");
  for (const char* bad :
       {"Conv((3, 3), 3 => 16)(ones(Float32, 5, 5, 2, 1))",
        "BatchNorm(3)(ones(Float32, 4, 4, 5, 1))", "InstanceNorm(3)(ones(Float32, 4, 4, 5, 1))",
        "GroupNorm(16, 4)(ones(Float32, 4, 4, 15, 1))",
        "ConvTranspose((3, 3), 2 => 4)(ones(Float32, 5, 5, 3, 1))"}) {
    CAPTURE(bad);
    CHECK(run_error(bad).find("DimensionMismatch: ") != std::string::npos);
  }
  CHECK(run_error("Conv((3, 3), 3 => 16)(ones(Float32, 5, 5, 3))")
            .find("DimensionMismatch: a convolution of weight size (3, 3, 3, 16) takes inputs "
                  "of 4 dims, got size (5, 5, 3)") != std::string::npos);
}

TEST_CASE("@autosize: each `_` is the size of the input the layer first sees, as Flux's") {
  std::string p = R"(
m = @autosize (3, 1) Chain(Dense(_ => 4), Dense(_ => div(_, 2)), BatchNorm(_, affine=false))
c = @autosize (8, 8, 1, 2) Chain(c = Conv((3, 3), _ => 5; pad=SamePad()), f = Flux.flatten,
                                 d = Dense(_ => _ ÷ 4, relu)) |> gpu
mo = @autosize (3, 45) Maxout(() -> Dense(_ => 6, tanh), 2)
)";
  CHECK(eval_show(p,
                  "size(m[1].weight), size(m[2].weight), length(m[3].μ), "
                  "size(c[:c].weight), size(c[:d].weight), size(mo(randn(3, 45)))") ==
        "((4, 3), (2, 4), 2, (3, 3, 1, 5), (80, 320), (6, 45))");
  CHECK(run_error("m = @autosize 3 Dense(_ => 2)")
            .find("@autosize takes the input's size as a tuple and a model") != std::string::npos);
  CHECK(run_error("m = @autosize (3,) _")
            .find("@autosize takes `_` as the size argument of a layer") != std::string::npos);
}

TEST_CASE("losses as Flux's tests pin them: integer targets, label_smoothing and margin checks") {
  CHECK(eval_show("", "Flux.kldivergence([1 2 3], [1 2 3]) ≈ 0") == "true");
  CHECK(run_error("label_smoothing([0.0, 1.0], 1.2)")
            .find("ArgumentError: α must be between 0 and 1") != std::string::npos);
  CHECK(run_error("Flux.siamese_contrastive_loss([0.1, 0.2], [1, 0]; margin=-1)")
            .find("DomainError with -1: Margin must be non-negative") != std::string::npos);
}

}  // namespace ytape::tracer::testing
