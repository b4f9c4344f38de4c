# Shared by the tests of this folder: sourced after `bin` and `name` are set.
#   expect_rc WANT CMD...   runs CMD (10 s at most), its output in $tmp/out and $tmp/err; fails unless it exits WANT
#   one_line TEXT           fails unless $tmp/err is exactly one line and holds TEXT
#   sanitized               true when the binary is built with a sanitizer: it needs terabytes of address
#                           space (no ulimit -v) and its memory figures are the sanitizer's
tmp="$(mktemp -d "${TMPDIR:-/tmp}/admitsim-$name.XXXXXX")"
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
