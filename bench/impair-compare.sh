#!/usr/bin/env bash
# impair-compare.sh — loss recovery side by side with the Linux kernel on an impaired path (issue 18), in one
# run on this machine. This kernel has no netem: the impairment is brisk-impair (tools/impair/) on two
# NFQUEUE queues, fed by iptables rules in the namespace that holds every kernel end, so every packet leaving
# that namespace's stack (queue 10, OUTPUT) and every packet arriving at it (queue 11, INPUT) crosses the same
# model, seeded the same way in every row of a cell: the same impairment in both directions, for
#   kernel -> kernel   iperf3 -c in NS -> iperf3 -s in NS-peer over a veth pair;
#   kernel -> brisk    iperf3 -c in NS -> brisk-perf server on a TAP;
#   brisk  -> kernel   brisk-perf client on a TAP -> iperf3 -s in NS.
# Cells (each with 1 and 8 streams): none (the path still crosses brisk-impair); loss (1 %); burst (1 % in
# bursts); delay (1 % loss and 2.5 ms each way: RTT + 5 ms); reorder (5 % of packets held back 1 ms).
# IMPAIR_UNIT chooses what the model decides on:
#   frame   (default) whole offloaded frames (brisk-impair --gso): both stacks send 64 KB GSO frames, so a
#           lost frame is a burst of up to ~45 consecutive segments — what issue 18 measured; burst = bursts
#           of 4 frames (--loss 0.0025 --burst 4);
#   segment the kernel segments frames before queueing, the model sees MTU packets; burst = bursts of 45
#           segments (--loss 0.000222 --burst 45). Every packet then crosses userspace: the impairer's own
#           cost caps goodput (about 1.6 Gbit/s here), so ratios near 1 in light cells say little.
# The kernel senders run IMPAIR_KERNEL_CC (default cubic, the congestion control brisk's profiles use): a
# machine's default may be another (this project's CI machines default to bbr, which does not reduce its rate
# for loss at all), and a comparison across congestion controls measures them, not loss recovery. The header
# names the one used; IMPAIR_KERNEL_CC=bbr shows that comparison on purpose.
# Prints one table: per cell, goodput of each row (the receiver's figure), brisk -> kernel over kernel ->
# brisk (the same TAP path, the issue's comparison) and over kernel -> kernel, the senders' retransmissions
# (iperf3's JSON `retransmits` for the kernel, brisk-perf's for brisk) and retransmission timeouts (the
# kernel's TcpExt TCPTimeouts of the sending namespace, brisk-perf --stats' TCPTimeouts).
#
#   bench/impair-compare.sh [--json] [BUILD_DIR] [SECONDS]    (defaults: build, 5; needs root, iptables,
#                                                             brisk-impair (libnetfilter-queue-dev), iperf3,
#                                                             jq, /dev/net/tun; exits 77 saying why otherwise)
#   IMPAIR_UNIT=frame|segment  IMPAIR_CELLS="none loss ..."  IMPAIR_STREAMS="1 8"  IMPAIR_SEED=N
#   IMPAIR_KERNEL_CC=NAME      the kernel senders' congestion control (iperf3 -C; default cubic)
#   IMPAIR_JSON=FILE           where to write the JSON (default BUILD_DIR/impair-compare.json); --json also
#                              prints it on stdout instead of the table
#
# Both ends of every row and the impairer share this machine's CPUs: run it pinned (taskset -c 0 ...) or
# not, but compare rows of one run only.
set -u
json_out=0
if [ "${1:-}" = --json ]; then
    json_out=1
    shift
fi
build=${1:-build}
secs=${2:-5}
unit=${IMPAIR_UNIT:-frame}
cells=${IMPAIR_CELLS:-none loss burst delay reorder}
streams=${IMPAIR_STREAMS:-1 8}
seed=${IMPAIR_SEED:-1}
kcc=${IMPAIR_KERNEL_CC:-cubic}
out=${IMPAIR_JSON:-$build/impair-compare.json}
here=$(cd "$(dirname "$0")" && pwd)
netns=$here/../scripts/netns.sh
imp=$build/brisk-impair
perf=$build/brisk-perf
mark=0x1b15
limit=$((secs * 4 + 30)) # every process's wall-clock bound

die77() {
    echo "impair-compare: $1" >&2
    exit 77
}
[ "$(id -u)" -eq 0 ] || die77 "needs root (network namespaces, iptables, NFQUEUE)"
[ -c /dev/net/tun ] || die77 "no /dev/net/tun"
[ -x "$imp" ] || die77 "$imp not built (libnetfilter-queue-dev: scripts/deps.sh, then make)"
[ -x "$perf" ] || die77 "$perf not built (make)"
for t in iperf3 iptables jq; do
    command -v $t >/dev/null 2>&1 || die77 "$t not installed (scripts/deps.sh)"
