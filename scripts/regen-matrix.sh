#!/usr/bin/env bash
# Regenerates the catalogue's matrix (scenarios/matrix/catalogue.json) and puts its Markdown table
# between the markers <!-- matrix:catalogue:begin --> and <!-- matrix:catalogue:end --> of
# docs/matrix.md and README.md.
#   scripts/regen-matrix.sh           rewrite both copies
#   scripts/regen-matrix.sh --check   compare only: exit 1, with a diff, when a copy differs
# ADMITSIM names the binary (default build/admitsim), JOBS its --jobs (default 2; the table is the
# same for every value).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bin="${ADMITSIM:-$root/build/admitsim}"
check=0
[ "${1:-}" = "--check" ] && check=1
tmp="$(mktemp -d "${TMPDIR:-/tmp}/admitsim-regen-matrix.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
rc=0
# --no-shrink: the table does not depend on the shrinks (each broken cell's explored seed is still
# written and run once more), and they are some 40% of the time.
"$bin" matrix scenarios/matrix/catalogue.json --out "$tmp/out" --markdown "$tmp/table.md" --jobs "${JOBS:-2}" --quiet \
  --no-shrink || rc=$?
if [ "$rc" -eq 2 ]; then echo "regen-matrix: the matrix was refused" >&2; exit 2; fi
if [ "$rc" -ne 0 ]; then
  echo "regen-matrix: the catalogue's matrix is not as catalogue.json expects:" >&2
  grep -A3 '"why"' "$tmp/out/catalogue-matrix.json" >&2 || true
fi
status=0
for f in docs/matrix.md README.md; do
  grep -q '^<!-- matrix:catalogue:begin -->$' "$f" || { echo "regen-matrix: $f has no begin marker" >&2; exit 2; }
  grep -q '^<!-- matrix:catalogue:end -->$' "$f" || { echo "regen-matrix: $f has no end marker" >&2; exit 2; }
  awk -v table="$tmp/table.md" '
    /^<!-- matrix:catalogue:begin -->$/ { print; while ((getline line < table) > 0) print line; skip = 1; next }
    /^<!-- matrix:catalogue:end -->$/ { skip = 0 }
    !skip { print }' "$f" >"$tmp/new"
  if [ "$check" -eq 1 ]; then
    if ! diff -u "$f" "$tmp/new" >&2; then
      echo "regen-matrix: $f differs from the catalogue's matrix; run scripts/regen-matrix.sh" >&2
      status=1
    fi
  elif ! cmp -s "$f" "$tmp/new"; then
    cp "$tmp/new" "$f"
    echo "regen-matrix: rewrote $f" >&2
  fi
done
[ "$rc" -eq 0 ] || status=1
exit "$status"
