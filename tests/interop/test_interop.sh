#!/usr/bin/env bash
# Interop with the Linux kernel's TCP over a TAP device, all inside a network namespace this script creates
# (and deletes): brisk (brisk-peer, tests/interop/brisk_peer.c) on one side of the TAP, a kernel socket
# (ksock, tests/interop/ksock.c) on the other.
#
#   handshake   both directions, captured with tcpdump on the kernel side: MSS, window scaling,
#               SACK-permitted and timestamps in SYN and SYN-ACK, and negotiated on both ends (TCP_INFO)
#   bulk        BYTES each way, byte-exact (every byte checked against the pattern, hashes compared), with
#               and without GSO
#   loss        the same with 1 % of wire segments dropped by the fault wrapper (LOSS_BYTES), each way
#   close       FIN brisk first, FIN kernel first, half-close each way (the half-closed side keeps
#               receiving), RST from brisk, RST from the kernel — each as seen by the other side
#   IPv6        the handshake as captured, bulk each way with and without TSO6, ping6 from the kernel
#   rr          NODELAY request/response latency, brisk -> kernel over the TAP beside kernel -> kernel over
#               a veth pair (printed, not asserted: wall-clock speed is never a test criterion)
#   UDP         (first) socat's UDP4 and UDP6 clients against one brisk-peer --udp-echo socket on [::],
#               every datagram back byte for byte; brisk-peer --udp-client against socat's UDP4 and UDP6
#               echo in the namespace; a datagram to a closed port of the kernel's: its ICMP / ICMPv6 port
#               unreachable reported on brisk's connected socket as ECONNREFUSED. BRISK_INTEROP_ONLY=udp
#               runs this section alone.
#
# Sizes: BRISK_INTEROP_BYTES (default 100M; the documented long run uses 1G), BRISK_INTEROP_LOSS_BYTES
# (default 20M) and BRISK_INTEROP_V6_BYTES (the IPv6 bulk cells, default 20M). Usage: test_interop.sh BRISK_PEER KSOCK. Exits 77 (ctest: skipped) with the reason printed
# when not root, without /dev/net/tun, or when namespaces cannot be created.
set -u
peer=$1
ks=$2
here=$(cd "$(dirname "$0")" && pwd)
netns=$here/../../scripts/netns.sh
bytes=${BRISK_INTEROP_BYTES:-100M}
loss_bytes=${BRISK_INTEROP_LOSS_BYTES:-20M}
v6_bytes=${BRISK_INTEROP_V6_BYTES:-20M} # the IPv6 bulk cells (the documented run: 100M, as IPv4's)

skip() {
    echo "SKIP: $1"
    exit 77
}
[ "$(id -u)" -eq 0 ] || skip "needs root (TAP device and network namespaces)"
[ -c /dev/net/tun ] || skip "no /dev/net/tun"
command -v ip >/dev/null 2>&1 || skip "no ip (iproute2)"
command -v tcpdump >/dev/null 2>&1 || skip "no tcpdump"

NS=brisk-it-$$
tmp=$(mktemp -d)
cleanup() {
    # Only processes this script started (recorded as they were started), then the namespace.
    for p in $(cat "$tmp/pids" 2>/dev/null); do kill "$p" 2>/dev/null; done
    bash "$netns" down "$NS"
    rm -rf "$tmp"
}
trap cleanup EXIT
bash "$netns" up "$NS" || skip "cannot create a network namespace"
nsx() { ip netns exec "$NS" "$@"; }

. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
# kv FILE KEY: KEY's value on the result line of FILE
kv() { awk -v k="$2" '/^side=/ { for (i = 1; i <= NF; i++) { split($i, a, "="); if (a[1] == k) v = a[2] } } END { print v }' "$1"; }

