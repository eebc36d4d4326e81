# trace: -f unrolled f32[2] --max-ops 100 --loops unroll
function unrolled(x)
  for i in 1:1000
    x = sin.(x)
  end
  x
end
