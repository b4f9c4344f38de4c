#!/usr/bin/env bash
# Goal: --out and --html never replace what a path names, and bad output paths are refused before a run.
# Method: write reports to a FIFO, a symlink, a dangling symlink, a name whose ".partial" sibling is a
# symlink, /dev/stdout, /dev/full, a private null device and /dev/null (the devices only once the FIFO and
# symlink cases have shown that the binary writes them in place), and to paths that cannot be written or that collide; check exit codes,
# messages, what each path is afterwards and that nothing is written for a refused run.
# Usage: output_paths_test.sh BIN_DIR (from the source root).
set -euo pipefail
name=output_paths_test
bin="$1/admitsim"
source "$(dirname "$0")/lib.sh"
lab=scenarios/lab_fifo.json

expect_rc 0 "$bin" run "$lab" --out "$tmp/plain.json" --quiet
[ -s "$tmp/plain.json" ] || fail "no report at a plain path"

# A FIFO gets the bytes and stays a FIFO.
mkfifo "$tmp/fifo"
timeout 10 cat "$tmp/fifo" >"$tmp/from-fifo" &
reader=$!
expect_rc 0 "$bin" run "$lab" --out "$tmp/fifo" --quiet
[ -p "$tmp/fifo" ] || { kill "$reader" 2>/dev/null || true; fail "the FIFO was replaced"; }
wait "$reader" || fail "the reader of the FIFO got nothing"
cmp -s "$tmp/plain.json" "$tmp/from-fifo" || fail "the FIFO did not get the report"

# /dev/stdout on a pipe is written in place; on a redirected file, the file gets the report.
rc=0
timeout 10 "$bin" run "$lab" --out /dev/stdout --quiet </dev/null 2>"$tmp/err" | cat >"$tmp/from-pipe" || rc=$?
[ "$rc" -eq 0 ] && cmp -s "$tmp/plain.json" "$tmp/from-pipe" || { cat "$tmp/err" >&2; fail "/dev/stdout on a pipe"; }
timeout 10 "$bin" run "$lab" --out /dev/stdout --quiet </dev/null >"$tmp/from-redirect" 2>"$tmp/err" ||
  { cat "$tmp/err" >&2; fail "/dev/stdout on a file"; }
cmp -s "$tmp/plain.json" "$tmp/from-redirect" || fail "/dev/stdout on a file did not get the report"

# A symlink stays a symlink, its target gets the report; a dangling one gets its target created.
echo old >"$tmp/target.json"
ln -s target.json "$tmp/link.json"
expect_rc 0 "$bin" run "$lab" --out "$tmp/link.json" --quiet
[ -L "$tmp/link.json" ] || fail "the symlink was replaced"
cmp -s "$tmp/plain.json" "$tmp/target.json" || fail "the symlink's target did not get the report"
ln -s new-target.json "$tmp/dangling.json"
expect_rc 0 "$bin" run "$lab" --out "$tmp/dangling.json" --quiet
[ -L "$tmp/dangling.json" ] && cmp -s "$tmp/plain.json" "$tmp/new-target.json" || fail "dangling symlink: not written through"

# A file named like a temporary file of the report is no writer's: it is neither written through nor moved.
echo victim >"$tmp/victim"
ln -s victim "$tmp/r.json.partial"
expect_rc 0 "$bin" run "$lab" --out "$tmp/r.json" --quiet
[ "$(cat "$tmp/victim")" = victim ] || fail "the report was written through r.json.partial"
[ -L "$tmp/r.json.partial" ] && [ -f "$tmp/r.json" ] && [ ! -L "$tmp/r.json" ] || fail "r.json.partial was renamed"
leftover="$(find "$tmp" -name '.r.json.*')"
[ -z "$leftover" ] || fail "a temporary file was left: $leftover"

