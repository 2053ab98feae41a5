#!/usr/bin/env bash
# Runs every libFuzzer target of a BRISK_FUZZ build for FUZZ_SECONDS each (`make fuzz`; CI runs a short
# smoke). Each target reads its committed seeds (tests/fuzz/corpus/<name>/, never written) and grows a working
# corpus in BUILD/corpus/<name>/; crashes land in BUILD/crashes/<name>/. To keep a crash as a regression
# input, fix it and copy the file into tests/fuzz/corpus/<name>/ (`make test` replays it from then on).
# Usage: run.sh BUILD [SECONDS] [TARGET...]
set -u
build=${1:-build-fuzz}
secs=${2:-${FUZZ_SECONDS:-60}}
shift $(( $# > 2 ? 2 : $# ))
src=$(cd "$(dirname "$0")" && pwd)
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    for f in "$src"/fuzz_*.c; do
        n=$(basename "$f" .c)
        targets+=("${n#fuzz_}")
    done
fi
failed=()
for t in "${targets[@]}"; do
    bin="$build/fuzz_$t"
    if [ ! -x "$bin" ]; then
        echo "fuzz: $bin not built" >&2
        failed+=("$t")
        continue
    fi
    mkdir -p "$build/corpus/$t" "$build/crashes/$t"
    echo "fuzz: $t for ${secs}s" >&2
    if ! "$bin" -max_total_time="$secs" -max_len=8192 -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$build/crashes/$t/" "$build/corpus/$t" "$src/corpus/$t" >"$build/fuzz_$t.log" 2>&1; then
        echo "fuzz: $t FAILED, see $build/fuzz_$t.log and $build/crashes/$t/" >&2
        tail -n 40 "$build/fuzz_$t.log" >&2
        failed+=("$t")
    else
        grep -E "stat::number_of_executed_units|cov:" "$build/fuzz_$t.log" | tail -n 2 >&2
    fi
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: failed: ${failed[*]}" >&2
    exit 1
fi
echo "fuzz: ${#targets[@]} targets, ${secs}s each, no failure"
