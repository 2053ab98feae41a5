#!/usr/bin/env bash
# try.sh — brisk against the real Linux TCP stack in one command (`make try`): a network namespace, a TAP
# device whose kernel side lives in it, a brisk-perf server on the brisk side, and Debian's iperf3 as the
# client in the namespace — then the reverse roles. Prints both sides' reports and cleans up. Traffic never
# leaves the namespace.
#
#   scripts/try.sh [BUILD_DIR]           (default build/; needs root, /dev/net/tun and iperf3)
#   TRY_TIME=10 scripts/try.sh           seconds per test (default 5)
#   TRY_ARGS="--set tcp_pacing=0" ...    extra brisk-perf options (stack settings, --no-gso, --loss 1%)
set -u
build=${1:-build}
secs=${TRY_TIME:-5}
here=$(cd "$(dirname "$0")" && pwd)
netns=$here/netns.sh
perf=$build/brisk-perf
[ -x "$perf" ] || { echo "try: $perf is not built (run make)" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "try: needs root (TAP device and network namespaces)" >&2; exit 1; }
[ -c /dev/net/tun ] || { echo "try: no /dev/net/tun" >&2; exit 1; }
command -v iperf3 >/dev/null 2>&1 || { echo "try: iperf3 is missing (apt-get install iperf3)" >&2; exit 1; }

NS=brisk-try-$$
tmp=$(mktemp -d)
pids=""
cleanup() {
    for p in $pids; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    bash "$netns" down "$NS"
    rm -rf "$tmp"
}
trap cleanup EXIT
bash "$netns" up "$NS" || exit 1
rc=0

echo "== namespace $NS: kernel 10.56.0.1 <-> TAP brisk0 <-> brisk 10.56.0.2"
echo "== 1. iperf3 -c (kernel sends) -> brisk-perf server, $secs s"
# brisk runs inside the namespace too: the TAP is created there, so nothing appears in the caller's.
ip netns exec "$NS" "$perf" server --tap brisk0 --ip 10.56.0.2/24 ${TRY_ARGS:-} >"$tmp/server.log" 2>&1 &
pids="$pids $!"
bash "$netns" tap "$NS" brisk0 10.56.0.1/24 || rc=1
sleep 0.5
ip netns exec "$NS" iperf3 -c 10.56.0.2 -t "$secs" || rc=1
echo "== 2. iperf3 -c -R (brisk sends) -> brisk-perf server, $secs s"
ip netns exec "$NS" iperf3 -c 10.56.0.2 -t "$secs" -R || rc=1
sleep 0.5
echo "== brisk-perf server said:"
cat "$tmp/server.log"

echo "== 3. brisk-perf client (brisk sends) -> iperf3 -s, $secs s   (TAP brisk1, kernel 10.56.1.1)"
ip netns exec "$NS" iperf3 -s -1 >"$tmp/iperf3-s.log" 2>&1 &
pids="$pids $!"
ip netns exec "$NS" "$perf" client 10.56.1.1 -t "$secs" --tap brisk1 --ip 10.56.1.2/24 --wait 5s \
    ${TRY_ARGS:-} >"$tmp/client.log" 2>&1 &
cp=$!
pids="$pids $cp"
bash "$netns" tap "$NS" brisk1 10.56.1.1/24 || rc=1
wait "$cp" || rc=1
cat "$tmp/client.log"
echo "== iperf3 -s said:"
sleep 0.5
cat "$tmp/iperf3-s.log"
exit $rc
