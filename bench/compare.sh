#!/usr/bin/env bash
# compare.sh — brisk side by side with the Linux kernel, in one run on this machine (issue 8):
#   1. kernel <-> kernel over a veth pair between two namespaces: iperf3 goodput, and 1-byte request /
#      response transactions per second with tests/interop/ksock (rr client <-> echo server, NODELAY);
#   2. brisk (TAP) <-> kernel: brisk-perf server against iperf3 (both directions, GSO on), and brisk-peer's rr
#      client against the same ksock echo server;
#   3. lwIP (TAP) <-> kernel: not built (no lwIP harness in the tree): skipped, saying so;
#   4. brisk <-> brisk in-process (brisk-bench bulk and rr) and the memcpy single-copy limit.
# Prints one table with the ratios brisk / kernel and writes the figures as JSON.
#
#   bench/compare.sh [BUILD_DIR] [BYTES] [RR_COUNT]   (defaults: build, 500M, 20000; rows 1-2 need root and
#                                                     /dev/net/tun, skipped with the reason otherwise)
#   COMPARE_JSON=FILE bench/compare.sh ...             where to write the JSON (default BUILD_DIR/compare.json)
#
# The same two CPUs run both ends of every row, so the figures measure the stacks' CPU cost as much as
# anything: compare rows of one run, not runs on different machines.
set -u
build=${1:-build}
bytes=${2:-500M}
count=${3:-20000}
out=${COMPARE_JSON:-$build/compare.json}
here=$(cd "$(dirname "$0")" && pwd)
netns=$here/../scripts/netns.sh
bench=$build/brisk-bench
ks=$build/ksock
peer=$build/brisk-peer
perf=$build/brisk-perf
tmp=$(mktemp -d)
NS=brisk-cmpb-$$
cleanup() {
    for p in $(cat "$tmp/pids" 2>/dev/null); do kill "$p" 2>/dev/null; done
    [ -f "$tmp/ns" ] && bash "$netns" down "$NS"
    rm -rf "$tmp"
}
trap cleanup EXIT

declare -A fig     # row key -> figure
declare -A unit    # row key -> unit
declare -A why     # row key -> skip reason
skip() { why[$1]=$2; echo "compare: skip $1: $2" >&2; }
kv() { awk -v k="$2" '{ for (i = 1; i <= NF; i++) { split($i, a, "="); if (a[1] == k) v = a[2] } } END { print v }' "$1"; }
# iperf3's receiver figure in Gbit/s
iperf_gbps() {
    sed -n 's/.* \([0-9.]*\) \([GM]\)bits\/sec .*receiver$/\1 \2/p' "$1" | tail -n 1 |
        awk '{ print ($2 == "M") ? $1 / 1000 : $1 }'
}
json_num() { sed -n "s/.*\"$2\": \([0-9.e+-]*\).*/\1/p" "$1" | head -n "${3:-1}" | tail -n 1; }

# ---- 1 and 2: real networks --------------------------------------------------------------------------------
net_ok=1
if [ "$(id -u)" -ne 0 ]; then
    net_ok=0
    reason="needs root (network namespaces, TAP)"
elif [ ! -c /dev/net/tun ]; then
    net_ok=0
    reason="no /dev/net/tun"
elif ! command -v iperf3 >/dev/null 2>&1; then
    net_ok=0
    reason="iperf3 not installed (scripts/deps.sh)"
else
    for f in "$ks" "$peer" "$perf"; do
        [ -x "$f" ] || { net_ok=0; reason="$f not built (make)"; }
    done
fi
if [ $net_ok = 1 ]; then
    if bash "$netns" up "$NS" >/dev/null 2>&1; then
        touch "$tmp/ns"
    else
        net_ok=0
        reason="cannot create a network namespace"
    fi
fi
if [ $net_ok = 1 ] && ! bash "$netns" veth "$NS" 10.81.0.1/24 10.81.0.2/24 >/dev/null 2>&1; then
    net_ok=0
    reason="cannot create a veth pair"
fi

