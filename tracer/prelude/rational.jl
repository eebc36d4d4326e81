# Rational numbers, as Julia's Rational{Int64}: a struct of a numerator and a positive
# denominator without common factors, of static integers (an exact fraction has no dtype on
# a tape; traced ones follow their example values, guarded). Arithmetic with integers and rationals stays exact; with a float it gives that
# float's type, the fraction rounded once (Float32(1//3) as Julia's), so Flux's
# `α * 1 // size(y, 1)` is a float. Arrays of rationals are vectors of values.
struct Rational{T<:Integer} <: Real
  num::T
  den::T
end
# Julia's gcd, never negative; where it is 2^63 (gcd(typemin(Int), 0)), no Int64 holds it.
function gcd(a::Integer, b::Integer)
  x, y = a, b
  while y != 0
    x, y = y, rem(x, y)
  end
  x == typemin(Int) && throw(OverflowError("gcd($a, $b) overflows"))
  abs(x)
end
# Julia's divgcd: (x ÷ g, y ÷ g) for g = gcd(x, y), which Julia takes of the magnitudes as
# unsigned integers, so that where g is 2^63 (x and y both 0 or typemin(Int), not both 0)
# a typemin(Int) becomes 1; gcd(0, 0) = 0 makes the divisions a DivideError.
function divgcd(x::Integer, y::Integer)
  m = typemin(Int)
  if (x == 0 || x == m) && (y == 0 || y == m) && !(x == 0 && y == 0)
    return (x == 0 ? 0 : 1, y == 0 ? 0 : 1)
  end
  g = gcd(x, y)
  (div(x, g), div(y, g))
end
# Julia's checked_den: the sign moved to the numerator, where -typemin(Int) is an
# OverflowError (Julia negates the denominator first).
function checked_den(n::Integer, d::Integer)
  d < 0 || return new_instance(Rational, n, d)
  d = checked_neg(d)
  new_instance(Rational, checked_neg(n), d)
end
function Rational(n::Integer, d::Integer)
  iszero(d) && iszero(n) && throw(ArgumentError("invalid rational: zero(Int64)//zero(Int64)"))
  checked_den(divgcd(Int(n), Int(d))...)
end
Rational(n::Integer) = new_instance(Rational, Int(n), 1)
Rational(r::Rational) = r
//(n::Integer, d::Integer) = Rational(n, d)
# As Julia's: common factors out first, then checked products.
function //(r::Rational, d::Integer)
  xn, yn = divgcd(r.num, d)
  checked_den(xn, checked_mul(r.den, yn))
end
function //(n::Integer, r::Rational)
  xn, yn = divgcd(n, r.num)
  checked_den(checked_mul(xn, r.den), yn)
end
function //(r::Rational, s::Rational)
  xn, yn = divgcd(r.num, s.num)
  xd, yd = divgcd(r.den, s.den)
  checked_den(checked_mul(xn, yd), checked_mul(xd, yn))
end
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

# As Julia's, in checked arithmetic: a result Int64 cannot hold is an OverflowError.
function -(r::Rational)
  r.num == typemin(Int) && throw(OverflowError("rational numerator is typemin(Int64)"))
  new_instance(Rational, -r.num, r.den)
end
+(r::Rational) = r
abs(r::Rational) = new_instance(Rational, checked_abs(r.num), r.den)
inv(r::Rational) = checked_den(r.den, r.num)
isinf(r::Rational) = iszero(r.den)
function +(r::Rational, s::Rational)
  isinf(r) && r == s && return r
  xd, yd = divgcd(r.den, s.den)
  Rational(checked_add(checked_mul(r.num, yd), checked_mul(s.num, xd)), checked_mul(r.den, yd))
end
function -(r::Rational, s::Rational)
  isinf(r) && r == -s && return r
  xd, yd = divgcd(r.den, s.den)
  Rational(checked_sub(checked_mul(r.num, yd), checked_mul(s.num, xd)), checked_mul(r.den, yd))
end
function *(r::Rational, s::Rational)
  xn, yd = divgcd(r.num, s.den)
  xd, yn = divgcd(r.den, s.num)
  new_instance(Rational, checked_mul(xn, yn), checked_mul(xd, yd))
end
/(r::Rational, s::Rational) = r // s
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
# By squaring, in checked products, as Julia's power_by_squaring.
function ^(r::Rational, n::Integer)
  n < 0 && return inv(r)^(-n)
  result, base = Rational(1), r
  while n > 0
    isodd(n) && (result = result * base)
    n = n ÷ 2
    n > 0 && (base = base * base)
  end
  result
end

# Exactly; against a float, as Julia compares them: by value.
==(r::Rational, s::Rational) = (r.num == s.num) & (r.den == s.den)
==(r::Rational, n::Integer) = (r.den == 1) & (r.num == n)
==(n::Integer, r::Rational) = r == n
==(r::Rational, x::AbstractFloat) = float(r) == x
==(x::AbstractFloat, r::Rational) = r == x
# Exactly, as Julia's widemul cross products, without their overflow: by the continued
# fractions of a/b and c/d (integer parts first, then the reciprocals of the remainders).
function rational_less(a::Integer, b::Integer, c::Integer, d::Integer, orequal::Bool)
  b == d && return orequal ? a <= c : a < c  # also both infinite (denominator 0)
  b == 0 && return a < 0
  d == 0 && return c > 0
  while true
    p, q = fld(a, b), fld(c, d)
    p == q || return p < q
    a, c = mod(a, b), mod(c, d)
    (a == 0 || c == 0) && return a == 0 && (c > 0 || orequal)
    a, b, c, d = d, c, b, a
  end
end
<(r::Rational, s::Rational) = rational_less(r.num, r.den, s.num, s.den, false)
<=(r::Rational, s::Rational) = rational_less(r.num, r.den, s.num, s.den, true)
<(r::Rational, x::Real) = r < Rational(x)
<(x::Real, r::Rational) = Rational(x) < r
<=(r::Rational, x::Real) = r <= Rational(x)
<=(x::Real, r::Rational) = Rational(x) <= r
