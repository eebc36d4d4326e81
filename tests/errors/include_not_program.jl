# trace: -f f f32[2]
# Only program files are included: a file of another kind in the program's folder (a key,
# a .env) would show a line of itself in a syntax error.
include("include_missing.err")
f(x) = x