n=0
fam=4 # 6: the connection runs over IPv6 (fd77:N::2 brisk, fd77:N::1 the kernel), beside the IPv4 addresses
# run NAME ROLE "BRISK ARGS" "KSOCK ARGS" [capture]: one connection; ROLE is brisk's (listen | connect).
# Sets $b and $k (result files), $brc and $krc (exit codes), $cap (pcap when asked).
run() {
    local name=$1 role=$2 bargs=$3 kargs=$4 capture=${5:-}
    n=$((n + 1))
    local ifc=bt$n net=10.77.$n
    b=$tmp/$n.brisk k=$tmp/$n.kernel cap=$tmp/$n.pcap
    local bp kp tp= bdst="$net.1:5001" kdst="$net.2:5001" v6up=:
    if [ "$fam" = 6 ]; then
        bargs="$bargs --ip6 fd77:$n::2/64"
        kargs="$kargs --ipv6"
        bdst="[fd77:$n::1]:5001" kdst="[fd77:$n::2]:5001"
        v6up="ip -n $NS -6 addr add fd77:$n::1/64 dev $ifc nodad"
    fi
    if [ "$role" = listen ]; then
        ip netns exec "$NS" "$peer" --tap "$ifc" --ip "$net.2/24" --listen 5001 --timeout 300s $bargs >"$b" \
            2>"$b.err" &
        bp=$!
        echo $bp >>"$tmp/pids"
        bash "$netns" tap "$NS" "$ifc" "$net.1/24" || { bad "$name: TAP $ifc did not come up"; cat "$b.err"; }
        $v6up
        if [ -n "$capture" ]; then
            ip netns exec "$NS" tcpdump -Z root --immediate-mode -i "$ifc" -nn -U -s 128 -w "$cap" tcp 2>"$cap.err" &
            tp=$!
            echo $tp >>"$tmp/pids"
            for _ in $(seq 1 100); do grep -q listening "$cap.err" && break; sleep 0.05; done
        fi
        nsx "$ks" --connect "$kdst" --timeout 300 ${kargs/--ipv6/} >"$k" 2>"$k.err"
        krc=$?
        wait $bp
        brc=$?
    else
        ip netns exec "$NS" "$ks" --listen 5001 --timeout 300 $kargs >"$k" 2>"$k.err" &
        kp=$!
        echo $kp >>"$tmp/pids"
        for _ in $(seq 1 100); do grep -q listening "$k" && break; sleep 0.02; done
        ip netns exec "$NS" "$peer" --tap "$ifc" --ip "$net.2/24" --connect "$bdst" --timeout 300s \
            $bargs >"$b" 2>"$b.err" &
        bp=$!
        echo $bp >>"$tmp/pids"
        bash "$netns" tap "$NS" "$ifc" "$net.1/24" || { bad "$name: TAP $ifc did not come up"; cat "$b.err"; }
        $v6up
        if [ -n "$capture" ]; then
            ip netns exec "$NS" tcpdump -Z root --immediate-mode -i "$ifc" -nn -U -s 128 -w "$cap" tcp 2>"$cap.err" &
            tp=$!
            echo $tp >>"$tmp/pids"
            for _ in $(seq 1 100); do grep -q listening "$cap.err" && break; sleep 0.05; done
        fi
        wait $bp
        brc=$?
        wait $kp
        krc=$?
    fi
    if [ -n "$tp" ]; then
        sleep 0.2
        kill "$tp" 2>/dev/null
        wait "$tp" 2>/dev/null
    fi
    echo "# $name"
    sed 's/^/#   /' "$b" "$k"
    if [ -s "$b.err" ] && grep -qv '^tap ' "$b.err"; then sed 's/^/#   brisk stderr: /' "$b.err"; fi
    if [ -s "$k.err" ]; then sed 's/^/#   ksock stderr: /' "$k.err"; fi
}

# transfer NAME: both ends exited 0, and what one sent is what the other received, byte for byte.
transfer_ok() {
    check "$1: brisk side ok" "[ $brc -eq 0 ]"
    check "$1: kernel side ok" "[ $krc -eq 0 ]"
    check "$1: kernel received what brisk sent" \
        "[ '$(kv "$b" tx_bytes)' = '$(kv "$k" rx_bytes)' ] && [ '$(kv "$b" tx_hash)' = '$(kv "$k" rx_hash)' ]"
    check "$1: brisk received what the kernel sent" \
        "[ '$(kv "$k" tx_bytes)' = '$(kv "$b" rx_bytes)' ] && [ '$(kv "$k" tx_hash)' = '$(kv "$b" rx_hash)' ]"
    check "$1: no byte out of place" "[ '$(kv "$b" rx_bad)' = 0 ] && [ '$(kv "$k" rx_bad)' = 0 ]"
}

