#!/usr/bin/env bash
# brisk-impair (tools/impair/), the NFQUEUE path impairment of bench/impair-compare.sh.
# Always (no privileges): bad command lines exit 2 with a message naming the problem; --help exits 0. The
# model and the held-packet heap have their own cmocka tests (unit/test_impair_model, unit/test_impair_hold).
# As root with NFQUEUE and iptables, in a namespace pair of this test's own (a veth k1 / k2):
#   --loss 0.5 --seed 1 on the echo requests: 200 pings, ping's loss count equals brisk-impair's dropped count
#   and is plausible (100 +- 30); the same seed again drops the same number;
#   --delay 20ms on the requests: ping's user-to-user RTT rises by 18-40 ms;
#   --reorder 0.5 --reorder-delay 30ms: about half the replies come late, the rest at once;
#   --duplicate 0.5: ping sees DUP! replies, as many as brisk-impair says it copied (the last may be missed);
#   --rate 1M: one 1028-byte request outstanding at a time waits ~8.2 ms for its tokens;
#   --duration bounds a run: brisk-impair exits by itself and reports.
# Exits 77 (ctest: skipped) with the reason when brisk-impair is not built (libnetfilter-queue-dev), not
# root, or no namespaces / iptables / NFQUEUE / ping.
# Usage: test_impair.sh BRISK_LAB ...   (brisk-impair is found next to brisk-lab)
set -u
dir=$(dirname "$1")
imp=$dir/brisk-impair
here=$(cd "$(dirname "$0")" && pwd)
netns=$here/../../scripts/netns.sh

skip() {
    echo "SKIP: $1"
    exit 77
}
[ -x "$imp" ] || skip "brisk-impair not built (libnetfilter-queue-dev not installed: scripts/deps.sh)"

tmp=$(mktemp -d)
NS=brisk-imp-$$
cleanup() {
    for p in $(cat "$tmp/pids" 2>/dev/null); do kill "$p" 2>/dev/null; done
    [ -f "$tmp/ns" ] && bash "$netns" down "$NS"
    rm -rf "$tmp"
}
trap cleanup EXIT; [ -n "${IMPAIR_TEST_KEEP:-}" ] && trap "echo kept $tmp" EXIT
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
kv() { # kv FILE KEY: KEY's value on brisk-impair's stats line
    awk -v k="$2" '/^brisk-impair:/ { for (i = 1; i <= NF; i++) { split($i, a, "="); if (a[1] == k) v = a[2] } }
        END { print v }' "$1"
}

# ---- command line (no privileges) ----
usage_err() { # name, expected word in the message, args...
    local name=$1 word=$2
    shift 2
    timeout 10 "$imp" "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    check "$name exits 2 naming $word" "[ $rc -eq 2 ] && grep -q -- '$word' '$tmp/err'"
}
usage_err "no arguments" "usage"
usage_err "missing --queue" "--queue" --loss 0.1
usage_err "bad queue" "--queue" --queue 70000
usage_err "bad loss" "--loss" --queue 1 --loss 1.5
usage_err "loss not a number" "--loss" --queue 1 --loss lots
usage_err "gilbert with three values" "--gilbert" --queue 1 --gilbert 0.1,0.2,0
usage_err "gilbert out of range" "--gilbert" --queue 1 --gilbert 0.1,0.2,0,2
usage_err "burst without a loss" "--burst" --queue 1 --burst 10
usage_err "burst of zero" "--burst" --queue 1 --loss 0.1 --burst 0
usage_err "delay without a unit" "--delay" --queue 1 --delay 20
usage_err "reorder without a delay" "--reorder-delay" --queue 1 --reorder 0.05
usage_err "bad duplicate" "--duplicate" --queue 1 --duplicate -1
usage_err "zero rate" "--rate" --queue 1 --rate 0
usage_err "bad max-held" "--max-held" --queue 1 --max-held 0
usage_err "zero duration" "--duration" --queue 1 --duration 0
usage_err "unknown option" "--frobnicate" --queue 1 --frobnicate 3
usage_err "missing value" "--seed" --queue 1 --seed
usage_err "stray argument" "stray" --queue 1 stray
timeout 10 "$imp" --help >"$tmp/out" 2>&1
check "--help exits 0 with the usage" "[ $? -eq 0 ] && grep -q 'usage: brisk-impair' '$tmp/out'"

