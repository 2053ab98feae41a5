#!/usr/bin/env bash
# brisk-pkt --kernel: the scripts of tests/kernel/ against this machine's Linux (each in a network namespace
# of its own, behind a TAP device, in real time), and the backend's own behaviour: a wrong expectation fails
# with the same message as against brisk, a call that blocks when the script says it returns fails within
# the tolerance, a start...end call that never returns is bounded, sysctls reach the namespace only, %{ }%
# reads the kernel's tcp_info, and a machine that cannot run it is told why (exit 77).
# Usage: test_pkt_kernel.sh BRISK_LAB BRISK_BENCH [BRISK_PKT] (brisk-pkt is found beside brisk-lab if not
# given). Exits 77 (skipped) without root, /dev/net/tun or network namespaces.
set -u
pkt=${3:-"$(dirname "$1")/brisk-pkt"}
here=$(cd "$(dirname "$0")" && pwd)
scripts="$here/../kernel"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
# run SECONDS OUT SCRIPT [ARGS...]: brisk-pkt --kernel, bounded from outside too; sets rc and took (seconds).
# The backend's own checks below run with a 20 ms timing tolerance ($tol): they test what the backend does
# (sysctls, blocking calls, tcp_info), and the kernel's real-time runs on a loaded machine (make test -j2,
# the sanitizer pass) were seen 5 to 7 ms late; the timing errors they do test are 200 ms off. The
# tests/kernel/ scripts keep packetdrill's 4 ms (tol empty) and are run again when they fail (below).
tol=--tolerance_usecs=20000
run() {
    local limit=$1 out=$2
    shift 2
    local t0=$(date +%s.%N)
    timeout -k 2 "$limit" "$pkt" --kernel $tol "$@" >"$out" 2>&1
    rc=$?
    took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
}

cat >"$tmp/probe.pkt" <<'PKT'
0   socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
PKT
run 20 "$tmp/probe.out" "$tmp/probe.pkt"
if [ "$rc" -eq 77 ]; then
    echo "skip: $(cat "$tmp/probe.out")"
    exit 77
fi
check "a one-call script passes against the kernel" "[ $rc -eq 0 ]"

# Not root: exit 77, saying why (the probe runs before any script).
if command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
    chmod 755 "$tmp" && chmod 644 "$tmp/probe.pkt"
    timeout 20 setpriv --reuid=nobody --regid=nogroup --clear-groups "$pkt" --kernel "$tmp/probe.pkt" \
        >"$tmp/nobody.out" 2>&1
    rc=$?
    check "not root: exit 77 and the reason" "[ $rc -eq 77 ] && grep -q 'needs root' '$tmp/nobody.out'"
fi

# Every script of tests/kernel/ passes (one table; each script has its own namespace). The kernel runs in
# real time, so on a loaded machine (make test -j2, the sanitizer pass) a script can miss the 4 ms tolerance
# or see a blocking call return late — seen in CI: 1 to 5 ms over on two scripts, a write 20 ms late. A
# script that failed goes again, alone, twice at most: it passes if one run does; a wrong packet or return
# value fails every run.
tol=
run 120 "$tmp/all.out" "$scripts"
[ "$rc" -eq 0 ] || cat "$tmp/all.out"
still="" again=""
for s in $(awk '$2 == "FAIL" { print $1 }' "$tmp/all.out"); do
    for _ in 1 2; do
        run 60 "$tmp/again.out" "$s"
        [ "$rc" -eq 0 ] && break
    done
    if [ "$rc" -eq 0 ]; then
        again="$again $(basename "$s")"
    else
        still="$still $(basename "$s")"
        cat "$tmp/again.out"
    fi
done
[ -n "$again" ] && echo "# passed when run again alone:$again"
tol=--tolerance_usecs=20000
check "tests/kernel: every script passes against the kernel${still:+ (failing:$still)}" \
    "grep -q '^kernel [0-9].* passed.* 0 malformed' '$tmp/all.out' && [ -z '$still' ]"
check "the table's summary names the kernel" "grep -q '^kernel [0-9]' '$tmp/all.out'"

# A wrong expectation: packetdrill's message, the actual packet as the kernel sent it.
cat >"$tmp/wrong.pkt" <<'PKT'
0   socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
+0  bind(3, ..., ...) = 0
+0  listen(3, 1) = 0
+0  < S 0:0(0) win 65535 <mss 1460,sackOK,nop,nop,nop,wscale 7>
+0  > S. 0:0(0) ack 1 win 1234 <mss 1460,nop,nop,sackOK,nop,wscale 7>
PKT
run 20 "$tmp/wrong.out" "$tmp/wrong.pkt"
check "a wrong window fails (exit 1)" "[ $rc -eq 1 ]"
check "... with the field, both values and the line" \
    "grep -q 'wrong.pkt:5: error handling packet: live packet field tcp_window: expected: 1234 vs' \
     '$tmp/wrong.out' && grep -q 'expected: 1234 vs actual: 64240$' '$tmp/wrong.out'"
check "... and the actual packet" \
    "grep -q 'actual packet: .* S\. 0:0(0) ack 1 win 64240 <mss 1460' '$tmp/wrong.out'"

# A call written as returning at once that blocks: failed once the tolerance is past, not hung.
cat >"$tmp/blocks.pkt" <<'PKT'
0   socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
+0  bind(3, ..., ...) = 0
+0  listen(3, 1) = 0
+0  accept(3, ..., ...) = 4
PKT
run 20 "$tmp/blocks.out" "$tmp/blocks.pkt"
check "a blocking accept written without ... fails (exit 1)" \
    "[ $rc -eq 1 ] && grep -q 'blocks.pkt:4: accept call blocked (still running at 0.0[0-3]' '$tmp/blocks.out'"
