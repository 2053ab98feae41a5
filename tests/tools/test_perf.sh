#!/usr/bin/env bash
# brisk-perf as a user runs it. Always: bad command lines exit 2 with a message. As root with /dev/net/tun,
# iperf3 and `ip netns` (otherwise those checks print SKIP and pass): interoperation with Debian's iperf3 over a
# TAP device whose kernel side lives in a network namespace of this test's own —
#   iperf3 -c -> brisk-perf server, both directions (-R), and -P 2;
#   brisk-perf client -> iperf3 -s, both directions;
#   UDP (-u) both ways: iperf3 -c -u -> brisk-perf server and brisk-perf client -u -> iperf3 -s, at -b 100M
#   with -l 1400, -R and -P 2, and at -l 64, checked from both JSONs (needs jq): the same bytes and datagram
#   counts at both ends, the loss within a bound (printed), the jitter a finite number;
#   the same over IPv6 (iperf3 -6 -c -> brisk-perf server --ip6, brisk-perf client [fd99::2] -> iperf3 -s);
#   brisk-perf rr -> brisk-perf echo's kernel counterpart (a python echo server in the namespace), if python3;
# each checked from both sides' JSON: the test completed and both tools report the same received byte count.
# Usage: test_perf.sh BRISK_LAB BRISK_BENCH   (brisk-perf is found next to brisk-lab)
set -u
perf=$(dirname "$1")/brisk-perf
tmp=$(mktemp -d)
ns=bperf$$
tap=bpt$$
cleanup() {
    [ -n "${bg:-}" ] && kill "$bg" 2>/dev/null
    ip netns del "$ns" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

# ---- command line ----
usage_err() { # name, args...: exit 2 and a brisk-perf: message
    local name=$1
    shift
    "$perf" "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    check "$name exits 2 with a message" "[ $rc -eq 2 ] && grep -q 'brisk-perf\\|usage' '$tmp/err'"
}
usage_err "no arguments"
usage_err "unknown command" frobnicate
usage_err "client without address" client --tap x --ip 10.0.0.1/24
usage_err "client with a bad address" client 10.0.0.300 --tap x --ip 10.0.0.1/24
usage_err "bad duration" client 10.0.0.2 -t soon --tap x --ip 10.0.0.1/24
usage_err "zero streams" client 10.0.0.2 -P 0 --tap x --ip 10.0.0.1/24
usage_err "too many streams" client 10.0.0.2 -P 129 --tap x --ip 10.0.0.1/24
usage_err "bad byte count" client 10.0.0.2 -n lots --tap x --ip 10.0.0.1/24
usage_err "bad port" server --port 70000 --tap x --ip 10.0.0.1/24
usage_err "bad cidr" server --tap x --ip 10.0.0.1/33
usage_err "missing tap" server --ip 10.0.0.1/24
usage_err "unknown option" server --tap x --ip 10.0.0.1/24 --frob
usage_err "unknown setting" server --tap x --ip 10.0.0.1/24 --set tcp_frob=1
usage_err "bad setting value" server --tap x --ip 10.0.0.1/24 --set tcp_sndbuf=huge
usage_err "unknown profile" server --tap x --ip 10.0.0.1/24 --profile linux-1.0
usage_err "option without value" client 10.0.0.2 --tap x --ip 10.0.0.1/24 -t
usage_err "bad interval" server --tap x --ip 10.0.0.1/24 -i often
usage_err "bad bitrate" client 10.0.0.2 -u -b fast --tap x --ip 10.0.0.1/24
usage_err "-b without -u" client 10.0.0.2 -b 10M --tap x --ip 10.0.0.1/24
usage_err "UDP length below the header" client 10.0.0.2 -u -l 8 --tap x --ip 10.0.0.1/24
usage_err "UDP length over a datagram" client 10.0.0.2 -u -l 65508 --tap x --ip 10.0.0.1/24
usage_err "-M with -u" client 10.0.0.2 -u -M 1000 --tap x --ip 10.0.0.1/24
"$perf" client 10.0.0.2 -u -b fast --tap x --ip 10.0.0.1/24 2>"$tmp/err"
check "a bad -b names the value and the option's syntax" "grep -q \"bad bitrate 'fast'\" '$tmp/err'"
"$perf" client 10.0.0.2 -u -l 8 --tap x --ip 10.0.0.1/24 2>"$tmp/err"
check "a bad -l for -u names the value and the bounds" "grep -q \"bad length '8' for -u.*16 ... 65507\" '$tmp/err'"
"$perf" --help >"$tmp/help"
check "--help exits 0 and shows the commands" "[ $? -eq 0 ] && grep -q 'brisk-perf rr' '$tmp/help'"

# ---- interop with iperf3 over TAP ----
skip=""
[ "$(id -u)" -eq 0 ] || skip="not root"
[ -z "$skip" ] && [ ! -c /dev/net/tun ] && skip="no /dev/net/tun"
[ -z "$skip" ] && ! command -v iperf3 >/dev/null && skip="iperf3 not installed"
[ -z "$skip" ] && ! ip netns add "$ns" 2>/dev/null && skip="cannot create a network namespace"
if [ -n "$skip" ]; then
    echo "SKIP: iperf3 interop: $skip"
    echo "$pass passed, $fail failed"
    [ $fail -eq 0 ]
    exit
fi
ip -n "$ns" link set lo up
secs=${BRISK_PERF_TEST_SECS:-2}

# sum_received / sum_sent figures from an iperf3 or brisk-perf JSON document
sum_field() { awk -v key="\"$2\"" -v field="\"$3\"" '$0 ~ key {f = 1} f && $0 ~ field {sub(/.*:[ \t]*/, ""); sub(/,.*/, ""); print; exit}' "$1"; }
recv_bytes() { sum_field "$1" sum_received bytes; }
sent_bytes() { sum_field "$1" sum_sent bytes; }
# waits until something listens on TCP port $1 in the namespace (up to 10 s)
wait_listen() {
    for _ in $(seq 200); do
        ip netns exec "$ns" ss -ltn | grep -q ":$1 " && return 0
        sleep 0.05
    done
    return 1
}

# Starts brisk-perf (args...) in the background on a new TAP created inside the namespace, waits until
# brisk-perf has brought it up (it sets the MTU and IFF_UP by name after creating it, so touching the device
# earlier races with that), then gives the kernel side its address: brisk is 10.99.0.1, the kernel 10.99.0.2.
v6=0 # 1: brisk also has fd99::1/64 and the kernel fd99::2/64 (no DAD)
start_brisk() {
    local six=
    [ "$v6" = 1 ] && six="--ip6 fd99::1/64"
    ip netns exec "$ns" "$perf" "$@" --tap "$tap" --ip 10.99.0.1/24 $six >"$tmp/brisk.json" 2>"$tmp/brisk.err" &
    bg=$!
    local up=""
    for _ in $(seq 400); do
        ip -n "$ns" link show "$tap" 2>/dev/null | grep -q '[<,]UP[,>]' && { up=1; break; }
        kill -0 "$bg" 2>/dev/null || break
        sleep 0.05
    done
    if [ -z "$up" ]; then
        echo "# brisk-perf did not bring $tap up within 20 s; its stderr:"
        sed 's/^/#   /' "$tmp/brisk.err"
        return 1
    fi
    ip -n "$ns" addr add 10.99.0.2/24 dev "$tap"
    [ "$v6" = 1 ] && ip -n "$ns" -6 addr add fd99::2/64 dev "$tap" nodad
    return 0
}
wait_brisk() { # bounded: a brisk-perf that never saw its peer is killed (and fails) after 90 s
    local rc
    timeout 90 tail --pid="$bg" -f /dev/null
    kill "$bg" 2>/dev/null
    wait "$bg"
    rc=$?
    bg=""
    return $rc
}

# iperf3 -c -> brisk-perf server. to_brisk NAME "IPERF3 ARGS": one test, checked from both JSONs.
to_brisk() {
    start_brisk server -1 --json
    timeout 60 ip netns exec "$ns" iperf3 $2 -t "$secs" --json >"$tmp/k.json" 2>&1
    krc=$?
    wait_brisk
    brc=$?
    kb=$(recv_bytes "$tmp/k.json")
    bb=$(recv_bytes "$tmp/brisk.json")
    check "$1 -> brisk-perf server: both exit 0 (iperf3 $krc, brisk $brc)" "[ $krc -eq 0 ] && [ $brc -eq 0 ]"
    check "$1 -> brisk-perf server: same received bytes ($kb / $bb)" \
        "[ -n '$kb' ] && [ '$kb' = '$bb' ] && [ '$kb' -gt 1000000 ]"
    echo "# $1 -> brisk server: $(sum_field "$tmp/k.json" sum_received bits_per_second) bit/s"
}
for mode in "" "-R" "-P 2"; do
    to_brisk "iperf3 -c $mode" "-c 10.99.0.1 $mode"
done

# A test brisk-perf does not run (--bidir) is refused with SERVER_ERROR; iperf3 says why and both fail.
start_brisk server -1 -i 0
timeout 30 ip netns exec "$ns" iperf3 -c 10.99.0.1 --bidir -t 1 >"$tmp/k.txt" 2>&1
krc=$?
wait_brisk
brc=$?
check "iperf3 -c --bidir -> brisk-perf server: refused (iperf3 $krc, brisk $brc), iperf3 says not implemented" \
    "[ $krc -ne 0 ] && [ $brc -eq 1 ] && grep -q 'not implemented' '$tmp/k.txt'"

# The same with 1 % seeded loss in both directions at the TAP (the driver's fault wrapper): still complete,
# both sides still agree.
start_brisk server -1 --json --loss 1% --seed 7 --stats
timeout 60 ip netns exec "$ns" iperf3 -c 10.99.0.1 -t "$secs" --json >"$tmp/k.json" 2>&1
krc=$?
wait_brisk
brc=$?
kb=$(recv_bytes "$tmp/k.json")
bb=$(recv_bytes "$tmp/brisk.json")
check "iperf3 -c -> brisk-perf server, 1% loss: both exit 0 (iperf3 $krc, brisk $brc)" "[ $krc -eq 0 ] && [ $brc -eq 0 ]"
check "iperf3 -c -> brisk-perf server, 1% loss: same received bytes ($kb / $bb)" \
    "[ -n '$kb' ] && [ '$kb' = '$bb' ] && [ '$kb' -gt 0 ]"
drops=$(sed -n 's/^tap: .*, \([0-9]*\) fault drops), tx .*, \([0-9]*\) fault drops).*/\1 \2/p' "$tmp/brisk.err")
check "1% loss: the fault wrapper dropped frames both ways (rx tx: $drops)" \
    "[ -n '$drops' ] && [ ${drops% *} -gt 0 ] && [ ${drops#* } -gt 0 ]"
echo "# iperf3 -c -> brisk server, 1% loss: $(sum_field "$tmp/k.json" sum_received bits_per_second) bit/s"

# brisk-perf client -> iperf3 -s
for mode in "" "-R"; do
    ip netns exec "$ns" iperf3 -s -1 --json >"$tmp/k.json" 2>&1 &
    ks=$!
    wait_listen 5201
    start_brisk client 10.99.0.2 -t "$secs" $mode --json
    wait_brisk
    brc=$?
    timeout 10 tail --pid=$ks -f /dev/null
    kill $ks 2>/dev/null # still waiting for a test that never came: a failure, not a hang
    wait $ks
    krc=$?
    check "brisk-perf client $mode -> iperf3 -s: both exit 0 (brisk $brc, iperf3 $krc)" "[ $krc -eq 0 ] && [ $brc -eq 0 ]"
    if [ -z "$mode" ]; then
        kb=$(recv_bytes "$tmp/k.json")
        bb=$(recv_bytes "$tmp/brisk.json")
        check "brisk-perf client -> iperf3 -s: same received bytes ($bb / $kb)" \
            "[ -n '$kb' ] && [ '$kb' = '$bb' ] && [ '$kb' -gt 1000000 ]"
    else
        # iperf3's server prints its summary before the results exchange, so with -R its sum_received is
        # always 0 (kernel to kernel as well); compare what it sent with what brisk-perf was told it sent.
        kb=$(sent_bytes "$tmp/k.json")
        bb=$(sent_bytes "$tmp/brisk.json")
        br=$(recv_bytes "$tmp/brisk.json")
        check "brisk-perf client -R -> iperf3 -s: same sent bytes ($bb / $kb), received $br" \
            "[ -n '$kb' ] && [ '$kb' = '$bb' ] && [ '${br:-0}' -gt 1000000 ] && [ '$br' -le '$kb' ]"
    fi
    echo "# brisk client $mode -> iperf3 -s: $(sum_field "$tmp/brisk.json" sum_received bits_per_second) bit/s"
done

# ---- UDP (iperf3 -u) both ways ----
# udp_cell NAME SENDER_JSON RECEIVER_JSON MAXLOSS: the receiver's document (its own figures, the sender's
# from the results) has the sender's datagram count — or, from an iperf3 -s that printed before the results
# exchange, its own highest packet number, at most the count and short of it by the datagrams still in
# flight at TEST_END (under 5 %) — and received no more bytes than were sent; the loss is at most MAXLOSS
# percent; the jitter a finite number.
usecs=${BRISK_PERF_UDP_SECS:-3}
jn() { jq -r "$2" "$1" 2>/dev/null; }
udp_cell() {
    local name=$1 snd=$2 rcv=$3 max=$4 sb rb sp rp lost lp jit
    sb=$(jn "$snd" .end.sum_sent.bytes)
    rb=$(jn "$rcv" .end.sum_received.bytes)
    sp=$(jn "$snd" .end.sum_sent.packets)
    rp=$(jn "$rcv" '.end.sum_sent.packets | if . == 0 then "none" else . end')
    [ "$rp" = none ] && rp=$(jn "$rcv" .end.sum_received.packets)
    lost=$(jn "$rcv" .end.sum_received.lost_packets)
    lp=$(jn "$rcv" .end.sum_received.lost_percent)
    jit=$(jn "$rcv" '.end.sum_received.jitter_ms | if isinfinite or isnan then "bad" else . end')
    check "$name: the receiver was told the sender's datagrams ($sp / $rp) and got $rb of $sb bytes" \
        "[ -n '$sp' ] && [ -n '$rp' ] && [ '$rp' -le '$sp' ] && [ \$(( $rp * 20 )) -ge \$(( $sp * 19 )) ] &&
         [ '$sp' -gt 100 ] && [ -n '$rb' ] && [ '$rb' -gt 0 ] && [ '$rb' -le '$sb' ]"
    check "$name: loss $lost datagrams ($lp %) within $max %, jitter $jit ms" \
        "awk 'BEGIN { exit !(\"$lp\" + 0 <= $max && \"$jit\" ~ /^[0-9.e-]+\$/) }'"
    echo "# $name: $(jn "$rcv" .end.sum_received.bits_per_second) bit/s received, lost $lost/$rp ($lp %), jitter $jit ms"
}
if ! command -v jq >/dev/null; then
    echo "SKIP: UDP interop: jq not installed"
else
    # iperf3 -c -u -> brisk-perf server: brisk's JSON has both ends' figures after the results exchange, iperf3's
    # client too.
    for mode in "-l 1400" "-l 1400 -R" "-l 1400 -P 2" "-l 64 -b 10M"; do
        rate=100M
        case "$mode" in *-b*) rate="" ;; esac
        start_brisk server -1 --json
        timeout 60 ip netns exec "$ns" iperf3 -c 10.99.0.1 -u ${rate:+-b $rate} $mode -t "$usecs" --json \
            >"$tmp/k.json" 2>&1
        krc=$?
        wait_brisk
        brc=$?
        check "iperf3 -c -u $mode -> brisk-perf server: both exit 0 (iperf3 $krc, brisk $brc)" \
            "[ $krc -eq 0 ] && [ $brc -eq 0 ]"
        check "iperf3 -c -u $mode: both report the same received bytes and lost datagrams" \
            "[ '$(jn "$tmp/k.json" '.end.sum_received | [.bytes, .lost_packets] | @text')' = \
               '$(jn "$tmp/brisk.json" '.end.sum_received | [.bytes, .lost_packets] | @text')' ]"
        case "$mode" in
        *-R*) udp_cell "iperf3 -c -u $mode (brisk sends)" "$tmp/brisk.json" "$tmp/k.json" 5 ;;
        *) udp_cell "iperf3 -c -u $mode (kernel sends)" "$tmp/k.json" "$tmp/brisk.json" 5 ;;
        esac
    done
    # brisk-perf client -u -> iperf3 -s: iperf3's server prints before the results exchange, so its JSON has
    # only what it measured itself (the receiver's side forward, the sender's with -R); brisk's has both.
    for mode in "-l 1400" "-l 1400 -R" "-l 1400 -P 2" "-l 64 -b 10M"; do
        rate=100M
        case "$mode" in *-b*) rate="" ;; esac
        ip netns exec "$ns" iperf3 -s -1 --json >"$tmp/k.json" 2>&1 &
        ks=$!
        wait_listen 5201
        start_brisk client 10.99.0.2 -u ${rate:+-b $rate} $mode -t "$usecs" --json
        wait_brisk
        brc=$?
        timeout 10 tail --pid=$ks -f /dev/null
        kill $ks 2>/dev/null
        wait $ks
        krc=$?
        check "brisk-perf client -u $mode -> iperf3 -s: both exit 0 (brisk $brc, iperf3 $krc)" \
            "[ $krc -eq 0 ] && [ $brc -eq 0 ]"
        case "$mode" in
        *-R*) udp_cell "brisk-perf client -u $mode (kernel sends)" "$tmp/k.json" "$tmp/brisk.json" 5 ;;
        *)
            check "brisk-perf client -u $mode: both report the same received bytes and lost datagrams" \
                "[ '$(jn "$tmp/k.json" '.end.sum_received | [.bytes, .lost_packets] | @text')' = \
                   '$(jn "$tmp/brisk.json" '.end.sum_received | [.bytes, .lost_packets] | @text')' ]"
            udp_cell "brisk-perf client -u $mode (brisk sends)" "$tmp/brisk.json" "$tmp/k.json" 5
            ;;
        esac
    done
