# A recurrent cell over a sequence, written as a loop: traced, it is one scan op whatever
# the sequence's length (docs/regions.md, "Loops in programs").
function cell(W, U, xs, h)
  for t in 1:size(xs, 2)
    h = tanh.(W * h .+ U * xs[:, t])
  end
  sum(h .* h)
end
