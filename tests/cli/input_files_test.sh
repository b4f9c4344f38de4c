#!/usr/bin/env bash
# Goal: no input makes a verb block or read without bound: only regular files (or "-", standard input)
# are read, up to 256 MiB, by check, run, explore, list and replay alike.
# Method: give each verb /dev/zero, a FIFO with no writer, a sparse file above the limit, and a report
# whose scenario file is /dev/stdin with a standard input that never ends; every command runs under a
# timeout and a memory limit, and must answer at once with exit 2 and one line (list: an INVALID row).
# Usage: input_files_test.sh BIN_DIR (from the source root).
set -euo pipefail
name=input_files_test
bin="$1/admitsim"
source "$(dirname "$0")/lib.sh"
sanitized || ulimit -v 4000000  # a reader without bound is stopped here, not by the machine

expect_rc 2 "$bin" check /dev/zero
one_line "/dev/zero: expected a scenario file, got a character device"
mkfifo "$tmp/fifo.json"
expect_rc 2 "$bin" check "$tmp/fifo.json"
one_line "$tmp/fifo.json: expected a scenario file, got a FIFO"
expect_rc 2 "$bin" run "$tmp/fifo.json" --out "$tmp/r.json"
one_line "got a FIFO"
expect_rc 2 "$bin" explore "$tmp/fifo.json" --seeds 1 --out "$tmp/ex"
one_line "$tmp/fifo.json: expected a scenario file, got a FIFO"
mkdir "$tmp/cat"
cp scenarios/lab_fifo.json "$tmp/cat/"
mkfifo "$tmp/cat/pipe.json"
expect_rc 0 "$bin" list --dir "$tmp/cat"
grep -q 'pipe.json.*INVALID.*got a FIFO' "$tmp/out" || { cat "$tmp/out" >&2; fail "list: no INVALID row for a FIFO"; }
grep -q '^lab_fifo ' "$tmp/out" || fail "list: the regular file is missing"
expect_rc 2 "$bin" check scenarios
one_line "scenarios: expected a scenario file, got a directory"

truncate -s 300M "$tmp/big.json"
expect_rc 2 "$bin" check "$tmp/big.json"
one_line "$tmp/big.json: larger than the input limit of 268435456 bytes (256 MiB)"
expect_rc 2 "$bin" replay "$tmp/big.json"
one_line "larger than the input limit"

# "-" is standard input, read explicitly.
rc=0
timeout 10 "$bin" check - <scenarios/lab_fifo.json 2>"$tmp/err" || rc=$?
[ "$rc" -eq 0 ] || { cat "$tmp/err" >&2; fail "check - exited $rc"; }
rc=0
head -c 300000000 /dev/zero | timeout 20 "$bin" check - 2>"$tmp/err" || rc=$?
[ "$rc" -eq 2 ] || fail "check - of 300 MB exited $rc"
one_line "-: larger than the input limit"

# A report whose scenario file is /dev/stdin replays from its embedded scenario, never reading stdin.
expect_rc 0 "$bin" run scenarios/lab_fifo.json --out "$tmp/good.json" --quiet
sed 's|"file": "scenarios/lab_fifo.json"|"file": "/dev/stdin"|' "$tmp/good.json" >"$tmp/stdin.json"
grep -q '"file": "/dev/stdin"' "$tmp/stdin.json" || fail "could not point the report at /dev/stdin"
rc=0
mkfifo "$tmp/never"
exec 8<>"$tmp/never"  # open for reading and writing: a standard input that never ends
timeout 10 "$bin" replay "$tmp/stdin.json" --quiet <&8 2>"$tmp/err" || rc=$?
exec 8>&-
[ "$rc" -le 1 ] || { cat "$tmp/err" >&2; fail "replay of a /dev/stdin report exited $rc (124: it blocked)"; }
echo "$name: ok"
