#!/usr/bin/env bash
# Faults while writing and running: a read-only or missing folder, a file-size limit, a
# signal halfway through a write, a memory limit. Each gives one `ytape:` line on standard
# error and the right exit status, and leaves no partial file and no temporary behind.
# usage: faults.sh YTAPE SAMPLE_TAPE LARGE_TAPE SANITIZED(ON|OFF)
set -u
ytape=$1 sample=$2 large=$3 sanitized=$4
dir=$(mktemp -d)
chmod 755 "$dir"
trap 'chmod -R u+w "$dir"; rm -rf "$dir"' EXIT
fail() { echo "faults.sh: $*" >&2; exit 1; }

# expect STATUS PATTERN CMD...: the command exits with STATUS and writes exactly one line,
# matching PATTERN, to standard error.
expect() {
  local status=$1 pattern=$2
  shift 2
  "$@" 2>"$dir/err" >/dev/null
  local got=$?
  [ "$got" = "$status" ] || fail "$* exited $got, not $status: $(cat "$dir/err")"
  [ "$(wc -l <"$dir/err")" = 1 ] || fail "$* wrote more than one line: $(cat "$dir/err")"
  grep -Eq "^ytape: .*$pattern" "$dir/err" || fail "$* said '$(cat "$dir/err")', not /$pattern/"
}
# Nothing in the folder but what the test made.
only() {
  [ "$(cd "$1" && ls -A | tr '\n' ' ')" = "$2" ] || fail "$1 holds '$(ls -A "$1")', not '$2'"
}

# A read-only folder. Root writes anywhere, so as root the command runs as nobody.
mkdir "$dir/ro"
chmod 555 "$dir/ro"
as_user=()
[ "$(id -u)" = 0 ] && as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
expect 2 "cannot write $dir/ro/out.json: Permission denied" \
  "${as_user[@]}" "$ytape" show --json "$sample" -o "$dir/ro/out.json"
only "$dir/ro" ""

# A missing folder.
expect 2 "cannot write $dir/missing/out.json: No such file or directory" \
  "$ytape" show --json "$sample" -o "$dir/missing/out.json"
[ ! -e "$dir/missing" ] || fail "a missing folder was created"

# A file-size limit (ulimit -f, in 512-byte blocks) below the output: the existing file stays.
mkdir "$dir/w"
"$ytape" show "$sample" -o "$dir/w/out.txt" || fail "show -o failed"
cp "$dir/w/out.txt" "$dir/before"
expect 2 "cannot write $dir/w/out.txt: File too large" \
  bash -c 'ulimit -f 1; exec "$@"' - "$ytape" show --json "$large" -o "$dir/w/out.txt"
cmp -s "$dir/w/out.txt" "$dir/before" || fail "a failed write changed the existing file"
only "$dir/w" "out.txt "

# SIGTERM and SIGINT halfway through a write (YTAPE_TEST_STALL_WRITE holds it there). A
# background job starts with SIGINT ignored; `env --default-signal` gives it back.
for sig in TERM INT; do
  YTAPE_TEST_STALL_WRITE=20 env --default-signal="$sig" \
    "$ytape" show --json "$sample" -o "$dir/w/out.txt" 2>"$dir/err" &
  pid=$!
  for _ in $(seq 200); do
    [ -n "$(cd "$dir/w" && ls -A | grep '^\.out\.txt\.')" ] && break
    sleep 0.05
  done
  [ -n "$(cd "$dir/w" && ls -A | grep '^\.out\.txt\.')" ] || fail "no temporary file appeared"
  kill -s "$sig" "$pid"
  wait "$pid"
  status=$?
  want=$((128 + $(kill -l "$sig")))
  [ "$status" = "$want" ] || fail "SIG$sig: exit status $status, not $want"
  grep -q "^ytape: .*(SIG$sig); no file was left half-written$" "$dir/err" ||
    fail "SIG$sig: said '$(cat "$dir/err")'"
  cmp -s "$dir/w/out.txt" "$dir/before" || fail "SIG$sig changed the existing file"
  only "$dir/w" "out.txt "
done

# A memory limit (ulimit -v, in kB). Sanitizers reserve terabytes of address space and
# cannot run under one, so only the plain build is checked.
if [ "$sanitized" != ON ]; then
  # The fast kernels fail where the plan's buffers are allocated; the reference ones at
  # OpenBLAS's 128 MB buffer, which it would otherwise retry for ever.
  for limit_kernels in 150000/fast 400000/reference; do
    expect 2 "out of memory.*ulimit -v" timeout 120 bash -c 'ulimit -v "$1"; shift; exec "$@"' - \
      "${limit_kernels%/*}" "$ytape" run "$large" --random --kernels "${limit_kernels#*/}" \
      -o "$dir/w/run.safetensors"
  done
  only "$dir/w" "out.txt "
fi
echo ok
