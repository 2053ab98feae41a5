#!/usr/bin/env bash
# Issue 21's first acceptance test: Debian's iperf3 under brisk (libbrisk_preload.so through brisk-run)
# against the kernel's iperf3 over a TAP inside a network namespace (tests/posix/apps_lib.sh): brisk is
# 10.83.0.2, the kernel 10.83.0.1. The matrix, each run a fresh pair of processes with --json on both ends:
#
#   brisk as client (kernel server)    -P 1, -P 8, each forward and -R       -n 20M
#   brisk as server (kernel client)    -P 1, -P 8, each forward and -R       -n 20M
#   brisk as client, -P 8, timed       -t 10 (the one timed run)
#
# What "byte counts matching" can mean with iperf3 (3.12, on kernel sockets as well):
#   - the sender: -n N stops the round in which the total reached N, so each of the P streams may add one
#     more block: N <= sent <= N + P x 128 KB (test_preload.sh, a0c31bd);
#   - the receiver counts what it read before the end-of-test message on the control connection and then
#     stops reading, so what was still in flight (the sender's socket buffer, the path, the receiver's socket
#     buffer) is not in its count: 0 < received <= sent, for every stream, not equality (loopback between
#     two kernel iperf3s: 20 MB sent, 14.8 MB counted at -P 2);
#   - both ends agree: the client's JSON carries the server's per-stream figures (results exchange), and
#     they must equal what the server's own JSON says, stream by stream;
#   - the stream count is P in both JSONs, and the kernel's end saw brisk's address (which exists only on
#     brisk), so a library that left the sockets to the kernel fails.
#
# Usage: test_iperf3.sh BRISK_RUN LIBBRISK_PRELOAD [SANITIZE]. Exits 77 (ctest: skipped) with the reason when
# not root, without /dev/net/tun, iperf3 or jq (scripts/deps.sh installs them), when namespaces cannot be
# made, or in a sanitizer build (see test_preload.sh).
set -u
brun=$1
lib=$2
sanitize=${3:-0}
here=$(cd "$(dirname "$0")" && pwd)

NS=brisk-pi-$$
TAP=bpi0
K=10.83.0.1
B=10.83.0.2
. "$here/apps_lib.sh"
[ "$sanitize" = 1 ] && skip "sanitizer build (unmodified programs would need the sanitizer runtime preloaded); the plain build runs this"
[ "$(id -u)" -eq 0 ] || skip "needs root (TAP device and network namespaces)"
[ -c /dev/net/tun ] || skip "no /dev/net/tun"
for p in ip iperf3 jq; do
    command -v $p >/dev/null 2>&1 || skip "no $p (scripts/deps.sh installs it)"
done
apps_up
onb true # creates and addresses the TAP (brisk-run --kernel-ip) before the kernel's server binds its address

N=20971520
BLK=131072
port=5400
# j FILE FILTER: one value of FILE's JSON ("" when the file is not JSON)
j() { jq -r "$2" "$1" 2>/dev/null; }

