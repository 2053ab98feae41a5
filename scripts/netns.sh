#!/usr/bin/env bash
# netns.sh — network namespaces for brisk's real-network runs: every packet stays inside namespaces this
# script creates; nothing is configured in the caller's namespace except, briefly, a TAP that brisk opened
# there (it is moved into the namespace).
#
#   netns.sh up NS                      create namespace NS (loopback up)
#   netns.sh tap NS IF ADDR/PREFIX      wait (10 s) for TAP IF — opened by brisk in NS, or in the caller's
#                                       namespace and then moved into NS (its descriptor stays valid) — and
#                                       give the kernel side ADDR/PREFIX, txqueuelen 10000, up
#   netns.sh veth NS ADDR1 ADDR2 [MTU]  a veth pair k1 / k2 inside NS, with k2 in a nested namespace NS-peer,
#                                       for kernel <-> kernel baselines (ADDRs as a.b.c.d/len)
#   netns.sh down NS                    delete NS (and NS-peer); its interfaces go with it
# Needs root. Exit status 77 (skip) when namespaces cannot be made.
set -eu

need_root() {
    if [ "$(id -u)" -ne 0 ]; then
        echo "netns.sh: needs root (network namespaces)" >&2
        exit 77
    fi
}

cmd=${1:-}
case "$cmd" in
up)
    need_root
    ns=$2
    ip netns add "$ns" 2>/dev/null || { echo "netns.sh: cannot create namespace $ns" >&2; exit 77; }
    ip -n "$ns" link set lo up
    ;;
tap)
    need_root
    ns=$2 ifc=$3 addr=$4
    for _ in $(seq 1 500); do
        if ip -n "$ns" link show "$ifc" >/dev/null 2>&1; then
            break
        fi
        if ip link show "$ifc" >/dev/null 2>&1; then
            ip link set "$ifc" netns "$ns"
            break
        fi
        sleep 0.02
    done
    if ! ip -n "$ns" link show "$ifc" >/dev/null 2>&1; then
        echo "netns.sh: interface $ifc did not appear" >&2
        exit 1
    fi
    ip -n "$ns" addr add "$addr" dev "$ifc"
    ip -n "$ns" link set "$ifc" txqueuelen 10000 up
    ;;
veth)
    need_root
    ns=$2 a1=$3 a2=$4 mtu=${5:-1500}
    ip netns add "$ns-peer"
    ip -n "$ns-peer" link set lo up
    ip -n "$ns" link add k1 type veth peer name k2 netns "$ns-peer"
    ip -n "$ns" addr add "$a1" dev k1
    ip -n "$ns-peer" addr add "$a2" dev k2
    ip -n "$ns" link set k1 mtu "$mtu" up
    ip -n "$ns-peer" link set k2 mtu "$mtu" up
    ;;
down)
    ns=$2
    ip netns del "$ns-peer" 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
    ;;
*)
    sed -n '2,16p' "$0" >&2
    exit 2
    ;;
esac
