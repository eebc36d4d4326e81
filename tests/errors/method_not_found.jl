# trace: -f f f64[2]
# scale has methods for Float32 arrays and numbers only; a Float64 array matches none.
scale(x::AbstractArray{Float32}) = 2 .* x
scale(x::Number) = 2x
f(x) = scale(x)
