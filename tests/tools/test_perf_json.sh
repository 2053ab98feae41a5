#!/usr/bin/env bash
# brisk-perf --json has iperf3 3.12's schema. Debian's iperf3 against itself (loopback, in a namespace of this
# test's own) gives the reference documents for each mode brisk-perf runs — client and server, plain, -R and
# -P 2, over TCP and UDP (-u -b 10M) — and then
#   iperf3 -c      -> brisk-perf server  (over a TAP whose kernel side lives in the namespace)
#   brisk-perf client -> iperf3 -s
# and one jq program (schema.jq below) reads every document the same way: each key path of iperf3's document
# (array elements folded together) must be in brisk-perf's, with the same JSON type; brisk-perf's own
# intervals must tile the test (contiguous from 0) and add up to its end totals, and its CPU figures be
# measured (host_total > 0).
# Needs root, /dev/net/tun, iperf3, jq and `ip netns`; without one of them it exits 77 saying which.
# Usage: test_perf_json.sh BRISK_LAB ...   (brisk-perf is found next to brisk-lab)
set -u
perf=$(dirname "$1")/brisk-perf
skip=""
[ "$(id -u)" -eq 0 ] || skip="not root"
[ -z "$skip" ] && [ ! -c /dev/net/tun ] && skip="no /dev/net/tun"
[ -z "$skip" ] && ! command -v iperf3 >/dev/null && skip="iperf3 not installed"
[ -z "$skip" ] && ! command -v jq >/dev/null && skip="jq not installed"
ns=bpj$$
tap=bpj$$
[ -z "$skip" ] && ! ip netns add "$ns" 2>/dev/null && skip="cannot create a network namespace"
if [ -n "$skip" ]; then
    echo "SKIP: iperf3 JSON parity: $skip"
    exit 77