done
grep -qw -- "$kcc" /proc/sys/net/ipv4/tcp_available_congestion_control 2>/dev/null || modprobe "tcp_$kcc" 2>/dev/null
grep -qw -- "$kcc" /proc/sys/net/ipv4/tcp_available_congestion_control 2>/dev/null ||
    die77 "the kernel has no congestion control '$kcc' (IMPAIR_KERNEL_CC; available: $(cat /proc/sys/net/ipv4/tcp_available_congestion_control 2>/dev/null))"
case "$unit" in
frame) gso=--gso burst_args="--loss 0.0025 --burst 4" ;;
segment) gso="" burst_args="--loss 0.000222 --burst 45" ;;
*) die77 "IMPAIR_UNIT must be frame or segment" ;;
esac
declare -A cell_args=([none]="" [loss]="--loss 0.01" [burst]="$burst_args"
    [delay]="--loss 0.01 --delay 2500us" [reorder]="--reorder 0.05 --reorder-delay 1ms")
declare -A cell_label=([none]="none" [loss]="1 % loss" [burst]="1 % burst loss"
    [delay]="1 % loss + 5 ms RTT" [reorder]="5 % reordered by 1 ms")
for c in $cells; do
    [ -n "${cell_label[$c]:-}" ] || die77 "unknown cell '$c' (none loss burst delay reorder)"
done