finish() {
    echo "$pass passed, $fail failed"
    [ "$fail" -eq 0 ]
    exit $?
}

# ---- a real path (root, NFQUEUE) ----
why=""
if [ "$(id -u)" -ne 0 ]; then
    why="not root (network namespaces, iptables)"
elif ! command -v iptables >/dev/null 2>&1; then
    why="iptables not installed (scripts/deps.sh)"
elif ! command -v ping >/dev/null 2>&1; then
    why="ping not installed (iputils-ping, scripts/deps.sh)"
elif ! bash "$netns" up "$NS" >/dev/null 2>&1; then
    why="cannot create a network namespace"
else
    touch "$tmp/ns"
    if ! bash "$netns" veth "$NS" 10.91.0.1/24 10.91.0.2/24 >/dev/null 2>&1; then
        why="cannot create a veth pair"
    elif ! ip netns exec "$NS" iptables -A OUTPUT -o k1 -p icmp --icmp-type echo-request -m mark ! --mark 0x1b15 \
        -j NFQUEUE --queue-num 7 --queue-bypass 2>"$tmp/ipt"; then
        why="iptables cannot add an NFQUEUE rule: $(head -n 1 "$tmp/ipt")"
    fi
fi
if [ -n "$why" ]; then
    echo "$pass passed, $fail failed (the real-path checks skipped: $why)"
    [ "$fail" -eq 0 ] || exit 1
    skip "$why"
fi

# run_ping NAME PING_ARGS -- IMPAIR_ARGS: brisk-impair on queue 7 for the pings, stats into $tmp/NAME.imp
run_ping() {
    local name=$1
    shift
    local pargs=()
    while [ "$1" != -- ]; do
        pargs+=("$1")
        shift
    done
    shift
    timeout -k 5 60 ip netns exec "$NS" "$imp" --queue 7 --duration 30s "$@" >"$tmp/$name.imp" 2>"$tmp/$name.err" &
    local p=$!
    echo $p >>"$tmp/pids"
    # Until brisk-impair has bound queue 7 the rule's --queue-bypass lets packets through unimpaired: wait
    # (bounded) for the queue to appear in the namespace's nfnetlink_queue table (a loaded machine, an ASan
    # build, can take longer than a fixed sleep).
    for _ in $(seq 1 100); do
        ip netns exec "$NS" awk '$1 == 7 { f = 1 } END { exit !f }' /proc/net/netfilter/nfnetlink_queue \
            2>/dev/null && break
        sleep 0.05
    done
    timeout 60 ip netns exec "$NS" ping -U -n "${pargs[@]}" 10.91.0.2 >"$tmp/$name.ping" 2>&1
    # SIGINT to brisk-impair itself (timeout's child), not through timeout: timeout follows a forwarded
    # signal with SIGCONT, which hangs LeakSanitizer's exit check in the sanitizer build.
    kill -INT $(pgrep -P $p) 2>/dev/null
    wait $p 2>/dev/null
}
recv_count() { sed -n 's/.* \([0-9]*\) received.*/\1/p' "$1"; }
avg_rtt() { sed -n 's/^rtt .* = [0-9.]*\/\([0-9.]*\)\/.*/\1/p' "$1"; }

run_ping base -c 50 -i 0.01 -q --
base_rtt=$(avg_rtt "$tmp/base.ping")
check "an unimpaired queue passes every ping ($(recv_count "$tmp/base.ping") of 50)" \
    "[ '$(recv_count "$tmp/base.ping")' = 50 ] && [ '$(kv "$tmp/base.imp" seen)' = 50 ]"

run_ping loss -c 200 -i 0.005 -q -W 1 -- --loss 0.5 --seed 1
got=$(recv_count "$tmp/loss.ping")
lost=$((200 - ${got:-0}))
dropped=$(kv "$tmp/loss.imp" dropped_loss)
check "--loss 0.5: ping lost $lost of 200, plausible" "[ $lost -ge 70 ] && [ $lost -le 130 ]"
check "--loss 0.5: brisk-impair's count ($dropped of $(kv "$tmp/loss.imp" seen) seen) matches ping's" \
    "[ '$dropped' = $lost ] && [ '$(kv "$tmp/loss.imp" seen)' = 200 ]"
