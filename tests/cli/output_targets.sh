#!/usr/bin/env bash
# -o onto what is not a regular file: a device, FIFO or socket is written as it is (never
# replaced by a file); a symbolic link is followed and the file it names replaced, the link
# kept; a replaced file keeps its mode; a directory is refused.
# usage: output_targets.sh YTAPE SAMPLE_TAPE
set -u
ytape=$1 sample=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "output_targets.sh: $*"; exit 1; }

# A FIFO: its reader gets the tape, and the FIFO stays a FIFO.
mkfifo "$dir/fifo"
cat "$dir/fifo" > "$dir/from_fifo" &
reader=$!
"$ytape" show --json "$sample" -o "$dir/fifo" || fail "writing into a FIFO failed"
wait $reader
[ -p "$dir/fifo" ] || fail "the FIFO was replaced"
cmp -s "$dir/from_fifo" "$sample" || fail "the FIFO's reader did not get the tape"

# A symbolic link to a file: the file is replaced, keeping its mode; the link stays a link.
echo old > "$dir/real.json"
chmod 640 "$dir/real.json"
ln -s real.json "$dir/link.json"
"$ytape" show --json "$sample" -o "$dir/link.json" || fail "writing through a link failed"
[ -L "$dir/link.json" ] || fail "the symbolic link was replaced by a file"
cmp -s "$dir/real.json" "$sample" || fail "the link's file was not written"
[ "$(stat -c %a "$dir/real.json")" = 640 ] || fail "the replaced file lost its mode"

# A dangling link: the file it names is created.
ln -s new.json "$dir/dangling.json"
"$ytape" show --json "$sample" -o "$dir/dangling.json" || fail "writing through a dangling link failed"
[ -L "$dir/dangling.json" ] && cmp -s "$dir/new.json" "$sample" || fail "the dangling link's file was not made"

# Character devices: /dev/null stays a device; where the test may make one (root), a copy
# of /dev/null in the folder, and /dev/full gives a clear error and exit 2.
"$ytape" show "$sample" -o /dev/null || fail "writing to /dev/null failed"
[ -c /dev/null ] || fail "/dev/null is no longer a device"
if mknod "$dir/null" c 1 3 2>/dev/null; then
  "$ytape" show "$sample" -o "$dir/null" || fail "writing to a device failed"
  [ -c "$dir/null" ] || fail "the device was replaced by a file"
fi
if [ -c /dev/full ]; then
  "$ytape" show "$sample" -o /dev/full 2> "$dir/err"
  [ $? = 2 ] || fail "writing to /dev/full did not exit 2"
  [ "$(cat "$dir/err")" = "ytape: error: cannot write /dev/full: No space left on device" ] ||
    fail "unexpected message: $(cat "$dir/err")"
  [ -c /dev/full ] || fail "/dev/full is no longer a device"
fi

# A directory is refused, and nothing is left behind anywhere.
mkdir "$dir/folder"
"$ytape" show "$sample" -o "$dir/folder" 2> "$dir/err" && fail "writing over a directory succeeded"
[ "$(cat "$dir/err")" = "ytape: error: cannot write $dir/folder: it is a directory" ] ||
  fail "unexpected message: $(cat "$dir/err")"
leftover=$(ls -A "$dir" | grep '^\.' || true)
[ -z "$leftover" ] || fail "temporary files were left behind: $leftover"
echo ok
