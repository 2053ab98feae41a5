#!/usr/bin/env bash
# netperf-compare.sh — goodput brisk <-> kernel over a TAP (each direction, with and without GSO) beside
# kernel <-> kernel over a veth pair, measured in the same run on the same machine, all inside a network
# namespace this script creates and deletes.
#
#   scripts/netperf-compare.sh [BUILD_DIR] [BYTES]        (defaults: build, 500M; needs root)
#   extra brisk settings for every brisk row: BRISK_SET="tcp_pacing=0 ..." scripts/netperf-compare.sh
#
# Each brisk-peer / ksock row is one connection moving BYTES of a checked pattern (tests/interop/pattern.h);
# goodput is the receiver's figure (first byte to the sender's FIN). When brisk-perf and iperf3 are there, the
# same comparison follows with iperf3 as the kernel side (its receiver figure). The same host runs both ends, so the figures measure
# the stacks' CPU cost as much as anything: compare rows of one run, not runs on different machines.
set -u
build=${1:-build}
bytes=${2:-500M}
here=$(cd "$(dirname "$0")" && pwd)
netns=$here/netns.sh
peer=$build/brisk-peer
ks=$build/ksock
for f in "$peer" "$ks"; do
    [ -x "$f" ] || { echo "netperf-compare: $f not built (make)" >&2; exit 2; }
done
[ "$(id -u)" -eq 0 ] || { echo "netperf-compare: needs root (TAP and namespaces)" >&2; exit 77; }
sets=""
for s in ${BRISK_SET:-}; do sets="$sets --set $s"; done

NS=brisk-cmp-$$
tmp=$(mktemp -d)
cleanup() {
    for p in $(cat "$tmp/pids" 2>/dev/null); do kill "$p" 2>/dev/null; done
    bash "$netns" down "$NS"
    rm -rf "$tmp"
}
trap cleanup EXIT
bash "$netns" up "$NS" || exit 77
kv() { awk -v k="$2" '/^side=/ { for (i = 1; i <= NF; i++) { split($i, a, "="); if (a[1] == k) v = a[2] } } END { print v }' "$1"; }

n=0
row() { # LABEL DIRECTION(tx|rx: brisk sends / receives) GSO
    n=$((n + 1))
    local ifc=cmp$n net=10.79.$n b=$tmp/$n.b k=$tmp/$n.k
    if [ "$2" = tx ]; then
        ip netns exec "$NS" "$ks" --listen 5001 --mode sink --timeout 600 >"$k" 2>&1 &
        echo $! >>"$tmp/pids"
        sleep 0.2
        ip netns exec "$NS" "$peer" --tap "$ifc" --ip "$net.2/24" --connect "$net.1:5001" --mode source \
            --bytes "$bytes" --gso "$3" --timeout 600s $sets >"$b" 2>"$b.err" &
        echo $! >>"$tmp/pids"
        bash "$netns" tap "$NS" "$ifc" "$net.1/24"
        wait
        rx=$k
    else
        ip netns exec "$NS" "$peer" --tap "$ifc" --ip "$net.2/24" --listen 5001 --mode sink --gso "$3" \
            --timeout 600s $sets >"$b" 2>"$b.err" &
        echo $! >>"$tmp/pids"
        bash "$netns" tap "$NS" "$ifc" "$net.1/24"
        ip netns exec "$NS" "$ks" --connect "$net.2:5001" --mode source --bytes "$bytes" --timeout 600 >"$k" 2>&1
        wait
        rx=$b
    fi
    local ok=ok
    if [ "$(kv "$b" tx_hash)$(kv "$b" rx_hash)" != "$(kv "$k" rx_hash)$(kv "$k" tx_hash)" ] ||
        [ "$(kv "$rx" rx_bad)" != 0 ]; then
        ok=CORRUPT
    fi
    printf '%-34s %10s Mbit/s  %8s s  retrans %-6s %s\n' "$1" "$(kv "$rx" mbps)" "$(kv "$rx" secs)" \
        "$(kv "$b" retrans)/$(kv "$k" retrans)" "$ok"
}

