#!/usr/bin/env bash
# Installs the Debian packages brisk needs to build, test and run the lab — only those missing.
# Used by every Makefile target. As root it runs `apt-get update` once and `apt-get install -y`;
# as another user it prints the exact command to run and fails.
set -eu

pkgs="build-essential cmake pkg-config clang libcmocka-dev tcpdump gnuplot-nox libjansson-dev iperf3"
pkgs="$pkgs libyaml-dev" # brisk-lab's scenario files (tools/lab/spec_parse.c)
# Network namespaces for the real-network runs (scripts/netns.sh, scripts/try.sh, tests/interop/).
pkgs="$pkgs iproute2"
pkgs="$pkgs libclang-rt-dev" # libFuzzer and the sanitizer runtimes for clang (make fuzz, make sanitize)
pkgs="$pkgs liblwip-dev" # lwIP for bench/lwip/lwip-tap, the lwIP rows of bench/compare.sh (optional at build time)
pkgs="$pkgs help2man" # man pages from the tools' --help (cmake/install.cmake)
pkgs="$pkgs curl wget netcat-openbsd socat python3" # socat: tests/install/ (TAP echo); all: programs run on brisk by tests/posix/test_preload.sh
pkgs="$pkgs nginx-light redis-server redis-tools tgt libiscsi-bin wrk" # servers and clients of tests/posix/test_apps.sh
pkgs="$pkgs libnetfilter-queue-dev iptables iputils-ping jq" # brisk-impair (NFQUEUE): bench/impair-compare.sh, tests/tools/test_impair.sh (optional at build time)

missing=""
for p in $pkgs; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
    echo "brisk: missing Debian packages:$missing" >&2
    echo "brisk: install them with: sudo apt-get install -y$missing" >&2
    exit 1
fi
echo "brisk: installing missing Debian packages:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
# One update per machine boot is enough; a stale list makes install fail, so retry once after update.
if ! apt-get install -y --no-install-recommends $missing >/dev/null 2>&1; then
    apt-get update -q >/dev/null
    apt-get install -y --no-install-recommends $missing >/dev/null
fi