# --- UDP -------------------------------------------------------------------------------------------------
# udp_peer ARGS...: brisk-peer ARGS on a fresh TAP bt$n (brisk 10.77.$n.2 and fd77:$n::2, the kernel .1 and
# ::1, without DAD), in the background ($bp; its result in $b).
udp_peer() {
    n=$((n + 1))
    local ifc=bt$n
    b=$tmp/$n.brisk
    ip netns exec "$NS" "$peer" --tap "$ifc" --ip "10.77.$n.2/24" --ip6 "fd77:$n::2/64" --timeout 30s "$@" \
        >"$b" 2>"$b.err" &
    bp=$!
    echo $bp >>"$tmp/pids"
    bash "$netns" tap "$NS" "$ifc" "10.77.$n.1/24" || { bad "udp: TAP $ifc did not come up"; cat "$b.err"; }
    ip -n "$NS" -6 addr add "fd77:$n::1/64" dev "$ifc" nodad
}
udp_done() { # NAME: waits for brisk-peer ($brc) and shows its result line
    wait "$bp"
    brc=$?
    echo "# $1"
    sed 's/^/#   /' "$b"
    if [ -s "$b.err" ] && grep -qv '^tap ' "$b.err"; then sed 's/^/#   brisk stderr: /' "$b.err"; fi
}
if command -v socat >/dev/null 2>&1; then
    # socat -> brisk: 50 datagrams of 1472 bytes over IPv4 (1500 - 28), then 50 of 1452 over IPv6 (1500 -
    # 48), to one socket on [::]:7; each socat writes back what returns, compared with what it sent. (socat
    # sends them in one burst: 50 fit its socket's receive buffer, rmem_default, whatever socat's pace.)
    head -c $((50 * 1472)) /dev/urandom >"$tmp/udp.in4"
    head -c $((50 * 1452)) /dev/urandom >"$tmp/udp.in6"
    udp_peer --udp-echo 7 --count 100
    nsx ping -c 1 -W 2 "10.77.$n.2" >/dev/null 2>&1 # neighbours resolved before the burst (ARP, ND)
    nsx ping -6 -c 1 -W 2 "fd77:$n::2" >/dev/null 2>&1
    nsx timeout 20 socat -b 1472 -t 1 - "UDP4:10.77.$n.2:7" <"$tmp/udp.in4" >"$tmp/udp.out4" 2>"$tmp/udp.err4"
    s4=$?
    nsx timeout 20 socat -b 1452 -t 1 - "UDP6:[fd77:$n::2]:7" <"$tmp/udp.in6" >"$tmp/udp.out6" 2>"$tmp/udp.err6"
    s6=$?
    udp_done "UDP echo: socat UDP4 and UDP6 clients -> brisk [::]:7"
    cat "$tmp/udp.err4" "$tmp/udp.err6" | sed 's/^/#   socat stderr: /'
    check "UDP4 socat -> brisk echo: 50 datagrams back byte for byte" \
        "[ $s4 -eq 0 ] && cmp -s '$tmp/udp.in4' '$tmp/udp.out4'"
    check "UDP6 socat -> brisk echo: 50 datagrams back byte for byte" \
        "[ $s6 -eq 0 ] && cmp -s '$tmp/udp.in6' '$tmp/udp.out6'"
    check "UDP echo: brisk's one [::] socket took both families (50 senders of each, as themselves)" \
        "[ $brc -eq 0 ] && [ '$(kv "$b" udp_from_v4)' = 50 ] && [ '$(kv "$b" udp_from_v6)' = 50 ]"
    check "UDP echo: each family in its own MIB (UdpInDatagrams 50, Udp6InDatagrams 50, no errors)" \
        "[ '$(kv "$b" UdpInDatagrams)' = 50 ] && [ '$(kv "$b" Udp6InDatagrams)' = 50 ] &&
         [ '$(kv "$b" UdpInErrors)$(kv "$b" Udp6InErrors)' = 00 ]"

    # brisk -> socat: brisk-peer --udp-client sends 100 datagrams to socat's echo, each after the last one
    # came back, and compares them; IPv4 then IPv6 (socat's echo on [::] would take both: one at a time).
    for f in 4 6; do
        if [ $f = 4 ]; then size=1472 dst="10.77.$((n + 1)).1:7004" delay=0; else
            size=1452 dst="[fd77:$((n + 1))::1]:7006" delay=1s
        fi
        ip netns exec "$NS" timeout 30 socat -T 10 "UDP$f-LISTEN:700$f" PIPE >/dev/null 2>"$tmp/udp.srv$f" &
        sp=$!
        echo $sp >>"$tmp/pids"
        udp_peer --udp-client "$dst" --count 100 --size $size --connect-delay $delay
        udp_done "UDP$f brisk client -> socat echo"
        kill "$sp" 2>/dev/null
        wait "$sp" 2>/dev/null
        sed 's/^/#   socat stderr: /' "$tmp/udp.srv$f"
        check "UDP$f brisk -> socat echo: 100 datagrams of $size bytes back byte for byte" \
            "[ $brc -eq 0 ] && [ '$(kv "$b" udp_rx)' = 100 ] && [ '$(kv "$b" udp_bad)' = 0 ]"
        echo "#   resends after 500 ms of silence: $(kv "$b" udp_resends)"
    done

    # A closed port of the kernel's: ICMP port unreachable (type 3 code 3), ICMPv6 destination unreachable
    # code 4, each reported on brisk's connected socket as ECONNREFUSED.
    udp_peer --udp-client "10.77.$((n + 1)).1:9" --count 1 --size 32 --expect refused
    udp_done "UDP4 brisk client -> closed kernel port"
    check "UDP4 closed port: the kernel's ICMP port unreachable is ECONNREFUSED on brisk's socket" \
        "[ $brc -eq 0 ] && [ '$(kv "$b" result)' = refused ] && [ '$(kv "$b" IcmpInDestUnreachs)' -ge 1 ]"
    udp_peer --udp-client "[fd77:$((n + 1))::1]:9" --count 1 --size 32 --expect refused --connect-delay 1s
    udp_done "UDP6 brisk client -> closed kernel port"
    check "UDP6 closed port: the kernel's ICMPv6 port unreachable is ECONNREFUSED on brisk's socket" \
        "[ $brc -eq 0 ] && [ '$(kv "$b" result)' = refused ] && [ '$(kv "$b" Icmp6InDestUnreachs)' -ge 1 ]"
