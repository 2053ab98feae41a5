#!/usr/bin/env bash
# ceiling.sh — how fast `brisk-bench bulk` could be if no payload byte were ever copied or compared (issue 8).
#
# brisk-bench compares bulk goodput with the single-copy limit (`brisk-bench memcpy`: 1448-byte chunks through
# a cache-resident 1 MB). A byte of the bulk benchmark makes five passes: the application's send into the send
# stream, transmit into the packet, the NIC model's copy into the wire frame, receive into the receive stream,
# the application's memcmp. Which share of the limit would a zero-copy brisk reach? This script measures the
# upper bound directly: it builds the committed tree (HEAD) once more with bench/nocopy.patch applied — the
# four payload copies and the memcmp removed, headers still written and every per-segment mechanism
# untouched — and runs both builds' bulk benchmark, alternated, pinned to one CPU.
#
#   bench/ceiling.sh [BUILD_DIR] [RUNS] [MODE...]   (defaults: build, 3, gro gso_gro)
#
# MODE is a `brisk-bench bulk --mode` name other than no_offload: with software checksums the receiver would
# verify payloads the patched sender never wrote, and drop them. The patched build's bytes are garbage; its
# figures bound what any copy-avoiding design could reach, they are not a result of brisk. Needs git, cmake
# and a C compiler (make test installs them); the extra LTO build takes ~2 minutes on two cores.
set -u
build=${1:-build}
runs=${2:-3}
shift $(($# < 2 ? $# : 2))
modes=${*:-gro gso_gro}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
base=$build/brisk-bench
[ -x "$base" ] || { echo "ceiling.sh: $base not found: build first (make test, or cmake --build $build)" >&2; exit 2; }
case "$runs" in ''|*[!0-9]*|0) echo "ceiling.sh: RUNS must be a positive number, not '$runs'" >&2; exit 2 ;; esac
for m in $modes; do
    case "$m" in csum|gro|gso|gso_gro) ;;
    *) echo "ceiling.sh: mode '$m': one of csum gro gso gso_gro (no_offload cannot run without payloads)" >&2
       exit 2 ;;
    esac
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "ceiling.sh: building HEAD with bench/nocopy.patch in $tmp ..." >&2
git -C "$root" archive HEAD | tar -x -C "$tmp" || exit 1
(cd "$tmp" && git apply "$root/bench/nocopy.patch") || { echo "ceiling.sh: bench/nocopy.patch no longer applies" >&2; exit 1; }
cmake -S "$tmp" -B "$tmp/build" -DCMAKE_BUILD_TYPE=Release >"$tmp/cmake.log" 2>&1 &&
    cmake --build "$tmp/build" --target brisk-bench -j "$(nproc)" >>"$tmp/cmake.log" 2>&1 ||
    { tail -n 20 "$tmp/cmake.log" >&2; echo "ceiling.sh: the patched build failed" >&2; exit 1; }
nocopy=$tmp/build/brisk-bench

pin=""
command -v taskset >/dev/null 2>&1 && pin="taskset -c 0"
# gbps BENCH MODE: Gbit/s per CPU-second of one full bulk run
gbps() { $pin "$1" bulk --mode "$2" 2>/dev/null | sed -n 's/.* \([0-9.]*\) Gbit\/s per CPU-second.*/\1/p' | head -n 1; }

limit=$($pin "$base" memcpy 2>/dev/null | sed -n 's/.*: \([0-9.]*\) Gbit\/s per CPU-second.*/\1/p' | head -n 1)
# share X: X as a percentage of the single-copy limit
share() { awk -v x="$1" -v l="$limit" 'BEGIN { if (l > 0 && x > 0) printf "%.1f %%", 100 * x / l; else print "?" }'; }
med() { echo "$1" | tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : "?") }'; }
echo "single-copy limit: ${limit:-?} Gbit/s per CPU-second (brisk-bench memcpy); medians of $runs alternated runs"
printf '%-8s  %-34s  %-34s  %s\n' mode "brisk: Gbit/s per CPU-s (share)" "no payload copies (share)" "ratio"
for m in $modes; do
    a="" b=""
    for _ in $(seq "$runs"); do # alternated: this machine's CPUs change speed over minutes
        echo "ceiling.sh: $m ..." >&2
        a="$a $(gbps "$base" "$m")"
        b="$b $(gbps "$nocopy" "$m")"
    done
    ma=$(med "$a") mb=$(med "$b")
    ratio=$(awk -v a="$ma" -v b="$mb" 'BEGIN { if (a > 0) printf "%.2fx", b / a; else print "?" }')
    printf '%-8s  %-34s  %-34s  %s\n' "$m" "$ma ($(share "$ma"))" "$mb ($(share "$mb"))" "$ratio"
done
