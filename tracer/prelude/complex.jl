# Complex numbers, as Julia's: a struct of its real and imaginary parts, each a number or a
# traced real scalar, so that the tape's dtypes stay real and the gradient through complex
# arithmetic of traced reals is that of the real ops it is made of. An array of complex
# numbers is a vector of values, elementwise. The parts of an instance have one type,
# which is its parameter (`Complex{Int64}`, `ComplexF64`).
struct Complex{T<:Real} <: Number
  re::T
  im::T
end
# The parts promoted to one type, as Julia's promote: Bool and Int give Int, Int and
# Float32 Float32.
complex_parts(a, b) = typeof(a) == typeof(b) ? (a, b) : (a + zero(b), b + zero(a))
Complex(re::Real, im::Real) = new_instance(Complex, complex_parts(re, im)...)
Complex(x::Real) = Complex(x, zero(x))
Complex(z::Complex) = z
complex(re::Real, im::Real) = Complex(re, im)
complex(x::Number) = Complex(x)
const im = Complex(false, true)
const ComplexF64 = Complex{Float64}
const ComplexF32 = Complex{Float32}
const ComplexF16 = Complex{Float16}
convert(::Type{C}, x::Number) where {C<:Complex} = C(x)

real(z::Complex) = z.re
imag(z::Complex) = z.im
real(x::Real) = x
imag(x::Real) = zero(x)
real(x::AbstractArray) = real.(x)
imag(x::AbstractArray) = imag.(x)
reim(z) = (real(z), imag(z))
real(::Type{T}) where {T<:Real} = T
real(C::Type{<:Complex}) = typeof(C(0).re)
conj(z::Complex) = Complex(z.re, -z.im)
conj(x::Real) = x
conj(x::AbstractArray) = conj.(x)
isreal(z::Complex) = iszero(z.im)
isreal(x::Real) = true
eltype(z::Complex) = typeof(z)
float(z::Complex) = Complex(float(z.re), float(z.im))
float(C::Type{<:Complex}) = typeof(float(C(0)))
zero(z::Complex) = Complex(zero(z.re), zero(z.im))
one(z::Complex) = Complex(one(z.re), zero(z.im))
zero(C::Type{<:Complex}) = C(0)
one(C::Type{<:Complex}) = C(1)
iszero(z::Complex) = iszero(z.re) & iszero(z.im)
isnan(z::Complex) = isnan(z.re) | isnan(z.im)
isfinite(z::Complex) = isfinite(z.re) & isfinite(z.im)
rtol_default(C::Type{<:Complex}) = rtol_default(real(C))

+(z::Complex) = z
-(z::Complex) = Complex(-z.re, -z.im)
+(z::Complex, w::Complex) = Complex(z.re + w.re, z.im + w.im)
+(z::Complex, x::Real) = Complex(z.re + x, z.im)
+(x::Real, z::Complex) = Complex(x + z.re, z.im)
-(z::Complex, w::Complex) = Complex(z.re - w.re, z.im - w.im)
-(z::Complex, x::Real) = Complex(z.re - x, z.im)
-(x::Real, z::Complex) = Complex(x - z.re, -z.im)
*(z::Complex, w::Complex) = Complex(z.re * w.re - z.im * w.im, z.re * w.im + z.im * w.re)
*(z::Complex, x::Real) = Complex(z.re * x, z.im * x)
*(x::Real, z::Complex) = Complex(x * z.re, x * z.im)
/(z::Complex, x::Real) = Complex(z.re / x, z.im / x)
/(z::Complex, w::Complex) = z * conj(w) / abs2(w)
/(x::Real, w::Complex) = x * conj(w) / abs2(w)
inv(z::Complex) = conj(z) / abs2(z)
function ^(z::Complex, n::Integer)
  n < 0 && return inv(z)^(-n)
  out = one(z)
  for _ in 1:n
    out = out * z
  end
  out
end
==(z::Complex, w::Complex) = (z.re == w.re) & (z.im == w.im)
==(z::Complex, x::Real) = (z.re == x) & iszero(z.im)
==(x::Real, z::Complex) = z == x
!=(z::Complex, w::Number) = !(z == w)
!=(x::Real, z::Complex) = !(z == x)

abs2(z::Complex) = z.re * z.re + z.im * z.im
abs(z::Complex) = sqrt(abs2(z))
sign(z::Complex) = iszero(z) ? z : z / abs(z)
# angle(z): the argument in (-π, π], atan(im / re) moved into the half plane of re < 0.
function angle(z::Complex)
  x, y = float(z.re), float(z.im)
  a = atan(y / x)
  a = ifelse(x < 0, ifelse(y < 0, a - π, a + π), a)
  ifelse((x == 0) & (y == 0), zero(a), a)
end
angle(x::Real) = x < 0 ? π * one(float(x)) : zero(float(x))
exp(z::Complex) = exp(z.re) * Complex(cos(z.im), sin(z.im))
# sqrt(z): the principal root, its imaginary part of the sign of z's.
function sqrt(z::Complex)
  r = abs(z)
  s = sqrt((r - z.re) / 2)
  Complex(sqrt((r + z.re) / 2), ifelse(z.im < 0, -s, s))
end
# `[1, 2im]`: the items converted to the type of their sum, as Julia promotes them.
promote_vector(xs...) = typed_vector(typeof(+(map(zero, xs)...)), xs...)
# `ComplexF64[1, 2]`: a vector of values.
typed_vector(T, xs...) = Any[convert(T, x) for x in xs]
