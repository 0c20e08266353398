#!/usr/bin/env bash
# check-log.sh LOG: fail when the LaTeX log of the book reports an undefined
# reference or citation, or an overfull box wider than 5pt.
set -euo pipefail
log=$1
status=0
if grep -E "(Reference|Citation) .* undefined|There were undefined references|undefined citations" "$log"; then
  echo "book: undefined references or citations (above)" >&2; status=1
fi
over=$(grep -E '^Overfull \\[hv]box \(([0-9.]+)pt too' "$log" |
  awk -F'[(p]' '{ w = $2 + 0; if (w > 5) print }' || true)
if [ -n "$over" ]; then
  echo "$over"
  grep -A2 -E '^Overfull \\[hv]box' "$log" | head -60
  echo "book: overfull boxes wider than 5pt (above)" >&2; status=1
fi
exit $status
