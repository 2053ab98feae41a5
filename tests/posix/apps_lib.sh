# apps_lib.sh — what tests/posix/test_preload.sh and test_apps.sh share (sourced, not run): a network namespace
# with a TAP between brisk (libbrisk_preload.so through brisk-run) and the kernel, the helpers that start
# programs on either side, and the ok / FAIL lines. The sourcing script sets, before sourcing:
#   brun, lib   brisk-run and the preload library
#   NS, TAP     the namespace's and the TAP's names (unique per script)
#   K, B        the kernel's and brisk's addresses on the TAP (/24)
# and gets skip, then apps_up (creates $tmp, a temporary directory removed at exit unless KEEP_TMP is set,
# and the namespace; skips with 77 when namespaces cannot be made), nsx, onb, bg, ok, bad, check, wait_port,
# wait_tap, wait_brisk, and $pass / $fail.

skip() {
    echo "SKIP: $1"
    exit 77
}
netns=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/../../scripts/netns.sh
cleanup() {
    for p in $(cat "$tmp/pids" 2>/dev/null); do kill "$p" 2>/dev/null; done
    for p in $(cat "$tmp/pids" 2>/dev/null); do wait "$p" 2>/dev/null; done
    ip -n "$NS" tuntap del dev "$TAP" mode tap 2>/dev/null
    bash "$netns" down "$NS"
    [ -n "${KEEP_TMP:-}" ] || rm -rf "$tmp"
}
apps_up() {
    tmp=$(mktemp -d)
    trap cleanup EXIT
    bash "$netns" up "$NS" || skip "cannot create a network namespace"
}
nsx() { ip netns exec "$NS" "$@"; }
# on brisk: the program under brisk-run, in the namespace; the TAP made (persistent) and addressed first.
# BRISK_* variables in the caller's environment (BRISK_PROFILE=... onb PROGRAM) reach the library.
onb() { nsx timeout -k 2 "${ONB_TIMEOUT:-30}" "$brun" --lib "$lib" --tap "$TAP" --ip "$B/24" --kernel-ip "$K/24" -- "$@"; }
# bg nsx|onb ...: in the background, with $! the process itself (timeout, which passes a kill on to its
# child), so that cleanup's kill really ends it and nothing outlives the script holding its output open
bg() {
    case "$1" in
    nsx) shift; ip netns exec "$NS" "$@" & ;;
    onb) shift; ip netns exec "$NS" timeout -k 2 "${ONB_TIMEOUT:-30}" "$brun" --lib "$lib" --tap "$TAP" --ip "$B/24" --kernel-ip "$K/24" -- "$@" & ;;
    *) "$@" & ;;
    esac
    echo $! >>"$tmp/pids"
}

. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
# wait_port PORT: until the kernel listens on PORT in the namespace (3 s)
wait_port() { for _ in $(seq 1 150); do nsx ss -ltn "sport = :$1" | grep -q LISTEN && return 0; sleep 0.02; done; return 1; }
# wait_tap: until brisk holds the TAP (carrier up), 3 s
wait_tap() { for _ in $(seq 1 150); do nsx ip link show "$TAP" 2>/dev/null | grep -q LOWER_UP && return 0; sleep 0.02; done; return 1; }
# wait_brisk PORT: until a program under brisk accepts connections on brisk's PORT (a kernel connect that
# succeeds and closes at once), 5 s
wait_brisk() { for _ in $(seq 1 50); do nsx nc -z -w 1 "$B" "$1" 2>/dev/null && return 0; sleep 0.1; done; return 1; }
