#!/usr/bin/env bash
# Tests of the tools as a user runs them: brisk-lab's commands, its JSON, exit codes for bad input,
# capture files (byte-identical for the same seed, readable by tcpdump), and brisk-bench's smoke run.
# Usage: test_lab.sh BRISK_LAB BRISK_BENCH
set -u
lab=$1
bench=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1"; }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }
# json_num FILE KEY: the first number after "KEY": in FILE
json_num() { sed -n "s/.*\"$2\": \([0-9.e+-]*\).*/\1/p" "$1" | head -n 1; }

"$lab" list >"$tmp/list" 2>&1
check "list exits 0 and names ping" "grep -q '^ping ' '$tmp/list'"
"$lab" list --json >"$tmp/list.json"
check "list --json names ping" "grep -q '\"name\": \"ping\"' '$tmp/list.json'"
"$lab" settings >"$tmp/settings"
check "settings lists arp_retries with its default" "grep -q '^arp_retries  *3 ' '$tmp/settings'"

# Loss-free: every RTT is exactly 2 x (serialization + delay). 56 data bytes -> 98-byte frame:
# 98*8/10G = 78.4 ns -> 79 ns (rounded up), + 50 us, twice = 100158 ns.
"$lab" run ping --json --set count=20 >"$tmp/ping.json"
rc=$?
check "run ping --json exits 0" "[ $rc -eq 0 ]"
check "20 sent" "[ '$(json_num "$tmp/ping.json" sent)' = 20 ]"
check "20 received" "[ '$(json_num "$tmp/ping.json" received)' = 20 ]"
check "rtt min = 100158 ns" "[ '$(json_num "$tmp/ping.json" min)' = 100158 ]"
check "rtt max = 100158 ns" "[ '$(json_num "$tmp/ping.json" max)' = 100158 ]"
check "rtt avg = 100158 ns" "[ '$(json_num "$tmp/ping.json" avg)' = 100158 ]"
check "expectation printed" "[ '$(json_num "$tmp/ping.json" expected_lossless)' = 100158 ]"
check "parameters stated" "grep -q '\"count\": 20' '$tmp/ping.json'"

# 1 Gbit/s, 1 ms, 1000 data bytes: frame 1042 B = 8336 ns; RTT = 2 * (8336 + 1000000).
"$lab" run ping --json --set rate=1G --set delay=1ms --set size=1000 --set count=3 >"$tmp/ping1g.json"
check "1G/1ms/1000B rtt = 2016672 ns" "[ '$(json_num "$tmp/ping1g.json" max)' = 2016672 ]"

# Loss: some replies missing, none duplicated, counts consistent.
"$lab" run ping --json --set count=200 --set interval=100us --set loss=10% >"$tmp/loss.json"
recv=$(json_num "$tmp/loss.json" received)
check "10% loss loses some (got $recv of 200)" "[ -n '$recv' ] && [ $recv -lt 200 ] && [ $recv -gt 100 ]"

# Human table.
"$lab" run ping --set count=3 >"$tmp/table" 2>&1
check "table shows received" "grep -q 'echo replies received  *3' '$tmp/table'"
check "table states parameters" "grep -q 'parameters: count=3' '$tmp/table'"

# Stack settings through --set are applied and stated.
"$lab" run ping --set count=1 --set ip_default_ttl=7 >"$tmp/ttl" 2>&1
check "changed setting stated" "grep -q 'settings:   ip_default_ttl=7' '$tmp/ttl'"

# Bad input: clear message, exit 2.
expect_2() {
    "$lab" "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    if [ $rc -eq 2 ] && [ -s "$tmp/err" ]; then ok "exit 2 with a message: $*"; else bad "exit 2 with a message: $* (rc $rc)"; fi
}
expect_2
expect_2 nosuchcommand
expect_2 run
expect_2 run nosuchscenario
expect_2 run ping --set rate=fast
expect_2 run ping --set delay=10
expect_2 run ping --set loss=150%
expect_2 run ping --set no_such_knob=1
expect_2 run ping --set arp_retries=0
expect_2 run ping --set count
expect_2 run ping --bogus
check "bad value message names the parameter" "'$lab' run ping --set rate=fast 2>&1 | grep -q 'rate'"