echo "goodput, $bytes per row, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)${BRISK_SET:+, brisk: $BRISK_SET}"
row "brisk -> kernel  TAP  gso on" tx 1
row "kernel -> brisk  TAP  gso on" rx 1
row "brisk -> kernel  TAP  gso off" tx 0
row "kernel -> brisk  TAP  gso off" rx 0
if bash "$netns" veth "$NS" 10.80.0.1/24 10.80.0.2/24 >/dev/null 2>&1; then
    ip netns exec "$NS-peer" "$ks" --listen 5001 --mode sink --timeout 600 >"$tmp/veth.k" 2>&1 &
    echo $! >>"$tmp/pids"
    sleep 0.2
    ip netns exec "$NS" "$ks" --connect 10.80.0.2:5001 --mode source --bytes "$bytes" --timeout 600 \
        >"$tmp/veth.s" 2>&1
    wait
    printf '%-34s %10s Mbit/s  %8s s  retrans %-6s\n' "kernel -> kernel veth (TSO/GRO)" \
        "$(kv "$tmp/veth.k" mbps)" "$(kv "$tmp/veth.k" secs)" "$(kv "$tmp/veth.s" retrans)"
fi

# The same with iperf3 on the kernel side and brisk-perf on brisk's (no byte checking on either side).
perf=$build/brisk-perf
if [ -x "$perf" ] && command -v iperf3 >/dev/null 2>&1; then
    recv_rate() { sed -n 's/.* \([0-9.]* [GM]bits\/sec\) .*receiver$/\1/p' "$1" | tail -n 1; }
    for gso in 1 0; do
        nogso=""
        [ $gso = 0 ] && nogso=--no-gso
        n=$((n + 1))
        ip netns exec "$NS" "$perf" server -1 --tap "cmp$n" --ip "10.79.$n.2/24" $nogso $sets >"$tmp/ps$n" 2>&1 &
        echo $! >>"$tmp/pids"
        bash "$netns" tap "$NS" "cmp$n" "10.79.$n.1/24" || cat "$tmp/ps$n" >&2
        sleep 0.3
        ip netns exec "$NS" iperf3 -c "10.79.$n.2" -n "$bytes" >"$tmp/ic$n" 2>&1
        wait
        printf '%-34s %17s\n' "iperf3 -> brisk-perf  gso $( [ $gso = 1 ] && echo on || echo off)" "$(recv_rate "$tmp/ic$n")"
        n=$((n + 1))
        ip netns exec "$NS" "$perf" server -1 --tap "cmp$n" --ip "10.79.$n.2/24" $nogso $sets >"$tmp/ps$n" 2>&1 &
        echo $! >>"$tmp/pids"
        bash "$netns" tap "$NS" "cmp$n" "10.79.$n.1/24" || cat "$tmp/ps$n" >&2
        sleep 0.3
        ip netns exec "$NS" iperf3 -c "10.79.$n.2" -n "$bytes" -R >"$tmp/ic$n" 2>&1
        wait
        printf '%-34s %17s\n' "brisk-perf -> iperf3  gso $( [ $gso = 1 ] && echo on || echo off)" "$(recv_rate "$tmp/ic$n")"
    done
    if ip netns list | grep -q "^$NS-peer"; then
        ip netns exec "$NS-peer" iperf3 -s -1 >/dev/null 2>&1 &
        echo $! >>"$tmp/pids"
        sleep 0.3
        ip netns exec "$NS" iperf3 -c 10.80.0.2 -n "$bytes" >"$tmp/iv" 2>&1
        wait
        printf '%-34s %17s\n' "iperf3 -> iperf3 veth" "$(recv_rate "$tmp/iv")"
    fi
fi
