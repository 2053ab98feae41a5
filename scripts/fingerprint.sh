#!/usr/bin/env bash
# fingerprint.sh BUILD_DIR OUT_DIR — the behaviour of a build, as files to compare byte for byte: what a
# refactor must leave unchanged. It writes under OUT_DIR: `brisk-lab seeds --out`, twenty lab runs (bulk with
# loss, with reordering, both ways with small writes, rr-timers with loss, a GSO NIC) in four profiles, each
# with its JSON and its whole capture (every frame, full payload), every scenario file's JSON, and the
# conformance scripts' results (brisk-pkt --json); then OUT_DIR.md5, one line per file.
# Compare two builds: scripts/fingerprint.sh build-old /tmp/a; scripts/fingerprint.sh build /tmp/b;
# diff /tmp/a.md5 /tmp/b.md5. Virtual time only: the same on any machine; ~5 s.
set -eu
[ $# -eq 2 ] || { echo "usage: $0 BUILD_DIR OUT_DIR" >&2; exit 2; }
b=$(cd "$1" && pwd)
o=$2
src=$(cd "$(dirname "$0")/.." && pwd)
for t in brisk-lab brisk-pkt; do
    [ -x "$b/$t" ] || { echo "$0: no $b/$t (build it first)" >&2; exit 2; }
done
rm -rf "$o"
mkdir -p "$o"
o=$(cd "$o" && pwd)
cd "$src"
"$b/brisk-lab" seeds --out "$o/seeds" >"$o/seeds.txt" 2>/dev/null || echo "$0: seeds exited $?" >&2
runs=("bulk --set bytes=20M --set loss=0.01" "bulk --set bytes=20M --set reorder=0.02"
    "bulk --set dir=3 --set bytes=3M --set loss=0.02 --set write=1000" "rr-timers --set loss=0.03"
    "bulk --set bytes=5M --set gso=65535 --set rate=1G")
for p in brisk linux-6.x linux-3.19 linux-3.12; do
    for r in "${runs[@]}"; do
        n=$(echo "$r" | tr ' =' '__')
        # shellcheck disable=SC2086 # the run's words are its arguments
        "$b/brisk-lab" run $r --profile "$p" --json --pcap "$o/$p.$n.pcap" --pcap-frames 0 >"$o/$p.$n.json" \
            2>/dev/null || true # a failing shape is part of the behaviour: its JSON says so
    done
done
for f in scenarios/*.yaml examples/*.yaml; do
    [ -f "$f" ] && { "$b/brisk-lab" run "$f" --json >"$o/$(basename "$f").json" 2>/dev/null || true; }
done
"$b/brisk-pkt" --json tests/conformance >"$o/pkt.json" 2>/dev/null || true
(cd "$o" && find . -type f | sort | xargs md5sum) >"$o.md5"
echo "$(wc -l <"$o.md5") files fingerprinted: $o.md5"
