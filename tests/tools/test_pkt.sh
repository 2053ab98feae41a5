#!/usr/bin/env bash
# brisk-pkt as a user runs it: verdicts and exit statuses (pass 0, fail 1, malformed 2, unsupported 3), the
# "file:line" messages, directory runs with their table and --json, determinism, and bad command lines.
# Usage: test_pkt.sh BRISK_LAB BRISK_BENCH (brisk-pkt is found beside them)
set -u
pkt="$(dirname "$1")/brisk-pkt"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

# A passive open and one write, as Linux 6.x does them.
cat >"$tmp/pass.pkt" <<'PKT'
0   socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
+0  bind(3, ..., ...) = 0
+0  listen(3, 1) = 0
+0  < S 0:0(0) win 65535 <mss 1000,sackOK,nop,nop,nop,wscale 7>
+0  > S. 0:0(0) ack 1 <mss 1460,nop,nop,sackOK,nop,wscale 7>
+.1 < . 1:1(0) ack 1 win 257
+0  accept(3, ..., ...) = 4
+0  write(4, ..., 1000) = 1000
+0  > P. 1:1001(1000) ack 1
+.1 < . 1:1(0) ack 1001 win 257
PKT
"$pkt" "$tmp/pass.pkt" >"$tmp/out" 2>&1
check "a passing script exits 0, silently" "[ $? -eq 0 ] && [ ! -s '$tmp/out' ]"

# The same with the wrong expectation on line 9: exit 1, file:line and both packets.
sed 's/^+0  > P. 1:1001(1000) ack 1$/+0  > . 1:1001(1000) ack 1/' "$tmp/pass.pkt" >"$tmp/fail.pkt"
"$pkt" "$tmp/fail.pkt" >"$tmp/out" 2>&1
rc=$?
check "a mismatch exits 1" "[ $rc -eq 1 ]"
check "the mismatch names file:line and the field" "grep -q 'fail.pkt:9: error handling packet: live packet field tcp_psh: expected: 0 vs actual: 1' '$tmp/out'"
check "the mismatch shows the script packet and the actual one" \
    "grep -q '^script packet:  0.100000 . 1:1001(1000) ack 1' '$tmp/out' && grep -q '^actual packet:  0.100000 P. 1:1001(1000) ack 1' '$tmp/out'"

# A packet that comes at the wrong time.
sed 's/^+0  > P. 1:1001(1000) ack 1$/+.05 > P. 1:1001(1000) ack 1/' "$tmp/pass.pkt" >"$tmp/late.pkt"
"$pkt" "$tmp/late.pkt" >"$tmp/out" 2>&1
check "an early packet is a timing error" "[ $? -eq 1 ] && grep -q 'late.pkt:9: timing error: expected outbound packet at 0.150000 sec but happened at 0.100000 sec' '$tmp/out'"
"$pkt" --tolerance_usecs=60000 "$tmp/late.pkt" >"$tmp/out" 2>&1
check "--tolerance_usecs widens the window" "[ $? -eq 0 ]"

# A system call result.
sed 's/^+0  write(4, ..., 1000) = 1000$/+0  write(4, ..., 1000) = 999/' "$tmp/pass.pkt" >"$tmp/res.pkt"
"$pkt" "$tmp/res.pkt" >"$tmp/out" 2>&1
check "a wrong result exits 1 with the call" "[ $? -eq 1 ] && grep -q 'res.pkt:8: write call: expected result 999 but got 1000' '$tmp/out'"

# %{ }% assertions.
{ cat "$tmp/pass.pkt"; echo '+0 %{ assert tcpi_snd_cwnd == 10, tcpi_snd_cwnd }%'; echo '+0 %{ assert tcpi_ca_state == TCP_CA_Open and 0 <= tcpi_unacked < 1 }%'; } >"$tmp/code.pkt"
"$pkt" "$tmp/code.pkt" >"$tmp/out" 2>&1
check "tcpi assertions that hold pass" "[ $? -eq 0 ]"
{ cat "$tmp/pass.pkt"; echo '+0 %{ assert tcpi_snd_cwnd == 3, tcpi_snd_cwnd }%'; } >"$tmp/code2.pkt"
"$pkt" "$tmp/code2.pkt" >"$tmp/out" 2>&1
check "a failed assert exits 1 with its text and value" "[ $? -eq 1 ] && grep -q 'code2.pkt:11: assertion failed: tcpi_snd_cwnd == 3: 10' '$tmp/out'"
{ cat "$tmp/pass.pkt"; echo '+0 %{ assert tcpi_fackets == 0 }%'; } >"$tmp/code3.pkt"
"$pkt" "$tmp/code3.pkt" >"$tmp/out" 2>&1
check "a tcp_info field brisk lacks is unsupported (exit 3)" "[ $? -eq 3 ] && grep -q 'tcpi_fackets' '$tmp/out'"