fi

# IPv6: iperf3 -6 -c -> brisk-perf server, brisk-perf client -> iperf3 -s
v6=1
for mode in "" "-R"; do
    to_brisk "iperf3 -6 -c $mode" "-6 -c fd99::1 $mode"
    check "iperf3 -6 -c $mode: brisk reports the IPv6 peer" "grep -q 'fd99::2' '$tmp/brisk.json'"
done
ip netns exec "$ns" iperf3 -s -1 --json >"$tmp/k.json" 2>&1 &
ks=$!
wait_listen 5201
start_brisk client "[fd99::2]" -t "$secs" --json
wait_brisk
brc=$?
timeout 10 tail --pid=$ks -f /dev/null
kill $ks 2>/dev/null
wait $ks
krc=$?
kb=$(recv_bytes "$tmp/k.json")
bb=$(recv_bytes "$tmp/brisk.json")
check "brisk-perf client [fd99::2] -> iperf3 -s: both exit 0 (brisk $brc, iperf3 $krc)" "[ $krc -eq 0 ] && [ $brc -eq 0 ]"
check "brisk-perf client [fd99::2] -> iperf3 -s: same received bytes ($bb / $kb)" \
    "[ -n '$kb' ] && [ '$kb' = '$bb' ] && [ '$kb' -gt 1000000 ]"
