#!/usr/bin/env bash
# test_layering.sh — scripts/layering.sh passes on the tree and fails, naming the file and line, on each kind
# of include it exists to refuse (a lower layer including a higher one, the library including a program
# outside it); an include down or across the layers stays allowed. (Arguments: the tool tests' usual three
# program paths, unused.)
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
check="$src/scripts/layering.sh"
fail=0
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT

expect() { # expect RC OUTPUT_PATTERN DESCRIPTION ROOT
    out=$(bash "$check" "$4" 2>&1)
    rc=$?
    if [ "$rc" -ne "$1" ] || ! grep -q -- "$2" <<<"$out"; then
        echo "FAIL: $3: exit $rc (want $1), output:"
        echo "$out"
        fail=1
    else
        echo "ok: $3"
    fi
}

expect 0 "every include points down or across" "the tree as committed" "$src"

plant() { # plant FILE LINE_TO_APPEND: a fresh copy of src/ with one line added to FILE
    rm -rf "$t/root"
    mkdir -p "$t/root"
    cp -r "$src/src" "$t/root/"
    echo "$2" >>"$t/root/src/$1"
}
plant net/ip_output.c '#include "tcp/tcp.h"'
expect 1 'src/net/ip_output.c:[0-9]*: includes "tcp/tcp.h": net/ is below tcp/' "net including tcp" "$t/root"
plant tcp/output.c '#include "stack/stack.h"'
expect 1 'src/tcp/output.c:[0-9]*: includes "stack/stack.h"' "tcp including stack" "$t/root"
plant core/timer.h '#  include "net/net.h"'
expect 1 'src/core/timer.h:[0-9]*: includes "net/net.h"' "core including net (spaced directive)" "$t/root"
plant wire/tcp.c '#include "sim/internal.h"'
expect 1 'src/wire/tcp.c:[0-9]*: includes "sim/internal.h": sim/ is outside the library' "the library including the simulator" "$t/root"
plant stack/stack.c '#include "wire/eth.h"'
expect 0 "every include points down" "stack including wire (down)" "$t/root"
plant net/gro.c '#include "net/ip.h"'
expect 0 "every include points down" "net including net (across)" "$t/root"
plant udp/input.c '#include "tcp/tcp.h"'
expect 1 'src/udp/input.c:[0-9]*: includes "tcp/tcp.h": udp/ and tcp/ are siblings' "udp including tcp (siblings)" "$t/root"
plant tcp/input.c '#include "udp/udp.h"'
expect 1 'src/tcp/input.c:[0-9]*: includes "udp/udp.h": tcp/ and udp/ are siblings' "tcp including udp (siblings)" "$t/root"
plant udp/output.c '#include "net/gro.h"'
expect 0 "every include points down" "udp including net (down)" "$t/root"
expect 2 "has no src/ directory" "a root without src/" "$t/root/src/net"
exit $fail
