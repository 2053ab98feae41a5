#!/usr/bin/env bash
# Path MTU discovery against the kernel as a router (issue 22, RFC 1191, and RFC 8201 for IPv6): brisk
# (brisk-peer) on a TAP in
# namespace NS, whose kernel forwards (ip_forward) over a veth pair into NS-peer, where a kernel socket
# (ksock) listens; both hosts have MTU 1500 (so the peer announces MSS 1460), but the router's route to the
# peer has `mtu lock 1280`. brisk's 1500-byte segments (and 64 KB GSO frames) are too large for that hop: the
# kernel drops them and answers with ICMP fragmentation needed (next-hop MTU 1280); brisk lowers its path MTU
# and the transfer completes, byte-exact, with GSO on and off, and without a retransmission timeout.
# Counted on both sides: brisk's PmtuLowered and its final MSS (1280 - 40 - 12 with timestamps), the router
# namespace's IcmpOutDestUnreachs. The same over IPv6 (fd76:1::/64 on the TAP, fd76:2::/64 on the veth, the
# route's mtu lock 1280, the router forwarding): the kernel answers with Packet Too Big (Icmp6OutPktTooBigs),
# and brisk's MSS becomes 1280 - 60 - 12. Usage: test_pmtu.sh BRISK_PEER KSOCK. Exits 77 (ctest: skipped) with the
# reason printed when not root, without /dev/net/tun or nstat, or when namespaces cannot be created.
set -u
peer=$1
ks=$2
here=$(cd "$(dirname "$0")" && pwd)
netns=$here/../../scripts/netns.sh
bytes=${BRISK_PMTU_BYTES:-20M}

. "$here/../lib.sh"
need_root_tun
command -v nstat >/dev/null 2>&1 || skip "no nstat (iproute2)"

NS=brisk-pm-$$
tmp=$(mktemp -d)
cleanup() {
    for p in $(cat "$tmp/pids" 2>/dev/null); do kill "$p" 2>/dev/null; done
    bash "$netns" down "$NS"
    rm -rf "$tmp"
}
trap cleanup EXIT
bash "$netns" up "$NS" || skip "cannot create a network namespace"
bash "$netns" veth "$NS" 10.76.2.1/24 10.76.2.2/24
ip -n "$NS" route replace 10.76.2.0/24 dev k1 mtu lock 1280
ip netns exec "$NS" sysctl -qw net.ipv4.ip_forward=1
ip -n "$NS-peer" route add default via 10.76.2.1
ip -n "$NS" -6 addr add fd76:2::1/64 dev k1 nodad
ip -n "$NS-peer" -6 addr add fd76:2::2/64 dev k2 nodad
ip -n "$NS" -6 route add fd76:2::2/128 dev k1 mtu lock 1280 # more specific than the prefix route
ip netns exec "$NS" sysctl -qw net.ipv6.conf.all.forwarding=1
ip -n "$NS-peer" -6 route add default via fd76:2::1

kv() { awk -v k="$2" '/^side=/ { for (i = 1; i <= NF; i++) { split($i, a, "="); if (a[1] == k) v = a[2] } } END { print v }' "$1"; }

n=0
for cell in "4 1" "4 0" "6 1" "6 0"; do
    set -- $cell
    fam=$1 gso=$2
    n=$((n + 1))
    name="brisk -> kernel through a 1280-byte hop, IPv$fam, gso $gso"
    ifc=bp$n
    b=$tmp/$n.brisk k=$tmp/$n.kernel
    if [ "$fam" = 6 ]; then
        six="--ip6 fd76:1::2/64 --gw6 fd76:1::1" dst="[fd76:2::2]:5001" kl=--ipv6 mss=1208
        ctr=Icmp6OutPktTooBigs
    else
        six= dst=10.76.2.2:5001 kl= mss=1228 ctr=IcmpOutDestUnreachs
    fi
    ip netns exec "$NS-peer" "$ks" --listen 5001 $kl --mode sink --timeout 120 >"$k" 2>"$k.err" &
    kp=$!
    echo $kp >>"$tmp/pids"
    for _ in $(seq 1 100); do grep -q listening "$k" && break; sleep 0.02; done
    ip netns exec "$NS" nstat -n
    ip netns exec "$NS" "$peer" --tap "$ifc" --ip 10.76.1.2/24 --gw 10.76.1.1 $six --connect "$dst" \
        --mode source --bytes "$bytes" --gso "$gso" --connect-delay 1s --timeout 120s >"$b" 2>"$b.err" &
    bp=$!
    echo $bp >>"$tmp/pids"
    bash "$netns" tap "$NS" "$ifc" 10.76.1.1/24 || { bad "$name: TAP $ifc did not come up"; cat "$b.err"; }
    [ "$fam" = 6 ] && ip -n "$NS" -6 addr add fd76:1::1/64 dev "$ifc" nodad
    wait $bp
    brc=$?
    wait $kp
    krc=$?
    icmp=$(ip netns exec "$NS" nstat -az "$ctr" | awk -v c="$ctr" '$1 == c { print $2 }')
    echo "# $name"
    sed 's/^/#   /' "$b" "$k"
    echo "#   router $ctr=$icmp"
    check "$name: both ends exited 0" "[ $brc -eq 0 ] && [ $krc -eq 0 ]"
    check "$name: the kernel received what brisk sent" \
        "[ '$(kv "$b" tx_bytes)' = '$(kv "$k" rx_bytes)' ] && [ '$(kv "$b" tx_hash)' = '$(kv "$k" rx_hash)' ] && [ '$(kv "$k" rx_bad)' = 0 ]"
    check "$name: the router said the packet was too big ($ctr)" "[ '${icmp:-0}' -ge 1 ]"
    check "$name: brisk lowered its path MTU once" "[ '$(kv "$b" pmtu_lowered)' = 1 ]"
    check "$name: brisk's MSS fits the hop ($mss)" "[ '$(kv "$b" mss)' = $mss ]"
    check "$name: no retransmission timeout" "[ '$(kv "$b" timeouts)' = 0 ]"
done
echo "# $pass passed, $fail failed"
[ $fail -eq 0 ]