# Captures: same seed => byte-identical; different seed with loss => different; tcpdump reads them.
"$lab" run ping --set count=5 --set loss=20% --set seed=7 --pcap "$tmp/a.pcap" >/dev/null
"$lab" run ping --set count=5 --set loss=20% --set seed=7 --pcap "$tmp/b.pcap" >/dev/null
"$lab" run ping --set count=5 --set loss=20% --set seed=8 --pcap "$tmp/c.pcap" >/dev/null
check "same seed, identical pcap" "cmp -s '$tmp/a.pcap' '$tmp/b.pcap'"
check "different seed, different pcap" "! cmp -s '$tmp/a.pcap' '$tmp/c.pcap'"
"$lab" run ping --set count=5 --pcap "$tmp/p.pcap" >/dev/null
if command -v tcpdump >/dev/null 2>&1; then
    tcpdump -nn -r "$tmp/p.pcap" >"$tmp/td" 2>/dev/null
    rc=$?
    check "tcpdump reads the capture" "[ $rc -eq 0 ]"
    # ARP request + reply, then 5 requests and 5 replies, all seen at host a's port.
    check "tcpdump sees 12 frames" "[ $(wc -l <"$tmp/td") -eq 12 ]"
    check "tcpdump sees ICMP echo requests" "[ $(grep -c 'ICMP echo request' "$tmp/td") -eq 5 ]"
    check "tcpdump sees the ARP exchange" "grep -q 'ARP, Request who-has 10.0.0.2' '$tmp/td'"
else
    echo "skip - tcpdump not installed: capture readability not checked (scripts/deps.sh installs it)"
fi

# bulk: a TCP transfer through the whole stack, byte-exact and near line rate on a clean link.
"$lab" run bulk --json --set bytes=20M >"$tmp/bulk.json"
rc=$?
check "run bulk exits 0" "[ $rc -eq 0 ]"
check "bulk is byte-exact" "grep -q '\"hash_ok\": true' '$tmp/bulk.json'"
pct=$(json_num "$tmp/bulk.json" goodput_pct)
check "bulk goodput >= 90% of line rate (got $pct)" "awk 'BEGIN { exit !($pct >= 90) }'"
check "bulk states its line rate" "[ '$(json_num "$tmp/bulk.json" line_rate_bps)' = 10000000000 ]"
"$lab" run bulk --json --set bytes=2M --set loss=1% --set dir=3 >"$tmp/bulkloss.json"
check "bulk with 1% loss both ways is byte-exact" "grep -q '\"hash_ok\": true' '$tmp/bulkloss.json'"
check "bulk with loss retransmits" "[ '$(json_num "$tmp/bulkloss.json" retransmits)' -gt 0 ]"
# The xen-netfront mechanism: slow TX completion under the 3.19 TSQ rule with a 128 KB cap, explained.
"$lab" run bulk --json --set bytes=20M --set txc_delay=190us --set tcp_limit_output_bytes=128K \
    --set tcp_tsq_adaptive=0 >"$tmp/xen.json"
xpct=$(json_num "$tmp/xen.json" goodput_pct)
check "190us completions + 128K cap hold the flow well below line rate (got $xpct%)" \
    "awk 'BEGIN { exit !($xpct < 50) }'"
check "and the report says TSQ held it" "[ \$(sed -n 's/.*\"tsq\": \([0-9]*\).*/\1/p' '$tmp/xen.json' | head -n 1) -gt 0 ]"
"$lab" profiles >"$tmp/profiles"
check "profiles lists linux-3.19 and brisk" "grep -q '^linux-3.19 ' '$tmp/profiles' && grep -q '^brisk ' '$tmp/profiles'"
"$lab" run bulk --json --profile linux-3.19 --set bytes=20M --set txc_delay=190us >"$tmp/p319.json"
ppct=$(json_num "$tmp/p319.json" goodput_pct)
check "--profile linux-3.19 with 190us completions caps the flow (got $ppct%)" "awk 'BEGIN { exit !($ppct < 50) }'"
check "the JSON names the profile" "grep -q '\"profile\": \"linux-3.19\"' '$tmp/p319.json'"
expect_2 run bulk --profile nope
expect_2 run bulk --profile
expect_2 run bulk --set dir=4
expect_2 run bulk --set tx_ring=0
expect_2 run bulk --set rtt=fast