echo "# brisk client -> iperf3 -s over IPv6: $(sum_field "$tmp/brisk.json" sum_received bits_per_second) bit/s"
# UDP over IPv6 (iperf3 -6 -u) both roles, brisk sending and receiving
if command -v jq >/dev/null; then
    for mode in "" "-R"; do
        start_brisk server -1 --json
        timeout 60 ip netns exec "$ns" iperf3 -6 -c fd99::1 -u -b 100M -l 1400 $mode -t "$usecs" --json \
            >"$tmp/k.json" 2>&1
        krc=$?
        wait_brisk
        brc=$?
        check "iperf3 -6 -c -u $mode -> brisk-perf server: both exit 0 (iperf3 $krc, brisk $brc)" \
            "[ $krc -eq 0 ] && [ $brc -eq 0 ] && grep -q 'fd99::2' '$tmp/brisk.json'"
        case "$mode" in
        *-R*) udp_cell "iperf3 -6 -c -u $mode (brisk sends)" "$tmp/brisk.json" "$tmp/k.json" 5 ;;
        *) udp_cell "iperf3 -6 -c -u $mode (kernel sends)" "$tmp/k.json" "$tmp/brisk.json" 5 ;;
        esac
        ip netns exec "$ns" iperf3 -s -1 --json >"$tmp/k.json" 2>&1 &
        ks=$!
        wait_listen 5201
        start_brisk client "[fd99::2]" -u -b 100M -l 1400 $mode -t "$usecs" --json
        wait_brisk
        brc=$?
        timeout 10 tail --pid=$ks -f /dev/null
        kill $ks 2>/dev/null
        wait $ks
        krc=$?
        check "brisk-perf client [fd99::2] -u $mode -> iperf3 -s: both exit 0 (brisk $brc, iperf3 $krc)" \
            "[ $krc -eq 0 ] && [ $brc -eq 0 ]"
        case "$mode" in
        *-R*) udp_cell "brisk-perf client -6 -u $mode (kernel sends)" "$tmp/k.json" "$tmp/brisk.json" 5 ;;
        *) udp_cell "brisk-perf client -6 -u $mode (brisk sends)" "$tmp/brisk.json" "$tmp/k.json" 5 ;;
        esac
    done