check "... within a second (took $took s)" "awk 'BEGIN { exit !($took < 1.5) }'"

# A start...end call that never returns: the script ends, packetdrill's second passes, the run fails.
cat >"$tmp/hang.pkt" <<'PKT'
0   socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
+0  bind(3, ..., ...) = 0
+0  listen(3, 1) = 0
+0...0.5 accept(3, ..., ...) = 4
PKT
run 20 "$tmp/hang.out" "$tmp/hang.pkt"
check "a start...end call still blocked at the end fails (exit 1)" \
    "[ $rc -eq 1 ] && grep -q 'hang.pkt:4: runtime error: exiting while a blocking system call is in' \
     '$tmp/hang.out'"
check "... within the script's end + 2 s (took $took s)" "awk 'BEGIN { exit !($took < 2.5) }'"

# A start...end call that returns when the peer's data comes, checked against its end.
cat >"$tmp/read.pkt" <<'PKT'
0    socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
+0   bind(3, ..., ...) = 0
+0   listen(3, 1) = 0
+0   < S 0:0(0) win 65535 <mss 1460>
+0   > S. 0:0(0) ack 1 <mss 1460>
+.01 < . 1:1(0) ack 1 win 65535
+0   accept(3, ..., ...) = 4
+0...0.1 read(4, ..., 1000) = 500
+.1  < P. 1:501(500) ack 1 win 65535
+0   > . 1:1(0) ack 501
+0   close(4) = 0
+0   > F. 1:1(0) ack 501
PKT
run 20 "$tmp/read.out" "$tmp/read.pkt"
check "a blocking read returns with the data, at its end" "[ $rc -eq 0 ]"
[ "$rc" -eq 0 ] || cat "$tmp/read.out"
sed 's/^+0...0.1 read/+0...0.3 read/' "$tmp/read.pkt" >"$tmp/read-late.pkt"
run 20 "$tmp/read-late.out" "$tmp/read-late.pkt"
check "... and a wrong end is a timing error" \
    "[ $rc -eq 1 ] && grep -q 'expected system call return at 0.31' '$tmp/read-late.out'"

# sysctls: at time 0 and later, written in the namespace; outside net.* refused.
cat >"$tmp/sysctl.pkt" <<'PKT'
`sysctl -q net.ipv4.tcp_sack=0`
0   `sysctl -q net.ipv4.tcp_timestamps=0; echo 0 > /proc/sys/net/ipv4/tcp_window_scaling`
0   socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
+0  fcntl(3, F_SETFL, O_RDWR|O_NONBLOCK) = 0
+0  connect(3, ..., ...) = -1 EINPROGRESS (Operation now in progress)
+0  > S 0:0(0) win 64240 <mss 1460>
+.1 `sysctl -q net.ipv4.tcp_syn_retries=1`
PKT
run 20 "$tmp/sysctl.out" "$tmp/sysctl.pkt"
check "sysctls turn the SYN's options off, a later sysctl runs too" "[ $rc -eq 0 ]"
[ "$rc" -eq 0 ] || cat "$tmp/sysctl.out"
cat >"$tmp/host.pkt" <<'PKT'
`sysctl -q kernel.pid_max=32768`
0   socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
PKT
run 20 "$tmp/host.out" "$tmp/host.pkt"
check "a sysctl outside net.* is refused (unsupported, exit 3)" \
    "[ $rc -eq 3 ] && grep -q 'only net.\* sysctls' '$tmp/host.out'"

# %{ }% reads the kernel's tcp_info; an assertion that does not hold fails with its values.
cat >"$tmp/info.pkt" <<'PKT'
0    socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
+0   bind(3, ..., ...) = 0
+0   listen(3, 1) = 0
+0   < S 0:0(0) win 65535 <mss 1000>
+0   > S. 0:0(0) ack 1 <mss 1460>
+.01 < . 1:1(0) ack 1 win 65535
+0   accept(3, ..., ...) = 4
+0   %{ assert tcpi_snd_mss == 1000 and tcpi_state == TCP_ESTABLISHED, tcpi_snd_mss }%
+0   %{ assert tcpi_snd_cwnd == 11, tcpi_snd_cwnd }%
PKT
run 20 "$tmp/info.out" "$tmp/info.pkt"
check "%{ }% sees the kernel's tcp_info (a false assertion fails with its value)" \
    "[ $rc -eq 1 ] && grep -q 'info.pkt:9: .*10' '$tmp/info.out'"

# A script for brisk's own profile describes brisk, not Linux: unsupported against the kernel, not run.
cat >"$tmp/brisk.pkt" <<'PKT'
--profile=brisk
0   socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
PKT
run 20 "$tmp/brisk.out" "$tmp/brisk.pkt"
check "a --profile=brisk script is unsupported against the kernel (exit 3)" \
    "[ $rc -eq 3 ] && grep -q 'describes brisk.s profile \"brisk\", not Linux' '$tmp/brisk.out'"

# --json names the backend; --set means nothing to the kernel.
run 20 "$tmp/json.out" --json "$tmp/probe.pkt"
check "--json: pass, and the backend" \
    "grep -q '\"status\": \"pass\"' '$tmp/json.out' && grep -q '\"backend\": \"kernel ' '$tmp/json.out'"
run 20 "$tmp/set.out" --set tcp_sack=0 "$tmp/probe.pkt"
check "--set with --kernel is refused (exit 2)" "[ $rc -eq 2 ]"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
