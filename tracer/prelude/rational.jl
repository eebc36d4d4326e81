# Rational numbers, as Julia's Rational{Int64}: a struct of a numerator and a positive
# denominator without common factors, of static integers (an exact fraction has no dtype on
# a tape; traced ones follow their example values, guarded). Arithmetic with integers and rationals stays exact; with a float it gives that
# float's type, the fraction rounded once (Float32(1//3) as Julia's), so Flux's
# `α * 1 // size(y, 1)` is a float. Arrays of rationals are vectors of values.
struct Rational{T<:Integer} <: Real
  num::T
  den::T
end
function gcd(a::Integer, b::Integer)
  a, b = abs(a), abs(b)
  while b != 0
    a, b = b, rem(a, b)
  end
  a
end
function rational_parts(n::Integer, d::Integer)
  iszero(d) && iszero(n) && throw(ArgumentError("invalid rational: zero(Int64)//zero(Int64)"))
  g = gcd(n, d)
  s = d < 0 ? -1 : 1
  (s * div(n, g), s * div(d, g))
end
Rational(n::Integer, d::Integer) = new_instance(Rational, rational_parts(Int(n), Int(d))...)
Rational(n::Integer) = new_instance(Rational, Int(n), 1)
Rational(r::Rational) = r
//(n::Integer, d::Integer) = Rational(n, d)
//(r::Rational, d::Integer) = Rational(r.num, r.den * d)
//(n::Integer, r::Rational) = Rational(n * r.den, r.num)
//(r::Rational, s::Rational) = Rational(r.num * s.den, r.den * s.num)
numerator(r::Rational) = r.num
denominator(r::Rational) = r.den
numerator(n::Integer) = n
denominator(n::Integer) = one(n)
convert(::Type{R}, n::Integer) where {R<:Rational} = Rational(n)

# As a float of x's type: both parts exact in it, one rounding, as Julia's Float32(1//3).
rational_as(x::AbstractFloat, r::Rational) = convert(typeof(x), r.num) / convert(typeof(x), r.den)
float(r::Rational) = rational_as(1.0, r)
convert(::Type{T}, r::Rational) where {T<:AbstractFloat} = rational_as(one(T), r)
zero(r::Rational) = Rational(0)
one(r::Rational) = Rational(1)
zero(::Type{<:Rational}) = Rational(0)
one(::Type{<:Rational}) = Rational(1)
iszero(r::Rational) = iszero(r.num)
isinteger(r::Rational) = r.den == 1
isfinite(r::Rational) = !iszero(r.den)
eltype(r::Rational) = typeof(r)

-(r::Rational) = new_instance(Rational, -r.num, r.den)
+(r::Rational) = r
abs(r::Rational) = new_instance(Rational, abs(r.num), r.den)
inv(r::Rational) = Rational(r.den, r.num)
+(r::Rational, s::Rational) = Rational(r.num * s.den + s.num * r.den, r.den * s.den)
-(r::Rational, s::Rational) = Rational(r.num * s.den - s.num * r.den, r.den * s.den)
*(r::Rational, s::Rational) = Rational(r.num * s.num, r.den * s.den)
/(r::Rational, s::Rational) = Rational(r.num * s.den, r.den * s.num)
+(r::Rational, n::Integer) = r + Rational(n)
+(n::Integer, r::Rational) = Rational(n) + r
-(r::Rational, n::Integer) = r - Rational(n)
-(n::Integer, r::Rational) = Rational(n) - r
*(r::Rational, n::Integer) = r * Rational(n)
*(n::Integer, r::Rational) = Rational(n) * r
/(r::Rational, n::Integer) = r / Rational(n)
/(n::Integer, r::Rational) = Rational(n) / r
+(r::Rational, x::AbstractFloat) = rational_as(x, r) + x
+(x::AbstractFloat, r::Rational) = x + rational_as(x, r)
-(r::Rational, x::AbstractFloat) = rational_as(x, r) - x
-(x::AbstractFloat, r::Rational) = x - rational_as(x, r)
*(r::Rational, x::AbstractFloat) = rational_as(x, r) * x
*(x::AbstractFloat, r::Rational) = x * rational_as(x, r)
/(r::Rational, x::AbstractFloat) = rational_as(x, r) / x
/(x::AbstractFloat, r::Rational) = x / rational_as(x, r)
function ^(r::Rational, n::Integer)
  n < 0 ? Rational(r.den^(-n), r.num^(-n)) : new_instance(Rational, r.num^n, r.den^n)
end

# Cross-multiplied, exactly; against a float, as Julia compares them: by value.
==(r::Rational, s::Rational) = (r.num == s.num) & (r.den == s.den)
==(r::Rational, n::Integer) = (r.den == 1) & (r.num == n)
==(n::Integer, r::Rational) = r == n
==(r::Rational, x::AbstractFloat) = float(r) == x
==(x::AbstractFloat, r::Rational) = r == x
<(r::Rational, s::Rational) = r.num * s.den < s.num * r.den
<=(r::Rational, s::Rational) = r.num * s.den <= s.num * r.den
<(r::Rational, x::Real) = r < Rational(x)
<(x::Real, r::Rational) = Rational(x) < r
<=(r::Rational, x::Real) = r <= Rational(x)
<=(x::Real, r::Rational) = Rational(x) <= r
