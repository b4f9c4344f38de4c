# Shared by the tests of this folder: sourced after `bin` and `name` are set.
#   expect_rc WANT CMD...   runs CMD (10 s at most), its output in $tmp/out and $tmp/err; fails unless it exits WANT
#   one_line TEXT           fails unless $tmp/err is exactly one line and holds TEXT
#   interrupt OUT ERR ARGS...  runs "$bin" ARGS in the background, sends SIGINT 1 s after the process has
#                           installed its SIGINT handler (/proc/PID/status), waits up to 15 s for it to end
#                           (fails if it does not); its exit code in $rc
#   sanitized               true when the binary is built with a sanitizer: it needs terabytes of address
#                           space (no ulimit -v) and its memory figures are the sanitizer's
#   confirm_tmpdir          for the tests of admitsim confirm: fails unless redis-server is on PATH, and makes
#                           TMPDIR the test's own ($tmp/tmpdir), where every run's servers keep their folders
#   nothing_left_behind     fails if a folder of a confirmation is left in that TMPDIR, or one of its servers
#                           still runs
# (Not admitsim-confirm.*: the prefix of the folders a real run's servers keep, which tests count.)
tmp="$(mktemp -d "${TMPDIR:-/tmp}/admitsim-test-$name.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "$name: $*" >&2; exit 1; }
expect_rc() {
  local want="$1"; shift
  local rc=0
  timeout 10 "$@" >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
  if [ "$rc" -ne "$want" ]; then
    head -c 2000 "$tmp/err" >&2
    fail "exit $rc (124: it hung), wanted $want: $*"
  fi
}
one_line() {
  local lines
  lines="$(wc -l <"$tmp/err")"
  [ "$lines" -eq 1 ] || { cat "$tmp/err" >&2; fail "expected one line on stderr, got $lines"; }
  grep -qF -- "$1" "$tmp/err" || { cat "$tmp/err" >&2; fail "the message does not say: $1"; }
}
sanitized() { grep -qa -e __asan_init -e __tsan_init -e __msan_init "$bin"; }
interrupt() {
  local out="$1" err="$2"
  shift 2
  "$bin" "$@" >"$out" 2>"$err" &
  local pid=$!
  # The signal must find the verb's handler installed: a background job of a script starts with SIGINT
  # ignored, so a signal sent while a slow build (a sanitizer's, under load) still loads its input would be
  # lost. Wait (30 s at most) until /proc says SIGINT is caught, then let the search run for a second.
  local caught=""
  for _ in $(seq 300); do
    caught="$(awk '/^SigCgt:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)"
    [ -n "$caught" ] && (( (16#$caught >> 1) & 1 )) && break
    kill -0 "$pid" 2>/dev/null || break
    caught=""
    sleep 0.1
  done
  [ -n "$caught" ] || { kill -KILL "$pid" 2>/dev/null || true; fail "admitsim $1 never caught SIGINT within 30 s of its start"; }
  sleep 1
  kill -INT "$pid"
  for _ in $(seq 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid"; fail "admitsim $1 did not stop within 15 s of SIGINT"; fi
  rc=0
  wait "$pid" || rc=$?
}
confirm_tmpdir() {
  command -v redis-server >/dev/null || fail "redis-server is not on PATH (scripts/setup.sh installs it)"
  export TMPDIR="$tmp/tmpdir"
  mkdir -p "$TMPDIR"
}
nothing_left_behind() {
  sleep 0.5  # (a server killed at the run's end is reaped by then)
  local left
  left="$(find "$TMPDIR" -mindepth 1 -maxdepth 1 -name 'admitsim-confirm.*' | wc -l)"
  [ "$left" -eq 0 ] || fail "$left folders left in $TMPDIR"
  if pgrep -f -- "--dir $TMPDIR/admitsim-confirm" >/dev/null; then fail "a redis-server of the test is still running"; fi
}