tmp=$(mktemp -d)
missing=0 # rows that produced no figure: the run failed (exit 1 once the table is out)
NS=brisk-imp-$$
cleanup() {
    for p in $(cat "$tmp/pids" 2>/dev/null); do kill "$p" 2>/dev/null; done
    bash "$netns" down "$NS"
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
spawn() { # spawn OUT ERR CMD...: CMD in the background, bounded in time, its pid in $tmp/pids and $bgpid
    local o=$1 e=$2
    shift 2
    timeout -k 5 -s INT "$limit" "$@" >"$o" 2>"$e" &
    bgpid=$!
    echo $bgpid >>"$tmp/pids"
}

bash "$netns" up "$NS" >/dev/null 2>&1 || die77 "cannot create a network namespace"
bash "$netns" veth "$NS" 10.82.0.1/24 10.82.0.2/24 >/dev/null 2>&1 || die77 "cannot create a veth pair"
# Everything the namespace's stack sends (but brisk-impair's own duplicates) and receives, loopback aside.
ipt() { ip netns exec "$NS" iptables "$@"; }
ipt -A OUTPUT ! -o lo -m mark ! --mark $mark -j NFQUEUE --queue-num 10 --queue-bypass 2>"$tmp/ipt" &&
    ipt -A INPUT ! -i lo -j NFQUEUE --queue-num 11 --queue-bypass 2>>"$tmp/ipt" ||
    die77 "iptables cannot add the NFQUEUE rules: $(head -n 1 "$tmp/ipt")"

tcp_timeouts() { # the namespace's TcpExt TCPTimeouts
    ip netns exec "$NS" awk '/^TcpExt:/ { if (!h) { for (i = 1; i <= NF; i++) n[i] = $i; h = 1 }
        else for (i = 1; i <= NF; i++) if (n[i] == "TCPTimeouts") print $i }' /proc/net/netstat
}
# start_impair CELL: both directions' impairers, the same seeds for every row of a cell; waits until both
# queues are bound (with --queue-bypass, traffic before that would pass unimpaired).
start_impair() {
    local a=${cell_args[$1]}
    spawn "$tmp/imp10" "$tmp/imp10.err" ip netns exec "$NS" "$imp" --queue 10 --seed "$seed" $gso $a --mark $mark
    imp10=$bgpid
    spawn "$tmp/imp11" "$tmp/imp11.err" ip netns exec "$NS" "$imp" --queue 11 --seed $((seed + 1)) $gso $a --mark $mark
    imp11=$bgpid
    for _ in $(seq 1 200); do
        if [ "$(ip netns exec "$NS" awk '$1 == 10 || $1 == 11' /proc/net/netfilter/nfnetlink_queue 2>/dev/null |
            wc -l)" = 2 ]; then
            return 0
        fi
        sleep 0.02
    done
    echo "impair-compare: brisk-impair did not bind its queues: $(cat "$tmp/imp10.err" "$tmp/imp11.err")" >&2
    exit 1
}
stop_impair() { # stop_impair KEY: stats of both directions into fig[KEY_*]
    # SIGINT to brisk-impair itself (timeout's child): timeout follows a forwarded signal with SIGCONT
    kill -INT $(pgrep -P "$imp10") $(pgrep -P "$imp11") 2>/dev/null
    wait "$imp10" "$imp11" 2>/dev/null
    local d
    for d in 10 11; do
        fig[$1_seen$d]=$(kv "$tmp/imp$d" seen)
        fig[$1_drop$d]=$(kv "$tmp/imp$d" dropped)
        fig[$1_kdrop$d]=$(kv "$tmp/imp$d" kernel_queue_dropped)
        fig[$1_held$d]=$(kv "$tmp/imp$d" dropped_held_limit)
    done
}
kv() { awk -v k="$2" '/^brisk-impair:/ { for (i = 1; i <= NF; i++) { split($i, a, "="); if (a[1] == k) v = a[2] } }
        END { print v }' "$1"; }
jget() { jq -r "$2 // empty" "$1" 2>/dev/null; }
gbps() { awk -v b="$1" 'BEGIN { if (b != "") printf "%.3f", b / 1e9 }'; }

declare -A fig
n=0
for c in $cells; do
    for p in $streams; do
        k="${c}_$p"
        echo "impair-compare: $c, $p stream(s)..." >&2

        # kernel -> kernel over the veth pair
        start_impair "$c"
        spawn "$tmp/kk_s" "$tmp/kk_s.err" ip netns exec "$NS-peer" iperf3 -s -1
        srv=$bgpid
        sleep 0.3
        t0=$(tcp_timeouts)
        timeout "$limit" ip netns exec "$NS" iperf3 -c 10.82.0.2 -t "$secs" -P "$p" -C "$kcc" -J >"$tmp/kk.json" 2>&1
        fig[${k}_kk_rto]=$(($(tcp_timeouts) - t0))
        wait "$srv" 2>/dev/null
        stop_impair "${k}_kk"
        fig[${k}_kk]=$(gbps "$(jget "$tmp/kk.json" .end.sum_received.bits_per_second)")
        fig[${k}_kk_retr]=$(jget "$tmp/kk.json" .end.sum_sent.retransmits)

        # kernel -> brisk over a TAP
        n=$((n + 1))
        start_impair "$c"
        spawn "$tmp/kb_s" "$tmp/kb_s.err" ip netns exec "$NS" "$perf" server -1 --tap imp$n --ip 10.79.$n.2/24 --stats
        srv=$bgpid
        if bash "$netns" tap "$NS" imp$n 10.79.$n.1/24 >/dev/null 2>&1; then
            sleep 0.3
            t0=$(tcp_timeouts)
            timeout "$limit" ip netns exec "$NS" iperf3 -c 10.79.$n.2 -t "$secs" -P "$p" -C "$kcc" -J >"$tmp/kb.json" 2>&1
            fig[${k}_kb_rto]=$(($(tcp_timeouts) - t0))
        fi
        wait "$srv" 2>/dev/null
        stop_impair "${k}_kb"
        fig[${k}_kb]=$(gbps "$(jget "$tmp/kb.json" .end.sum_received.bits_per_second)")
        fig[${k}_kb_retr]=$(jget "$tmp/kb.json" .end.sum_sent.retransmits)
        rm -f "$tmp/kb.json"

        # brisk -> kernel over a TAP
        n=$((n + 1))
        start_impair "$c"
        spawn "$tmp/bk_s" "$tmp/bk_s.err" ip netns exec "$NS" iperf3 -s -1
        srv=$bgpid
        spawn "$tmp/bk.json" "$tmp/bk.err" ip netns exec "$NS" "$perf" client 10.79.$n.1 -t "$secs" -P "$p" --json \
            --tap imp$n --ip 10.79.$n.2/24 --stats
        cli=$bgpid
        bash "$netns" tap "$NS" imp$n 10.79.$n.1/24 >/dev/null 2>&1
        wait "$cli" 2>/dev/null
        wait "$srv" 2>/dev/null
        stop_impair "${k}_bk"
        fig[${k}_bk]=$(gbps "$(jget "$tmp/bk.json" .end.sum_received.bits_per_second)")
        fig[${k}_bk_retr]=$(jget "$tmp/bk.json" .end.sum_sent.retransmits)
        if [ -n "${fig[${k}_bk]}" ]; then
            fig[${k}_bk_rto]=$(grep -o 'TCPTimeouts=[0-9]*' "$tmp/bk.err" | tail -n 1 | cut -d= -f2)
            fig[${k}_bk_rto]=${fig[${k}_bk_rto]:-0} # --stats prints non-zero counters only
        fi
        for r in kk kb bk; do
            if [ -z "${fig[${k}_$r]}" ]; then
                echo "impair-compare: $c/$p: row $r produced no figure" >&2
                missing=$((missing + 1))
            fi
        done
    done
done

div() { awk -v x="$1" -v y="$2" 'BEGIN { if (x != "" && y != "" && y > 0) printf "%.2f", x / y; else print "-" }'; }
pct() { awk -v d="$1" -v s="$2" 'BEGIN { if (d != "" && s > 0) printf "%.2f", 100 * d / s; else print "-" }'; }
v() { local x=${fig[$1]:-}; echo "${x:--}"; }
if [ "$json_out" = 0 ]; then
    echo "brisk beside the kernel on an impaired path (brisk-impair, per $unit, both ways), $(nproc --all) CPUs," \
        "affinity $(taskset -pc $$ | sed 's/.*: //'), ${secs} s per row, seed $seed, kernel senders $kcc," \
        "$(date -u +%Y-%m-%d)"
    printf '%-22s %2s %8s %8s %8s %7s %7s %8s %8s %8s %5s %5s %5s %6s\n' cell P "k->k" "k->b" "b->k" \
        "b/k TAP" "b/k veth" "retr kk" "retr kb" "retr bk" "RTOkk" "RTOkb" "RTObk" "lost%"
    for c in $cells; do
        for p in $streams; do
            k="${c}_$p"
            printf '%-22s %2s %8s %8s %8s %7s %7s %8s %8s %8s %5s %5s %5s %6s\n' "${cell_label[$c]}" "$p" \
                "$(v ${k}_kk)" "$(v ${k}_kb)" "$(v ${k}_bk)" "$(div "$(v ${k}_bk)" "$(v ${k}_kb)")" \
                "$(div "$(v ${k}_bk)" "$(v ${k}_kk)")" "$(v ${k}_kk_retr)" "$(v ${k}_kb_retr)" \
                "$(v ${k}_bk_retr)" "$(v ${k}_kk_rto)" "$(v ${k}_kb_rto)" "$(v ${k}_bk_rto)" \
                "$(pct "${fig[${k}_bk_drop11]:-}" "${fig[${k}_bk_seen11]:-}")"
        done
    done
    echo "goodput in Gbit/s (receiver); k = kernel, b = brisk; b/k TAP = brisk -> kernel over kernel -> brisk;"
    echo "lost% = packets brisk-impair dropped on brisk's data direction in the b->k row"
fi
{
    echo "{"
    echo "  \"unit\": \"$unit\", \"seconds\": $secs, \"seed\": $seed, \"kernel_cc\": \"$kcc\", \"date\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\","
    echo "  \"cells\": ["
    sep=""
    jn() { [ -n "$1" ] && [ "$1" != - ] && echo "$1" || echo null; }
    for c in $cells; do
        for p in $streams; do
            k="${c}_$p"
            printf '%s    {"cell": "%s", "label": "%s", "impairment": "%s", "streams": %s' "$sep" "$c" \
                "${cell_label[$c]}" "$gso ${cell_args[$c]}" "$p"
            for r in kk kb bk; do
                printf ', "%s": {"gbps": %s, "retransmits": %s, "rto": %s, "impair_dropped": [%s, %s],' \
                    "$r" "$(jn "$(v ${k}_$r)")" "$(jn "$(v ${k}_${r}_retr)")" "$(jn "$(v ${k}_${r}_rto)")" \
                    "$(jn "${fig[${k}_${r}_drop10]:-}")" "$(jn "${fig[${k}_${r}_drop11]:-}")"
                printf ' "impair_seen": [%s, %s], "kernel_queue_dropped": [%s, %s], "held_limit_dropped": [%s, %s]}' \
                    "$(jn "${fig[${k}_${r}_seen10]:-}")" "$(jn "${fig[${k}_${r}_seen11]:-}")" \
                    "$(jn "${fig[${k}_${r}_kdrop10]:-}")" "$(jn "${fig[${k}_${r}_kdrop11]:-}")" \
                    "$(jn "${fig[${k}_${r}_held10]:-}")" "$(jn "${fig[${k}_${r}_held11]:-}")"
            done
            printf ', "brisk_over_kernel_tap": %s, "brisk_over_kernel_veth": %s}' \
                "$(jn "$(div "$(v ${k}_bk)" "$(v ${k}_kb)")")" "$(jn "$(div "$(v ${k}_bk)" "$(v ${k}_kk)")")"
            sep=$',\n'
        done
    done
    printf '\n  ]\n}\n'
} >"$out"
[ "$json_out" = 1 ] && cat "$out"
echo "impair-compare: figures written to $out" >&2
if [ "$missing" -gt 0 ]; then
    echo "impair-compare: $missing row(s) produced no figure: the run failed" >&2
    exit 1
fi
