#!/usr/bin/env bash
# layering.sh [ROOT] — fails on an #include that points up the library's layers (src/net/net.h explains them):
#
#   core <- wire <- net <- tcp, udp <- stack
#
# A file under src/L/ may include public headers (brisk/...), system headers, and headers of L or of a layer
# below it (tcp and udp share a rank: siblings, neither includes the other); nothing of a layer above it,
# and nothing of the programs outside the library (sim, drivers, posix, tools, tests, bench: they sit on
# top and may include what they need). ROOT defaults to the
# repository this script is in. Exit 0 when every include holds, 1 naming each file:line that does not, 2 on
# a bad argument.
set -u
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
[ $# -le 1 ] || { echo "usage: $0 [ROOT]" >&2; exit 2; }
[ -d "$root/src" ] || { echo "$0: $root has no src/ directory" >&2; exit 2; }
declare -A rank=([core]=0 [wire]=1 [net]=2 [tcp]=3 [udp]=3 [stack]=4)
bad=0
checked=0
for layer in core wire net tcp udp stack; do
    [ -d "$root/src/$layer" ] || { echo "$0: $root/src/$layer is missing" >&2; exit 2; }
    for f in "$root/src/$layer"/*.[ch]; do
        [ -e "$f" ] || continue
        checked=$((checked + 1))
        # Each quoted include: line number and path.
        while IFS=: read -r line inc; do
            dir=${inc%%/*}
            [ "$dir" = "$inc" ] && continue # "x.h" beside the file: same layer
            [ "$dir" = brisk ] && continue  # the public API
            r=${rank[$dir]-}
            rel=${f#"$root"/}
            if [ -z "$r" ]; then
                echo "$rel:$line: includes \"$inc\": $dir/ is outside the library (sim, drivers, posix and tools sit on top of it)"
                bad=$((bad + 1))
            elif [ "$r" -gt "${rank[$layer]}" ]; then
                echo "$rel:$line: includes \"$inc\": $layer/ is below $dir/ (core <- wire <- net <- tcp, udp <- stack); call up through a callback or the protocol table (src/net/net.h)"
                bad=$((bad + 1))
            elif [ "$r" -eq "${rank[$layer]}" ] && [ "$dir" != "$layer" ]; then
                echo "$rel:$line: includes \"$inc\": $layer/ and $dir/ are siblings (transports side by side): neither includes the other"
                bad=$((bad + 1))
            fi
        done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" | sed 's/^\([0-9]*\):[^"]*"\([^"]*\)".*/\1:\2/')
    done
done
if [ "$bad" -gt 0 ]; then
    echo "layering: $bad include(s) point up the layers" >&2
    exit 1
fi
echo "layering: $checked files in src/{core,wire,net,tcp,udp,stack}, every include points down or across"
