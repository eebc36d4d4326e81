# Two f32 inputs of [2,3] (Julia's 2x3 matrices), for tensor_files.sh.
x = Float32[1 2 3; 4 5 6]
w = Float32[0.5 1 2; 3 4 5]
f(x, w) = sum(x .* w)
