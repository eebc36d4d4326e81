# trace: -f f f32[2]
# A function missing its 'end': the message points at the end of the file and names
# where the function began.
function f(x)
  y = 2 .* x
  sum(y)
