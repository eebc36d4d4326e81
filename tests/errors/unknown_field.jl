# trace: -f f model f32[3]
struct Layer
  W
  b
end
model = Layer(ones(Float32, 2, 3), zeros(Float32, 2))
f(m, x) = m.weight * x .+ m.b
