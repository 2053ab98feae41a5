#!/usr/bin/env bash
# Command-line behaviour of the interop peers (no privileges needed): bad input is refused with a message
# naming the problem and exit status 2, before any device or socket is touched.
# Usage: test_cli.sh BRISK_PEER KSOCK
set -u
peer=$1
ks=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
# refused NAME PATTERN CMD...: exit 2 and PATTERN in stderr
refused() {
    local name=$1 pat=$2
    shift 2
    "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    if [ $rc -eq 2 ] && grep -q -- "$pat" "$tmp/err"; then ok "$name"; else
        bad "$name (exit $rc: $(head -n 1 "$tmp/err"))"
    fi
}
refused "brisk-peer: unknown option" "invalid option: '--bogus'" "$peer" --bogus 1
refused "brisk-peer: no role" "exactly one of --listen / --connect" "$peer" --tap t --ip 10.0.0.2/24
refused "brisk-peer: two roles" "exactly one" "$peer" --ip 10.0.0.2/24 --listen 1 --connect 10.0.0.1:2
refused "brisk-peer: bad prefix" "invalid --ip: '10.0.0.2/33'" "$peer" --ip 10.0.0.2/33 --listen 1
refused "brisk-peer: bad port" "invalid --listen: '70000'" "$peer" --ip 10.0.0.2/24 --listen 70000
refused "brisk-peer: bad connect address" "invalid --connect" "$peer" --ip 10.0.0.2/24 --connect 10.0.0.1
refused "brisk-peer: bad mode" "invalid --mode: 'flood'" "$peer" --ip 10.0.0.2/24 --listen 1 --mode flood
refused "brisk-peer: rr needs connect" "rr is a client role" "$peer" --ip 10.0.0.2/24 --listen 1 --mode rr
refused "brisk-peer: bad loss" "invalid --loss: '150%'" "$peer" --ip 10.0.0.2/24 --listen 1 --loss 150%
refused "brisk-peer: bad time" "invalid --txc-delay: '5'" "$peer" --ip 10.0.0.2/24 --listen 1 --txc-delay 5
refused "brisk-peer: empty --ctl" "invalid --ctl: ''" "$peer" --ip 10.0.0.2/24 --listen 1 --ctl ""
refused "brisk-peer: unknown setting" "no such" "$peer" --ip 10.0.0.2/24 --listen 1 --set tcp_nope=1
refused "brisk-peer: unknown profile" "invalid --profile: 'linux-9'" "$peer" --ip 10.0.0.2/24 --listen 1 --profile linux-9
refused "brisk-peer: missing value" "invalid --bytes: '(missing)'" "$peer" --ip 10.0.0.2/24 --listen 1 --bytes
refused "ksock: unknown option" "invalid option" "$ks" --listen 1 --bogus 1
refused "ksock: no role" "exactly one" "$ks" --mode sink
refused "ksock: bad connect" "invalid --connect: 'nowhere:1'" "$ks" --connect nowhere:1
refused "ksock: bad size" "invalid --bytes: '12Q'" "$ks" --listen 1 --bytes 12Q
refused "ksock: bad expect" "invalid --expect: 'maybe'" "$ks" --listen 1 --expect maybe
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
