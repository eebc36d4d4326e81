# ytape trace trace/nested.jl -f f f32[]: values nested deeper than the stack would allow
# to walk recursively, and containers inside themselves (tests/cli/cases.cmake).
v = (); for i in 1:300000; global v = (v,); end
c = Chain(identity); for i in 1:100000; global c = Chain(c); end
h = identity; for i in 1:100000; global h = h ∘ identity; end
g = x -> x; for i in 1:100000; local k = g; global g = x -> k(x); end
x = zeros(3); y = x; for i in 1:100000; global y = view(y, :); end
y[2] = 5.0
println(x)
a = Any[1]; push!(a, a)
println(a)
println(deepcopy(a))
mutable struct Node; v; next; end
n = Node(1, nothing); n.next = n
println(n)
d = Dict(); d[:me] = d
println(d)
f(x) = x
