# trace: -f f f32[2]
# A program reads only its own folder's tree: no file of the machine, and nothing of it
# is shown (the message must not hold the file's first line).
include("/etc/passwd")
f(x) = x