# Malformed scripts: file:line:col, exit 2.
printf '0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 < S 0:0(0) <mss 1000>\n' >"$tmp/nowin.pkt"
"$pkt" "$tmp/nowin.pkt" >"$tmp/out" 2>&1
check "an inbound packet without a window is malformed" "[ $? -eq 2 ] && grep -q 'nowin.pkt:2:4: error: window must be specified' '$tmp/out'"
printf '0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 > S 0:0(10) <...>\n' >"$tmp/seq.pkt"
"$pkt" "$tmp/seq.pkt" >"$tmp/out" 2>&1
check "inconsistent sequence numbers are malformed" "[ $? -eq 2 ] && grep -q 'seq.pkt:2:8: error: inconsistent TCP sequence numbers' '$tmp/out'"
printf '0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 < S 0:0(0) win 100 <mss 1000,wscale 7>\n' >"$tmp/pad.pkt"
"$pkt" "$tmp/pad.pkt" >"$tmp/out" 2>&1
check "unpadded options are malformed" "[ $? -eq 2 ] && grep -q 'not padded' '$tmp/out'"
printf '1 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n' >"$tmp/t0.pkt"
"$pkt" "$tmp/t0.pkt" >"$tmp/out" 2>&1
check "a first event not at 0 is malformed" "[ $? -eq 2 ] && grep -q 'first event should be at time 0' '$tmp/out'"
printf '0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 \x01\n' >"$tmp/junk.pkt"
"$pkt" "$tmp/junk.pkt" >"$tmp/out" 2>&1
check "a stray byte is malformed with line and column" "[ $? -eq 2 ] && grep -q 'junk.pkt:2:4: error: unexpected byte 0x01' '$tmp/out'"

# Unsupported features exit 3 and say what.
printf '0 socket(..., SOCK_DGRAM, IPPROTO_UDP) = 3\n' >"$tmp/udp.pkt"
"$pkt" "$tmp/udp.pkt" >"$tmp/out" 2>&1
check "UDP is unsupported" "[ $? -eq 3 ] && grep -q 'udp.pkt:1: unsupported: socket call' '$tmp/out'"
printf '`sysctl -q net.ipv4.tcp_thin_linear_timeouts=1`\n0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n' >"$tmp/sysctl.pkt"
"$pkt" "$tmp/sysctl.pkt" >"$tmp/out" 2>&1
check "an unknown sysctl is unsupported and named" "[ $? -eq 3 ] && grep -q 'tcp_thin_linear_timeouts' '$tmp/out'"

# Sysctls become settings: without SACK the SYN-ACK offers none.
{ echo '`sysctl -q net.ipv4.tcp_sack=0`'; sed 's/<mss 1460,nop,nop,sackOK,nop,wscale 7>/<mss 1460,nop,wscale 7>/' "$tmp/pass.pkt"; } >"$tmp/nosack.pkt"
"$pkt" "$tmp/nosack.pkt" >"$tmp/out" 2>&1
check "tcp_sack=0 in the init command reaches the stack" "[ $? -eq 0 ]"

# Directory runs: a table, a summary, exit 1 when one fails; --json.
mkdir -p "$tmp/tree/a" "$tmp/tree/b"
cp "$tmp/pass.pkt" "$tmp/tree/a/one.pkt"
cp "$tmp/pass.pkt" "$tmp/tree/b/two.pkt"
"$pkt" "$tmp/tree" >"$tmp/out" 2>&1
check "a passing tree exits 0 with a summary" "[ $? -eq 0 ] && grep -q '2 passed, 0 failed, 0 malformed, 0 unsupported (of 2)' '$tmp/out'"
cp "$tmp/fail.pkt" "$tmp/tree/b/three.pkt"
"$pkt" --json "$tmp/tree" >"$tmp/out.json" 2>&1
check "a failing tree exits 1" "[ $? -eq 1 ]"
check "--json lists each script and the counts" \
    "grep -q '\"status\": \"FAIL\"' '$tmp/out.json' && grep -q '\"passed\": 2' '$tmp/out.json' && grep -q '\"failed\": 1' '$tmp/out.json'"
cp "$tmp/udp.pkt" "$tmp/tree/a/udp.pkt"
rm "$tmp/tree/b/three.pkt"
"$pkt" "$tmp/tree" >"$tmp/out" 2>&1
check "an unsupported script does not fail a tree" "[ $? -eq 0 ]"
"$pkt" --strict "$tmp/tree" >"$tmp/out" 2>&1
check "... unless --strict" "[ $? -eq 1 ]"

# Profiles and settings from the command line.
"$pkt" --profile brisk "$tmp/pass.pkt" >"$tmp/out" 2>&1
check "--profile brisk runs" "[ $? -eq 0 ]"
"$pkt" --profile linux-9 "$tmp/pass.pkt" >"$tmp/out" 2>&1
check "an unknown profile exits 2 naming it" "[ $? -eq 2 ] && grep -q 'unknown profile \"linux-9\"' '$tmp/out'"
"$pkt" --set tcp_sack=maybe "$tmp/pass.pkt" >"$tmp/out" 2>&1
check "a malformed --set exits 2" "[ $? -eq 2 ]"
"$pkt" --bogus "$tmp/pass.pkt" >"$tmp/out" 2>&1
check "an unknown option exits 2" "[ $? -eq 2 ]"
"$pkt" "$tmp/missing.pkt" >"$tmp/out" 2>&1
check "a missing file exits 2" "[ $? -eq 2 ]"
"$pkt" --help >"$tmp/out" 2>&1
check "--help exits 0 with the usage" "[ $? -eq 0 ] && grep -q '^usage: brisk-pkt' '$tmp/out'"

# Deterministic: the same verbose trace twice.
"$pkt" --verbose "$tmp/pass.pkt" >"$tmp/v1" 2>&1
"$pkt" --verbose "$tmp/pass.pkt" >"$tmp/v2" 2>&1
check "the same script runs the same way twice" "cmp -s '$tmp/v1' '$tmp/v2' && [ -s '$tmp/v1' ]"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