else
    bad "UDP: no socat (scripts/deps.sh installs it)"
fi
if [ "${BRISK_INTEROP_ONLY:-}" = udp ]; then
    echo "$pass passed, $fail failed"
    [ "$fail" -eq 0 ]
    exit
fi

# --- handshake -------------------------------------------------------------------------------------------
syn_opts() { # FILE SRC FLAGS: the options tcpdump prints for the first segment from SRC with FLAGS
    tcpdump -nn -r "$1" "src host $2 and tcp[tcpflags] & tcp-syn != 0" 2>/dev/null | grep "Flags \[$3\]" |
        head -n 1 | sed -n 's/.*options \[\([^]]*\)\].*/\1/p'
}
handshake_ok() { # NAME OPTS
    check "$1: MSS" "echo '$2' | grep -q 'mss 1460'"
    check "$1: SACK-permitted" "echo '$2' | grep -q sackOK"
    check "$1: timestamps" "echo '$2' | grep -q 'TS val'"
    check "$1: window scale" "echo '$2' | grep -q 'wscale [0-9]'"
}
run "handshake, kernel connects" listen "--mode sink" "--mode source --bytes 1M" capture
transfer_ok "handshake, kernel connects"
opts=$(syn_opts "$cap" "10.77.$n.2" "S.")
echo "# brisk SYN-ACK options: $opts"
[ -n "$opts" ] || { sed 's/^/#   tcpdump: /' "$cap.err"; tcpdump -nn -r "$cap" 2>&1 | head -n 5; }
handshake_ok "brisk SYN-ACK" "$opts"
check "negotiated on the kernel side (TCP_INFO)" \
    "[ '$(kv "$k" ts)$(kv "$k" sack)$(kv "$k" ws)' = 111 ] && [ '$(kv "$k" mss)' = 1448 ]"