run_ping loss2 -c 200 -i 0.005 -q -W 1 -- --loss 0.5 --seed 1
check "--loss 0.5 --seed 1 again: the same $dropped drops" "[ '$(kv "$tmp/loss2.imp" dropped_loss)' = '$dropped' ]"

run_ping delay -c 30 -i 0.05 -q -- --delay 20ms
d_rtt=$(avg_rtt "$tmp/delay.ping")
check "--delay 20ms: ping's RTT $base_rtt ms -> $d_rtt ms" \
    "awk -v a='$base_rtt' -v b='$d_rtt' 'BEGIN { d = b - a; exit !(a != \"\" && b != \"\" && d >= 18 && d <= 40) }'"
check "--delay 20ms: every packet delayed ($(kv "$tmp/delay.imp" delayed) of 30)" \
    "[ '$(kv "$tmp/delay.imp" delayed)' = 30 ] && [ '$(recv_count "$tmp/delay.ping")' = 30 ]"

run_ping reorder -c 100 -i 0.005 -- --reorder 0.5 --reorder-delay 30ms --seed 2
late=$(awk -F'time=' '/time=/ { split($2, a, " "); if (a[1] + 0 >= 25) n++ } END { print n + 0 }' "$tmp/reorder.ping")
rd=$(kv "$tmp/reorder.imp" reordered)
check "--reorder 0.5 --reorder-delay 30ms: $late of 100 replies late, brisk-impair held back $rd" \
    "[ '$late' = '$rd' ] && [ $late -ge 30 ] && [ $late -le 70 ]"

run_ping dup -c 100 -i 0.005 -- --duplicate 0.5 --seed 3
dups=$(grep -c 'DUP!' "$tmp/dup.ping")
copied=$(kv "$tmp/dup.imp" duplicated)
# ping stops at its 100th distinct reply, so the last request's second reply may come after it has gone
check "--duplicate 0.5: ping saw $dups duplicate replies, brisk-impair copied $copied" \
    "[ $dups -ge 30 ] && [ $dups -le ${copied:-0} ] && [ $dups -ge $((${copied:-0} - 1)) ] && [ '$(kv "$tmp/dup.imp" duplicate_failed)' = 0 ]"

# 100 1000-byte echo requests (1028-byte packets) at a 0.2 ms interval into a 1 Mbit/s bucket of 2 KB: ping
# keeps one request outstanding at such intervals, so after the bucket's first two each request waits for its
# tokens, 1028 * 8 bits / 1 Mbit/s = 8.2 ms, and none overflows the queue.
run_ping rate -c 100 -i 0.0002 -s 1000 -q -W 1 -w 10 -- --rate 1M --rate-burst 2K --rate-queue 4K
r_rtt=$(avg_rtt "$tmp/rate.ping")
check "--rate 1M: ping's RTT $r_rtt ms (~8.2 ms of tokens per request), $(kv "$tmp/rate.imp" rate_queued) queued" \
    "awk -v a='$r_rtt' 'BEGIN { exit !(a != \"\" && a >= 7 && a <= 10.5) }' &&
     [ '$(kv "$tmp/rate.imp" rate_queued)' -ge 90 ] && [ '$(kv "$tmp/rate.imp" dropped_rate)' = 0 ] &&
     [ '$(recv_count "$tmp/rate.ping")' = 100 ]"

start=$(date +%s%N)
timeout 20 ip netns exec "$NS" "$imp" --queue 7 --duration 500ms --json >"$tmp/dur.json" 2>"$tmp/dur.err"
rc=$?
el=$((($(date +%s%N) - start) / 1000000))
check "--duration 500ms: exits by itself (rc $rc, ${el} ms) with JSON stats" \
    "[ $rc -eq 0 ] && [ $el -lt 3000 ] && grep -q '\"seen\": 0' '$tmp/dur.json'"

finish
