#!/usr/bin/env bash
# Runs every test of a build directory with ctest and closes with one "N passed, N failed" line.
set -u
build=${1:-build}
log=$(mktemp)
ctest --test-dir "$build" --output-on-failure -j "$(nproc 2>/dev/null || echo 2)" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
total=$(sed -n 's/.*tests passed, \([0-9]*\) tests failed out of \([0-9]*\).*/\2/p' "$log" | tail -n 1)
failed=$(sed -n 's/.*tests passed, \([0-9]*\) tests failed out of \([0-9]*\).*/\1/p' "$log" | tail -n 1)
rm -f "$log"
if [ -z "$total" ]; then
    echo "tests: ctest printed no summary" >&2
    exit 1
fi
echo "$((total - failed)) passed, $failed failed"
exit "$rc"
