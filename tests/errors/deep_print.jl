# trace: -f f f32[]
# Printing a tuple nested 3*10^5 deep: more than the 1000 levels ytape walks.
v = (); for i in 1:300000; global v = (v,); end
println(v)
f(x) = x
