# trace: -f f f32[2]
# Asking about a path outside the program's folder is an error, not an answer: a program
# does not probe the machine.
isfile("/etc/shadow") && println("found")
f(x) = x