if [ $net_ok = 1 ]; then
    echo "compare: kernel <-> kernel over veth..." >&2
    timeout 300 ip netns exec "$NS-peer" iperf3 -s -1 >/dev/null 2>&1 &
    echo $! >>"$tmp/pids"
    sleep 0.3
    ip netns exec "$NS" iperf3 -c 10.81.0.2 -n "$bytes" >"$tmp/kk_bulk" 2>&1
    wait
    fig[kernel_bulk]=$(iperf_gbps "$tmp/kk_bulk")
    ip netns exec "$NS-peer" "$ks" --listen 5002 --mode echo --nodelay --timeout 120 >/dev/null 2>&1 &
    echo $! >>"$tmp/pids"
    sleep 0.3
    ip netns exec "$NS" "$ks" --connect 10.81.0.2:5002 --mode rr --size 1 --count "$count" --nodelay \
        --timeout 120 >"$tmp/kk_rr" 2>&1
    wait
    fig[kernel_rr]=$(awk -v n="$(kv "$tmp/kk_rr" rr)" -v s="$(kv "$tmp/kk_rr" secs)" \
        'BEGIN { if (s > 0) printf "%.0f", n / s }')

    echo "compare: brisk (TAP) <-> kernel..." >&2
    timeout 300 ip netns exec "$NS" "$perf" server -1 --tap cmpb1 --ip 10.79.1.2/24 >"$tmp/ps1" 2>&1 &
    echo $! >>"$tmp/pids"
    if bash "$netns" tap "$NS" cmpb1 10.79.1.1/24 >/dev/null 2>&1; then
        sleep 0.3
        ip netns exec "$NS" iperf3 -c 10.79.1.2 -n "$bytes" -R >"$tmp/bk_tx" 2>&1
        fig[brisk_bulk_tx]=$(iperf_gbps "$tmp/bk_tx")
    fi
    wait
    timeout 300 ip netns exec "$NS" "$perf" server -1 --tap cmpb2 --ip 10.79.2.2/24 >"$tmp/ps2" 2>&1 &
    echo $! >>"$tmp/pids"
    if bash "$netns" tap "$NS" cmpb2 10.79.2.1/24 >/dev/null 2>&1; then
        sleep 0.3
        ip netns exec "$NS" iperf3 -c 10.79.2.2 -n "$bytes" >"$tmp/bk_rx" 2>&1
        fig[brisk_bulk_rx]=$(iperf_gbps "$tmp/bk_rx")
    fi
    wait
    ip netns exec "$NS" "$ks" --listen 5003 --mode echo --nodelay --timeout 120 >/dev/null 2>&1 &
    echo $! >>"$tmp/pids"
    timeout 300 ip netns exec "$NS" "$peer" --tap cmpb3 --ip 10.79.3.2/24 --connect 10.79.3.1:5003 --mode rr --size 1 \
        --count "$count" --timeout 120s >"$tmp/bk_rr" 2>"$tmp/bk_rr.err" &
    echo $! >>"$tmp/pids"
    bash "$netns" tap "$NS" cmpb3 10.79.3.1/24 >/dev/null 2>&1
    wait
    fig[brisk_rr]=$(awk -v n="$(kv "$tmp/bk_rr" rr)" -v s="$(kv "$tmp/bk_rr" secs)" \
        'BEGIN { if (s > 0) printf "%.0f", n / s }')
    for k in kernel_bulk kernel_rr brisk_bulk_tx brisk_bulk_rx brisk_rr; do
        [ -n "${fig[$k]:-}" ] || skip $k "the run produced no figure"
    done
else
    for k in kernel_bulk kernel_rr brisk_bulk_tx brisk_bulk_rx brisk_rr; do skip $k "$reason"; done
fi
skip lwip_bulk "no lwIP TAP harness in the tree yet (issue 8, optional)"
skip lwip_rr "no lwIP TAP harness in the tree yet (issue 8, optional)"

# ---- 4: in-process -----------------------------------------------------------------------------------------
if [ -x "$bench" ]; then
    echo "compare: brisk <-> brisk in-process (brisk-bench)..." >&2
    "$bench" bulk --json >"$tmp/bulk.json" 2>/dev/null && {
        fig[inproc_bulk]=$(json_num "$tmp/bulk.json" gbps_per_cpu_s 1)
        fig[inproc_bulk_gso]=$(json_num "$tmp/bulk.json" gbps_per_cpu_s 2)
    }
    "$bench" rr --json >"$tmp/rr.json" 2>/dev/null && fig[inproc_rr]=$(json_num "$tmp/rr.json" transactions_per_cpu_s)
    "$bench" memcpy --json >"$tmp/memcpy.json" 2>/dev/null && fig[memcpy]=$(json_num "$tmp/memcpy.json" memcpy_gbps)