# A write that fails (here EFBIG: a file size limit, SIGXFSZ ignored) names the errno, removes its temporary
# file and leaves the report already there as it was.
echo '{"old": true}' >"$tmp/kept.json"
rc=0
(trap '' XFSZ; ulimit -f 1; exec "$bin" run "$lab" --out "$tmp/kept.json" --quiet) 2>"$tmp/err" || rc=$?
[ "$rc" -eq 2 ] || { cat "$tmp/err" >&2; fail "a write past the file size limit exited $rc"; }
one_line "$tmp/kept.json: cannot write the report (File too large)"
[ "$(cat "$tmp/kept.json")" = '{"old": true}' ] || fail "a failed write changed the report already there"
[ -z "$(find "$tmp" -name '.kept.json.*')" ] || fail "a failed write left its temporary file"

# Devices are written in place: /dev/full fails with ENOSPC (exit 2, named), /dev/null takes the bytes.
test -c /dev/full || fail "/dev/full is not a character device before the test"
expect_rc 2 "$bin" run "$lab" --out /dev/full --quiet
one_line "/dev/full: cannot write the report (No space left on device)"
test -c /dev/full || fail "/dev/full is no longer a character device"
if mknod "$tmp/null" c 1 3 2>/dev/null; then  # a private /dev/null (as root): what another process does to the real one cannot fail this test
  expect_rc 0 "$bin" run "$lab" --out "$tmp/null" --quiet
  test -c "$tmp/null" || fail "a character device was replaced"
fi
if test -c /dev/null; then
  expect_rc 0 "$bin" run "$lab" --out /dev/null --quiet
  test -c /dev/null || fail "/dev/null is no longer a character device"
else
  echo "$name: /dev/null is not a character device before the test; not written" >&2
fi

# Paths checked before the run: nothing is written, the summary line never shows.
expect_rc 2 "$bin" run "$lab" --out "$tmp/missing/r.json"
one_line "$tmp/missing/r.json: no such folder: $tmp/missing"
[ ! -e "$tmp/missing" ] || fail "a missing folder was created"
expect_rc 2 "$bin" run "$lab" --out /proc/admitsim-report.json
one_line "/proc/admitsim-report.json: cannot write in the folder /proc"
expect_rc 2 "$bin" run "$lab" --out "$tmp"
one_line "$tmp: expected a file, got a directory"
expect_rc 2 "$bin" run "$lab" --out "$tmp/first.json" --html "$tmp/plain.json/x.html"
one_line "$tmp/plain.json/x.html: $tmp/plain.json is not a folder"
[ ! -e "$tmp/first.json" ] || fail "a report was written although its --html path is bad"

# Two outputs of one run on one path, and --out with --out-dir: refused before running.
expect_rc 2 "$bin" run "$lab" --out "$tmp/same" --html "$tmp/same"
one_line "admitsim: --html and --out: expected two files, got the same one: $tmp/same"
[ ! -e "$tmp/same" ] || fail "a refused run wrote its report"
expect_rc 2 "$bin" run "$lab" --out "$tmp/o.json" --out-dir "$tmp/d"
one_line "--out and --out-dir"
[ ! -e "$tmp/o.json" ] && [ ! -e "$tmp/d" ] || fail "a refused run wrote something"
mkdir "$tmp/a" "$tmp/b"
cp "$lab" "$tmp/a/lab.json"
cp "$lab" "$tmp/b/lab.json"
expect_rc 2 "$bin" run "$tmp/a/lab.json" "$tmp/b/lab.json" --out-dir "$tmp/both"
one_line "admitsim: $tmp/both/lab_fifo-seed1.json: expected one file per path, got the report of $tmp/a/lab.json and the report of $tmp/b/lab.json"
[ ! -e "$tmp/both" ] || fail "a refused run wrote its reports"

# explore: its folder is locked while it runs; another holder makes it refuse.
mkdir "$tmp/ex"
exec 9>"$tmp/ex/.admitsim-explore.lock"
flock -n 9 || fail "could not take the lock for the test"
expect_rc 2 "$bin" explore scenarios/explore_clock_steps.json --seeds 2 --out "$tmp/ex"
exec 9>&-
one_line "another admitsim explore is writing to this folder"
[ -z "$(find "$tmp/ex" -name '*.json')" ] || fail "a refused explore wrote files"
expect_rc 2 "$bin" explore scenarios/explore_clock_steps.json --seeds 2 --out "$tmp/plain.json"
one_line "$tmp/plain.json"
echo "$name: ok"