fi
v6=0

# brisk-perf rr against a kernel echo server
if command -v python3 >/dev/null; then
    cat >"$tmp/echo.py" <<'EOF'
import socket, threading
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("0.0.0.0", 7007)); s.listen(8)
def serve(c):
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    while True:
        d = c.recv(65536)
        if not d: break
        c.sendall(d)
    c.close()
while True:
    c, _ = s.accept(); threading.Thread(target=serve, args=(c,), daemon=True).start()
EOF
    ip netns exec "$ns" python3 "$tmp/echo.py" &
    ks=$!
    wait_listen 7007
    start_brisk rr 10.99.0.2 -p 7007 -n 2000 --json
    wait_brisk
    brc=$?
    kill $ks 2>/dev/null
    wait $ks 2>/dev/null
    tx=$(sed -n 's/.*"transactions": \([0-9]*\).*/\1/p' "$tmp/brisk.json")
    p50=$(awk '/"p50"/ {sub(/.*:[ \t]*/, ""); sub(/,.*/, ""); print; exit}' "$tmp/brisk.json")
    check "rr -> kernel echo: exit 0 and 2000 transactions (got $tx)" "[ $brc -eq 0 ] && [ '$tx' = 2000 ]"
    echo "# rr brisk -> kernel echo: p50 ${p50} ns"
else
    echo "SKIP: rr against a kernel echo server: python3 not installed"
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