else
    for k in inproc_bulk inproc_bulk_gso inproc_rr memcpy; do skip $k "$bench not built (make)"; done
fi

# ---- the table -----------------------------------------------------------------------------------------------
rows=(kernel_bulk brisk_bulk_tx brisk_bulk_rx lwip_bulk kernel_rr brisk_rr lwip_rr inproc_bulk inproc_bulk_gso
    inproc_rr memcpy)
declare -A label=(
    [kernel_bulk]="kernel -> kernel, veth, iperf3"
    [brisk_bulk_tx]="brisk -> kernel, TAP, brisk-perf/iperf3"
    [brisk_bulk_rx]="kernel -> brisk, TAP, iperf3/brisk-perf"
    [lwip_bulk]="lwIP <-> kernel, TAP"
    [kernel_rr]="kernel <-> kernel, veth, 1-byte rr"
    [brisk_rr]="brisk <-> kernel, TAP, 1-byte rr"
    [lwip_rr]="lwIP <-> kernel, TAP, 1-byte rr"
    [inproc_bulk]="brisk <-> brisk in-process, no GSO"
    [inproc_bulk_gso]="brisk <-> brisk in-process, GSO"
    [inproc_rr]="brisk <-> brisk in-process, rr 1 flow"
    [memcpy]="memcpy 1448-byte chunks"
)
for k in kernel_bulk brisk_bulk_tx brisk_bulk_rx lwip_bulk; do unit[$k]="Gbit/s"; done
for k in kernel_rr brisk_rr lwip_rr; do unit[$k]="transactions/s"; done
for k in inproc_bulk inproc_bulk_gso memcpy; do unit[$k]="Gbit/s per CPU-s"; done
unit[inproc_rr]="transactions per CPU-s"
declare -A base=([brisk_bulk_tx]=kernel_bulk [brisk_bulk_rx]=kernel_bulk [brisk_rr]=kernel_rr
    [inproc_bulk]=memcpy [inproc_bulk_gso]=memcpy)
ratio() { # ratio KEY: brisk / its reference, or "-"
    local b=${base[$1]:-}
    if [ -n "$b" ] && [ -n "${fig[$1]:-}" ] && [ -n "${fig[$b]:-}" ]; then
        awk -v x="${fig[$1]}" -v y="${fig[$b]}" 'BEGIN { if (y > 0) printf "%.3f", x / y; else print "-" }'
    else
        echo -
    fi
}
echo "brisk side by side, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), bulk $bytes, rr $count"
printf '%-42s %14s  %-24s %s\n' row figure unit "ratio (vs)"
for k in "${rows[@]}"; do
    if [ -n "${fig[$k]:-}" ]; then
        r=$(ratio "$k")
        printf '%-42s %14.6g  %-24s %s\n' "${label[$k]}" "${fig[$k]}" "${unit[$k]}" \
            "$r${base[$k]:+ (vs ${base[$k]})}"
    else
        printf '%-42s %14s  %-24s skipped: %s\n' "${label[$k]}" - "${unit[$k]}" "${why[$k]:-no figure}"
    fi
done
{
    echo "{"
    echo "  \"bytes\": \"$bytes\", \"rr_count\": $count,"
    echo "  \"rows\": ["
    sep=""
    for k in "${rows[@]}"; do
        if [ -n "${fig[$k]:-}" ]; then
            r=$(ratio "$k")
            [ "$r" = - ] && r=null
            printf '%s    {"row": "%s", "label": "%s", "figure": %s, "unit": "%s", "ratio": %s, "vs": "%s"}' \
                "$sep" "$k" "${label[$k]}" "${fig[$k]}" "${unit[$k]}" "$r" "${base[$k]:-}"
        else
            printf '%s    {"row": "%s", "label": "%s", "figure": null, "unit": "%s", "skipped": "%s"}' \
                "$sep" "$k" "${label[$k]}" "${unit[$k]}" "${why[$k]:-no figure}"
        fi
        sep=$',\n'
    done
    printf '\n  ]\n}\n'
} >"$out"
echo "compare: figures written to $out" >&2
