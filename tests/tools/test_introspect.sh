#!/usr/bin/env bash
# brisk-ss and brisk-nstat against a live brisk-perf (docs/introspection.md). Always: bad command lines exit
# 2 with a message, a missing control socket exits 1 with one. As root with /dev/net/tun, iperf3, jq and
# `ip netns` (otherwise: the reason, exit 77): brisk-perf server --ctl on a TAP whose kernel side is in a
# namespace of this test's own, iperf3 -c against it for 3 s, and DURING the run
#   brisk-ss -i     an ESTAB line from the iperf3 client's address, its info line with cwnd and bytes_received
#   brisk-ss --json the same socket (jq): ESTABLISHED, raddr the client, cwnd > 0, > 1 MB received
#   brisk-ss -l     the listener on 5201
#   brisk-nstat     TcpInSegs grows between two calls (-a), the delta of a call is > 0 and below the total
# and the socket file is 0600 while the server runs and gone after it exits.
# Usage: test_introspect.sh BRISK_LAB ...   (brisk-perf, brisk-ss and brisk-nstat are found next to brisk-lab)
set -u
dir=$(dirname "$1")
perf=$dir/brisk-perf
bss=$dir/brisk-ss
bnstat=$dir/brisk-nstat
tmp=$(mktemp -d)
ns=bintro$$
tap=bit$$
cleanup() {
    [ -n "${bg:-}" ] && kill "$bg" 2>/dev/null
    [ -n "${ip3:-}" ] && kill "$ip3" 2>/dev/null
    ip netns del "$ns" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
export BRISK_NSTAT_HISTORY=$tmp/nstat.hist
unset BRISK_CTL

# ---- command lines ----
exits() { # name, code, pattern, command...: exit status and a message matching pattern on stderr
    local name=$1 code=$2 pat=$3
    shift 3
    "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    check "$name: exit $code with a message" "[ $rc -eq $code ] && grep -q -- '$pat' '$tmp/err'"
}
exits "brisk-ss unknown option" 2 "unknown option" "$bss" -x
exits "brisk-ss --ctl without a path" 2 "needs a path" "$bss" --ctl
exits "brisk-ss -l -a" 2 "exclude" "$bss" -l -a --ctl "$tmp/none"
exits "brisk-ss without a socket" 2 "BRISK_CTL" "$bss"
exits "brisk-ss, no process" 1 "no control socket at $tmp/none" "$bss" --ctl "$tmp/none"
exits "brisk-nstat unknown option" 2 "unknown option" "$bnstat" --frob
exits "brisk-nstat -s -n" 2 "nothing" "$bnstat" -s -n --ctl "$tmp/none"
exits "brisk-nstat, no process" 1 "no control socket" "$bnstat" --ctl "$tmp/none"
exits "brisk-perf --ctl ''" 2 "bad control socket path" "$perf" server --tap x --ip 10.0.0.1/24 --ctl ""
: >"$tmp/plain"
BRISK_CTL=$tmp/plain "$bss" >"$tmp/out" 2>"$tmp/err"
check "brisk-ss on a file that is not a socket: exit 1, says so" "[ $? -eq 1 ] && grep -q 'is not a socket' '$tmp/err'"

# ---- live, during an iperf3 run ----
skip=""
[ "$(id -u)" -eq 0 ] || skip="not root"
[ -z "$skip" ] && [ ! -c /dev/net/tun ] && skip="no /dev/net/tun"
[ -z "$skip" ] && ! command -v iperf3 >/dev/null && skip="iperf3 not installed"
[ -z "$skip" ] && ! command -v jq >/dev/null && skip="jq not installed"
[ -z "$skip" ] && ! ip netns add "$ns" 2>/dev/null && skip="cannot create a network namespace"
if [ -n "$skip" ]; then
    echo "SKIP: brisk-ss / brisk-nstat against a live brisk-perf: $skip"
    echo "$pass passed, $fail failed"
    [ $fail -eq 0 ] || exit 1
    exit 77
fi
ip -n "$ns" link set lo up
ctl=$tmp/perf.ctl

ip netns exec "$ns" "$perf" server -1 -i 0 --ctl "$ctl" --tap "$tap" --ip 10.99.0.1/24 >"$tmp/perf.out" \
    2>"$tmp/perf.err" &
bg=$!
up=""
for _ in $(seq 400); do
    ip -n "$ns" link show "$tap" 2>/dev/null | grep -q '[<,]UP[,>]' && [ -S "$ctl" ] && { up=1; break; }
    kill -0 "$bg" 2>/dev/null || break
    sleep 0.05
done
if [ -z "$up" ]; then
    bad "brisk-perf brought $tap up and made $ctl within 20 s"
    sed 's/^/#   /' "$tmp/perf.err"
    echo "$pass passed, $fail failed"
    exit 1
fi
ip -n "$ns" addr add 10.99.0.2/24 dev "$tap"
check "the control socket is mode 600" "[ \"\$(stat -c %a '$ctl')\" = 600 ]"
"$bss" -l --ctl "$ctl" >"$tmp/listen.txt" 2>"$tmp/err"
check "brisk-ss -l: the listener on 5201" "grep -Eq '^LISTEN +0 +0 +0\\.0\\.0\\.0:5201|^LISTEN +0 +0 +10\\.99\\.0\\.1:5201' '$tmp/listen.txt'"

timeout 30 ip netns exec "$ns" iperf3 -c 10.99.0.1 -t 3 >"$tmp/iperf3.out" 2>&1 &
ip3=$!
sleep 1.2
"$bss" -i --ctl "$ctl" >"$tmp/ss.txt" 2>"$tmp/err"
check "brisk-ss -i during the run: exit 0" "[ $? -eq 0 ]"
"$bnstat" -a -s --json --ctl "$ctl" >"$tmp/n1.json" 2>>"$tmp/err"
"$bnstat" --ctl "$ctl" >"$tmp/n0.txt" 2>>"$tmp/err" # writes the history
"$bss" --json --ctl "$ctl" >"$tmp/ss.json" 2>>"$tmp/err"
check "brisk-ss --json during the run: exit 0" "[ $? -eq 0 ]"
sleep 0.4
"$bnstat" --json --ctl "$ctl" >"$tmp/nd.json" 2>>"$tmp/err"
"$bnstat" -a -s --json --ctl "$ctl" >"$tmp/n2.json" 2>>"$tmp/err"
BRISK_CTL=$ctl "$bnstat" -a -s TcpInSegs 'Tap*' >"$tmp/pat.txt" 2>>"$tmp/err"
# Hostile history files: garbage is ignored with a message; a symbolic link is not followed.
printf '#brisk-nstat 1 2 3\nTcpInSegs 12 extra\n\001\377\n' >"$tmp/bad.hist"
BRISK_NSTAT_HISTORY=$tmp/bad.hist "$bnstat" --ctl "$ctl" >"$tmp/badh.txt" 2>"$tmp/badh.err"
badrc=$?
echo precious >"$tmp/target"
ln -s "$tmp/target" "$tmp/link.hist"
BRISK_NSTAT_HISTORY=$tmp/link.hist "$bnstat" -n --ctl "$ctl" 2>"$tmp/link.err"
linkrc=$?
wait "$ip3"
krc=$?
ip3=""
timeout 20 tail --pid="$bg" -f /dev/null
wait "$bg"
brc=$?
bg=""
check "iperf3 and brisk-perf exit 0 (iperf3 $krc, brisk-perf $brc)" "[ $krc -eq 0 ] && [ $brc -eq 0 ]"
check "the control socket is removed at exit" "[ ! -e '$ctl' ]"
echo "# brisk-ss -i:"
sed 's/^/#   /' "$tmp/ss.txt"

# An ESTAB line from the client (10.99.0.2), then its info line: cwnd and bytes_received non-zero.
est=$(awk '/^ESTAB/ && $5 ~ /^10\.99\.0\.2:/ {getline info; if (info ~ /bytes_received:[1-9][0-9][0-9][0-9][0-9][0-9][0-9]/) {print $0; print info; exit}}' "$tmp/ss.txt")
check "brisk-ss -i: ESTAB 10.99.0.1:5201 <- 10.99.0.2 with > 1 MB received" "[ -n \"\$est\" ] && echo \"\$est\" | head -1 | grep -q ' 10\\.99\\.0\\.1:5201 '"
check "brisk-ss -i: the info line has cwnd, rtt, rto, mss, pacing_rate and hold" \
    "echo \"\$est\" | tail -1 | grep -Eq 'cwnd:[1-9]' && echo \"\$est\" | tail -1 | grep -q 'rtt:[0-9.]*/[0-9.]* ' && echo \"\$est\" | tail -1 | grep -Eq 'rto:[1-9].* mss:[1-9].*pacing_rate [0-9].* hold:'"
check "brisk-ss --json: an ESTABLISHED socket from 10.99.0.2 with cwnd > 0 and > 1 MB received (jq)" \
    "jq -e '[.sockets[] | select(.state == \"ESTABLISHED\" and .raddr == \"10.99.0.2\" and .lport == 5201 and .cwnd > 0 and .mss > 0 and .rto_ns > 0 and .bytes_received > 1000000 and (.holds | has(\"cwnd\")))] | length >= 1' '$tmp/ss.json' >/dev/null"
check "brisk-ss --json: no listener by default" "jq -e '[.sockets[] | select(.state == \"LISTEN\")] | length == 0' '$tmp/ss.json' >/dev/null"
a1=$(jq -r '.brisk.TcpInSegs // 0' "$tmp/n1.json" 2>/dev/null)
a2=$(jq -r '.brisk.TcpInSegs // 0' "$tmp/n2.json" 2>/dev/null)
d=$(jq -r '.brisk.TcpInSegs // 0' "$tmp/nd.json" 2>/dev/null)
echo "# TcpInSegs: $a1 then $a2 (absolute), $d in the 0.4 s between two deltas"
check "brisk-nstat -a: TcpInSegs grows between two calls ($a1 -> $a2)" "[ \"${a1:-0}\" -gt 0 ] && [ \"${a2:-0}\" -gt \"${a1:-0}\" ]"
check "brisk-nstat: the delta since the last call is > 0 and below the total ($d < $a2)" \
    "[ \"${d:-0}\" -gt 0 ] && [ \"${d:-0}\" -lt \"${a2:-0}\" ]"
check "brisk-nstat: the first call printed TcpInSegs and the TAP's counters" \
    "grep -Eq '^TcpInSegs +[1-9]' '$tmp/n0.txt' && grep -Eq '^TapRxFrames +[1-9]' '$tmp/n0.txt'"
check "brisk-nstat PATTERN: only the counters asked for" \
    "grep -q '^TcpInSegs' '$tmp/pat.txt' && grep -q '^TapRxFrames' '$tmp/pat.txt' && ! grep -q '^IpInReceives' '$tmp/pat.txt'"
check "brisk-nstat: a malformed history is ignored with a message (exit $badrc)" \
    "[ $badrc -eq 0 ] && grep -q 'ignoring history.*malformed' '$tmp/badh.err' && grep -Eq '^TcpInSegs +[1-9][0-9]{2}' '$tmp/badh.txt'"
check "brisk-nstat: a history that is a symbolic link is replaced, its target untouched (exit $linkrc)" \
    "[ $linkrc -eq 0 ] && [ \"\$(cat '$tmp/target')\" = precious ] && [ -f '$tmp/link.hist' ] && [ ! -L '$tmp/link.hist' ]"
check "no tool wrote to stderr" "[ ! -s '$tmp/err' ]"
[ -s "$tmp/err" ] && sed 's/^/#   /' "$tmp/err"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
