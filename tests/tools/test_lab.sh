#!/usr/bin/env bash
# Tests of the tools as a user runs them: brisk-lab's commands, its JSON, exit codes for bad input,
# capture files (byte-identical for the same seed, readable by tcpdump), and brisk-bench's smoke run.
# Usage: test_lab.sh BRISK_LAB BRISK_BENCH
set -u
lab=$1
bench=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
# json_num FILE KEY: the first number after "KEY": in FILE
json_num() { sed -n "s/.*\"$2\": \([0-9.e+-]*\).*/\1/p" "$1" | head -n 1; }
# json_row FILE ROW KEY: the value of KEY inside the table row object "ROW": { ... } (first such row)
json_row() {
    awk -v row="\"$2\": {" -v key="\"$3\": " 'index($0, row) { f = 1 } f && index($0, key) {
        sub(/.*": /, ""); sub(/,$/, ""); print; exit }' "$1"
}
# is AWK-EXPRESSION: true if the expression holds (numbers compared in awk)
is() { awk "BEGIN { exit !($1) }"; }

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

# xen-tsq: the seed 001 table — a TSO NIC: 3.19 holds two 64 KB super-frames per completion latency at both
# of the report's latencies (190 us domU->dom0, 375 us domU->domU), each row on its model; brisk near line rate.
"$lab" run xen-tsq --json --set bytes=20M >"$tmp/xen-tsq.json" 2>/dev/null
rc=$?
check "run xen-tsq exits 0" "[ $rc -eq 0 ]"
model=$(json_num "$tmp/xen-tsq.json" model_3_19_bps)
mdomu=$(json_num "$tmp/xen-tsq.json" model_3_19_domu_bps)
g319=$(json_row "$tmp/xen-tsq.json" linux_3_19 goodput_bps)
gdomu=$(json_row "$tmp/xen-tsq.json" linux_3_19_domu goodput_bps)
gbrisk=$(json_row "$tmp/xen-tsq.json" brisk goodput_pct)
gpatched=$(json_row "$tmp/xen-tsq.json" patched goodput_pct)
gpdomu=$(json_row "$tmp/xen-tsq.json" patched_domu goodput_pct)
check "linux-3.19 dom0 within 15% of two super-frames per latency ($g319 vs $model)" \
    "is '$g319 > 0.85 * $model && $g319 < 1.15 * $model'"
check "linux-3.19 domU within 15% of its model ($gdomu vs $mdomu), and slower than dom0" \
    "is '$gdomu > 0.85 * $mdomu && $gdomu < 1.15 * $mdomu && $gdomu < 0.7 * $g319'"
check "the super-frame model: 2 x 45 segments of 1448 B per (190 us + 45 frames' serialization)" \
    "is '$model > 4.25e9 && $model < 4.35e9'"
check "brisk >= 90% of line rate with no tuning ($gbrisk%)" "is '$gbrisk >= 90'"
check "3.19 patched (max rule) near line rate at both latencies ($gpatched%, $gpdomu%)" "is '$gpatched >= 90 && $gpdomu >= 90'"
check "every xen-tsq row byte-exact" "[ \$(grep -c '\"hash_ok\": true' '$tmp/xen-tsq.json') -eq 6 ]"
check "the 3.19 row is held by TSQ, for most of its time" \
    "is '$(json_row "$tmp/xen-tsq.json" linux_3_19 held_tsq_ns) > 0.5 * $(json_row "$tmp/xen-tsq.json" linux_3_19 transfer_ns)'"
check "xen-tsq judges its shape PASS" "grep -q '\"pass\": true' '$tmp/xen-tsq.json'"
# MTU frames (gso=0): the cap streams as 1514-byte frames, and the 3.19 rows still sit on their model.
"$lab" run xen-tsq --json --set bytes=10M --set gso=0 >"$tmp/xenmtu.json" 2>/dev/null
mm=$(json_num "$tmp/xenmtu.json" model_3_19_bps)
gm=$(json_row "$tmp/xenmtu.json" linux_3_19 goodput_bps)
check "gso=0: linux-3.19 within 15% of its MTU-frame model ($gm vs $mm)" \
    "is '$gm > 0.85 * $mm && $gm < 1.15 * $mm && $mm < $model'"
# A --set of a knob the profile sets wins over the profile: a 4 MB cap lifts the 3.19 row.
"$lab" run xen-tsq --json --set bytes=10M --set tcp_limit_output_bytes=4M >"$tmp/xen4m.json" 2>/dev/null
check "--set tcp_limit_output_bytes=4M lifts linux-3.19 (>= 90%)" \
    "is '$(json_row "$tmp/xen4m.json" linux_3_19 goodput_pct) >= 90'"

# mvneta: the seed 003 sweep — collapse at 32 KB under 3.12 rules, recovered by 128 KB, brisk near line rate.
"$lab" run mvneta --json >"$tmp/mvneta.json" 2>/dev/null
rc=$?
check "run mvneta exits 0" "[ $rc -eq 0 ]"
p32=$(json_row "$tmp/mvneta.json" linux_3_12_cap_32K goodput_pct)
p128=$(json_row "$tmp/mvneta.json" linux_3_12_cap_128K goodput_pct)
check "32 KB collapses (< 10% of line rate: $p32)" "is '$p32 < 10'"
check "128 KB recovers (> 80%: $p128)" "is '$p128 > 80'"
check "brisk default >= 90% ($(json_row "$tmp/mvneta.json" brisk_default goodput_pct))" \
    "is '$(json_row "$tmp/mvneta.json" brisk_default goodput_pct) >= 90'"
for cap in 64K 128K 256K 512K; do
    v=$(json_row "$tmp/mvneta.json" brisk_cap_$cap goodput_pct)
    check "brisk at a $cap cap (holds a completion batch) >= 90% ($v)" "is '$v >= 90'"
done
check "every mvneta row byte-exact" "[ \$(grep -c '\"hash_ok\": true' '$tmp/mvneta.json') -eq 11 ]"
# The collapse is the coalescing timer's: with 4-frame batches 32 KB is enough again.
"$lab" run mvneta --json --set frames=4 >"$tmp/mv4.json" 2>/dev/null
check "with 4-frame batches the 32 KB cap no longer collapses" \
    "is '$(json_row "$tmp/mv4.json" linux_3_12_cap_32K goodput_pct) > 80'"
expect_2 run mvneta --set frames=0

# iscsi: the seed 000 table — rc2 auto-corking resumed with Nagle on pays a delayed ACK per I/O.
"$lab" run iscsi --json >"$tmp/iscsi.json" 2>/dev/null
rc=$?
check "run iscsi exits 0" "[ $rc -eq 0 ]"
rc2=$(json_row "$tmp/iscsi.json" rc2_autocork io_mean_ns)
rc2p50=$(json_row "$tmp/iscsi.json" rc2_autocork io_p50_ns)
off=$(json_row "$tmp/iscsi.json" rc2_autocork_off io_mean_ns)
fixed=$(json_row "$tmp/iscsi.json" linux_3_14 io_mean_ns)
brisk=$(json_row "$tmp/iscsi.json" brisk io_mean_ns)
delack=$(json_num "$tmp/iscsi.json" delack)
check "iscsi states its parameters (delack $delack ns, ios)" "[ '$delack' = 111000000 ] && grep -q '\"ios\": 200' '$tmp/iscsi.json'"
check "every iscsi row completed" "[ \$(grep -c '\"ok\": true' '$tmp/iscsi.json') -eq 6 ]"
check "rc2 autocork >= 30x slower than autocork off ($rc2 vs $off ns)" "is '$rc2 >= 30 * $off'"
check "rc2 per-I/O median ~ the initiator's delayed ACK ($rc2p50 vs $delack)" \
    "is '$rc2p50 >= $delack && $rc2p50 <= 1.1 * $delack'"
check "linux-3.14 within 5% of autocork off ($fixed vs $off)" "is '$fixed <= 1.05 * $off && $fixed >= 0.95 * $off'"
check "brisk within 5% of autocork off ($brisk vs $off)" "is '$brisk <= 1.05 * $off && $brisk >= 0.95 * $off'"
check "autocork off costs about one RTT per I/O ($off ns)" "is '$off >= 100000 && $off < 200000'"
s2=$(json_row "$tmp/iscsi.json" brisk data_segs_per_io)
s1=$(json_row "$tmp/iscsi.json" brisk_msg_more data_segs_per_io)
s1rc2=$(json_row "$tmp/iscsi.json" rc2_msg_more data_segs_per_io)
check "2 data segments per I/O without MSG_MORE ($s2)" "is '$s2 == 2'"
check "MSG_MORE on the header: 1 data segment per I/O ($s1)" "is '$s1 == 1'"
check "MSG_MORE also spares the buggy kernel ($s1rc2 segs, $(json_row "$tmp/iscsi.json" rc2_msg_more io_mean_ns) ns)" \
    "is '$s1rc2 == 1 && $(json_row "$tmp/iscsi.json" rc2_msg_more io_mean_ns) <= 1.05 * $off'"
check "the rc2 row is held by Nagle, ~ one delayed ACK per I/O" \
    "is '$(json_row "$tmp/iscsi.json" rc2_autocork held_nagle_ns) >= 0.9 * $delack'"
check "the rc2 row counts auto-corking (TCPAutoCorking > 0)" "is '$(json_row "$tmp/iscsi.json" rc2_autocork TCPAutoCorking) > 0'"
check "brisk's row is never held by Nagle" "is '$(json_row "$tmp/iscsi.json" brisk held_nagle_ns) == 0'"
check "autocork off never auto-corks" "is '$(json_row "$tmp/iscsi.json" rc2_autocork_off TCPAutoCorking) == 0'"
check "iscsi judges its shape PASS" "grep -q '\"pass\": true' '$tmp/iscsi.json'"
# Not a hard-coded figure: the stall follows the initiator's timer, and the knob that caused it.
"$lab" run iscsi --json --set ios=50 --set delack=40ms >"$tmp/iscsi40.json" 2>/dev/null
p40=$(json_row "$tmp/iscsi40.json" rc2_autocork io_p50_ns)
check "delack=40ms: rc2 median follows it ($p40)" "is '$p40 >= 40000000 && $p40 <= 44000000'"
"$lab" run iscsi --json --set ios=50 --set tcp_resume_nagle=0 >"$tmp/iscsinr.json" 2>/dev/null
check "tcp_resume_nagle=0 removes the stall from the rc2 row" \
    "is '$(json_row "$tmp/iscsinr.json" rc2_autocork io_mean_ns) <= 1.05 * $(json_row "$tmp/iscsinr.json" rc2_autocork_off io_mean_ns)'"
"$lab" run iscsi --set ios=20 >"$tmp/iscsi.txt" 2>/dev/null
check "iscsi table names its rows and the hold reasons" \
    "grep -q 'linux-3.14-rc2 autocork on' '$tmp/iscsi.txt' && grep -q 'nagle/IO' '$tmp/iscsi.txt'"
check "iscsi table states the parameters" "grep -q 'parameters: ios=20 .*delack=111ms' '$tmp/iscsi.txt'"
expect_2 run iscsi --set ios=0
expect_2 run iscsi --set delack=0
expect_2 run iscsi --set data=1M

# run --out: one scenario's files, as seeds writes them.
"$lab" run ping --set count=5 --out "$tmp/ping" >/dev/null 2>&1
check "run --out writes results.json and capture.pcap" "[ -s '$tmp/ping/results.json' ] && [ -s '$tmp/ping/capture.pcap' ]"
"$lab" run bulk --set bytes=5M --out "$tmp/bulk" >/dev/null 2>&1
check "bulk --out keeps the plot data" "[ -s '$tmp/bulk/throughput.dat' ]"
expect_2 run ping --json --out "$tmp/ping2"

# seeds: every seed scenario, its files, the SUMMARY — and the same seed gives the same bytes.
"$lab" seeds --out "$tmp/lab" >"$tmp/seeds.out" 2>"$tmp/seeds.err"
rc=$?
check "seeds exits 0 (every shape as expected)" "[ $rc -eq 0 ]"
check "seeds reports progress on stderr" "grep -q '\\[1/[0-9]\\] iscsi' '$tmp/seeds.err' && grep -q 'mvneta' '$tmp/seeds.err'"
check "seeds runs the seed files of scenarios/ (none compiled in)" \
    "grep -q 'iscsi.* from .*scenarios/iscsi.yaml' '$tmp/seeds.err' && grep -q 'rr-timers.* from .*scenarios/rr-timers.yaml' '$tmp/seeds.err' && ! grep -q 'compiled in' '$tmp/seeds.err'"
check "seeds runs only the seed scenarios" "[ ! -e '$tmp/lab/ping' ] && [ ! -e '$tmp/lab/bulk' ]"
for sc in iscsi xen-tsq mvneta rr-timers; do
    d=$tmp/lab/$sc
    check "seeds $sc: results.json, .txt, .csv and capture.pcap" \
        "[ -s '$d/results.json' ] && [ -s '$d/results.txt' ] && [ -s '$d/results.csv' ] && [ -s '$d/capture.pcap' ]"
    check "seeds $sc: CSV header starts scenario,row,label" "head -n 1 '$d/results.csv' | grep -q '^scenario,row,label,'"
    ncols=$(head -n 1 "$d/results.csv" | awk -F, '{ print NF }')
    check "seeds $sc: every CSV line has $ncols fields" \
        "[ \$(awk -F, -v n=$ncols 'NF != n' '$d/results.csv' | wc -l) -eq 0 ]"
    check "seeds $sc: a SUMMARY line with PASS" "grep -q '^$sc  *PASS ' '$tmp/seeds.out'"
    if command -v tcpdump >/dev/null 2>&1; then
        check "seeds $sc: tcpdump reads the capture" "tcpdump -nn -r '$d/capture.pcap' >/dev/null 2>&1"
    fi
done
check "iscsi CSV: 6 rows with per-I/O columns" \
    "[ \$(wc -l <'$tmp/lab/iscsi/results.csv') -eq 7 ] && head -n 1 '$tmp/lab/iscsi/results.csv' | grep -q 'io_mean_ns,io_p50_ns,io_p99_ns,iops,vs_autocork_off,data_segs_per_io,TCPAutoCorking'"
check "iscsi CSV: the hold-reason columns" "head -n 1 '$tmp/lab/iscsi/results.csv' | grep -q 'held_nagle_ns,holds_nagle'"
check "xen-tsq CSV: goodput columns" "head -n 1 '$tmp/lab/xen-tsq/results.csv' | grep -q 'goodput_bps,goodput_pct'"
check "mvneta CSV: 11 rows with the cap" \
    "[ \$(wc -l <'$tmp/lab/mvneta/results.csv') -eq 12 ] && head -n 1 '$tmp/lab/mvneta/results.csv' | grep -q ',cap,'"
check "CSV and JSON agree (iscsi rc2 mean)" \
    "[ \$(awk -F, '\$2 == \"rc2_autocork\" { print \$6 }' '$tmp/lab/iscsi/results.csv') = $(json_row "$tmp/lab/iscsi/results.json" rc2_autocork io_mean_ns) ]"
check "rr-timers CSV: eager and brisk rows with wheel ops per transaction" \
    "grep -q '^rr-timers,eager,' '$tmp/lab/rr-timers/results.csv' && grep -q '^rr-timers,brisk,' '$tmp/lab/rr-timers/results.csv' && head -n 1 '$tmp/lab/rr-timers/results.csv' | grep -q 'ops_client,ops_server'"
rr_e=$(json_row "$tmp/lab/rr-timers/results.json" eager ops_client)
rr_b=$(json_row "$tmp/lab/rr-timers/results.json" brisk ops_client)
check "rr-timers JSON: eager >= 3, brisk <= 1 wheel ops per transaction (client; $rr_e, $rr_b)" \
    "is '$rr_e >= 3 && $rr_b <= 1'"
"$lab" run rr-timers --set flows=16 --set transactions=10 --set loss=0 --set tcp_timer_eager=1 --json >"$tmp/rr.json" 2>/dev/null
rr_b=$(json_row "$tmp/rr.json" brisk ops_client)
check "rr-timers: --set tcp_timer_eager=1 makes the brisk row eager too ($rr_b: figures come from the run)" \
    "is '$rr_b >= 3'"
if command -v tcpdump >/dev/null 2>&1; then
    tcpdump -nn -r "$tmp/lab/iscsi/capture.pcap" 2>/dev/null | head -n 40 >"$tmp/iscsi.td"
    check "iscsi capture shows the 48-byte header and the 512-byte payload apart" \
        "grep -q 'length 48' '$tmp/iscsi.td' && grep -q 'length 512' '$tmp/iscsi.td'"
fi
png() { [ "$(head -c 4 "$1" | tail -c 3)" = PNG ] && [ "$(wc -c <"$1")" -gt 2000 ]; }
if command -v gnuplot >/dev/null 2>&1; then
    for f in iscsi/throughput iscsi/latency_cdf iscsi/delivered xen-tsq/throughput mvneta/throughput \
        mvneta/limit_sweep; do
        check "seeds draws $f.png (non-empty PNG) beside its data" "png '$tmp/lab/$f.png' && [ -s '$tmp/lab/$f.dat' ]"
    done
    check "the latency CDF has one series per iscsi row" "[ \$(grep -c '^# ' '$tmp/lab/iscsi/latency_cdf.dat') -eq 6 ]"
    check "run bulk --out draws the throughput plot" "png '$tmp/bulk/throughput.png'"
    check "run ping --out draws the RTT plot" "png '$tmp/ping/rtt.png'"
else
    echo "skip - gnuplot not installed: plots not checked (scripts/deps.sh installs it)"
fi
"$lab" seeds --out "$tmp/lab2" >"$tmp/seeds2.out" 2>/dev/null
for sc in iscsi xen-tsq mvneta rr-timers; do
    check "determinism: $sc capture.pcap byte-identical across runs" "cmp -s '$tmp/lab/$sc/capture.pcap' '$tmp/lab2/$sc/capture.pcap'"
    check "determinism: $sc results.json and .csv identical" \
        "cmp -s '$tmp/lab/$sc/results.json' '$tmp/lab2/$sc/results.json' && cmp -s '$tmp/lab/$sc/results.csv' '$tmp/lab2/$sc/results.csv'"
done
check "determinism: the same tables on stdout" "cmp -s '$tmp/seeds.out' '$tmp/seeds2.out'"
"$lab" run iscsi --set ios=20 --set seed=2 --pcap "$tmp/s2.pcap" >/dev/null 2>&1
"$lab" run iscsi --set ios=20 --set seed=2 --pcap "$tmp/s2b.pcap" >/dev/null 2>&1
check "determinism: run iscsi --pcap twice, identical" "cmp -s '$tmp/s2.pcap' '$tmp/s2b.pcap'"

# soak: randomized impairments x settings; every seed byte-exact or a clean error, no stall, no leak.
"$lab" soak --seeds 300 --first 1 >"$tmp/soak.out" 2>/dev/null
rc=$?
check "soak: 300 seeds, none failed (exit 0)" "[ $rc -eq 0 ] && grep -q ' 0 failed' '$tmp/soak.out'"
"$lab" soak --seeds 20 --first 5000 --json >"$tmp/soak.json" 2>/dev/null
check "soak --json: counts and an empty failure list" "grep -q '\"failed\": 0' '$tmp/soak.json' && grep -q '\"failures\": \[\]' '$tmp/soak.json'"
"$lab" soak --seeds 0 >/dev/null 2>&1
check "soak rejects --seeds 0 with 2" "[ $? -eq 2 ]"

# ---- results you can trust: a failed run says so, exits 1, and prints only measured figures ----
# A 1 kbit/s link with 100 MB asked for: the transfer cannot finish in 600 s. Goodput is what was delivered
# (it cannot exceed the line rate), the report says it is incomplete, and the run exits 1 naming why.
"$lab" run bulk --json --set rate=1k --set limit=60s >"$tmp/slow.json" 2>"$tmp/slow.err"
rc=$?
gp=$(json_num "$tmp/slow.json" goodput_bps)
check "bulk rate=1k: exit 1 (rc $rc)" "[ $rc -eq 1 ]"
check "bulk rate=1k: goodput from delivered bytes, below the line rate ($gp bit/s)" "[ -n '$gp' ] && is '$gp <= 1000'"
check "bulk rate=1k: incomplete, and says how far it got" \
    "grep -q '\"complete\": false' '$tmp/slow.json' && [ \$(json_num '$tmp/slow.json' delivered_bytes) -lt \$(json_num '$tmp/slow.json' expected_bytes) ]"
check "bulk rate=1k: stderr names the failed check" "grep -q 'FAILED: the transfer did not complete' '$tmp/slow.err'"
# 1 GB in 100 ms on 10 Gbit/s: unfinished; goodput is the rate of what arrived (at most the line rate).
"$lab" run bulk --json --set bytes=1G --set limit=100ms >"$tmp/cut.json" 2>/dev/null
rc=$?
gp=$(json_num "$tmp/cut.json" goodput_bps)
check "bulk bytes=1G limit=100ms: exit 1, goodput <= 10 Gbit/s ($gp)" "[ $rc -eq 1 ] && is '$gp <= 10e9 && $gp > 1e9'"
check "bulk bytes=1G limit=100ms: ended at the limit" "grep -q '\"finished\": false' '$tmp/cut.json'"
# 10 KB at 1 kbit/s: every byte arrives, but the sender is reset at the end (its ARP replies wait behind
# 11.6 s frames, the receiver's neighbour entry fails, its ACKs are dropped, it finishes and forgets the
# connection, and the sender's next retransmission meets a RST). Complete and correct are separate
# verdicts; errors print by name; an RTT never sampled prints as no sample (JSON null), not 0 ns.
"$lab" run bulk --set rate=1k --set bytes=10K >"$tmp/reset.txt" 2>"$tmp/reset.err"
rc=$?
"$lab" run bulk --json --set rate=1k --set bytes=10K >"$tmp/reset.json" 2>/dev/null
check "bulk 10K at 1k: exit 1 (rc $rc)" "[ $rc -eq 1 ]"
check "bulk 10K at 1k: correct but not complete" \
    "grep -q 'transfer complete  *no' '$tmp/reset.txt' && grep -q 'every byte received correct  *yes' '$tmp/reset.txt'"
check "bulk 10K at 1k: the error by name" \
    "grep -q 'socket error  *BRISK_ERR_RESET (connection reset by peer)' '$tmp/reset.txt' && grep -q '\"error_name\": \"BRISK_ERR_RESET' '$tmp/reset.json'"
check "bulk 10K at 1k: no RTT sample is not 0 ns" \
    "grep -q 'smoothed RTT  *no sample' '$tmp/reset.txt' && grep -q '\"srtt_ns\": null' '$tmp/reset.json'"
check "bulk 10K at 1k: no contradictory verdicts" "! grep -q 'finished within the limit' '$tmp/reset.txt'"
"$lab" run bulk --set loss=99% --set limit=120s >/dev/null 2>"$tmp/lossy.err"
check "bulk loss=99%: never connects, exit 1 with the reason" "[ $? -eq 1 ] && grep -q 'FAILED' '$tmp/lossy.err'"
"$lab" run bulk --set bytes=1M >/dev/null 2>&1
check "bulk 1 MB: complete, exit 0" "[ $? -eq 0 ]"
# An expected shape that does not hold is a failure (exit 1), named on stderr.
"$lab" run mvneta --set frames=4 >/dev/null 2>"$tmp/shape.err"
check "mvneta frames=4: shape fails, exit 1, named" "[ $? -eq 1 ] && grep -q 'FAILED: the expected shape does not hold' '$tmp/shape.err'"
"$lab" run mvneta --set bytes=1M >/dev/null 2>&1
check "mvneta with its shape holding: exit 0" "[ $? -eq 0 ]"
# ping: a failed ARP is reported as such, with 100 % loss, exit 1.
"$lab" run ping --json --set loss=99% >"$tmp/noarp.json" 2>"$tmp/noarp.err"
rc=$?
check "ping with failed ARP: exit 1, ARP named" "[ $rc -eq 1 ] && grep -q 'ARP resolution of 10.0.0.2 failed' '$tmp/noarp.err'"
check "ping with failed ARP: 100 % loss, resolution time null" \
    "[ \$(json_num '$tmp/noarp.json' loss_pct) = 100 ] && grep -q '\"arp_resolve_ns\": null' '$tmp/noarp.json'"
# Help for every command and scenario; unknown options and out-of-range values are named.
for c in "list --help" "settings --help" "profiles --help" "run --help" "run bulk --help" "seeds --help" "soak --help"; do
    "$lab" $c >"$tmp/help" 2>&1
    check "brisk-lab $c: exit 0 with a usage" "[ $? -eq 0 ] && grep -qi 'usage\|parameters' '$tmp/help'"
done
check "run bulk --help lists the parameters with ranges" "'$lab' run bulk --help | grep -q 'dir  *1  *1 = a sends.*\[1..3\]'"
"$lab" run bulk --frob >/dev/null 2>"$tmp/err"
check "unknown option: exit 2, says unknown option" "[ $? -eq 2 ] && grep -q \"unknown option '--frob'\" '$tmp/err'"
"$lab" run bulk --pcap >/dev/null 2>"$tmp/err"
check "option without value: exit 2, says so" "[ $? -eq 2 ] && grep -q \"option '--pcap' needs a value\" '$tmp/err'"
"$lab" run bulk --set dir=4 >/dev/null 2>"$tmp/err"
check "bulk dir=4: exit 2, names the parameter and its range" "[ $? -eq 2 ] && grep -q 'dir=4 is out of range: expected 1 to 3' '$tmp/err'"
"$lab" run bulk --set write=0 >/dev/null 2>"$tmp/err"
check "bulk write=0: exit 2, names write" "[ $? -eq 2 ] && grep -q 'write=0 is out of range' '$tmp/err'"
# seeds takes --set, --profile, --json and --pcap-frames.
"$lab" seeds --json --set bytes=2M --pcap-frames 50 --out "$tmp/sj" >"$tmp/seeds.json" 2>/dev/null
rc=$?
check "seeds --json: four verdicts" "[ \$(grep -c '\"verdict\"' '$tmp/seeds.json') -eq 4 ]"
check "seeds --set bytes=2M reaches the scenarios that have it" "grep -q 'bytes=2M' '$tmp/sj/xen-tsq/results.txt'"
check "seeds --pcap-frames 50: 50 frames captured" "[ \$(tcpdump -r '$tmp/sj/xen-tsq/capture.pcap' 2>/dev/null | wc -l) -eq 50 ] || ! command -v tcpdump >/dev/null"
"$lab" seeds --set nosuch=1 >/dev/null 2>"$tmp/err"
check "seeds --set of nothing known: exit 2, named" "[ $? -eq 2 ] && grep -q \"'nosuch=1' names neither\" '$tmp/err'"
"$lab" seeds --set frames=4 --out "$tmp/sf" >/dev/null 2>"$tmp/err"
check "seeds with a shape broken by --set: exit 1, the scenario named" "[ $? -eq 1 ] && grep -q 'brisk-lab mvneta: FAILED' '$tmp/err'"
# SIGINT: the run stops, reports what it has (marked partial) and exits 128 + 2. The signal is sent once
# the run is under way (its progress line on stderr), so the check does not depend on the machine's speed.
"$lab" run bulk --set bytes=100G >"$tmp/int.txt" 2>"$tmp/int.err" &
lp=$!
for _ in $(seq 300); do grep -q 'of virtual time' "$tmp/int.err" 2>/dev/null && break; sleep 0.1; done
kill -INT $lp 2>/dev/null
wait $lp
rc=$?
check "SIGINT: exit 130 (rc $rc)" "[ $rc -eq 130 ]"
check "SIGINT: partial results printed and marked" \
    "grep -q 'interrupted (figures are partial)  *yes' '$tmp/int.txt' && grep -q 'bytes delivered' '$tmp/int.txt'"
check "SIGINT: progress on stderr, then the interruption said" \
    "grep -q 'bytes delivered' '$tmp/int.err' && grep -q 'interrupted by signal 2' '$tmp/int.err'"

# ---- scenario files (YAML): the shipped ones run and pass; every error names file, line and key ----
here=$(cd "$(dirname "$0")/../.." && pwd)
for f in ack-loss coalesce-sweep recovery; do
    "$lab" check "$here/scenarios/$f.yaml" >"$tmp/chk" 2>&1
    check "check scenarios/$f.yaml: valid" "[ $? -eq 0 ] && grep -q 'scenario $f' '$tmp/chk'"
    "$lab" run "$here/scenarios/$f.yaml" --json >"$tmp/$f.json" 2>/dev/null
    check "run scenarios/$f.yaml: exit 0, its shape PASS" "[ $? -eq 0 ] && grep -q '\"pass\": true' '$tmp/$f.json'"
done
check "ack-loss: the reverse direction lost ACKs in the lossy row, none in no-ack-loss" \
    "[ \$(json_row '$tmp/ack-loss.json' brisk lost_frames) -gt 0 ] && [ \$(json_row '$tmp/ack-loss.json' no-ack-loss lost_frames) -eq 0 ]"
check "coalesce-sweep: 3.12 collapses once a batch outgrows its budget, brisk does not" \
    "is '$(json_row "$tmp/coalesce-sweep.json" 3.12-batch-128 goodput_pct) < 20 && $(json_row "$tmp/coalesce-sweep.json" brisk-batch-128 goodput_pct) > 80'"
check "scenario JSON: per-flow figures per row" "grep -q '\"flows\": {' '$tmp/ack-loss.json' && grep -q '\"kind\": \"bulk\"' '$tmp/ack-loss.json'"
cat >"$tmp/two.yaml" <<'Y'
name: two-flows
limit: 10s
link: {rate: 100M, delay: 1ms}
flows:
  - bulk: {bytes: 2M}
  - bulk: {bytes: 1M, start: 5ms, dir: down}
  - rr: {connections: 2, transactions: 50}
expect:
  - {figure: complete, min: 1}
  - {figure: transactions, min: 100, max: 100}
  - {figure: delivered_bytes, flow: 2, min: 1M, max: 1M}
  - {figure: rr_p50_ns, max: 50ms}
Y
"$lab" run "$tmp/two.yaml" --json --pcap "$tmp/two1.pcap" >"$tmp/two.json" 2>/dev/null
check "a file with bulk both ways and rr: exit 0, PASS" "[ $? -eq 0 ] && grep -q '\"pass\": true' '$tmp/two.json'"
"$lab" run "$tmp/two.yaml" --pcap "$tmp/two2.pcap" >/dev/null 2>&1
check "scenario file: same file, byte-identical capture" "cmp -s '$tmp/two1.pcap' '$tmp/two2.pcap'"
"$lab" run "$tmp/two.yaml" --set tcp_sack=0 >"$tmp/two.txt" 2>/dev/null
check "scenario file: --set applies to every row and is stated" "[ $? -eq 0 ] && grep -q 'settings:   tcp_sack=off' '$tmp/two.txt'"
# A bound that does not hold: exit 1, the file's line and the figure named.
sed 's/transactions, min: 100, max: 100/transactions, min: 101/' "$tmp/two.yaml" >"$tmp/fail.yaml"
"$lab" run "$tmp/fail.yaml" >/dev/null 2>"$tmp/err"
check "scenario file: a failed bound exits 1 naming file:line" \
    "[ $? -eq 1 ] && grep -q 'fail.yaml:10: expected every row: transactions >= 101; row brisk has transactions = 100' '$tmp/err'"
# Malformed files: exit 2 and file:line: what is wrong.
bad_file() { # name, expected message (grep), file text
    printf '%s\n' "$3" >"$tmp/bad.yaml"
    "$lab" check "$tmp/bad.yaml" >/dev/null 2>"$tmp/err"
    local rc=$?
    check "scenario file error: $1 (exit 2, message)" "[ $rc -eq 2 ] && grep -q \"$2\" '$tmp/err'"
}
bad_file "not YAML" "bad.yaml:2:.*not YAML" $'name: x\n  - : [\nflows: }'
bad_file "unknown top-level key" "bad.yaml:2: unknown key 'lnk' (expected one of: name, summary" $'name: x\nlnk: {rate: 1G}\nflows: [{bulk: {}}]'
bad_file "unknown nested key" "bad.yaml:2: unknown key 'link.forward.rat'" $'name: x\nlink: {forward: {rat: 1G}}\nflows: [{bulk: {}}]'
bad_file "bad rate" "bad.yaml:2: link.rate: 'fast' is not a rate like 1G" $'name: x\nlink: {rate: fast}\nflows: [{bulk: {}}]'
bad_file "bad probability" "bad.yaml:2: link.loss: '2' is not a probability" $'name: x\nlink: {loss: 2}\nflows: [{bulk: {}}]'
bad_file "bad completion model" "bad.yaml:2: nic.completion: 'later' is not a completion model" $'name: x\nnic: {completion: later}\nflows: [{bulk: {}}]'
bad_file "unknown flow kind" "bad.yaml:3: flows\\[1\\]: unknown flow kind 'udp'" $'name: x\nflows:\n  - udp: {}'
bad_file "bad direction" "bad.yaml:2: flows\\[1\\].bulk.dir: 'sideways' is not a direction" $'name: x\nflows: [{bulk: {dir: sideways}}]'
bad_file "no flows" "a scenario needs at least one flow" $'name: x'
bad_file "no name" "name: a scenario needs a name" $'flows: [{bulk: {}}]'
bad_file "unknown profile" "rows\\[1\\].profile: no profile is called 'linux-1.0'" $'name: x\nflows: [{bulk: {}}]\nrows: [{name: r, profile: linux-1.0}]'
bad_file "unknown setting" "rows\\[1\\].set.tcp_nope: no stack setting is called 'tcp_nope'" $'name: x\nflows: [{bulk: {}}]\nrows: [{name: r, set: {tcp_nope: 1}}]'
bad_file "bad setting value" "rows\\[1\\].set.tcp_sack: 'maybe' is not a valid value" $'name: x\nflows: [{bulk: {}}]\nrows: [{name: r, set: {tcp_sack: maybe}}]'
bad_file "two rows of one name" "a second row called 'r'" $'name: x\nflows: [{bulk: {}}]\nrows: [{name: r}, {name: r}]'
bad_file "unknown figure" "figure 'speed' is not one of" $'name: x\nflows: [{bulk: {}}]\nexpect: [{figure: speed, min: 1}]'
bad_file "bound without min or max" "a bound needs min, max or both" $'name: x\nflows: [{bulk: {}}]\nexpect: [{figure: rtos}]'
bad_file "bound on a missing row" "expect\\[1\\]: no row is called 'fast'" $'name: x\nflows: [{bulk: {}}]\nexpect: [{row: fast, figure: rtos, max: 0}]'
bad_file "bound on a missing flow" "flow 3: the file has 1 flow" $'name: x\nflows: [{bulk: {}}]\nexpect: [{flow: 3, figure: complete, min: 1}]'
bad_file "a list where a value goes" "bad.yaml:2: link.rate: expected a single value" $'name: x\nlink: {rate: [1G]}\nflows: [{bulk: {}}]'
# On/off flows (tools/lab/onoff.c, scenarios/onoff.yaml): bursts after idle, figures per burst.
"$lab" check "$here/scenarios/onoff.yaml" >"$tmp/chk" 2>&1
check "check scenarios/onoff.yaml: valid" "[ $? -eq 0 ] && grep -q 'scenario onoff: 1 flow(s), 4 row(s)' '$tmp/chk'"
"$lab" run "$here/scenarios/onoff.yaml" --json >"$tmp/onoff.json" 2>/dev/null
check "run scenarios/onoff.yaml: exit 0, its shape PASS" "[ $? -eq 0 ] && grep -q '\"pass\": true' '$tmp/onoff.json'"
check "onoff: restart after idle makes the bursts slow, keeping cwnd fast, Linux's halving between" \
    "is '$(json_row "$tmp/onoff.json" rfc5681 burst_p50_ns) > 2 * $(json_row "$tmp/onoff.json" keep burst_p50_ns) && $(json_row "$tmp/onoff.json" linux burst_p50_ns) > $(json_row "$tmp/onoff.json" keep burst_p50_ns)'"
check "onoff: restarted bursts start from IW10, kept ones from a grown cwnd" \
    "[ $(json_row "$tmp/onoff.json" rfc5681 burst_cwnd_bytes) -eq 14480 ] && [ $(json_row "$tmp/onoff.json" keep burst_cwnd_bytes) -gt 100000 ]"
check "onoff: 50 ms of idle (below the RTO) restarts nothing" \
    "is '$(json_row "$tmp/onoff.json" short_idle burst_p50_ns) == $(json_row "$tmp/onoff.json" keep burst_p50_ns) && $(json_row "$tmp/onoff.json" keep burst_p50_ns) > 0'"
cat >"$tmp/onoff.yaml" <<'Y'
name: my-onoff
limit: 30s
link: {rate: 100M, delay: 10ms, queue_packets: 400}
flows:
  - onoff: {burst: 128K, off: 300ms, cycles: 4, start: 1s}
expect:
  - {figure: complete, min: 1}
  - {figure: bursts, min: 4, max: 4}
  - {figure: delivered_bytes, min: 512K, max: 512K}
  - {figure: elapsed_ns, min: 1s}
Y
"$lab" run "$tmp/onoff.yaml" --json --pcap "$tmp/oo1.pcap" >"$tmp/oo1.json" 2>/dev/null
check "onoff file: 4 bursts of 128K from 1s, exit 0, PASS" "[ $? -eq 0 ] && grep -q '\"pass\": true' '$tmp/oo1.json'"
check "onoff file: the default table has the burst columns" "[ -n \"$(json_row "$tmp/oo1.json" brisk burst_p50_ns)\" ] && grep -q '\"kind\": \"onoff\"' '$tmp/oo1.json'"
"$lab" run "$tmp/onoff.yaml" --json --pcap "$tmp/oo2.pcap" --set tcp_slow_start_after_idle=0 >"$tmp/oo2.json" 2>/dev/null
check "onoff file: a setting moves the burst time (slow start after idle off: faster)" \
    "is '$(json_row "$tmp/oo2.json" brisk burst_p50_ns) < $(json_row "$tmp/oo1.json" brisk burst_p50_ns)'"
"$lab" run "$tmp/onoff.yaml" --pcap "$tmp/oo3.pcap" >/dev/null 2>&1
check "onoff file: same file, byte-identical capture" "cmp -s '$tmp/oo1.pcap' '$tmp/oo3.pcap' && ! cmp -s '$tmp/oo1.pcap' '$tmp/oo2.pcap'"
sed 's/burst: 128K, off: 300ms/on: 20ms, off: 300ms/' "$tmp/onoff.yaml" | sed '/delivered_bytes/d' >"$tmp/onoff-on.yaml"
"$lab" run "$tmp/onoff-on.yaml" --json >"$tmp/oo-on.json" 2>/dev/null
check "onoff file: bursts bounded by time alone complete" \
    "[ $? -eq 0 ] && grep -q '\"pass\": true' '$tmp/oo-on.json' && [ $(json_row "$tmp/oo-on.json" brisk delivered_bytes) -gt 0 ]"
sed 's/bursts, min: 4, max: 4/bursts, min: 5/' "$tmp/onoff.yaml" >"$tmp/onoff-fail.yaml"
"$lab" run "$tmp/onoff-fail.yaml" >/dev/null 2>"$tmp/err"
check "onoff file: a failed bound on bursts exits 1 naming file:line" \
    "[ $? -eq 1 ] && grep -q 'onoff-fail.yaml:8: expected every row: bursts >= 5; row brisk has bursts = 4' '$tmp/err'"
bad_file "an unknown onoff key" "bad.yaml:2: unknown key 'flows\\[1\\].onoff.brust' (expected one of: from, to, burst, on, off, cycles" \
    $'name: x\nflows: [{onoff: {brust: 64K}}]'
bad_file "an onoff flow without a bound" "bad.yaml:2: flows\\[1\\].onoff: an ON period needs a bound" $'name: x\nflows: [{onoff: {off: 1s}}]'
bad_file "an onoff burst of 0" "bad.yaml:3: flows\\[1\\].onoff.burst: a burst is 1 byte to 4G" $'name: x\nflows:\n  - onoff: {burst: 0}'
bad_file "an onoff on: 0" "bad.yaml:2: flows\\[1\\].onoff.on: expected a time above 0" $'name: x\nflows: [{onoff: {on: 0}}]'
bad_file "an onoff bad off" "bad.yaml:2: flows\\[1\\].onoff.off: 'soon' is not a time" $'name: x\nflows: [{onoff: {burst: 1K, off: soon}}]'
bad_file "an onoff cycles: 0" "bad.yaml:2: flows\\[1\\].onoff.cycles: .*out of range" $'name: x\nflows: [{onoff: {burst: 1K, cycles: 0}}]'
bad_file "a row changing an onoff flow's unknown key" "bad.yaml:3: unknown key 'rows\\[1\\].flows\\[1\\].onoff.of'" \
    $'name: x\nflows: [{onoff: {burst: 1K}}]\nrows: [{name: r, flows: [{onoff: {of: 1s}}]}]'
bad_file "a row changing an onoff flow as bulk" "bad.yaml:3: rows\\[1\\].flows\\[1\\]: flow 1 is an onoff flow" \
    $'name: x\nflows: [{onoff: {burst: 1K}}]\nrows: [{name: r, flows: [{bulk: {bytes: 1K}}]}]'
"$lab" check "$tmp/does-not-exist.yaml" >/dev/null 2>"$tmp/err"
check "scenario file missing: exit 2, named" "[ $? -eq 2 ] && grep -q 'cannot read scenario file' '$tmp/err'"

# Topologies and routers (scenarios/dumbbell.yaml, docs/lab.md "Topologies and routers"): four flows through
# one bottleneck router, drop-tail against fq_codel. The figures come from the mechanism: the FIFO stands
# full (500 packets = 60.56 ms at 100 Mbit/s), CoDel keeps the sojourn near 5 ms, DRR shares the link.
src_dir=$(cd "$(dirname "$0")/../.." && pwd)
"$lab" run "$src_dir/scenarios/dumbbell.yaml" --json >"$tmp/dumbbell.json" 2>"$tmp/dumbbell.err"
rc=$?
check "dumbbell: exit 0, its shape PASSes" "[ $rc -eq 0 ] && grep -q '\"pass\": true' '$tmp/dumbbell.json'"
check "dumbbell: drop-tail fills its 500 packets and waits > 20 ms on average" \
    "is '$(json_row "$tmp/dumbbell.json" droptail queue_max_packets) == 500 && $(json_row "$tmp/dumbbell.json" droptail queue_avg_ns) > 20e6'"
check "dumbbell: drop-tail's longest wait is the full buffer, 500 x 1514 B at 100 Mbit/s" \
    "is '$(json_row "$tmp/dumbbell.json" droptail queue_max_ns) >= 60.5e6 && $(json_row "$tmp/dumbbell.json" droptail queue_max_ns) <= 60.7e6'"
check "dumbbell: fq_codel's average sojourn < 10 ms, with CoDel drops, fairness >= 0.9" \
    "is '$(json_row "$tmp/dumbbell.json" fq_codel queue_avg_ns) < 10e6 && $(json_row "$tmp/dumbbell.json" fq_codel codel_drops) > 0 && $(json_row "$tmp/dumbbell.json" fq_codel fairness) >= 0.9'"
check "dumbbell: drop-tail is less fair than fq_codel" \
    "is '$(json_row "$tmp/dumbbell.json" droptail fairness) < $(json_row "$tmp/dumbbell.json" fq_codel fairness)'"
check "dumbbell: per-flow window goodput in the JSON, and the bottleneck named" \
    "[ \$(grep -c '\"window_bps\"' '$tmp/dumbbell.json') -eq 16 ] && grep -q '\"fq_codel\": \"r1 -> r2\"' '$tmp/dumbbell.json'"
"$lab" run "$src_dir/scenarios/dumbbell.yaml" --json >"$tmp/dumbbell2.json" 2>/dev/null
check "dumbbell: the same seed gives the same figures" "cmp -s '$tmp/dumbbell.json' '$tmp/dumbbell2.json'"
"$lab" check "$src_dir/scenarios/dumbbell.yaml" >/dev/null 2>&1
check "dumbbell: check validates it (exit 0)" "[ $? -eq 0 ]"
"$lab" run "$src_dir/scenarios/parking-lot.yaml" --json >"$tmp/parking.json" 2>/dev/null
check "parking lot: exit 0, PASS (the long flow near its share under fq_codel, starved under drop-tail)" \
    "[ $? -eq 0 ] && grep -q '\"pass\": true' '$tmp/parking.json'"
# A small topology run in full: two hosts through two routers, a row changing the named bottleneck link.
cat >"$tmp/chain.yaml" <<'Y'
name: chain
limit: 20s
hosts: [a, b]
routers: [{name: r1}, {name: r2, qdisc: fq_codel}]
links:
  - {between: [a, r1]}
  - {name: mid, between: [r1, r2], rate: 20M, delay: 2ms}
  - {between: [r2, b]}
flows:
  - bulk: {from: a, to: b, bytes: 1M}
  - rr: {from: b, to: a, transactions: 20}
rows:
  - {name: fast}
  - {name: slow, links: {mid: {rate: 5M}}}
  - {name: tiny, links: {mid: {queue: {queue_packets: 8}}}}   # r1's queue towards r2 only
expect:
  - {figure: complete, min: 1}
  - {row: fast, figure: goodput_bps, min: 15M}
  - {row: slow, figure: goodput_bps, max: 5M}
  - {row: fast, figure: overflow_drops, max: 0}
  - {row: tiny, figure: overflow_drops, min: 1}
  - {row: tiny, figure: queue_max_packets, max: 8}
Y
"$lab" run "$tmp/chain.yaml" --json --pcap "$tmp/chain1.pcap" >"$tmp/chain.json" 2>/dev/null
check "topology a - r1 - r2 - b: bulk and rr complete, a row changes a link by name (PASS)" \
    "[ $? -eq 0 ] && grep -q '\"pass\": true' '$tmp/chain.json'"
"$lab" run "$tmp/chain.yaml" --pcap "$tmp/chain2.pcap" >/dev/null 2>&1
check "topology: same file, byte-identical capture" "[ -s '$tmp/chain1.pcap' ] && cmp -s '$tmp/chain1.pcap' '$tmp/chain2.pcap'"
if command -v tcpdump >/dev/null 2>&1; then
    tcpdump -nr "$tmp/chain1.pcap" 2>/dev/null >"$tmp/chain.txt"
    check "topology capture: a (10.0.1.1) ARPs for its gateway (r1, 10.0.1.2), and connects to b (10.0.3.2) through it" \
        "grep -q 'ARP, Request who-has 10.0.1.2 tell 10.0.1.1' '$tmp/chain.txt' && grep -q '10.0.1.1.*> 10.0.3.2.5001' '$tmp/chain.txt'"
fi
# Malformed topologies: exit 2, file:line and the key.
topo=$'name: x\nhosts: [a, b]\nrouters: [{name: r}]\n'
bad_file "link to an unknown node" "bad.yaml:6: links\\[2\\].between: no host or router is called 'c'" \
    "${topo}links:"$'\n  - {between: [a, r]}\n  - {between: [r, c]}\nflows: [{bulk: {from: a, to: b}}]'
bad_file "a host on two links" "bad.yaml:2: hosts: host 'a' is on 2 links" \
    "${topo}links:"$'\n  - {between: [a, r]}\n  - {between: [a, b]}\nflows: [{bulk: {from: a, to: b}}]'
bad_file "a host on no link" "bad.yaml:2: hosts: host 'b' is on 0 links" \
    "${topo}links:"$'\n  - {between: [a, r]}\nflows:\n  - bulk: {from: a, to: b}'
bad_file "a flow without a path" "bad.yaml:4: flows\\[1\\]: no path from a to b through the routers" \
    $'name: x\nhosts: [a, b]\nrouters: [{name: r}, {name: q}]\nflows: [{bulk: {from: a, to: b}}]\nlinks: [{between: [a, r]}, {between: [q, b]}]'
bad_file "a flow without its hosts" "bad.yaml:7: flows\\[1\\]: a flow in a topology names its hosts" \
    "${topo}links:"$'\n  - {between: [a, r]}\n  - {between: [r, b]}\nflows: [{bulk: {}}]'
bad_file "a flow to a router" "flows\\[1\\]: 'r' is a router" \
    "${topo}links:"$'\n  - {between: [a, r]}\n  - {between: [r, b]}\nflows: [{bulk: {from: a, to: r}}]'
bad_file "an unknown queueing discipline" "bad.yaml:3: routers\\[1\\].qdisc: 'red' is not a queueing discipline" \
    $'name: x\nhosts: [a, b]\nrouters: [{name: r, qdisc: red}]\nlinks: [{between: [a, r]}, {between: [r, b]}]\nflows: [{bulk: {from: a, to: b}}]'
bad_file "between with one node" "bad.yaml:4: links\\[1\\].between: expected the two nodes" \
    "${topo}links: [{between: [a]}]"$'\nflows: [{bulk: {from: a, to: b}}]'
bad_file "a row changing an unknown link" "bad.yaml:7: rows\\[1\\].links.mid: no link is called 'mid'" \
    "${topo}links: [{between: [a, r]}, {between: [r, b]}]"$'\nflows: [{bulk: {from: a, to: b}}]\nrows:\n  - {name: x, links: {mid: {rate: 1M}}}'
bad_file "link: beside a topology" "bad.yaml:4: link: a file with a topology" \
    "${topo}link: {rate: 1G}"$'\nlinks: [{between: [a, r]}, {between: [r, b]}]\nflows: [{bulk: {from: a, to: b}}]'
bad_file "two nodes of one name" "bad.yaml:3: routers\\[1\\]: a second host or router called 'a'" \
    $'name: x\nhosts: [a, b]\nrouters: [{name: a}]\nlinks: [{between: [a, b]}]\nflows: [{bulk: {from: a, to: b}}]'
bad_file "a row's router without a topology" "bad.yaml:5: rows\\[2\\]: links / router: the file has no topology" \
    $'name: x\nflows: [{bulk: {}}]\nrows:\n  - {name: a}\n  - {name: b, router: {qdisc: fq_codel}}'
bad_file "a flow naming c without a topology" "bad.yaml:2: flows\\[1\\]: without a topology" \
    $'name: x\nflows: [{bulk: {from: a, to: c}}]'

# A host's own profile and settings (a receiver kept at linux-6.x while the rows change the sender), and the
# NIC's interrupt moderation (rx_coalesce): both change what the run measures, so each shows in the figures.
pair_file() { # hosts line, nic line -> $tmp/pair.yaml
    printf '%s\n' "name: pair" "hosts: $1" "links: [{between: [a, b], rate: 10G, delay: 25us, loss: 1%}]" \
        "nic: $2" "flows: [{bulk: {from: a, to: b, bytes: 20M}}]" "rows: [{name: brisk, profile: brisk}]" >"$tmp/pair.yaml"
}
pair_file "[a, b]" "{gso: 65535, rx_batch: 64}"
"$lab" run "$tmp/pair.yaml" --json >"$tmp/pair0.json" 2>/dev/null
pair_file "[a, {name: b, profile: linux-6.x}]" "{gso: 65535, rx_batch: 64}"
"$lab" run "$tmp/pair.yaml" --json >"$tmp/pair1.json" 2>/dev/null
pair_file "[a, {name: b, set: {tcp_sack: 0}}]" "{gso: 65535, rx_batch: 64}"
"$lab" run "$tmp/pair.yaml" --json >"$tmp/pair2.json" 2>/dev/null
pair_file "[a, b]" "{gso: 65535, rx_batch: 64, rx_coalesce: 50us}"
"$lab" run "$tmp/pair.yaml" --json >"$tmp/pair3.json" 2>/dev/null
g0=$(json_row "$tmp/pair0.json" brisk goodput_bps)
g1=$(json_row "$tmp/pair1.json" brisk goodput_bps)
g2=$(json_row "$tmp/pair2.json" brisk goodput_bps)
g3=$(json_row "$tmp/pair3.json" brisk goodput_bps)
check "host profile: every run complete" \
    "[ \"\$(grep -c '\"complete\": 1' $tmp/pair0.json $tmp/pair1.json $tmp/pair2.json $tmp/pair3.json | grep -c ':0')\" = 0 ]"
check "host profile: a linux-6.x receiver changes the brisk sender's run ($g0 vs $g1)" "is '${g1:-0} != ${g0:-0} && ${g1:-0} > 0'"
check "host settings: a receiver without SACK changes it too ($g2)" "is '${g2:-0} != ${g0:-0} && ${g2:-0} > 0'"
check "rx_coalesce: 50 us of interrupt moderation makes stretch ACKs, another run ($g3)" "is '${g3:-0} != ${g0:-0} && ${g3:-0} > 0'"
bad_file "a host's unknown profile" "bad.yaml:2: hosts\\[2\\].profile: no profile is called 'linux-9'" \
    $'name: x\nhosts: [a, {name: b, profile: linux-9}]\nlinks: [{between: [a, b]}]\nflows: [{bulk: {from: a, to: b}}]'
bad_file "a host's unknown setting" "bad.yaml:2: hosts\\[2\\].set.tcp_sak: no stack setting is called 'tcp_sak'" \
    $'name: x\nhosts: [a, {name: b, set: {tcp_sak: 0}}]\nlinks: [{between: [a, b]}]\nflows: [{bulk: {from: a, to: b}}]'
bad_file "a host without a name" "bad.yaml:2: hosts\\[2\\]: a host needs a name" \
    $'name: x\nhosts: [a, {profile: brisk}]\nlinks: [{between: [a, b]}]\nflows: [{bulk: {from: a, to: b}}]'
bad_file "a bad rx_coalesce" "bad.yaml:2: nic.rx_coalesce: 'soon' is not a time" \
    $'name: x\nnic: {rx_batch: 8, rx_coalesce: soon}\nflows: [{bulk: {}}]'
bad_file "a bad csum" "bad.yaml:2: nic.csum: 'maybe'" $'name: x\nnic: {csum: maybe}\nflows: [{bulk: {}}]'
# nic.csum: off takes the checksum offload away, and TSO with it (as Linux): the GSO NIC's row and the same
# NIC without checksum offload send differently (TSO bursts against MTU frames), so their times differ.
printf '%s\n' 'name: csum' 'limit: 10s' 'link: {rate: 1G, delay: 100us}' 'nic: {gso: 65535}' 'flows:' \
    '  - bulk: {bytes: 4M}' 'rows:' '  - {name: offload}' '  - {name: nocsum, nic: {csum: off}}' >"$tmp/csum.yaml"
"$lab" run "$tmp/csum.yaml" --json >"$tmp/csum.json" 2>/dev/null
t_on=$(json_row "$tmp/csum.json" offload elapsed_ns)
t_off=$(json_row "$tmp/csum.json" nocsum elapsed_ns)
check "nic.csum: off turns TSO off with it ($t_on vs $t_off ns)" "[ -n '$t_on' ] && [ -n '$t_off' ] && [ '$t_on' != '$t_off' ]"

# ---- the seeds are files: a copy edited, a user's seed beside them, a broken one, parameters and reports ----
seeddir=$tmp/seeddir
mkdir -p "$seeddir"
# An edited row changes its figure: linux-3.19 with a 256 KB cap moves twice the data per completion latency.
# (the first row only: the line after its label gains a set)
awk '{ print } /^    label: "linux-3.19 \(min rule: 128 KB cap\) to dom0"$/ { getline; print; print "    set: {tcp_limit_output_bytes: 256K}" }' \
    "$here/scenarios/xen-tsq.yaml" >"$seeddir/xen-tsq.yaml"
"$lab" run "$seeddir/xen-tsq.yaml" --json --set bytes=20M >"$tmp/xen-edit.json" 2>/dev/null
ge=$(json_row "$tmp/xen-edit.json" linux_3_19 goodput_bps)
gd=$(json_row "$tmp/xen-edit.json" linux_3_19_domu goodput_bps)
check "an edited seed row changes its figure: linux-3.19 at 256 KB ~ 2x its 128 KB goodput ($ge vs $g319)" \
    "is '$ge > 1.8 * $g319 && $ge < 2.2 * $g319'"
check "and leaves the other rows' figures as they were ($gd = $gdomu)" "[ '$gd' = '$gdomu' ]"
check "the edited row's settings are stated under the table" \
    "\"$lab\" run '$seeddir/xen-tsq.yaml' --set bytes=5M 2>/dev/null | grep -q '= profile linux-3.19, tcp_limit_output_bytes=256K, TX completion 190 us'"
# A user's seed file beside the seeds runs the same way: seeds takes it, in the order of the reports' ids.
cat >"$seeddir/my-seed.yaml" <<'Y'
name: my-seed
summary: a PDU exchange at two payload sizes
reproduces: 900_mine
params:
  - {name: ios, kind: uint, default: 20, min: 1, max: 1000}
  - {name: rtt, kind: time, default: 200us}
link: {rate: 1G, delay: "${rtt / 2}"}
flows:
  - pdu: {ios: "${ios}", header: 48, payload: 512}
rows:
  - {name: small}
  - {name: large, label: "4 KB payload", flows: [{pdu: {payload: 4K}}], how: "payload {4096:%.0f} B"}
report:
  columns:
    - {key: per_io_ns, head: per I/O, kind: time, value: io_total_ns / ios}
    - {key: p50, head: p50, kind: time, value: io_p50_ns}
    - {key: segs, head: segs/IO, kind: double, value: data_segs / ios}
  headline: "small {small.per_io_ns / 1e3:%.1f} us, large {large.per_io_ns / 1e3:%.1f} us per I/O"
  expected: "one round trip per I/O, a larger payload costs its serialization"
expect:
  - check: "small.p50 >= rtt && small.p50 < 1.5 * rtt && large.per_io_ns > small.per_io_ns"
Y
BRISK_LAB_SCENARIOS=$seeddir "$lab" seeds --out "$tmp/myseeds" >"$tmp/myseeds.out" 2>"$tmp/myseeds.err"
rc=$?
# The edited xen-tsq's shape no longer holds (its domU model reads the first row's cap, now 256 KB, while the
# domU row keeps 128 KB): seeds says FAIL for it and exits 1; the user's seed passes.
check "seeds from another directory (BRISK_LAB_SCENARIOS): the edited seed FAILs, a user's PASSes (rc $rc)" \
    "[ $rc -eq 1 ] && grep -q '^xen-tsq  *FAIL  *linux-3.19 8.4' '$tmp/myseeds.out' && grep -q '^my-seed  *PASS  *small [0-9.]* us, large' '$tmp/myseeds.out'"
check "seeds orders them by the reports' ids (001 before 900)" \
    "[ \"\$(grep -n '^xen-tsq \\|^my-seed ' '$tmp/myseeds.out' | tail -n 2 | cut -d: -f2 | cut -c1-7 | tr '\\n' ' ')\" = 'xen-tsq my-seed ' ]"
check "a user's file runs by name from the scenarios directory, with its parameters" \
    "BRISK_LAB_SCENARIOS=$seeddir \"$lab\" run my-seed --set ios=5 2>/dev/null | grep -q 'parameters: ios=5 rtt=200us'"
check "run NAME --help shows a file's parameters" \
    "\"$lab\" run xen-tsq --help | grep -q 'latency_domu  *375us' && \"$lab\" run iscsi --help | grep -q 'delack  *111ms'"
check "list shows the seed files with their parameters" "\"$lab\" list | grep -q '^mvneta ' && \"$lab\" list | grep -q '    frames  *16 '"
# Sweeps (docs/lab.md, "Sweeps"): a row written once for many values is the rows written by hand, figure for
# figure and byte for byte (the hand-written coalesce-sweep beside its sweep, at one path so "file" agrees).
cat >"$tmp/sweep-head.yaml" <<'Y'
name: sw
limit: 30s
link: {rate: 1G, delay: 100us}
flows: [{bulk: {bytes: 2M}}]
expect: [{row: brisk-batch-128, figure: goodput_pct, min: 80}]
Y
{ cat "$tmp/sweep-head.yaml"; printf '%s\n' 'rows:' \
    '  - {name: 3.12-batch-16, profile: linux-3.12, nic: {completion: coalesce 16 10ms}}' \
    '  - {name: 3.12-batch-32, profile: linux-3.12, nic: {completion: coalesce 32 10ms}}' \
    '  - {name: 3.12-batch-64, profile: linux-3.12, nic: {completion: coalesce 64 10ms}}' \
    '  - {name: 3.12-batch-128, profile: linux-3.12, nic: {completion: coalesce 128 10ms}}' \
    '  - {name: brisk-batch-16, profile: brisk, nic: {completion: coalesce 16 10ms}}' \
    '  - {name: brisk-batch-128, profile: brisk, nic: {completion: coalesce 128 10ms}}'; } >"$tmp/sweep.yaml"
"$lab" run "$tmp/sweep.yaml" --json >"$tmp/sweep-hand.json" 2>/dev/null
"$lab" run "$tmp/sweep.yaml" --out "$tmp/sweep-hand" >"$tmp/sweep-hand.txt" 2>/dev/null
{ cat "$tmp/sweep-head.yaml"; printf '%s\n' 'rows:' \
    '  - {sweep: {v: {from: 16, to: 128, times: 2}}, name: "3.12-batch-${v}", profile: linux-3.12, nic: {completion: "coalesce ${v} 10ms"}}' \
    '  - {sweep: {v: [16, 128]}, name: "brisk-batch-${v}", profile: brisk, nic: {completion: "coalesce ${v} 10ms"}}'; } >"$tmp/sweep.yaml"
"$lab" run "$tmp/sweep.yaml" --json >"$tmp/sweep-gen.json" 2>/dev/null
rc=$?
"$lab" run "$tmp/sweep.yaml" --out "$tmp/sweep-gen" >"$tmp/sweep-gen.txt" 2>/dev/null
check "sweep: two sweeps write out the six rows (exit $rc, PASS)" \
    "[ $rc -eq 0 ] && [ \$(grep -c '\"how\": \"profile .*, nic.completion=coalesce' '$tmp/sweep-gen.json') -eq 6 ] && grep -q '\"3.12-batch-64\": {' '$tmp/sweep-gen.json' && grep -q '\"how\": \"profile brisk, nic.completion=coalesce 128 10ms\"' '$tmp/sweep-gen.json'"
check "sweep: its JSON, table and CSV are the hand-written rows' byte for byte" \
    "cmp -s '$tmp/sweep-hand.json' '$tmp/sweep-gen.json' && cmp -s '$tmp/sweep-hand.txt' '$tmp/sweep-gen.txt' && cmp -s '$tmp/sweep-hand/results.csv' '$tmp/sweep-gen/results.csv'"
# Every combination of two variables, the first slowest; expressions of a variable computed, ${v}K a size.
printf '%s\n' 'name: x' 'flows: [{bulk: {bytes: 10K}}]' 'rows:' '  - {name: first}' \
    '  - sweep: {p: [brisk, linux-3.12], v: {from: 0.5, to: 1.5, step: 0.5}}' '    name: "${p}-${v * 2}"' \
    '    profile: "${p}"' '    link: {loss: "${v}%"}' '    set: {tcp_limit_output_bytes: "${v * 64}K"}' >"$tmp/sweep2.yaml"
"$lab" run "$tmp/sweep2.yaml" >"$tmp/sweep2.txt" 2>/dev/null
check "sweep: two variables give every combination, in order, with computed names and values" \
    "[ \"\$(sed -n 's/^  \([a-z0-9.-]*\)  *= \(.*\)/\1 = \2/p' '$tmp/sweep2.txt' | tr '\n' ';')\" = 'first = profile brisk;brisk-1 = profile brisk, tcp_limit_output_bytes=32K, link.loss=0.5%;brisk-2 = profile brisk, tcp_limit_output_bytes=64K, link.loss=1%;brisk-3 = profile brisk, tcp_limit_output_bytes=96K, link.loss=1.5%;linux-3.12-1 = profile linux-3.12, tcp_limit_output_bytes=32K, link.loss=0.5%;linux-3.12-2 = profile linux-3.12, tcp_limit_output_bytes=64K, link.loss=1%;linux-3.12-3 = profile linux-3.12, tcp_limit_output_bytes=96K, link.loss=1.5%;' ]"
# The tutorial's sweep (docs/lab.md, "Sweep it", "Read its plots"), as the document writes it: its figures and
# its plots' data.
sed -n '/^# my-sweep.yaml/,/^```/p' "$here/docs/lab.md" | sed '$d' >"$tmp/my-sweep.yaml"
"$lab" run "$tmp/my-sweep.yaml" --out "$tmp/my-sweep" >"$tmp/my-sweep.txt" 2>/dev/null
rc=$?
check "docs/lab.md's sweep: 9 rows, PASS, the headline it shows" \
    "[ $rc -eq 0 ] && [ \$(grep -c '= profile .*, nic.completion=coalesce' '$tmp/my-sweep.txt') -eq 9 ] && grep -q 'shape: 3.12 95% at 16 frames, 7% at 64; brisk 95% at 128' '$tmp/my-sweep.txt'"
check "docs/lab.md's sweep: batch.dat has the sweep's points (3.12 at 64 frames: 66 Mbit/s)" \
    "grep -q '^64 65.98' '$tmp/my-sweep/batch.dat' && [ \$(grep -c '^[0-9]' '$tmp/my-sweep/batch.dat') -eq 9 ] && [ -s '$tmp/my-sweep/throughput.dat' ]"
bad_file "a sweep over more rows than a file has" "bad.yaml:5: rows\\[2\\].sweep.v: more than 16 values" \
    $'name: x\nflows: [{bulk: {}}]\nrows:\n  - {name: r0}\n  - {sweep: {v: {from: 1, to: 100, step: 1}}, name: "r${v}"}'
bad_file "sweeps adding up to more rows than a file has" "bad.yaml:5: rows\\[3\\].sweep: 15 rows, and the file has 2 already: a file has at most 16 rows" \
    $'name: x\nflows: [{bulk: {}}]\nrows:\n  - {sweep: {v: [1, 2]}, name: "a${v}"}\n  - {sweep: {v: [1, 2, 3], w: [1, 2, 3, 4, 5]}, name: "b${v}-${w}"}'
bad_file "a sweep's rows of one name" "bad.yaml:4: rows\\[2\\]: a second row called 'r' (sweep: v=2)" \
    $'name: x\nflows: [{bulk: {}}]\nrows:\n  - {sweep: {v: [1, 2]}, name: r}'
bad_file "a bad value in a swept row names its key and value" "bad.yaml:6: rows\\[2\\].set.tcp_sack: '2' is not a valid value for tcp_sack .* (sweep: v=2)" \
    $'name: x\nflows: [{bulk: {}}]\nrows:\n  - sweep: {v: [1, 2]}\n    name: "r${v}"\n    set: {tcp_sack: "${v}"}'
bad_file "a range without its step" "bad.yaml:3: rows\\[1\\].sweep.v: a range is {from: A, to: B, step: S} or {from: A, to: B, times: F}" \
    $'name: x\nflows: [{bulk: {}}]\nrows: [{sweep: {v: {from: 1, to: 4}}, name: "r${v}"}]'
bad_file "a range with units" "bad.yaml:3: rows\\[1\\].sweep.v.from: '1K' is not a number" \
    $'name: x\nflows: [{bulk: {}}]\nrows: [{sweep: {v: {from: 1K, to: 4K, times: 2}}, name: "r${v}"}]'
bad_file "a range that never ends" "bad.yaml:3: rows\\[1\\].sweep.v: step must be above 0" \
    $'name: x\nflows: [{bulk: {}}]\nrows: [{sweep: {v: {from: 1, to: 4, step: -1}}, name: "r${v}"}]'
bad_file "a swept row's unknown key" "bad.yaml:3: unknown key 'rows\\[1\\].nics' .* (sweep: v=1)" \
    $'name: x\nflows: [{bulk: {}}]\nrows: [{sweep: {v: [1]}, name: "r${v}", nics: {}}]'
# A broken seed file: seeds refuses to start, naming file:line and the key.
sed 's/coalesce ${frames} ${timeout}/coalesce ${framez} ${timeout}/' "$here/scenarios/mvneta.yaml" >"$seeddir/mvneta.yaml"
BRISK_LAB_SCENARIOS=$seeddir "$lab" seeds --out "$tmp/badseeds" >/dev/null 2>"$tmp/badseeds.err"
check "a malformed seed file: seeds exits 2 naming file:line (mvneta.yaml:31, the unknown name)" \
    "[ $? -eq 2 ] && grep -q 'mvneta.yaml:31: nic.completion: unknown name .framez.' '$tmp/badseeds.err'"
rm -f "$seeddir/mvneta.yaml"
# A computed value out of its range at run time, and a failed requirement: exit 2 with the file's line.
"$lab" run "$seeddir/my-seed.yaml" --set ios=0 >/dev/null 2>"$tmp/err"
check "a parameter out of its file's range: exit 2" "[ $? -eq 2 ] && grep -q 'ios=0 is out of range: expected 1 to 1000' '$tmp/err'"
"$lab" run xen-tsq --set gso=1000 >/dev/null 2>"$tmp/err"
check "a file's require: exit 2 with its message" "[ $? -eq 2 ] && grep -q 'gso=1000 is smaller than a frame' '$tmp/err'"
printf '%s\n' 'name: x' 'params: [{name: n, kind: uint, default: 0}]' 'flows:' '  - rr: {connections: "${n}"}' >"$tmp/range.yaml"
"$lab" run "$tmp/range.yaml" >/dev/null 2>"$tmp/err"
check "a \${...} value outside the key's range: exit 2, file:line" \
    "[ $? -eq 2 ] && grep -q 'range.yaml:4: flows\\[1\\].rr.connections: \${n} = 0 is out of range: expected 1 to 45000' '$tmp/err'"
bad_file "an unknown name in an expression" "bad.yaml:3: check: unknown name 'brisk.goodput'" \
    $'name: x\nflows: [{bulk: {}}]\nexpect: [{check: "brisk.goodput > 1"}]'
bad_file "a \${...} value naming a figure" "bad.yaml:2: link.rate: unknown name 'goodput_bps'" \
    $'name: x\nlink: {rate: "${goodput_bps}"}\nflows: [{bulk: {}}]'
bad_file "an unknown function" "unknown function 'sqrt'" \
    $'name: x\nflows: [{bulk: {}}]\nexpect: [{check: "sqrt(4) > 1"}]'
bad_file "a bad headline format" "is not a number format" \
    $'name: x\nflows: [{bulk: {}}]\nreport: {headline: "{1:%s}"}\nexpect: [{figure: complete, min: 1}]'
bad_file "an unbalanced expression" "expected ')'" \
    $'name: x\nflows: [{bulk: {}}]\nexpect: [{check: "(1 + 2"}]'
bad_file "a \${...} where none can go" "routers\\[1\\].target: this value cannot be computed" \
    $'name: x\nhosts: [a, b]\nrouters: [{name: r, target: "${1}"}]\nlinks: [{between: [a, r]}, {between: [r, b]}]\nflows: [{bulk: {from: a, to: b}}]'
bad_file "a parameter's default out of its range" "params\\[1\\].default: 0 lies outside min..max" \
    $'name: x\nparams: [{name: n, kind: uint, default: 0, min: 1}]\nflows: [{bulk: {}}]'
bad_file "a row changing a flow of another kind" "rows\\[1\\].flows\\[1\\]: flow 1 is a bulk flow" \
    $'name: x\nflows: [{bulk: {}}]\nrows: [{name: r, flows: [{rr: {connections: 2}}]}]'
bad_file "a column that is no figure" "'speed' is no figure: give its value" \
    $'name: x\nflows: [{bulk: {}}]\nreport: {columns: [{key: speed, head: s, kind: rate}]}'
# Precedence and functions as C reads them: 1 + 2 * 3 = 7, (1 + 2) * 3 = 9, ?: binds loosest, floor.
printf '%s\n' 'name: arith' 'flows: [{bulk: {bytes: 10K}}]' \
    'report: {headline: "{1 + 2 * 3:%.0f} {(1 + 2) * 3:%.0f} {0 ? 1 : 2 + 3:%.0f} {floor(7 / 2):%.0f} {min(4, 2, 3):%.0f} {-max(1, 5) + 10:%.0f} {!0 && 1 < 2:%.0f}"}' \
    'expect: [{check: "2 * 3 == 6 && 10 / 4 == 2.5 && 7 - 2 - 1 == 4"}]' >"$tmp/arith.yaml"
"$lab" run "$tmp/arith.yaml" >"$tmp/arith.txt" 2>/dev/null
check "expressions: precedence, left-to-right, ?:, floor, min, max (PASS)" \
    "[ $? -eq 0 ] && grep -q 'shape: 7 9 5 3 2 5 1' '$tmp/arith.txt'"

# Looking at flows (tools/lab/obs.c): the time-sequence graph with hold bands and the ss lines, end and
# sampled. A 1 MB flow at 100 Mbit/s takes ~85 ms: ~85 samples at 1 ms.
# pyq FILE EXPR: a Python expression over the JSON document d, printed (python3 is in scripts/deps.sh).
pyq() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1" 2>/dev/null; }
"$lab" run bulk --set rate=100M --set bytes=1M --ss-every 1ms --out "$tmp/obs" >/dev/null 2>&1
rc=$?
check "run bulk --ss-every --out exits 0" "[ $rc -eq 0 ]"
check "run bulk --out draws tseq.png and tseq.dat" "[ -s '$tmp/obs/tseq.png' ] && [ -s '$tmp/obs/tseq.dat' ]"
check "tseq.dat has segments, ACKs and the window edge" \
    "grep -q '^# segments sent' '$tmp/obs/tseq.dat' && grep -q '^# ACK' '$tmp/obs/tseq.dat' && grep -q '^# receive window' '$tmp/obs/tseq.dat'"
nsamp=$(pyq "$tmp/obs/results.json" "len(d['ss'][0]['samples'])")
check "ss sampled every 1 ms of an ~85 ms flow ($nsamp samples)" "is '${nsamp:-0} >= 70 && ${nsamp:-0} <= 100'"
mono=$(pyq "$tmp/obs/results.json" "all(a <= b for a, b in zip(*(lambda v: (v, v[1:]))([s['client']['bytes_acked'] for s in d['ss'][0]['samples'] if s['client']])))")
check "sampled bytes_acked never decreases" "[ '$mono' = True ]"
grows=$(pyq "$tmp/obs/results.json" "(lambda v: v[0] < v[len(v) // 2] < v[-1])([s['client']['bytes_acked'] for s in d['ss'][0]['samples'] if s['client']])")
check "sampled bytes_acked grows over the run" "[ '$grows' = True ]"
check "each sample carries brisk-ss's -i line" \
    "[ \"\$(pyq '$tmp/obs/results.json' \"d['ss'][0]['samples'][5]['client']['info'].startswith('cubic ')\")\" = True ]"
check "the end's client has every byte acked" \
    "[ \"\$(pyq '$tmp/obs/results.json' \"d['ss'][0]['end']['client']['bytes_acked']\")\" = 1048576 ]"
check "the report ends with the ss lines" \
    "grep -q 'ss -ti at the end of the run' '$tmp/obs/results.txt' && grep -q 'bytes_acked:1048576' '$tmp/obs/results.txt'"
rw0=$(pyq "$tmp/obs/results.json" "d['ss'][0]['tseq']['held_ns']['rwnd']")
# A 16 KB receive buffer makes the receive window what holds the sender: a band of its own.
"$lab" run bulk --set rate=100M --set bytes=1M --set tcp_rcvbuf=16K --out "$tmp/obs2" >/dev/null 2>&1
rw1=$(pyq "$tmp/obs2/results.json" "d['ss'][0]['tseq']['held_ns']['rwnd']")
check "default: no rwnd band ($rw0 ns)" "[ '$rw0' = 0 ]"
check "tcp_rcvbuf=16K: rwnd bands over most of the window ($rw1 ns of 20 ms)" "is '${rw1:-0} > 15000000'"
check "the rwnd band is in the graph's data" "grep -q '^# hold rwnd' '$tmp/obs2/tseq.dat'"
"$lab" run bulk --set rate=100M --set bytes=1M --set loss=2% --tseq 5ms+10ms --out "$tmp/obs3" >/dev/null 2>&1
rtx=$(pyq "$tmp/obs3/results.json" "d['ss'][0]['tseq']['retransmissions']")
from=$(pyq "$tmp/obs3/results.json" "d['ss'][0]['tseq']['to_ns'] - d['ss'][0]['tseq']['from_ns']")
check "loss: retransmissions marked in the graph ($rtx)" "is '${rtx:-0} > 0' && grep -q '^# retransmitted' '$tmp/obs3/tseq.dat'"
check "--tseq 5ms+10ms: a 10 ms window ($from ns)" "[ '$from' = 10000000 ]"
"$lab" run bulk --set rate=100M --set bytes=1M --set loss=2% --tseq 5ms+10ms --out "$tmp/obs4" >/dev/null 2>&1
check "same seed, same graph data" "cmp -s '$tmp/obs3/tseq.dat' '$tmp/obs4/tseq.dat'"
check "the graph does not change the run (same capture as without it)" \
    "$lab run bulk --set rate=100M --set bytes=1M --set loss=2% --tseq off --out '$tmp/obs5' >/dev/null 2>&1 && cmp -s '$tmp/obs3/capture.pcap' '$tmp/obs5/capture.pcap' && [ ! -e '$tmp/obs5/tseq.png' ]"
"$lab" run bulk --set rate=1G --set bytes=200M --tseq 1s --out "$tmp/obs6" >/dev/null 2>&1
check "a long window is cut at the graph's bound" \
    "[ \"\$(pyq '$tmp/obs6/results.json' \"d['ss'][0]['tseq']['truncated']\")\" = True ] && [ \$(wc -c <'$tmp/obs6/tseq.dat') -lt 20000000 ]"
"$lab" run bulk --tseq soon --out "$tmp/obs7" >"$tmp/tseqbad" 2>&1
rc=$?
check "--tseq soon: exit 2 naming it" "[ $rc -eq 2 ] && grep -q \"tseq takes LEN or START+LEN\" '$tmp/tseqbad'"
"$lab" run bulk --tseq 5ms >"$tmp/tseqbad" 2>&1
rc=$?
check "--tseq without --out: exit 2" "[ $rc -eq 2 ] && grep -q 'give --out DIR' '$tmp/tseqbad'"
"$lab" run bulk --ss-every 0 >"$tmp/tseqbad" 2>&1
rc=$?
check "--ss-every 0: exit 2" "[ $rc -eq 2 ] && grep -q 'ss-every takes an interval' '$tmp/tseqbad'"
# A scenario file: one graph and one ss entry per row and bulk flow.
"$lab" run "$(dirname "$0")/../../scenarios/ack-loss.yaml" --out "$tmp/obsf" >/dev/null 2>&1
check "scenario file: a graph per row" \
    "[ -s '$tmp/obsf/tseq_brisk_flow1.png' ] && [ -s '$tmp/obsf/tseq_linux-6.x_flow1.png' ] && [ -s '$tmp/obsf/tseq_no-ack-loss_flow1.png' ]"
check "scenario file: ss at the end per row" \
    "[ \"\$(pyq '$tmp/obsf/results.json' \"[x['row'] for x in d['ss'] if x['end']['client']['bytes_acked'] == 20971520]\")\" = \"['brisk', 'linux-6.x', 'no-ack-loss']\" ] && grep -q 'flow 1, row linux-6.x:' '$tmp/obsf/results.txt'"
tsq_b=$(pyq "$tmp/obsf/results.json" "d['ss'][0]['tseq']['held_ns']['tsq']")
check "scenario file: the 100 Mbit/s sender is held by TSQ, as the bands say ($tsq_b ns)" "is '${tsq_b:-0} > 100000000'"
# rr-timers' plots.
"$lab" run rr-timers --set flows=8 --set transactions=20 --set loss_transactions=400 --out "$tmp/rrp" >/dev/null 2>&1
check "rr-timers --out draws wheel_ops.png and latency_cdf.png" "[ -s '$tmp/rrp/wheel_ops.png' ] && [ -s '$tmp/rrp/latency_cdf.png' ]"
ops=$(awk '/^# client/ { f = 1; next } f && NF == 3 { print $3; exit }' "$tmp/rrp/wheel_ops.dat")
check "wheel_ops.dat holds the table's eager client figure ($ops)" \
    "is '${ops:-0} == $(json_row "$tmp/rrp/results.json" eager ops_client)'"
"$lab" run rr-timers --set flows=8 --set transactions=20 --set loss_transactions=400 --set tcp_timer_eager=1 --out "$tmp/rrp2" >/dev/null 2>&1
ops2=$(awk '/^# client/ { f = 1; next } f && NF == 3 { n++ } f && NF == 3 && n == 2 { print $3; exit }' "$tmp/rrp2/wheel_ops.dat")
check "tcp_timer_eager=1 raises the brisk bar too ($ops2)" "is '${ops2:-0} >= 3'"
tail=$(awk '/^# brisk: 1 flow with loss/ { f = 1; next } f && NF == 2 { x = $1 } f && NF == 0 { print x; exit }' "$tmp/rrp/latency_cdf.dat")
check "latency_cdf: the lossy row's tail reaches the probe's 200 ms ($tail us)" "is '${tail:-0} >= 200000'"

# --set family=6 (docs/lab.md, "IPv6"): every scenario over IPv6, the hosts dual-stack.
"$lab" run ping --set family=5 >"$tmp/fam5" 2>&1
rc=$?
check "--set family=5: exit 2 naming the family" \
    "[ $rc -eq 2 ] && grep -q \"family: '5' is not an address family: expected 4 (IPv4) or 6 (IPv6)\" '$tmp/fam5'"
# ping6: 118-byte frames (14 + 40 + 8 + 56): 94.4 ns -> 95 ns, + 50 us, twice = 100190 ns.
"$lab" run ping --json --set family=6 --set count=20 >"$tmp/ping6.json"
rc=$?
got=$(pyq "$tmp/ping6.json" "'%s %s' % (d['family'], d['target'])")
check "ping6 exits 0: JSON family 6, target 2001:db8::2 ($got)" "[ $rc -eq 0 ] && [ '$got' = '6 2001:db8::2' ]"
got=$(pyq "$tmp/ping6.json" "'%s %s %s' % (d['received'], d['rtt_ns']['min'], d['rtt_ns']['max'])")
check "ping6: 20 of 20, every RTT = the path's 100190 ns ($got)" "[ '$got' = '20 100190 100190' ]"
check "ping6 spoke ICMPv6: 1 solicitation, 21 echoes (one resolving b), 21 replies" \
    "[ '$(pyq "$tmp/ping6.json" "tuple(d['host_a'][k] for k in ('Icmp6OutNeighborSolicits', 'Icmp6OutEchos', 'Icmp6InEchoReplies'))")' = '(1, 21, 21)' ]"
# bulk: MSS 1428 (1448 over IPv4), goodput within the header overhead of IPv4's (1428 / 1448 = 0.986),
# every data frame IPv6 (EtherType 0x86dd), and the same seed gives the same capture.
"$lab" run bulk --json --set bytes=5M >"$tmp/b4.json" 2>/dev/null
"$lab" run bulk --json --set bytes=5M --set family=6 --pcap "$tmp/b6a.pcap" >"$tmp/b6.json" 2>/dev/null
rc=$?
"$lab" run bulk --json --set bytes=5M --set family=6 --pcap "$tmp/b6b.pcap" >/dev/null 2>&1
got=$(pyq "$tmp/b6.json" "'%s %s %s %s' % (d['family'], d['ss'][0]['end']['client']['laddr'], d['ss'][0]['end']['client']['raddr'], d['a']['mss'])")
check "bulk family=6: exit 0, family 6, ss between 2001:db8::1 and ::2, MSS 1428 ($got)" \
    "[ $rc -eq 0 ] && [ '$got' = '6 2001:db8::1 2001:db8::2 1428' ]"
ratio=$(pyq "$tmp/b6.json" "d['goodput_bps'] / json.load(open('$tmp/b4.json'))['goodput_bps']")
check "bulk family=6 goodput within 0.975..1.0 of IPv4's ($ratio)" "is '${ratio:-0} >= 0.975 && ${ratio:-0} <= 1.0'"
# pcap_types FILE: "IPV6 OTHER" frame counts (EtherType at offset 12 of each record after the 24-byte header).
pcap_types() {
    python3 -c "
import struct, sys
b = open(sys.argv[1], 'rb').read(); o = 24; v6 = other = 0
while o + 16 <= len(b):
    n = struct.unpack('<I', b[o + 8:o + 12])[0]
    if b[o + 16 + 12:o + 16 + 14] == b'\x86\xdd': v6 += 1
    else: other += 1
    o += 16 + n
print(v6, other)" "$1"
}
types=$(pcap_types "$tmp/b6a.pcap")
check "bulk family=6 capture: IPv6 frames only ($types: IPv6, other)" "is '${types%% *} > 3000 && ${types##* } == 0'"
check "bulk family=6: same seed, same capture" "cmp -s '$tmp/b6a.pcap' '$tmp/b6b.pcap'"
# A topology: the routers forward IPv6 (ND, hop limit) and fq_codel tells the IPv6 flows apart.
"$lab" run parking-lot --json --set family=6 >"$tmp/pl6.json" 2>/dev/null
rc=$?
"$lab" run parking-lot --json >"$tmp/pl4.json" 2>/dev/null
got=$(pyq "$tmp/pl6.json" "'%s %s %s' % (d['family'], d['shape']['pass'], 's0 2001:db8:0:1::1' in d['addresses'])")
check "parking-lot family=6: its shape holds, the hosts on 2001:db8:0:X::Y ($got)" "[ $rc -eq 0 ] && [ '$got' = '6 True True' ]"
f4=$(json_row "$tmp/pl4.json" fq_codel fairness)
f6=$(json_row "$tmp/pl6.json" fq_codel fairness)
check "parking-lot fq_codel fairness IPv6 $f6 within 0.02 of IPv4 $f4" "is '${f6:-0} - ${f4:-9} <= 0.02 && ${f4:-9} - ${f6:-0} <= 0.02'"
g4=$(json_row "$tmp/pl4.json" fq_codel goodput_bps)
g6=$(json_row "$tmp/pl6.json" fq_codel goodput_bps)
check "parking-lot fq_codel goodput IPv6 within 0.96..1.0 of IPv4 ($g6 / $g4)" \
    "is '${g6:-0} >= 0.96 * ${g4:-1} && ${g6:-0} <= 1.0 * ${g4:-0}'"
# pdu (iscsi), onoff and rr flows over IPv6: the shapes hold and the headline figures match IPv4's.
"$lab" run iscsi --json --set family=6 >"$tmp/is6.json" 2>/dev/null
rc=$?
"$lab" run iscsi --json >"$tmp/is4.json" 2>/dev/null
p4=$(json_row "$tmp/is4.json" rc2_autocork_off io_p50_ns)
p6=$(json_row "$tmp/is6.json" rc2_autocork_off io_p50_ns)
check "iscsi family=6: shape holds, I/O p50 $p6 ns within 0.2% of IPv4's $p4 ns" \
    "[ $rc -eq 0 ] && [ '$(pyq "$tmp/is6.json" "'%s %s' % (d['family'], d['shape']['pass'])")' = '6 True' ] && is '${p6:-0} >= ${p4:-1} && ${p6:-0} <= 1.002 * ${p4:-0}'"
"$lab" run onoff --json --set family=6 >"$tmp/oo6.json" 2>/dev/null
rc=$?
"$lab" run onoff --json >"$tmp/oo4.json" 2>/dev/null
o4=$(json_row "$tmp/oo4.json" rfc5681 burst_p50_ns)
o6=$(json_row "$tmp/oo6.json" rfc5681 burst_p50_ns)
check "onoff family=6: shape holds, burst p50 $o6 within 2% of IPv4's $o4" \
    "[ $rc -eq 0 ] && [ '$(pyq "$tmp/oo6.json" "'%s %s' % (d['family'], d['shape']['pass'])")' = '6 True' ] && is '${o6:-0} >= 0.98 * ${o4:-1} && ${o6:-0} <= 1.02 * ${o4:-0}'"
"$lab" run rr-timers --json --set flows=8 --set transactions=20 --set loss_transactions=400 --set family=6 >"$tmp/rr6.json" 2>/dev/null
rc=$?
check "rr-timers family=6: shape holds, eager client ops/transaction as IPv4's" \
    "[ $rc -eq 0 ] && [ '$(pyq "$tmp/rr6.json" "'%s %s' % (d['family'], d['shape']['pass'])")' = '6 True' ] && is '$(json_row "$tmp/rr6.json" eager ops_client) == $(json_row "$tmp/rrp/results.json" eager ops_client)'"
# xen-tsq over IPv6: a 45-segment super-frame is charged 880 bytes less, so 3.19's 128 KB cap keeps three
# below TCP where IPv4 keeps two; the model reads `family` and the 3.19 row must sit on it (within 3 %).
"$lab" run xen-tsq --json --set bytes=20M --set family=6 >"$tmp/xen6.json" 2>/dev/null
rc=$?
m6=$(json_num "$tmp/xen6.json" model_3_19_bps)
g6=$(json_row "$tmp/xen6.json" linux_3_19 goodput_bps)
check "xen-tsq family=6: shape holds, 3.19 row $g6 on the IPv6 model $m6 (3 frames; IPv4's is $model)" \
    "[ $rc -eq 0 ] && [ '$(pyq "$tmp/xen6.json" "'%s %s' % (d['family'], d['shape']['pass'])")' = '6 True' ] && is '${g6:-0} >= 0.97 * ${m6:-1} && ${g6:-0} <= 1.03 * ${m6:-0} && ${m6:-0} > 1.4 * ${model:-0}'"

# brisk-bench is checked by tests/tools/test_bench.sh.

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