# xen-tsq: the seed 001 table — 3.19 near 128 KB per completion latency, brisk near line rate.
"$lab" run xen-tsq --json --set bytes=20M >"$tmp/xen-tsq.json" 2>/dev/null
rc=$?
check "run xen-tsq exits 0" "[ $rc -eq 0 ]"
model=$(json_num "$tmp/xen-tsq.json" model_3_19_bps)
g319=$(json_num "$tmp/xen-tsq.json" goodput_bps)
gbrisk=$(sed -n 's/.*"goodput_pct": \([0-9.e+-]*\).*/\1/p' "$tmp/xen-tsq.json" | tail -n 1)
check "linux-3.19 within 15% of 128 KB per latency ($g319 vs $model)" \
    "awk 'BEGIN { exit !($g319 > 0.85 * $model && $g319 < 1.15 * $model) }'"
check "brisk >= 90% of line rate with no tuning ($gbrisk%)" "awk 'BEGIN { exit !($gbrisk >= 90) }'"
check "every xen-tsq row byte-exact" "[ \$(grep -c '\"hash_ok\": true' '$tmp/xen-tsq.json') -eq 4 ]"

# mvneta: the seed 003 sweep — collapse at 32 KB under 3.12 rules, recovered by 128 KB, brisk near line rate.
"$lab" run mvneta --json >"$tmp/mvneta.json" 2>/dev/null
rc=$?
check "run mvneta exits 0" "[ $rc -eq 0 ]"
pcts=$(sed -n 's/.*"goodput_pct": \([0-9.e+-]*\).*/\1/p' "$tmp/mvneta.json" | tr '\n' ' ')
set -- $pcts
check "32 KB collapses (< 10% of line rate: $1)" "awk 'BEGIN { exit !($1 < 10) }'"
check "128 KB recovers (> 80%: $3)" "awk 'BEGIN { exit !($3 > 80) }'"
check "brisk default >= 90% ($6)" "awk 'BEGIN { exit !($6 >= 90) }'"

# seeds writes the files make lab promises.
"$lab" seeds --out "$tmp/lab" >"$tmp/seeds.out" 2>"$tmp/seeds.err"
rc=$?
check "seeds exits 0" "[ $rc -eq 0 ]"
check "seeds writes results.json" "[ -s '$tmp/lab/ping/results.json' ]"
check "seeds writes results.txt" "grep -q 'echo replies received' '$tmp/lab/ping/results.txt'"
check "seeds writes capture.pcap" "[ -s '$tmp/lab/ping/capture.pcap' ]"
check "seeds reports progress on stderr" "grep -q 'ping' '$tmp/seeds.err'"
check "seeds writes the bulk results" "grep -q '\"hash_ok\": true' '$tmp/lab/bulk/results.json'"
check "seeds runs xen-tsq" "[ -s '$tmp/lab/xen-tsq/results.json' ]"
check "seeds runs mvneta" "[ -s '$tmp/lab/mvneta/results.json' ]"
if command -v gnuplot >/dev/null 2>&1; then
    check "seeds draws the mvneta limit sweep (PNG)" "head -c 8 '$tmp/lab/mvneta/limit_sweep.png' | grep -q PNG"
fi
if command -v gnuplot >/dev/null 2>&1; then
    check "seeds draws the throughput plot (PNG)" "head -c 8 '$tmp/lab/bulk/throughput.png' | grep -q PNG"
    check "seeds draws the RTT plot (PNG)" "head -c 8 '$tmp/lab/ping/rtt.png' | grep -q PNG"
    check "plot data is kept beside the PNG" "[ -s '$tmp/lab/bulk/throughput.dat' ]"
else
    echo "skip - gnuplot not installed: plots not checked (scripts/deps.sh installs it)"
fi

# brisk-bench smoke run.
"$bench" sim --quick --json >"$tmp/bench.json" 2>/dev/null
rc=$?
check "brisk-bench sim --quick exits 0" "[ $rc -eq 0 ]"
check "brisk-bench reports events per second" "grep -q 'events_per_wall_s' '$tmp/bench.json'"
"$bench" bulk --quick --json >"$tmp/bbulk.json" 2>/dev/null
rc=$?
check "brisk-bench bulk --quick completes byte-exact (exit 0)" "[ $rc -eq 0 ]"
check "brisk-bench bulk reports Gbit/s per CPU-second" "grep -q 'gbps_per_cpu_s' '$tmp/bbulk.json'"
"$bench" nosuch >/dev/null 2>&1
check "brisk-bench rejects an unknown benchmark with 2" "[ $? -eq 2 ]"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