check "negotiated on the brisk side" \
    "[ '$(kv "$b" ts)$(kv "$b" sack)$(kv "$b" ws)' = 111 ] && [ '$(kv "$b" mss)' = 1448 ]"
check "window scales agree" "[ '$(kv "$b" snd_wscale)' = '$(kv "$k" rcv_wscale)' ] && [ '$(kv "$b" rcv_wscale)' = '$(kv "$k" snd_wscale)' ]"

run "handshake, brisk connects" connect "--mode source --bytes 1M --connect-delay 1s" "--mode sink" capture
transfer_ok "handshake, brisk connects"
opts=$(syn_opts "$cap" "10.77.$n.2" "S")
echo "# brisk SYN options: $opts"
handshake_ok "brisk SYN" "$opts"
check "brisk SYN-ACK seen answered by the kernel" "[ -n '$(syn_opts "$cap" "10.77.$n.1" "S.")' ]"

# --- bulk --------------------------------------------------------------------------------------------------
for gso in 1 0; do
    run "bulk $bytes kernel -> brisk, gso $gso" listen "--mode sink --gso $gso" "--mode source --bytes $bytes"
    transfer_ok "bulk $bytes kernel -> brisk, gso $gso"
    check "all $bytes arrived" "[ '$(kv "$b" rx_bytes)' -gt 0 ]"
    [ $gso = 1 ] && check "the kernel handed brisk super-frames" "[ '$(kv "$b" tap_rx_gso)' -gt 0 ]"
    [ $gso = 0 ] && check "no super-frames without gso" "[ '$(kv "$b" tap_rx_gso)' = 0 ]"
    echo "# goodput kernel -> brisk (gso $gso): $(kv "$b" mbps) Mbit/s"

    run "bulk $bytes brisk -> kernel, gso $gso" connect "--mode source --bytes $bytes --gso $gso" "--mode sink"
    transfer_ok "bulk $bytes brisk -> kernel, gso $gso"
    [ $gso = 1 ] && check "brisk handed the kernel super-frames" "[ '$(kv "$b" tap_tx_gso)' -gt 0 ]"
    [ $gso = 0 ] && check "no super-frames without gso" "[ '$(kv "$b" tap_tx_gso)' = 0 ]"
    echo "# goodput brisk -> kernel (gso $gso): $(kv "$k" mbps) Mbit/s"
done

# --- slow TX completions (seed 001's mechanism on a real path) ------------------------------------------------
# Completions 190 us after each write and a 16-descriptor ring, without GSO: the ring fills (xmit refuses with BUSY), the
# stack resumes senders from completions, and the transfer still ends byte-exact.
run "txc-delay 190us, 16-descriptor ring" connect "--mode source --bytes 20M --txc-delay 190us --tx-ring 16 --gso 0" \
    "--mode sink"
transfer_ok "txc-delay 190us, 16-descriptor ring"
check "the ring filled and refused packets" "[ '$(kv "$b" tap_busy)' -gt 0 ]"
check "completions came at least 190 us after the writes" \
    "awk 'BEGIN { exit !($(kv "$b" txc_latency_us) >= 190) }'"
echo "# goodput with 190 us completions: $(kv "$k" mbps) Mbit/s, smoothed completion latency $(kv "$b" txc_latency_us) us"

