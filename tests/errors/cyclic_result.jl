# trace: -f f f32[]
# A result that contains itself cannot become outputs named by path.
mutable struct Node; w; next; end
f(x) = (m = Node(x, nothing); m.next = m; m)
