// The syntax tree of every construct of the model language, pinned as S-expressions.
#include "helpers.h"

using namespace ytape::tracer;
using namespace ytape::tracer::testing;

TEST_CASE("literals") {
  CHECK(sexpr("42") == "(int 42)");
  CHECK(sexpr("1.5") == "(float 1.5)");
  CHECK(sexpr("1.0") == "(float 1.0)");
  CHECK(sexpr("1e-3") == "(float 0.001)");
  CHECK(sexpr("1f0") == "(float32 1.0)");
  CHECK(sexpr("0.1f0") == "(float32 0.1)");
  CHECK(sexpr("0x1F") == "(int 31)");
  CHECK(sexpr("1_000") == "(int 1000)");
  CHECK(sexpr("true") == "(bool true)");
  CHECK(sexpr("false") == "(bool false)");
  CHECK(sexpr("nothing") == "(nothing)");
  CHECK(sexpr(R"("a\n\"b\"")") == R"((string "a\n\"b\""))");
  CHECK(sexpr(":relu") == "(symbol relu)");
}

TEST_CASE("string interpolation") {
  CHECK(sexpr(R"("loss = $loss")") == R"((interp (string "loss = ") (id loss)))");
  CHECK(sexpr(R"("$(a + b)/$n!")") == R"((interp (call + (id a) (id b)) (string "/") (id n!)))");
  CHECK(sexpr(R"x("$(f("x"))")x") == R"x((interp (call f (string "x"))))x");
  CHECK(sexpr(R"("\$x")") == R"((string "\$x"))");
}

TEST_CASE("tuples, named tuples and grouping") {
  CHECK(sexpr("()") == "(tuple)");
  CHECK(sexpr("(1,)") == "(tuple (int 1))");
  CHECK(sexpr("(1)") == "(int 1)");
  CHECK(sexpr("(a, b...)") == "(tuple (id a) (... (id b)))");
  CHECK(sexpr("(xs...)") == "(tuple (... (id xs)))");
  CHECK(sexpr("(a=1, b=2)") == "(named_tuple (kw a (int 1)) (kw b (int 2)))");
  CHECK(sexpr("(a=1,)") == "(named_tuple (kw a (int 1)))");
  CHECK(sexpr("(; a, b)") == "(named_tuple (kw a (id a)) (kw b (id b)))");
  CHECK(sexpr("(; x.a, b = 1, kws...)") ==
        "(named_tuple (kw a (. (id x) a)) (kw b (int 1)) (kw... (id kws)))");
  CHECK(sexpr("(;)") == "(named_tuple)");
  CHECK(sexpr("(a = 1)") == "(= (id a) (int 1))");
  CHECK(sexpr("(a; b)") == "(block (id a) (id b))");
  CHECK(sexpr("(a = 1; a + 1)") == "(block (= (id a) (int 1)) (call + (id a) (int 1)))");
}

TEST_CASE("arrays, matrices and comprehensions") {
  CHECK(sexpr("[]") == "(vect)");
  CHECK(sexpr("[1.0, 2.0]") == "(vect (float 1.0) (float 2.0))");
  CHECK(sexpr("[x]") == "(vect (id x))");
  CHECK(sexpr("[xs..., 1]") == "(vect (... (id xs)) (int 1))");
  CHECK(sexpr("[1 2; 3 4]") == "(matrix (row (int 1) (int 2)) (row (int 3) (int 4)))");
  CHECK(sexpr("[1 2 3]") == "(matrix (row (int 1) (int 2) (int 3)))");
  CHECK(sexpr("[x; y]") == "(matrix (row (id x)) (row (id y)))");
  CHECK(sexpr("[x;]") == "(matrix (row (id x)))");
  CHECK(sexpr("[f(i) for i in 1:n]") ==
        "(comprehension (call f (id i)) (iteration (in (id i) (range (int 1) (id n)))))");
  CHECK(sexpr("[f(i, j) for i in 1:n, j in 1:m if i > j]") ==
        "(comprehension (call f (id i) (id j)) (iteration (in (id i) (range (int 1) (id n))) "
        "(in (id j) (range (int 1) (id m)))) (filter (call > (id i) (id j))))");
  CHECK(sexpr("[(i, j) for i in 1:3 for j in 1:i]") ==
        "(comprehension (tuple (id i) (id j)) (iteration (in (id i) (range (int 1) (int 3)))) "
        "(iteration (in (id j) (range (int 1) (id i)))))");
  CHECK(sexpr("[x for (i, x) in enumerate(xs)]") ==
        "(comprehension (id x) (iteration (in (tuple (id i) (id x)) (call enumerate (id xs)))))");
  CHECK(sexpr("Float32[1, 2]") == "(index (id Float32) (int 1) (int 2))");
  CHECK(sexpr("Float32[1 2; 3 4]") ==
        "(typed_array (id Float32) (matrix (row (int 1) (int 2)) (row (int 3) (int 4))))");
  CHECK(sexpr("Float32[x for x in xs]") ==
        "(typed_array (id Float32) (comprehension (id x) (iteration (in (id x) (id xs)))))");
}

TEST_CASE("generators in calls") {
  CHECK(sexpr("sum(x^2 for x in xs)") ==
        "(call sum (generator (call ^ (id x) (int 2)) (iteration (in (id x) (id xs)))))");
  CHECK(sexpr("sum(x for x in xs if x > 0)") ==
        "(call sum (generator (id x) (iteration (in (id x) (id xs))) "
        "(filter (call > (id x) (int 0)))))");
  CHECK(sexpr("(x for x in xs)") == "(generator (id x) (iteration (in (id x) (id xs))))");
}

TEST_CASE("ranges") {
  CHECK(sexpr("1:n") == "(range (int 1) (id n))");
  CHECK(sexpr("1:2:10") == "(range (int 1) (int 2) (int 10))");
  CHECK(sexpr("a+1:b-1") == "(range (call + (id a) (int 1)) (call - (id b) (int 1)))");
  CHECK(sexpr("1:n == r") == "(call == (range (int 1) (id n)) (id r))");
}

TEST_CASE("calls: positional, splat, keyword and broadcast") {
  CHECK(sexpr("f()") == "(call f)");
  CHECK(sexpr("f(x, ys...)") == "(call f (id x) (... (id ys)))");
  CHECK(sexpr("f(x, k=1)") == "(call f (id x) (kw k (int 1)))");
  CHECK(sexpr("f(x; k=1, dims, kws...)") ==
        "(call f (id x) (kw k (int 1)) (kw dims (id dims)) (kw... (id kws)))");
  CHECK(sexpr("f(; k=1)") == "(call f (kw k (int 1)))");
  CHECK(sexpr("f.(x, y)") == "(broadcast f (id x) (id y))");
  CHECK(sexpr("m.f.(x)") == "(broadcast (. (id m) f) (id x))");
  CHECK(sexpr("f(x)(y)") == "(call (call f (id x)) (id y))");
  CHECK(sexpr("include(\"other.jl\")") == "(call include (string \"other.jl\"))");
  CHECK(sexpr("Vector{Float32}(undef, 3)") ==
        "(call (curly (id Vector) (id Float32)) (id undef) (int 3))");
}

TEST_CASE("operators are calls of the operator's name") {
  CHECK(sexpr("a + b * c") == "(call + (id a) (call * (id b) (id c)))");
  CHECK(sexpr("a + b + c") == "(call + (id a) (id b) (id c))");
  CHECK(sexpr("a * b * c") == "(call * (id a) (id b) (id c))");
  CHECK(sexpr("(a + b) + c") == "(call + (call + (id a) (id b)) (id c))");
  CHECK(sexpr("a - b - c") == "(call - (call - (id a) (id b)) (id c))");
  CHECK(sexpr("a / b % c \\ d") == "(call \\ (call % (call / (id a) (id b)) (id c)) (id d))");
  CHECK(sexpr("a .+ b .* c") == "(broadcast + (id a) (broadcast * (id b) (id c)))");
  CHECK(sexpr("x .^ 2") == "(broadcast ^ (id x) (int 2))");
  CHECK(sexpr("-x") == "(call - (id x))");
  CHECK(sexpr("!a") == "(call ! (id a))");
  CHECK(sexpr(".-x") == "(broadcast - (id x))");
  CHECK(sexpr("√x") == "(call √ (id x))");
  CHECK(sexpr("-x^2") == "(call - (call ^ (id x) (int 2)))");
  CHECK(sexpr("2^-x") == "(call ^ (int 2) (call - (id x)))");
  CHECK(sexpr("a^b^c") == "(call ^ (id a) (call ^ (id b) (id c)))");
  CHECK(sexpr("-a * b") == "(call * (call - (id a)) (id b))");
  CHECK(sexpr("a << 1 + b") == "(call + (call << (id a) (int 1)) (id b))");
  CHECK(sexpr("x |> f |> g") == "(call |> (call |> (id x) (id f)) (id g))");
  CHECK(sexpr("a => b") == "(call => (id a) (id b))");
  CHECK(sexpr("x isa Number") == "(call isa (id x) (id Number))");
  CHECK(sexpr("x in xs") == "(call in (id x) (id xs))");
  CHECK(sexpr("x ∈ xs") == "(call in (id x) (id xs))");
  CHECK(sexpr("x ≤ y") == "(call <= (id x) (id y))");
}

TEST_CASE("operators as values and as called functions") {
  CHECK(sexpr("reduce(+, xs; init=0)") == "(call reduce (id +) (id xs) (kw init (int 0)))");
  CHECK(sexpr("map(-, xs)") == "(call map (id -) (id xs))");
  CHECK(sexpr("(*)") == "(id *)");
  CHECK(sexpr("+(a, b)") == "(call + (id a) (id b))");
  CHECK(sexpr("-(x)") == "(call - (id x))");
  CHECK(sexpr("-(x)^2") == "(call - (call ^ (id x) (int 2)))");
  CHECK(sexpr("*(a, b, c)") == "(call * (id a) (id b) (id c))");
  CHECK(sexpr("map(=>, ks, vs)") == "(call map (id =>) (id ks) (id vs))");
  CHECK(sexpr("f = <:") == "(= (id f) (id <:))");
}

TEST_CASE("numeric literal juxtaposition multiplies") {
  CHECK(sexpr("2x") == "(call * (int 2) (id x))");
  CHECK(sexpr("2x^2") == "(call * (int 2) (call ^ (id x) (int 2)))");
  CHECK(sexpr("2(x + 1)") == "(call * (int 2) (call + (id x) (int 1)))");
  CHECK(sexpr("1.5σ") == "(call * (float 1.5) (id σ))");
  CHECK(sexpr("1/2x") == "(call / (int 1) (call * (int 2) (id x)))");
  CHECK(sexpr("2x'") == "(call * (int 2) (call ' (id x)))");
}

TEST_CASE("comparisons, && and ||, the ternary") {
  CHECK(sexpr("a < b") == "(call < (id a) (id b))");
  CHECK(sexpr("0 <= i < n") == "(comparison (int 0) <= (id i) < (id n))");
  CHECK(sexpr("a == b != c") == "(comparison (id a) == (id b) != (id c))");
  CHECK(sexpr("a .== b") == "(broadcast == (id a) (id b))");
  CHECK(sexpr("a && b || c") == "(|| (&& (id a) (id b)) (id c))");
  CHECK(sexpr("a || b && c") == "(|| (id a) (&& (id b) (id c)))");
  CHECK(sexpr("a && b && c") == "(&& (id a) (&& (id b) (id c)))");
  CHECK(sexpr("!a && b") == "(&& (call ! (id a)) (id b))");
  CHECK(sexpr("x .> 0 .&& y") == "(broadcast && (broadcast > (id x) (int 0)) (id y))");
  CHECK(sexpr("c ? a : b") == "(if (id c) (id a) (id b))");
  CHECK(sexpr("a ? b : c ? d : e") == "(if (id a) (id b) (if (id c) (id d) (id e)))");
  CHECK(sexpr("c ? 1:2 : 3") == "(if (id c) (range (int 1) (int 2)) (int 3))");
  CHECK(sexpr("x > 0 ? x : -x") == "(if (call > (id x) (int 0)) (id x) (call - (id x)))");
}

TEST_CASE("indexing, fields, adjoint and type assertions") {
  CHECK(sexpr("x[i]") == "(index (id x) (id i))");
  CHECK(sexpr("x[i, :, end]") == "(index (id x) (id i) (:) (end))");
  CHECK(sexpr("x[2:end-1]") == "(index (id x) (range (int 2) (call - (end) (int 1))))");
  CHECK(sexpr("x[]") == "(index (id x))");
  CHECK(sexpr("x[idx...]") == "(index (id x) (... (id idx)))");
  CHECK(sexpr("x[f(end)]") == "(index (id x) (call f (end)))");
  CHECK(sexpr("x[i][end]") == "(index (index (id x) (id i)) (end))");
  CHECK(sexpr("reshape(x, :, 4)") == "(call reshape (id x) (:) (int 4))");
  CHECK(sexpr("a.b") == "(. (id a) b)");
  CHECK(sexpr("a.b.c(x)[1].d") == "(. (index (call (. (. (id a) b) c) (id x)) (int 1)) d)");
  CHECK(sexpr("x'") == "(call ' (id x))");
  CHECK(sexpr("x''") == "(call ' (call ' (id x)))");
  CHECK(sexpr("m.W' * x") == "(call * (call ' (. (id m) W)) (id x))");
  CHECK(sexpr("x[end]'") == "(call ' (index (id x) (end)))");
  CHECK(sexpr("x::Float32") == "(:: (id x) (id Float32))");
  CHECK(sexpr("x::AbstractArray{Float32, 4}") ==
        "(:: (id x) (curly (id AbstractArray) (id Float32) (int 4)))");
}

TEST_CASE("assignment, updates and destructuring") {
  CHECK(sexpr("x = 1") == "(= (id x) (int 1))");
  CHECK(sexpr("a = b = 0") == "(= (id a) (= (id b) (int 0)))");
  CHECK(sexpr("x::Float32 = 1") == "(= (:: (id x) (id Float32)) (int 1))");
  CHECK(sexpr("x += 1") == "(+= (id x) (int 1))");
  CHECK(sexpr("x ^= 2") == "(^= (id x) (int 2))");
  CHECK(sexpr("x .+= 1") == "(.+= (id x) (int 1))");
  CHECK(sexpr("x .= y") == "(.= (id x) (id y))");
  CHECK(sexpr("x[i, j] = v") == "(= (index (id x) (id i) (id j)) (id v))");
  CHECK(sexpr("x.a += 1") == "(+= (. (id x) a) (int 1))");
  CHECK(sexpr("a, b = b, a") == "(= (tuple (id a) (id b)) (tuple (id b) (id a)))");
  CHECK(sexpr("(a, b) = t") == "(= (tuple (id a) (id b)) (id t))");
  CHECK(sexpr("a, (b, c) = f()") == "(= (tuple (id a) (tuple (id b) (id c))) (call f))");
  CHECK(sexpr("x = 1, 2") == "(= (id x) (tuple (int 1) (int 2)))");
  CHECK(sexpr("x = y ->\n  y + 1") == "(= (id x) (-> (y) (call + (id y) (int 1))))");
}

TEST_CASE("blocks: begin, let, if") {
  CHECK(sexpr("begin\n  a\n  b\nend") == "(block (id a) (id b))");
  CHECK(sexpr("let a = 1, b\n  a + b\nend") ==
        "(let (block (= (id a) (int 1)) (id b)) (block (call + (id a) (id b))))");
  CHECK(sexpr("let\n  x\nend") == "(let (block) (block (id x)))");
  CHECK(sexpr("if a\n  1\nend") == "(if (id a) (block (int 1)))");
  CHECK(sexpr("if a\n  1\nelseif b\n  2\nelseif c\n  3\nelse\n  4\nend") ==
        "(if (id a) (block (int 1)) (if (id b) (block (int 2)) (if (id c) (block (int 3)) "
        "(block (int 4)))))");
  CHECK(sexpr("y = if c; 1 else 2 end") ==
        "(= (id y) (if (id c) (block (int 1)) (block (int 2))))");
  CHECK(parse_sexpr("x = 1; y = 2\n\nz") == "(block (= (id x) (int 1)) (= (id y) (int 2)) (id z))");
}

TEST_CASE("loops: for, while, break, continue, return") {
  CHECK(sexpr("for i in 1:n\n  s += i\nend") ==
        "(for (iteration (in (id i) (range (int 1) (id n)))) (block (+= (id s) (id i))))");
  CHECK(sexpr("for i = 1:3 end") ==
        "(for (iteration (in (id i) (range (int 1) (int 3)))) (block))");
  CHECK(sexpr("for x ∈ xs end") == "(for (iteration (in (id x) (id xs))) (block))");
  CHECK(sexpr("for (i, (a, b)) in pairs end") ==
        "(for (iteration (in (tuple (id i) (tuple (id a) (id b))) (id pairs))) (block))");
  CHECK(sexpr("for i in 1:n, j in 1:i\nend") ==
        "(for (iteration (in (id i) (range (int 1) (id n))) (in (id j) (range (int 1) (id i)))) "
        "(block))");
  CHECK(sexpr("while i < 10\n  i += 1\n  i > 5 && break\n  continue\nend") ==
        "(while (call < (id i) (int 10)) (block (+= (id i) (int 1)) "
        "(&& (call > (id i) (int 5)) (break)) (continue)))");
  CHECK(sexpr("function f(x)\n  x > 0 || return 0\n  return x, 1\nend") ==
        "(function f (x) (block (|| (call > (id x) (int 0)) (return (int 0))) "
        "(return (tuple (id x) (int 1)))))");
  CHECK(sexpr("function f()\n  return\nend") == "(function f () (block (return)))");
}

TEST_CASE("function definitions") {
  CHECK(sexpr("function f(a, b::Int=1, xs...; k=2, kws...)\n  a + b\nend") ==
        "(function f (a b::Int=(int 1) xs...) (; k=(int 2) kws...) "
        "(block (call + (id a) (id b))))");
  CHECK(sexpr("f(x) = x + 1") == "(function f (x) (call + (id x) (int 1)))");
  CHECK(sexpr("f(x) = x, 2x") == "(function f (x) (tuple (id x) (call * (int 2) (id x))))");
  CHECK(sexpr("g(x; k) = x") == "(function g (x) (; k) (id x))");
  CHECK(sexpr("f(::Type{T}, x::T) where T = x") ==
        "(function f (::Type{T} x::T) (where T) (id x))");
  CHECK(sexpr("f(x::AbstractArray{T}) where {T<:Real, N} = x") ==
        "(function f (x::AbstractArray{T}) (where T<:Real N) (id x))");
  CHECK(sexpr("function f(x::T) where T <: Number\nend") ==
        "(function f (x::T) (where T<:Number) (block))");
  CHECK(sexpr("(m::Dense)(x) = m.W * x") ==
        "(function (m::Dense) (x) (call * (. (id m) W) (id x)))");
  CHECK(sexpr("function (c::Chain)(x)\n  x\nend") == "(function (c::Chain) (x) (block (id x)))");
  CHECK(sexpr("(::Identity)(x) = x") == "(function (::Identity) (x) (id x))");
  CHECK(sexpr("function Base.show(io, x) end") == "(function Base.show (io x) (block))");
  CHECK(sexpr("f(xs...) = g(xs...)") == "(function f (xs...) (call g (... (id xs))))");
  CHECK(parse_sexpr("function outer(x)\n  inner(y) = x + y\n  inner(1)\nend") ==
        "(block (function outer (x) (block (function inner (y) (call + (id x) (id y))) "
        "(call inner (int 1)))))");
}

TEST_CASE("anonymous functions and do blocks") {
  CHECK(sexpr("x -> x + 1") == "(-> (x) (call + (id x) (int 1)))");
  CHECK(sexpr("(a, b) -> a * b") == "(-> (a b) (call * (id a) (id b)))");
  CHECK(sexpr("() -> 1") == "(-> () (int 1))");
  CHECK(sexpr("(x...) -> x") == "(-> (x...) (id x))");
  CHECK(sexpr("(x; k=1) -> x + k") == "(-> (x) (; k=(int 1)) (call + (id x) (id k)))");
  CHECK(sexpr("((a, b), c) -> a") == "(-> ((a,b) c) (id a))");
  CHECK(sexpr("map(x -> 2x, xs)") == "(call map (-> (x) (call * (int 2) (id x))) (id xs))");
  CHECK(sexpr("function (x, y)\n  x + y\nend") == "(-> (x y) (block (call + (id x) (id y))))");
  CHECK(sexpr("map(xs) do x\n  x^2\nend") ==
        "(call map (-> (x) (block (call ^ (id x) (int 2)))) (id xs))");
  CHECK(sexpr("map(zip(a, b)) do (x, y)\n  x\nend") ==
        "(call map (-> ((x,y)) (block (id x))) (call zip (id a) (id b)))");
  CHECK(sexpr("foldl(xs; init=0) do acc, x\n  acc + x\nend") ==
        "(call foldl (-> (acc x) (block (call + (id acc) (id x)))) (id xs) (kw init (int 0)))");
  CHECK(sexpr("foreach(xs) do\nend") == "(call foreach (-> () (block)) (id xs))");
  // Flux's tests index the result: `gradient(m) do m ... end[1]`.
  CHECK(sexpr("gradient(m) do m\n  m\nend[1]") ==
        "(index (call gradient (-> (m) (block (id m))) (id m)) (int 1))");
}

TEST_CASE("structs and abstract types") {
  CHECK(sexpr("struct Dense\n  W\n  b::Vector{Float32}\nend") ==
        "(struct Dense (W b::Vector{Float32}))");
  CHECK(sexpr("mutable struct Counter\n  n::Int\nend") == "(struct mutable Counter (n::Int))");
  CHECK(sexpr("struct Point{T<:Real} <: Shape; x::T; y::T; end") ==
        "(struct Point{T<:Real} <: Shape (x::T y::T))");
  CHECK(sexpr("struct Empty end") == "(struct Empty ())");
  CHECK(sexpr("struct A\n  \"the weights\"\n  w\nend") == "(struct A (w))");
  CHECK(sexpr("abstract type Layer end") == "(abstract Layer)");
  CHECK(sexpr("abstract type Conv <: Layer end") == "(abstract Conv (id Layer))");
}

TEST_CASE("declarations: const, global, local, using, import") {
  CHECK(sexpr("const N = 10") == "(const (= (id N) (int 10)))");
  CHECK(sexpr("global x") == "(global (id x))");
  CHECK(sexpr("global x = 1") == "(global (= (id x) (int 1)))");
  CHECK(sexpr("function f()\n  local a, b::Int = 2\nend") ==
        "(function f () (block (local (id a) (= (:: (id b) (id Int)) (int 2)))))");
  CHECK(sexpr("using LinearAlgebra") == "(using \"LinearAlgebra\")");
  CHECK(sexpr("using Statistics: mean, std") == "(using \"Statistics: mean, std\")");
  CHECK(sexpr("import Base: +, *") == "(import \"Base: +, *\")");
  CHECK(sexpr("using A.B, C") == "(using \"A.B, C\")");
  CHECK(parse_sexpr("begin\n  using A\nend") == "(block (block (using \"A\")))");
}

TEST_CASE("positions: first token, operator token, field name, or the callee's") {
  Sources sources;
  ExprPtr file = parse_text(sources, "t.jl", "y = a +\n  b.c[1]'\nf(x) = x");
  const Expr& assign = *file->args[0];
  CHECK(assign.pos == Pos{0, 1, 3});
  const Expr& sum = *assign.args[1];
  CHECK(sum.pos == Pos{0, 1, 7});
  CHECK(sum.args[1]->pos == Pos{0, 1, 5});
  const Expr& adjoint = *sum.args[2];
  CHECK(adjoint.pos == Pos{0, 2, 9});
  const Expr& index = *adjoint.args[1];
  CHECK(index.pos == Pos{0, 2, 5});
  CHECK(index.args[0]->pos == Pos{0, 2, 5});
  CHECK(index.args[0]->args[0]->pos == Pos{0, 2, 3});
  CHECK(file->args[1]->pos == Pos{0, 3, 1});
  CHECK(file->args[1]->function->params[0].pos == Pos{0, 3, 3});
}

TEST_CASE("kind names come from the one list") {
  CHECK(kind_name(Kind::int_lit) == "int");
  CHECK(kind_name(Kind::assign) == "=");
  CHECK(kind_name(Kind::lambda) == "->");
  CHECK(kind_name(Kind::import_) == "import");
  CHECK(type_expr_str(*parse_text(*std::make_unique<Sources>(), "t.jl", "x::Base.Vec{<:Real}")
                           ->args[0]
                           ->args[1]) == "Base.Vec{<:Real}");
}
