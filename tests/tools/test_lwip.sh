#!/usr/bin/env bash
# lwip-tap (bench/lwip/lwip_tap.c), the lwIP harness of bench/compare.sh: correctness only, never speed.
# Always: bad command lines exit 2 with a message, --info names the library's options. As root with
# /dev/net/tun, in a network namespace of this test's own, lwIP on a TAP against a kernel socket (ksock):
#   kernel -> lwIP (ksock source, lwip-tap sink) and lwIP -> kernel (lwip-tap source, ksock sink), BYTES each
#   (default 10M; BRISK_LWIP_TEST_BYTES), byte-exact: the receiver checks every byte against the pattern and
#   both ends' hashes agree; 100 1-byte request/response transactions each way round (lwip-tap rr against a
#   ksock echo server — the compare.sh row — and ksock rr against lwip-tap echo); BYTES through lwip-tap's
#   echo and back (its receive window held closed while the echo backlog drains).
# Exits 77 (ctest: skipped) with the reason when lwip-tap is not built (no liblwip-dev), not root, no
# /dev/net/tun, or namespaces cannot be created.
# Usage: test_lwip.sh BRISK_LAB BRISK_BENCH   (lwip-tap and ksock are found next to brisk-lab)
set -u
dir=$(dirname "$1")
lw=$dir/lwip-tap
ks=$dir/ksock
here=$(cd "$(dirname "$0")" && pwd)
netns=$here/../../scripts/netns.sh
bytes=${BRISK_LWIP_TEST_BYTES:-10M}

skip() {
    echo "SKIP: $1"
    exit 77
}
[ -x "$lw" ] || skip "lwip-tap not built (liblwip-dev not installed: scripts/deps.sh)"
[ -x "$ks" ] || skip "$ks not built"

tmp=$(mktemp -d)
NS=brisk-lw-$$
cleanup() {
    for p in $(cat "$tmp/pids" 2>/dev/null); do kill "$p" 2>/dev/null; done
    [ -f "$tmp/ns" ] && bash "$netns" down "$NS"
    rm -rf "$tmp"
}
trap cleanup EXIT
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
kv() { # kv FILE KEY: KEY's value on the result line of FILE
    awk -v k="$2" '/^side=/ { for (i = 1; i <= NF; i++) { split($i, a, "="); if (a[1] == k) v = a[2] } }
        END { print v }' "$1"
}

# ---- command line (no privileges) ----
usage_err() { # name, args...
    local name=$1
    shift
    "$lw" "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    check "$name exits 2 with a message" "[ $rc -eq 2 ] && grep -q 'lwip-tap' '$tmp/err'"
}
usage_err "no arguments"
usage_err "missing --tap" --ip 10.0.0.1/24 --listen 5001
usage_err "missing role" --tap x --ip 10.0.0.1/24
usage_err "both roles" --tap x --ip 10.0.0.1/24 --listen 5001 --connect 10.0.0.2:5001
usage_err "bad cidr" --tap x --ip 10.0.0.1/33 --listen 5001
usage_err "bad address" --tap x --ip 10.0.0.300/24 --listen 5001
usage_err "bad port" --tap x --ip 10.0.0.1/24 --listen 70000
usage_err "bad mode" --tap x --ip 10.0.0.1/24 --listen 5001 --mode discard
usage_err "rr as a listener" --tap x --ip 10.0.0.1/24 --listen 5001 --mode rr
usage_err "bad byte count" --tap x --ip 10.0.0.1/24 --listen 5001 --bytes lots
usage_err "unknown option" --tap x --ip 10.0.0.1/24 --listen 5001 --frob 1
usage_err "option without value" --tap x --ip 10.0.0.1/24 --listen
"$lw" --info >"$tmp/info"
check "--info exits 0 and names lwIP's TCP options" \
    "[ $? -eq 0 ] && grep -q 'lwip=2' '$tmp/info' && grep -q 'tcp_wnd=' '$tmp/info'"

# ---- over a TAP ----
why=""
[ "$(id -u)" -eq 0 ] || why="needs root (TAP device and network namespaces)"
[ -z "$why" ] && [ ! -c /dev/net/tun ] && why="no /dev/net/tun"
if [ -z "$why" ]; then
    if bash "$netns" up "$NS" >/dev/null 2>&1; then
        touch "$tmp/ns"
    else
        why="cannot create a network namespace"
    fi
fi
if [ -n "$why" ]; then
    echo "$pass passed, $fail failed"
    [ $fail -eq 0 ] || exit 1
    skip "TAP runs: $why"
fi

