#!/usr/bin/env bash
# `ytape trace` of hostile programs (issue #42): each ends within seconds with exit 2 and a
# message that shows nothing of a file outside the program's folder. A program reads no
# file but a regular *.jl file of at most 64 MiB in its folder's tree or under
# --allow-read; it never blocks on a FIFO; a loop that never ends stops at --max-steps.
# usage: trace_hostile.sh YTAPE
set -u
ytape=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "trace_hostile.sh: $*"; exit 1; }

# trace PROGRAM [OPTIONS...]: traces f on f32[2] within 20 seconds; the message in $dir/err.
trace() {
  local program=$1
  shift
  timeout 20 "$ytape" trace "$program" -f f f32[2] -o "$dir/tape.json" "$@" 2>"$dir/err"
}
# refused PROGRAM WANT [OPTIONS...]: exit 2, and a message that holds WANT and no line of
# /etc/passwd or of the secret below.
refused() {
  local program=$1 want=$2
  shift 2
  trace "$program" "$@"
  local status=$?
  [ $status = 124 ] && fail "$program $*: still running after 20 seconds"
  [ $status = 2 ] || fail "$program $*: exit $status, want 2: $(cat "$dir/err")"
  grep -qF -- "$want" "$dir/err" || fail "$program $*: the message lacks '$want': $(cat "$dir/err")"
  ! grep -q "root:\|hunter2" "$dir/err" || fail "$program $*: the message shows a file: $(cat "$dir/err")"
}

mkdir -p "$dir/proj/lib" "$dir/proj/folder.jl" "$dir/outside"
echo 'double(x) = 2x' > "$dir/proj/lib/double.jl"
echo 'root:x:0:0:root:/root:/bin/bash' > "$dir/outside/x.jl"
echo 'triple(x) = 3x' > "$dir/outside/ok.jl"
mkfifo "$dir/proj/fifo.jl"
ln -s /etc/passwd "$dir/proj/passwd.jl"
ln -s ../outside "$dir/proj/out"
ln -s /dev/zero "$dir/proj/zero.jl"
truncate -s 65M "$dir/proj/huge.jl"
p=$dir/proj/p.jl
program() { printf '%s\nf(x) = x\n' "$1" > "$p"; }

# Inside the folder's tree, including through `..` that stays in it.
program 'include("lib/double.jl"); include("lib/../lib/double.jl")'
trace "$p" || fail "an include inside the program's folder failed: $(cat "$dir/err")"

# Out of the tree: an absolute path, `../`, symbolic links, /proc; never read, never shown.
program 'include("/etc/passwd")'
refused "$p" 'include("/etc/passwd") is outside the program'"'"'s folder' 
grep -qF -- "allow it with --allow-read /etc" "$dir/err" || fail "no suggestion: $(cat "$dir/err")"
program 'include("../outside/x.jl")'
refused "$p" "allow it with --allow-read $dir/outside"
program 'include("passwd.jl")'
refused "$p" "(it leads to /etc/passwd) is outside"
program 'include("out/x.jl")'
refused "$p" "(it leads to $dir/outside/x.jl) is outside"
program 'include("/proc/self/environ")'
YTAPE_SECRET=hunter2 refused "$p" "is outside the program's folder"
program 'isfile("/etc/passwd")'
refused "$p" 'isfile("/etc/passwd") is outside'
program 'isdir("..")'
refused "$p" 'isdir("..") is outside'
program 'ispath("/etc/passwd") || cd("/")'
refused "$p" 'ispath("/etc/passwd") is outside'

# --allow-read lets a folder in, and only for *.jl files of it.
program 'include("../outside/ok.jl"); include("out/ok.jl")'
refused "$p" "is outside the program's folder"
trace "$p" --allow-read "$dir/outside" || fail "--allow-read did not let ../outside in: $(cat "$dir/err")"
program 'include("/proc/self/environ")'
YTAPE_SECRET=hunter2 refused "$p" "only program files, named *.jl, are included" --allow-read /proc
program 'include("passwd.jl")'
refused "$p" "only program files, named *.jl, are included" --allow-read /etc
program 'isfile("/etc/passwd") || error("no passwd")'
trace "$p" --allow-read /etc || fail "isfile under --allow-read failed: $(cat "$dir/err")"
refused "$p" "--allow-read $dir/none: No such file or directory" --allow-read "$dir/none"

# Not a regular file, or too large: refused before reading, never blocking.
program 'include("fifo.jl")'
refused "$p" "cannot include '$dir/proj/fifo.jl': it is a FIFO, not a program file"
program 'include("folder.jl")'
refused "$p" "cannot include '$dir/proj/folder.jl': it is a folder, not a program file"
program 'include("zero.jl")'
refused "$p" "(it leads to /dev/zero) is outside"
refused "$p" "only program files, named *.jl, are included" --allow-read /dev
program 'include("huge.jl")'
refused "$p" "it is 68157440 bytes, more than the 64 MiB a program file may be"
refused /dev/zero "cannot read '/dev/zero': it is a character device, not a program file"
refused "$dir/proj/fifo.jl" "cannot read '$dir/proj/fifo.jl': it is a FIFO, not a program file"
refused "$dir/proj" "cannot read '$dir/proj': it is a folder, not a program file"
refused "$dir/proj/huge.jl" "it is 68157440 bytes, more than the 64 MiB"

# A loop that never ends, at the top level and in the traced function.
printf 'x = 1\nwhile true end\nf(x) = x\n' > "$p"
refused "$p" "p.jl:2:7: the program ran more than 10000 steps (in the loop at line 2); raise the limit with --max-steps" --max-steps 10000
printf 'function f(x)\n  while true\n    x = x\n  end\nend\n' > "$p"
refused "$p" "the program ran more than 10000 steps (in the loop at line 2)" --max-steps 10000
printf 's = 0\nfor i in 1:1000\n  global s += i\nend\nf(x) = x\n' > "$p"
trace "$p" --max-steps 0 || fail "--max-steps 0 (no limit) failed: $(cat "$dir/err")"
refused "$p" "the program ran more than 1000 steps (in the loop at line 2)" --max-steps 1000
exit 0
