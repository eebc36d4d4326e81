# trace: -f f n
# An entry argument that contains itself cannot become inputs named by path.
mutable struct Node; w; next; end
n = Node(1.0, nothing); n.next = n
f(m) = m.w