# one ROLE P DIR LIMIT: ROLE client|server is brisk's; DIR fwd|rev (-R); LIMIT -n N or -t 10
one() {
    local role=$1 p=$2 dir=$3 lim=$4 name rflag="" cj sj rc_c rc_s
    [ "$dir" = rev ] && rflag=-R
    name="iperf3 $role under brisk, -P $p${rflag:+ $rflag}, $lim"
    port=$((port + 1))
    cj=$tmp/c$port.json sj=$tmp/s$port.json
    if [ "$role" = client ]; then
        bg nsx timeout 40 iperf3 -s -1 -B "$K" -p $port --json >"$sj" 2>&1
        local sp=$!
        wait_port $port || { bad "$name: the kernel's iperf3 did not listen"; return; }
        onb iperf3 -c "$K" -p $port $lim -P "$p" $rflag --json >"$cj" 2>&1
        rc_c=$?
        wait $sp
        rc_s=$?
    else
        bg onb iperf3 -4 -s -1 -p $port --json >"$sj" 2>&1
        local sp=$!
        wait_tap || { bad "$name: iperf3 under brisk did not open the TAP"; return; }
        rc_c=1
        for _ in $(seq 1 50); do # until brisk's listener is up (a refused control connection exits at once)
            nsx timeout 40 iperf3 -c "$B" -p $port $lim -P "$p" $rflag --json >"$cj" 2>&1 && rc_c=0 && break
            grep -q 'Connection refused' "$cj" || break
            sleep 0.1
        done
        wait $sp
        rc_s=$?
    fi
    # the sender's and the receiver's own JSON
    local snd=$cj rcv=$sj
    [ "$dir" = rev ] && snd=$sj rcv=$cj
    local sent recvd ns_c ns_s
    sent=$(j "$snd" .end.sum_sent.bytes)
    recvd=$(j "$rcv" .end.sum_received.bytes)
    ns_c=$(j "$cj" '.end.streams | length')
    ns_s=$(j "$sj" '.end.streams | length')
    check "$name: both ends exit 0 with $p streams each" \
        "[ $rc_c -eq 0 ] && [ $rc_s -eq 0 ] && [ '$ns_c' = $p ] && [ '$ns_s' = $p ]"
    if [ "${lim%% *}" = -n ]; then
        check "$name: sent $sent, from N to N + P blocks" \
            "[ '${sent:-0}' -ge $N ] && [ '${sent:-0}' -le $((N + p * BLK)) ]"
    else
        local secs
        secs=$(j "$rcv" .end.sum_received.seconds)
        check "$name: sent $sent in ${secs} s at the receiver (10 s asked)" \
            "[ '${sent:-0}' -gt 0 ] && awk 'BEGIN { exit !($secs >= 9.5 && $secs <= 11) }'"
    fi
    # per stream: the client's JSON pairs each stream's sender and receiver counts (its own side and the
    # server's, exchanged at the end); the server's own JSON must hold the same figures for its side
    local pairs srv_side sumkey own ex
    pairs=$(jq -r '[.end.streams[] | "\(.sender.bytes)/\(.receiver.bytes)"] | join(" ")' "$cj" 2>/dev/null)
    srv_side=receiver sumkey=sum_received # the server's JSON has only its own side's figures (0 the other)
    [ "$dir" = rev ] && srv_side=sender sumkey=sum_sent
    own=$(jq -r --arg s $srv_side '[.end.streams[] | .[$s].bytes] | sort | map(tostring) | join(" ")' "$sj" 2>/dev/null)
    ex=$(jq -r --arg s $srv_side '[.end.streams[] | .[$s].bytes] | sort | map(tostring) | join(" ")' "$cj" 2>/dev/null)
    check "$name: received $recvd; every stream 0 < received <= sent (sent/received: $pairs)" \
        "[ \$(echo '$pairs' | wc -w) -eq $p ] && echo '$pairs' | tr ' /' '\\n ' | awk '{ if (!(\$2 > 0 && \$2 <= \$1)) exit 1 }'"
    check "$name: the server's own per-stream counts are the ones the client's JSON carries" \
        "[ -n '$own' ] && [ '$own' = '$ex' ] && [ '$(j "$cj" ".end.$sumkey.bytes")' = '$(j "$sj" ".end.$sumkey.bytes")' ]"
    if [ "$role" = client ]; then
        check "$name: the kernel's server saw brisk's address on every stream" \
            "[ \"\$(jq -r '[.start.connected[].remote_host] | unique | join(\" \")' '$sj')\" = $B ]"
    else
        check "$name: the kernel's client reached brisk's address on every stream" \
            "[ \"\$(jq -r '[.start.connected[].remote_host] | unique | join(\" \")' '$cj')\" = $B ] && [ \"\$(jq -r '[.start.connected[].local_host] | unique | join(\" \")' '$sj')\" = $B ]"
    fi
}

for role in client server; do
    for p in 1 8; do
        for dir in fwd rev; do
            one $role $p $dir "-n $N"
        done
    done
done
ONB_TIMEOUT=40 one client 8 fwd "-t 10"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