# --- loss --------------------------------------------------------------------------------------------------
run "1% loss brisk -> kernel" connect "--mode source --bytes $loss_bytes --loss 1%" "--mode sink"
transfer_ok "1% loss brisk -> kernel"
check "segments were dropped and retransmitted" "[ '$(kv "$b" tap_drops)' -gt 0 ] && [ '$(kv "$b" retrans)' -gt 0 ]"
echo "# goodput brisk -> kernel with 1% loss: $(kv "$k" mbps) Mbit/s"
run "1% loss kernel -> brisk" listen "--mode sink --rx-loss 1%" "--mode source --bytes $loss_bytes"
transfer_ok "1% loss kernel -> brisk"
check "segments were dropped and the kernel retransmitted" "[ '$(kv "$b" tap_drops)' -gt 0 ] && [ '$(kv "$k" retrans)' -gt 0 ]"
echo "# goodput kernel -> brisk with 1% loss: $(kv "$b" mbps) Mbit/s"

# --- close variants ----------------------------------------------------------------------------------------
run "FIN brisk first" connect "--mode source --bytes 1M" "--mode sink"
transfer_ok "FIN brisk first"
check "kernel saw EOF after 1M" "[ '$(kv "$k" result)' = eof ] && [ '$(kv "$k" rx_bytes)' = 1048576 ]"
run "FIN kernel first" listen "--mode sink" "--mode source --bytes 1M"
transfer_ok "FIN kernel first"
check "kernel saw brisk's FIN after its own" "[ '$(kv "$k" result)' = eof ]"
run "half-close by brisk" connect "--mode source --bytes 4M" "--mode echo"
transfer_ok "half-close by brisk"
check "brisk kept receiving after its FIN" "[ '$(kv "$b" rx_bytes)' = 4194304 ] && [ '$(kv "$b" rx_hash)' = '$(kv "$b" tx_hash)' ]"
run "half-close by the kernel" listen "--mode echo" "--mode source --bytes 4M"
transfer_ok "half-close by the kernel"
check "kernel kept receiving after its FIN" "[ '$(kv "$k" rx_bytes)' = 4194304 ] && [ '$(kv "$k" rx_hash)' = '$(kv "$k" tx_hash)' ]"
run "RST from brisk" connect "--mode rst --bytes 1M" "--mode sink --expect reset"
check "RST from brisk: brisk side ok" "[ $brc -eq 0 ]"
check "RST from brisk: kernel saw the data, then ECONNRESET" \
    "[ $krc -eq 0 ] && [ '$(kv "$k" result)' = reset ] && [ '$(kv "$k" rx_bytes)' = 1048576 ] && [ '$(kv "$k" rx_bad)' = 0 ]"
run "RST from the kernel" listen "--mode sink --expect reset" "--mode rst --bytes 1M"
check "RST from the kernel: kernel side ok" "[ $krc -eq 0 ]"
check "RST from the kernel: brisk saw the data, then the reset" \
    "[ $brc -eq 0 ] && [ '$(kv "$b" result)' = reset ] && [ '$(kv "$b" rx_bytes)' = 1048576 ]"

# --- request/response latency --------------------------------------------------------------------------------
run "rr brisk -> kernel" connect "--mode rr --nodelay --size 64 --count 2000" "--mode echo --nodelay"
transfer_ok "rr brisk -> kernel"
check "2000 transactions" "[ '$(kv "$b" rr)' = 2000 ]"
brisk_rr="p50 $(kv "$b" p50_us) us, p90 $(kv "$b" p90_us) us, p99 $(kv "$b" p99_us) us"
run "rr kernel -> brisk" listen "--mode echo --nodelay" "--mode rr --nodelay --size 64 --count 2000"
transfer_ok "rr kernel -> brisk"
kb_rr="p50 $(kv "$k" p50_us) us, p90 $(kv "$k" p90_us) us, p99 $(kv "$k" p99_us) us"
if bash "$netns" veth "$NS" 10.78.0.1/24 10.78.0.2/24 >/dev/null 2>&1; then
    ip netns exec "$NS-peer" "$ks" --listen 5001 --mode echo --nodelay --timeout 60 >"$tmp/veth.srv" 2>&1 &
    echo $! >>"$tmp/pids"
    sleep 0.2
    nsx "$ks" --connect 10.78.0.2:5001 --mode rr --nodelay --size 64 --count 2000 >"$tmp/veth.cli" 2>&1
    wait
    kk_rr="p50 $(kv "$tmp/veth.cli" p50_us) us, p90 $(kv "$tmp/veth.cli" p90_us) us, p99 $(kv "$tmp/veth.cli" p99_us) us"
