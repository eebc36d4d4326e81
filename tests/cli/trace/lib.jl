# Included by include.jl: paths are relative to the including file.
double(x) = 2 .* x
