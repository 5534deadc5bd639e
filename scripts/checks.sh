#!/usr/bin/env bash
# The static checks `npm test` runs before the tests: lint (Biome, then ESLint) and the two type checks, side by
# side. Each is mostly one core's work, so on two cores together they take about as long as the longer one.
# A failing check prints its output and fails the run; passing checks stay quiet.
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
npm run --silent lint >"$out/lint" 2>&1 &
lint=$!
npm run --silent typecheck >"$out/typecheck" 2>&1 &
types=$!
status=0
for check in lint typecheck; do
  pid=$lint
  [ "$check" = typecheck ] && pid=$types
  if wait "$pid"; then
    echo "checks: $check passed"
  else
    cat "$out/$check"
    echo "checks: $check failed"
    status=1
  fi
done
exit $status
