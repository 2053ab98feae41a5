#!/usr/bin/env bash
# brisk-bench as CI runs it: every benchmark's --quick smoke run exits 0 and its --json names the figures the
# documentation quotes; bad command lines exit 2. Figures are never compared with a speed: the machine is
# shared and noisy, and a benchmark is not a test.
# Usage: test_bench.sh BRISK_LAB BRISK_BENCH (the first argument is unused: CMake passes both tools).
set -u
bench=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
# has FILE KEY...: every "KEY": appears in FILE
has() {
    f=$1
    shift
    for k in "$@"; do grep -q "\"$k\": " "$f" || { echo "  missing key $k"; return 1; }; done
}
# json_num FILE KEY [N]: the Nth (default first) number after "KEY": in FILE
json_num() { sed -n "s/.*\"$2\": \([0-9.e+-]*\).*/\1/p" "$1" | head -n "${3:-1}" | tail -n 1; }
is() { awk "BEGIN { exit !($1) }"; }

run() { # run NAME: brisk-bench NAME --quick --json into $tmp/NAME.json, progress into $tmp/NAME.err
    "$bench" "$1" --quick --json >"$tmp/$1.json" 2>"$tmp/$1.err"
    check "brisk-bench $1 --quick --json exits 0" "[ $? -eq 0 ]"
    check "brisk-bench $1 reports progress on stderr, not stdout" \
        "grep -q 'brisk-bench $1' '$tmp/$1.err' && ! grep -q 'brisk-bench $1:' '$tmp/$1.json'"
    check "brisk-bench $1 --json names the benchmark" "grep -q '\"bench\": \"$1\"' '$tmp/$1.json'"
}

run memcpy
check "memcpy reports its bandwidth" "has '$tmp/memcpy.json' memcpy_gbps chunk_bytes"
check "memcpy bandwidth is positive" "is '$(json_num "$tmp/memcpy.json" memcpy_gbps) > 0'"

run bulk
check "bulk reports both runs with goodput, per-CPU goodput and the share of the single-copy limit" \
    "has '$tmp/bulk.json' memcpy_1448_gbps gbps gbps_per_cpu_s share_of_single_copy wire_frames"
check "bulk runs without offloads, with checksum offload, and with GSO" \
    "grep -q '\"mode\": \"no_offload\"' '$tmp/bulk.json' && grep -q '\"mode\": \"csum\"' '$tmp/bulk.json' && grep -q '\"mode\": \"gso\"' '$tmp/bulk.json' && grep -q '\"mode\": \"gso_gro\"' '$tmp/bulk.json'"

# --set reaches the stacks: with gro=0 the GRO run's frames reach TCP one by one again, and the receiver's ACKs
# (about one per two segments, against one per batch) put many more frames on the wire.
"$bench" bulk --quick --mode gro --set gro=0 --json >"$tmp/bulk-nogro.json" 2>/dev/null
check "bulk --set gro=0 lists the setting and coalesces nothing" \
    "[ $? -eq 0 ] && grep -q '\"gro=0\"' '$tmp/bulk-nogro.json' && is '$(json_num "$tmp/bulk-nogro.json" wire_frames) > 1.3 * $(json_num "$tmp/bulk.json" wire_frames 3)'"

run timers
check "timers reports ns per arm, re-arm, cancel and expire at 10^6 armed" \
    "has '$tmp/timers.json' ns_per_arm ns_per_rearm ns_per_cancel ns_per_expire && [ '$(json_num "$tmp/timers.json" armed)' = 1000000 ]"

run conns
check "conns reports the rate and the memory per idle connection, without and with buffers" \
    "has '$tmp/conns.json' connections_per_cpu_s bytes_per_idle_endpoint bytes_per_endpoint_with_default_buffers chunks_in_use socket_struct_bytes"
check "conns: idle connections pin no buffer chunks" "[ '$(json_num "$tmp/conns.json" chunks_in_use)' = 0 ]"
if grep -q '"heap_measured": true' "$tmp/conns.json"; then
    check "conns: the heap grew by at least one socket structure per endpoint" \
        "is '$(json_num "$tmp/conns.json" bytes_per_idle_endpoint) >= $(json_num "$tmp/conns.json" socket_struct_bytes)'"
else
    echo "SKIP - conns heap growth: mallinfo2() does not see this build's allocator (sanitizer build)"
fi