else
    kk_rr="(veth unavailable)"
fi
echo "# NODELAY 64-byte request/response, 2000 transactions:"
echo "#   brisk client -> kernel echo (TAP):   $brisk_rr"
echo "#   kernel client -> brisk echo (TAP):   $kb_rr"
echo "#   kernel client -> kernel echo (veth): $kk_rr"

# --- IPv6 --------------------------------------------------------------------------------------------------
# The same stacks over IPv6 on the same TAP (fd77:N::/64, the kernel's address without DAD): the handshake as
# captured (MSS 1440 = 1500 - 60), bulk each way with and without TSO6, and the kernel pinging brisk.
fam=6
run "IPv6 handshake, kernel connects" listen "--mode sink" "--mode source --bytes 1M" capture
transfer_ok "IPv6 handshake, kernel connects"
opts=$(tcpdump -nn -r "$cap" "ip6 and src host fd77:$n::2 and ip6[53] & 2 != 0" 2>/dev/null | head -n 1 |
    sed -n 's/.*options \[\([^]]*\)\].*/\1/p')
echo "# brisk SYN-ACK options over IPv6: $opts"
check "IPv6 SYN-ACK: MSS 1440" "echo '$opts' | grep -q 'mss 1440'"
check "IPv6 SYN-ACK: SACK-permitted, timestamps, window scale" \
    "echo '$opts' | grep -q sackOK && echo '$opts' | grep -q 'TS val' && echo '$opts' | grep -q 'wscale [0-9]'"
check "IPv6: MSS 1428 on both ends (TCP_INFO)" "[ '$(kv "$k" mss)' = 1428 ] && [ '$(kv "$b" mss)' = 1428 ]"
for gso in 1 0; do
    run "IPv6 bulk $v6_bytes kernel -> brisk, gso $gso" listen "--mode sink --gso $gso" \
        "--mode source --bytes $v6_bytes"
    transfer_ok "IPv6 bulk $v6_bytes kernel -> brisk, gso $gso"
    [ $gso = 1 ] && check "IPv6: the kernel handed brisk super-frames" "[ '$(kv "$b" tap_rx_gso)' -gt 0 ]"
    echo "# IPv6 goodput kernel -> brisk (gso $gso): $(kv "$b" mbps) Mbit/s"
    run "IPv6 bulk $v6_bytes brisk -> kernel, gso $gso" connect \
        "--mode source --bytes $v6_bytes --gso $gso --connect-delay 1s" "--mode sink"
    transfer_ok "IPv6 bulk $v6_bytes brisk -> kernel, gso $gso"
    [ $gso = 1 ] && check "IPv6: brisk handed the kernel TSO6 super-frames" "[ '$(kv "$b" tap_tx_gso)' -gt 0 ]"
    [ $gso = 0 ] && check "IPv6: no super-frames without gso" "[ '$(kv "$b" tap_tx_gso)' = 0 ]"
    echo "# IPv6 goodput brisk -> kernel (gso $gso): $(kv "$k" mbps) Mbit/s"
done
# ping6: brisk answers the kernel's echo requests (its ND answers the kernel's solicitation first).
n=$((n + 1))
ip netns exec "$NS" "$peer" --tap bt$n --ip "10.77.$n.2/24" --ip6 "fd77:$n::2/64" --listen 5001 --timeout 10s \
    >/dev/null 2>&1 &
echo $! >>"$tmp/pids"
bash "$netns" tap "$NS" "bt$n" "10.77.$n.1/24" && ip -n "$NS" -6 addr add "fd77:$n::1/64" dev "bt$n" nodad
check "ping6 kernel -> brisk: 3 of 3 answered" \
    "nsx ping -6 -c 3 -i 0.2 -W 2 fd77:$n::2 2>&1 | grep -q '3 received'"
fam=4

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