fi
tmp=$(mktemp -d)
bg=""
cleanup() {
    [ -n "$bg" ] && kill "$bg" 2>/dev/null
    ip netns del "$ns" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
ip -n "$ns" link set lo up
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
secs=1
ival=0.5

# The reader: `paths` lists "key.path:type" of a document, arrays folded to []; `missing` lists those of
# $ref that $got lacks; `tiles` checks a brisk-perf document's intervals against its end totals.
cat >"$tmp/schema.jq" <<'JQ'
def paths_of: [paths(true) as $p
               | ($p | map(if type == "number" then "[]" else . end) | join(".")) + ":" + (getpath($p) | type)]
              | unique;
def missing($ref; $got): ($ref | paths_of) - ($got | paths_of);
def local_bytes:
  if .end.streams[0].udp then (if .end.sum.sender then .end.sum_sent.bytes else .end.sum_received.bytes end)
  else [.end.streams[] | if .sender.sender then .sender.bytes else .receiver.bytes end] | add end;
def tiles:
  (.intervals | length) as $n
  | if $n == 0 then "no intervals"
    elif .intervals[0].sum.start != 0 then "the first interval starts at \(.intervals[0].sum.start)"
    elif ([range(1; $n) as $i | .intervals[$i].sum.start == .intervals[$i - 1].sum.end] | all | not)
      then "intervals not contiguous"
    elif ([.intervals[].sum.bytes] | add) != local_bytes
      then "interval bytes \([.intervals[].sum.bytes] | add) != end total \(local_bytes)"
    elif ([.intervals[] | (.streams | map(.bytes) | add) == .sum.bytes] | all | not) then "sum != streams"
    elif (.end.cpu_utilization_percent.host_total > 0 | not) then "host cpu not measured"
    else "ok" end;
JQ
# compare NAME REFERENCE BRISK: brisk-perf's document has every key path of iperf3's, same types, and tiles
compare() {
    local name=$1 ref=$2 got=$3 miss tile
    if ! jq -e . "$got" >/dev/null 2>&1; then
        bad "$name: brisk-perf's output is not JSON"
        sed 's/^/#   /' "$got" | head -5
        return
    fi
    miss=$(jq -n -r --slurpfile r "$ref" --slurpfile g "$got" -L "$tmp" \
        'include "schema"; missing($r[0]; $g[0]) | .[]')
    if [ -z "$miss" ]; then
        ok "$name: every key path of iperf3's JSON, same type ($(jq -r 'include "schema"; paths_of | length' -L "$tmp" "$ref") paths)"
    else
        bad "$name: missing or of another type: $(echo $miss)"
    fi
    tile=$(jq -r -L "$tmp" 'include "schema"; tiles' "$got")
    if [ "$tile" = ok ]; then
        ok "$name: $(jq '.intervals | length' "$got") intervals tile the test and add up to the totals; cpu measured"
    else
        bad "$name: $tile"
    fi
}
wait_listen() { # something listens on TCP port $1 in the namespace (up to 10 s)
    for _ in $(seq 200); do
        ip netns exec "$ns" ss -ltn | grep -q ":$1 " && return 0
        sleep 0.05
    done
    return 1
}
wait_pid() { # bounded wait: a process still running after $2 s is killed (and fails)
    timeout "$2" tail --pid="$1" -f /dev/null
    kill "$1" 2>/dev/null
    wait "$1"
}

# ---- the references: iperf3 against iperf3 on the namespace's loopback ----
modes=("" "-R" "-P 2" "-u -b 10M" "-u -b 10M -R" "-u -b 10M -P 2")
for m in "${!modes[@]}"; do
    ip netns exec "$ns" iperf3 -s -1 -J -p 5202 >"$tmp/ref_s$m.json" 2>&1 &
    ks=$!
    wait_listen 5202
    ip netns exec "$ns" iperf3 -c 127.0.0.1 -p 5202 -t $secs -i $ival ${modes[$m]} -J >"$tmp/ref_c$m.json" 2>&1
    wait_pid $ks 10
    for side in c s; do
        if [ "$(jq 'has("start") and has("intervals") and has("end")' "$tmp/ref_$side$m.json" 2>/dev/null)" != true ]; then
            echo "# iperf3 against itself did not give a reference document ($side ${modes[$m]}):"
            sed 's/^/#   /' "$tmp/ref_$side$m.json" | head -5
            exit 1
        fi
    done
done

# Starts brisk-perf (args...) on a new TAP inside the namespace, waits until it has brought the TAP up (it sets
# the MTU and IFF_UP after creating it), then addresses the kernel side: brisk 10.98.0.1, kernel 10.98.0.2.
start_brisk() {
    ip netns exec "$ns" "$perf" "$@" --tap "$tap" --ip 10.98.0.1/24 >"$tmp/brisk.json" 2>"$tmp/brisk.err" &
    bg=$!
    for _ in $(seq 400); do
        ip -n "$ns" link show "$tap" 2>/dev/null | grep -q '[<,]UP[,>]' && break
        kill -0 "$bg" 2>/dev/null || break
        sleep 0.05
    done
    ip -n "$ns" addr add 10.98.0.2/24 dev "$tap" 2>/dev/null
}

# ---- iperf3 -c -> brisk-perf server ----
for m in "${!modes[@]}"; do
    start_brisk server -1 --json -i $ival
    ip netns exec "$ns" iperf3 -c 10.98.0.1 -t $secs -i $ival ${modes[$m]} -J >"$tmp/k.json" 2>&1
    krc=$?
    wait_pid "$bg" 30
    brc=$?
    bg=""
    if [ $krc -ne 0 ] || [ $brc -ne 0 ]; then
        bad "iperf3 -c ${modes[$m]} -> brisk-perf server: exit codes iperf3 $krc, brisk-perf $brc"
        sed 's/^/#   /' "$tmp/brisk.err" | tail -5
        continue
    fi
    compare "brisk-perf server (iperf3 -c${modes[$m]:+ ${modes[$m]}})" "$tmp/ref_s$m.json" "$tmp/brisk.json"
done

# ---- brisk-perf client -> iperf3 -s ----
for m in "${!modes[@]}"; do
    ip netns exec "$ns" iperf3 -s -1 -J >"$tmp/k.json" 2>&1 &
    ks=$!
    wait_listen 5201
    start_brisk client 10.98.0.2 -t $secs -i $ival ${modes[$m]} --json
    wait_pid "$bg" 30
    brc=$?
    bg=""
    wait_pid $ks 10
    krc=$?
    if [ $krc -ne 0 ] || [ $brc -ne 0 ]; then
        bad "brisk-perf client ${modes[$m]} -> iperf3 -s: exit codes brisk-perf $brc, iperf3 $krc"
        sed 's/^/#   /' "$tmp/brisk.err" | tail -5
        continue
    fi
    compare "brisk-perf client${modes[$m]:+ ${modes[$m]}}" "$tmp/ref_c$m.json" "$tmp/brisk.json"
done

# ---- the text format: iperf3's connected lines and interval table on stdout ----
start_brisk server -1 -i $ival
ip netns exec "$ns" iperf3 -c 10.98.0.1 -t $secs -P 2 >/dev/null 2>&1
wait_pid "$bg" 30
bg=""
lines=$(grep -c '^\[SUM\] *[0-9.]*-[0-9.]* *sec .*bits/sec' "$tmp/brisk.json")
if grep -q '^\[ ID\] Interval           Transfer     Bitrate' "$tmp/brisk.json" && [ "$lines" -ge 3 ] &&
    grep -q 'bits/sec .*receiver$' "$tmp/brisk.json" &&
    grep -q '^Accepted connection from 10.98.0.2, port [0-9]*$' "$tmp/brisk.json" &&
    [ "$(grep -c '^\[  [13]\] local 10.98.0.1 port 5201 connected to 10.98.0.2 port [0-9]*$' "$tmp/brisk.json")" = 2 ]; then
    ok "text output: iperf3's connected lines, interval table ($lines [SUM] lines) and summary"
else
    bad "text output is not iperf3's table:"
    sed 's/^/#   /' "$tmp/brisk.json"
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