n=0
# one NAME "LWIP ARGS" "KSOCK ARGS": lwip-tap listens (10.78.N.2) and ksock connects; sets $l and $k.
one() {
    n=$((n + 1))
    l=$tmp/$n.lwip k=$tmp/$n.kernel
    ip netns exec "$NS" "$lw" --tap "lwt$n" --ip "10.78.$n.2/24" --listen 5001 --timeout 120 $2 >"$l" \
        2>"$l.err" &
    local lp=$!
    echo $lp >>"$tmp/pids"
    bash "$netns" tap "$NS" "lwt$n" "10.78.$n.1/24" || bad "$1: TAP lwt$n did not come up"
    ip netns exec "$NS" "$ks" --connect "10.78.$n.2:5001" --timeout 120 $3 >"$k" 2>"$k.err"
    krc=$?
    wait $lp
    lrc=$?
}
# the same with ksock listening (10.78.N.1) and lwip-tap connecting
one_connect() {
    n=$((n + 1))
    l=$tmp/$n.lwip k=$tmp/$n.kernel
    ip netns exec "$NS" "$ks" --listen 5001 --timeout 120 $3 >"$k" 2>"$k.err" &
    local kp=$!
    echo $kp >>"$tmp/pids"
    # lwip-tap connects as soon as its TAP is up: wait (bounded) until the kernel listens, or a loaded
    # machine lets the SYN meet a closed port.
    for _ in $(seq 1 100); do
        ip netns exec "$NS" ss -Hltn 'sport = :5001' 2>/dev/null | grep -q . && break
        sleep 0.1
    done
    ip netns exec "$NS" "$lw" --tap "lwt$n" --ip "10.78.$n.2/24" --connect "10.78.$n.1:5001" --timeout 120 \
        $2 >"$l" 2>"$l.err" &
    local lp=$!
    echo $lp >>"$tmp/pids"
    bash "$netns" tap "$NS" "lwt$n" "10.78.$n.1/24" || bad "$1: TAP lwt$n did not come up"
    wait $lp
    lrc=$?
    wait $kp
    krc=$?
}
# exact NAME TX_FILE RX_FILE: what one side sent is what the other received, unaltered
exact() {
    local tb rb th rh
    tb=$(kv "$2" tx_bytes) rb=$(kv "$3" rx_bytes) th=$(kv "$2" tx_hash) rh=$(kv "$3" rx_hash)
    check "$1: both exit 0 (lwip-tap $lrc, ksock $krc)" "[ $lrc -eq 0 ] && [ $krc -eq 0 ]"
    check "$1: $rb of $tb bytes, byte-exact (rx_bad $(kv "$3" rx_bad), hashes $th / $rh)" \
        "[ -n '$tb' ] && [ '$tb' = '$rb' ] && [ '$th' = '$rh' ] && [ '$(kv "$3" rx_bad)' = 0 ]"
}

one "kernel -> lwIP $bytes" "--mode sink" "--mode source --bytes $bytes"
exact "kernel -> lwIP $bytes" "$k" "$l"
check "kernel -> lwIP: lwip-tap saw the peer's FIN after the bytes" \
    "[ '$(kv "$l" rx_bytes)' -gt 0 ] && [ '$(kv "$l" result)' = eof ]"
one "lwIP -> kernel $bytes" "--mode source --bytes $bytes" "--mode sink"
exact "lwIP -> kernel $bytes" "$l" "$k"
one_connect "lwIP -> kernel $bytes, lwIP connecting" "--mode source --bytes $bytes" "--mode sink"
exact "lwIP -> kernel $bytes, lwIP connecting" "$l" "$k"
one_connect "lwIP rr -> kernel echo" "--mode rr --size 1 --count 100" "--mode echo --nodelay"
exact "lwIP rr -> kernel echo, requests" "$l" "$k"
exact "lwIP rr -> kernel echo, responses" "$k" "$l"
check "lwIP rr -> kernel echo: 100 transactions (got $(kv "$l" rr))" "[ '$(kv "$l" rr)' = 100 ]"
one "kernel rr -> lwIP echo" "--mode echo" "--mode rr --size 1 --count 100 --nodelay"
exact "kernel rr -> lwIP echo, requests" "$k" "$l"
exact "kernel rr -> lwIP echo, responses" "$l" "$k"
check "kernel rr -> lwIP echo: 100 transactions (got $(kv "$k" rr))" "[ '$(kv "$k" rr)' = 100 ]"
one "kernel -> lwIP echo -> kernel $bytes" "--mode echo" "--mode source --bytes $bytes"
exact "kernel -> lwIP echo -> kernel $bytes, there" "$k" "$l"
exact "kernel -> lwIP echo -> kernel $bytes, back" "$l" "$k"
if [ $fail -gt 0 ]; then
    for f in "$tmp"/*.lwip "$tmp"/*.kernel "$tmp"/*.err; do echo "--- $f"; cat "$f"; done
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
