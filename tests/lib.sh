# tests/lib.sh — what the shell tests share, sourced by each (`. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"`):
# the tally of checks (ok, bad, check: "ok   - NAME" / "FAIL - NAME" lines, counted in $pass and $fail), skip
# (prints the reason and exits 77, which ctest reports as skipped), and the preconditions of the tests that
# need root and a TAP device.
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1"; }
# check NAME EXPR: ok when EXPR (evaluated) succeeds
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }
skip() {
    echo "SKIP: $1"
    exit 77
}
# need_root_tun: skips unless root, with /dev/net/tun and iproute2's ip
need_root_tun() {
    [ "$(id -u)" -eq 0 ] || skip "needs root (TAP device and network namespaces)"
    [ -c /dev/net/tun ] || skip "no /dev/net/tun"
    command -v ip >/dev/null 2>&1 || skip "no ip (iproute2)"
}