"$bench" rr --quick --json >"$tmp/rr.json" 2>/dev/null
check "brisk-bench rr --quick exits 0 and reports both timer disciplines" \
    "[ $? -eq 0 ] && grep -q '\"eager\"' '$tmp/rr.json' && has '$tmp/rr.json' transactions_per_cpu_s wheel_ops_per_transaction"

"$bench" rr --flows 4 --tx 50 --eager --json >"$tmp/rr1.json" 2>/dev/null
check "brisk-bench rr --flows 4 --tx 50 --eager is one run of 200 transactions with eager timers" \
    "[ $? -eq 0 ] && [ '$(json_num "$tmp/rr1.json" transactions)' = 200 ] && [ '$(json_num "$tmp/rr1.json" flows)' = 4 ] && grep -q '\"eager\"' '$tmp/rr1.json' && ! grep -q '\"lazy\"' '$tmp/rr1.json'"
"$bench" rr --flows 2 --tx 50 --set tcp_timer_eager=1 --json >"$tmp/rr-set.json" 2>/dev/null
check "rr --set tcp_timer_eager=1 runs the eager discipline (wheel operations on every transaction)" \
    "[ $? -eq 0 ] && grep -q '\"tcp_timer_eager=1\"' '$tmp/rr-set.json' && is '$(json_num "$tmp/rr-set.json" wheel_ops_per_transaction) >= 1'"
"$bench" rr --set no_such_setting=1 >/dev/null 2>"$tmp/set.err"
check "--set with an unknown name exits 2 with a message" "[ $? -eq 2 ] && grep -q 'not a brisk setting' '$tmp/set.err'"
"$bench" memcpy --set gro=0 >/dev/null 2>&1
check "--set on a benchmark without stacks exits 2" "[ $? -eq 2 ]"
"$bench" rr --flows 0 >/dev/null 2>"$tmp/flows.err"
check "rr --flows 0 exits 2 with a message" "[ $? -eq 2 ] && grep -q 'flows wants' '$tmp/flows.err'"

"$bench" memcpy --quick >"$tmp/memcpy.txt" 2>/dev/null
check "memcpy without --json prints a table line" "grep -q '^memcpy: ' '$tmp/memcpy.txt'"
"$bench" nosuch >/dev/null 2>&1
check "an unknown benchmark exits 2" "[ $? -eq 2 ]"
"$bench" timers --bogus >/dev/null 2>"$tmp/bogus.err"
check "an unknown option exits 2 with a message" "[ $? -eq 2 ] && grep -q \"unknown option '--bogus'\" '$tmp/bogus.err'"
"$bench" >/dev/null 2>&1
check "no benchmark named exits 2" "[ $? -eq 2 ]"
"$bench" --help >"$tmp/help" 2>&1
check "--help lists every benchmark" "[ $? -eq 0 ] && grep -q 'memcpy|timers|conns' '$tmp/help'"
"$bench" rr --help >"$tmp/help-rr" 2>/dev/null
check "--help after a benchmark's name prints the usage and runs nothing" \
    "[ $? -eq 0 ] && grep -q -- '--flows N' '$tmp/help-rr' && ! grep -q 'transactions per CPU' '$tmp/help-rr'"

# bench/compare.sh needs root and minutes of runs: here only that it parses (it is run by hand).
root=$(cd "$(dirname "$0")/../.." && pwd)
check "bench/compare.sh parses" "bash -n '$root/bench/compare.sh'"
# bench/ceiling.sh builds a second tree (minutes): here that it parses, refuses bad arguments, and that its
# patch still applies to the sources — a patch that has rotted would only be found by the next person to run it.
check "bench/ceiling.sh parses" "bash -n '$root/bench/ceiling.sh'"
bash "$root/bench/ceiling.sh" "$(dirname "$bench")" 2 no_offload >/dev/null 2>"$tmp/ceil.err"
check "bench/ceiling.sh refuses no_offload with a message" "[ $? -eq 2 ] && grep -q 'no_offload' '$tmp/ceil.err'"
if command -v git >/dev/null 2>&1; then
    cp -R "$root/src" "$tmp/src"
    if (cd "$tmp" && git apply --check "$root/bench/nocopy.patch") 2>"$tmp/patch.err"; then
        ok "bench/nocopy.patch applies to src/"
    else
        bad "bench/nocopy.patch applies to src/ (update it with the sources it edits)"
        cat "$tmp/patch.err"
    fi
else
    echo "skip - bench/nocopy.patch applies (no git here)"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
