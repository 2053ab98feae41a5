#!/usr/bin/env bash
# The install, tested as a user meets it (cmake/install.cmake, examples/): `cmake --install` (what `make
# install` runs) into a temporary DESTDIR, then, against that tree only:
#   files      headers under include/brisk, each library shared (SONAME libX.so.0, the .so and .so.0 links)
#              and static, the pkg-config files, brisk-lab / brisk-perf / brisk-bench / brisk-ss / brisk-nstat and their man pages
#   symbols    each .so's exported dynamic symbols (node BRISK_0) equal tests/install/<lib>.symbols, and that
#              list equals the functions the library's installed headers declare (gcc -aux-info)
#   pkg-config the link line of brisk-sim / brisk-drivers names the library before libbrisk; --static adds -lm
#   examples   built from examples/ with the installed pkg-config files, with gcc and with clang, shared and
#              static (the static archives must link with clang even from a gcc LTO build), then run:
#              sim_pair (two simulated hosts: every byte arrives intact both ways, clean and under 2 % loss,
#              and the same virtual-time result from all four builds), the installed brisk-lab on
#              examples/scenario.yaml (its bounds must hold), and, as root with /dev/net/tun, tap_echo
#              answering socat in a network namespace byte for byte (skipped otherwise, saying why).
# Usage: test_install.sh BUILD_DIR [SANITIZE]. Exit 77 (skip) for a sanitizer build, whose libraries need the
# sanitizer runtime in every program that links them.
set -u
build=$(cd "$1" && pwd)
sanitize=${2:-0}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
if [ "$sanitize" = 1 ]; then
    echo "SKIP: sanitizer build (its installed libraries need the sanitizer runtime); the plain build runs this"
    exit 77
fi

tmp=$(mktemp -d)
NS=brisk-inst-$$
cleanup() {
    for p in $(cat "$tmp/pids" 2>/dev/null); do kill "$p" 2>/dev/null; done
    [ -n "${ns_made:-}" ] && bash "$src/scripts/netns.sh" down "$NS"
    rm -rf "$tmp"
}
trap cleanup EXIT

. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

root=$tmp/root
prefix=/usr/local
if ! DESTDIR=$root cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1; then
    cat "$tmp/install.log"
    echo "FAIL - cmake --install"
    exit 1
fi
ok "cmake --install $build --prefix $prefix with DESTDIR=$root"
P=$root$prefix
libdir=$(sed -n 's|^libdir=${prefix}/||p' "$build/pkgconfig/brisk.pc.in")
L=$P/$libdir
version=$(sed -n 's/^Version: //p' "$build/pkgconfig/brisk.pc.in")

# ---- files ----
for h in brisk netdev sim loop tap; do
    check "header include/brisk/$h.h" "[ -f '$P/include/brisk/$h.h' ]"
done
for lib in brisk brisk_sim brisk_drivers; do
    check "lib$lib.so.$version, .so.0 and .so links" \
        "[ -f '$L/lib$lib.so.$version' ] && [ \$(readlink '$L/lib$lib.so.0') = lib$lib.so.$version ] &&
         [ \$(readlink '$L/lib$lib.so') = lib$lib.so.0 ]"
    check "lib$lib.so SONAME lib$lib.so.0" \
        "readelf -d '$L/lib$lib.so.$version' | grep -q 'SONAME.*\[lib$lib.so.0\]'"
    check "lib$lib.a" "[ -f '$L/lib$lib.a' ]"
done
check "libbrisk_sim.so needs libbrisk.so.0" "readelf -d '$L/libbrisk_sim.so' | grep -q 'NEEDED.*\[libbrisk.so.0\]'"
for pc in brisk brisk-sim brisk-drivers; do
    check "$libdir/pkgconfig/$pc.pc" "[ -f '$L/pkgconfig/$pc.pc' ]"
done
for t in brisk-lab brisk-perf brisk-bench brisk-ss brisk-nstat; do
    check "bin/$t runs" "'$P/bin/$t' --help >/dev/null 2>&1"
    m=$P/share/man/man1/$t.1
    if [ ! -f "$m" ]; then
        bad "share/man/man1/$t.1 (not made: is help2man installed? scripts/deps.sh installs it)"
    else
        # The page is the program's own --help: its usage line must be in it.
        use=$("$P/bin/$t" --help 2>&1 | head -1 | awk '{print $2, $3}')
        # The page's text without roff: font escapes, \- and macro names gone, lines joined.
        sed -e 's/\\f[A-Z]//g; s/\\[,\/]//g; s/\\-/-/g' -e 's/^\.[A-Za-z]* *//' "$m" | tr '\n' ' ' | tr -s ' ' \
            >"$tmp/$t.man"
        check "share/man/man1/$t.1 is a page (.TH) made from the usage ($use)" \
            "grep -q '^\.TH \"*${t^^}' '$m' && grep -qF -- '$use' '$tmp/$t.man'"
    fi
done

# ---- exported symbols ----
for lib in brisk brisk_sim brisk_drivers; do
    case $lib in
    brisk) hdrs="brisk netdev" ;;
    brisk_sim) hdrs="sim" ;;
    brisk_drivers) hdrs="loop tap" ;;
    esac
    list=$here/lib$lib.symbols
    grep -v '^#' "$list" | sort >"$tmp/$lib.list"
    nm -D --defined-only "$L/lib$lib.so" | awk '$2 != "A" { print $3 }' >"$tmp/$lib.dyn"
    sed 's/@.*//' "$tmp/$lib.dyn" | sort >"$tmp/$lib.exported"
    if diff "$tmp/$lib.list" "$tmp/$lib.exported" >"$tmp/$lib.diff"; then
        ok "lib$lib.so exports exactly tests/install/lib$lib.symbols ($(wc -l <"$tmp/$lib.list") functions)"
    else
        bad "lib$lib.so exports differ from tests/install/lib$lib.symbols (< listed only, > exported only):"
        cat "$tmp/$lib.diff"
    fi
    check "lib$lib.so: every export has version BRISK_0" "! grep -qv '@@BRISK_0\$' '$tmp/$lib.dyn'"
    : >"$tmp/$lib.decl"
    for h in $hdrs; do
        echo "#include <brisk/$h.h>" >"$tmp/decl.c"
        gcc -std=c11 -D_DEFAULT_SOURCE -I"$P/include" -fsyntax-only -aux-info "$tmp/decl.aux" "$tmp/decl.c"
        grep -F "$P/include/brisk/$h.h:" "$tmp/decl.aux" |
            sed -n 's/.*[ *]\(brisk_[a-z0-9_]*\) (.*/\1/p' >>"$tmp/$lib.decl"
    done
    sort -o "$tmp/$lib.decl" "$tmp/$lib.decl"
    if diff "$tmp/$lib.list" "$tmp/$lib.decl" >"$tmp/$lib.ddiff"; then
        ok "tests/install/lib$lib.symbols lists exactly the functions $(echo $hdrs | sed 's/\([a-z]*\)/\1.h/g') declare"
    else
        bad "tests/install/lib$lib.symbols differs from the functions its headers declare (< listed only, > declared only):"
        cat "$tmp/$lib.ddiff"
    fi
done

# ---- pkg-config ----
export PKG_CONFIG_PATH=$L/pkgconfig
check "$libdir/pkgconfig/brisk.pc: prefix=$prefix" "grep -qx 'prefix=$prefix' '$L/pkgconfig/brisk.pc'"
check "pkg-config brisk-sim: version $version" "[ \"\$(pkg-config --modversion brisk-sim)\" = '$version' ]"
export PKG_CONFIG_SYSROOT_DIR=$root
check "pkg-config --cflags brisk-sim: the installed headers" "[ \"\$(pkg-config --cflags brisk-sim | sed 's/ *\$//')\" = '-I$P/include' ]"
for pc in sim drivers; do
    libs=$(pkg-config --libs brisk-$pc | sed 's/ *$//')
    check "pkg-config --libs brisk-$pc: the installed libraries, -lbrisk_$pc before -lbrisk ($libs)" \
        "[ '$libs' = '-L$L -lbrisk_$pc -lbrisk' ]"
    slibs=$(pkg-config --static --libs brisk-$pc | sed 's/ *$//')
    check "pkg-config --static --libs brisk-$pc adds -lm ($slibs)" \
        "echo '$slibs' | grep -qE -- ' -lbrisk_$pc -lm -lbrisk -lm\$'"
done

# ---- examples, built against the installed tree ----
# A copy of examples/ outside the source tree, so that nothing but pkg-config can point the compiler at
# brisk's headers or libraries.
cp -r "$src/examples" "$tmp/examples"
for cc in gcc clang; do
    for mode in shared static; do
        o=$tmp/ex-$cc-$mode
        mkdir -p "$o"
        st=
        [ $mode = static ] && st=1
        if make -s -C "$tmp/examples" O="$o" CC=$cc STATIC=$st >"$o/build.log" 2>&1; then
            ok "examples built with $cc ($mode)"
        else
            bad "examples built with $cc ($mode):"
            cat "$o/build.log"
        fi
    done
done
sim=$tmp/ex-gcc-shared/sim_pair
if [ -x "$sim" ]; then
    check "shared sim_pair loads libbrisk_sim.so.0 and libbrisk.so.0 from the installed tree" \
        "LD_LIBRARY_PATH='$L' ldd '$sim' | grep -q 'libbrisk_sim.so.0 => $L/' &&
         LD_LIBRARY_PATH='$L' ldd '$sim' | grep -q 'libbrisk.so.0 => $L/'"
fi
if [ -x "$tmp/ex-clang-static/sim_pair" ]; then
    check "static sim_pair (clang) needs no libbrisk*.so" "! ldd '$tmp/ex-clang-static/sim_pair' 2>&1 | grep -q libbrisk"
fi
for cc in gcc clang; do
    for mode in shared static; do
        b=$tmp/ex-$cc-$mode/sim_pair
        [ -x "$b" ] || continue
        LD_LIBRARY_PATH=$L "$b" --bytes 2M >"$tmp/sim-$cc-$mode.out" 2>&1
        rc=$?
        check "sim_pair ($cc, $mode): 2 MB each way intact, exit 0 ($(cat "$tmp/sim-$cc-$mode.out"))" \
            "[ $rc = 0 ] && grep -q '^sim_pair: ok: 2097152 bytes a->b intact, 2097152 bytes echoed b->a intact' '$tmp/sim-$cc-$mode.out'"
    done
done
if [ -x "$sim" ]; then
    check "sim_pair: gcc and clang, shared and static, give the same virtual-time run" \
        "[ \$(cat '$tmp'/sim-*.out | sort -u | wc -l) = 1 ]"
    LD_LIBRARY_PATH=$L "$sim" --bytes 1M --loss 2% --seed 7 --pcap "$tmp/loss.pcap" >"$tmp/loss.out" 2>&1
    rc=$?
    check "sim_pair under 2 % loss each way: intact, with retransmissions ($(cat "$tmp/loss.out"))" \
        "[ $rc = 0 ] && grep -q 'intact.*intact' '$tmp/loss.out' && ! grep -q ' 0 segments retransmitted' '$tmp/loss.out'"
    check "sim_pair --pcap wrote a capture" "[ -s '$tmp/loss.pcap' ]"
    LD_LIBRARY_PATH=$L "$sim" --bytes nonsense >/dev/null 2>"$tmp/badarg.err"
    rc=$?
    check "sim_pair --bytes nonsense: exit 2 naming the option" "[ $rc = 2 ] && grep -q 'bad --bytes' '$tmp/badarg.err'"
fi

# ---- the seed scenario files: installed in share/brisk/scenarios, found there by the installed brisk-lab ----
for f in iscsi xen-tsq mvneta rr-timers; do
    check "share/brisk/scenarios/$f.yaml" "[ -f '$P/share/brisk/scenarios/$f.yaml' ]"
done
(cd "$tmp" && env -u BRISK_LAB_SCENARIOS "$P/bin/brisk-lab" run xen-tsq --set bytes=20M >"$tmp/xen.out" 2>"$tmp/xen.err")
check "the installed brisk-lab runs xen-tsq from share/brisk/scenarios (PASS)" \
    "grep -q -- '-> PASS' '$tmp/xen.out' && '$P/bin/brisk-lab' list | grep -q '(.*share/brisk/scenarios/xen-tsq.yaml)'"

# ---- the custom lab scenario, run by the installed brisk-lab ----
"$P/bin/brisk-lab" check "$tmp/examples/scenario.yaml" >"$tmp/check.out" 2>&1
check "brisk-lab check examples/scenario.yaml ($(head -1 "$tmp/check.out"))" "[ $? = 0 ]"
"$P/bin/brisk-lab" run "$tmp/examples/scenario.yaml" >"$tmp/lab.out" 2>&1
rc=$?
check "brisk-lab run examples/scenario.yaml: every row complete, the bounds PASS" \
    "[ $rc = 0 ] && grep -q -- '-> PASS' '$tmp/lab.out' && [ \$(grep -cE '^  (brisk|linux-6.x|short-queue) +yes ' '$tmp/lab.out') = 3 ]"
[ $rc = 0 ] || cat "$tmp/lab.out"

# ---- the TAP echo server, answering the kernel in a namespace ----
tap_skip=
[ "$(id -u)" -eq 0 ] || tap_skip="not root"
[ -z "$tap_skip" ] && [ ! -c /dev/net/tun ] && tap_skip="no /dev/net/tun"
[ -z "$tap_skip" ] && ! command -v socat >/dev/null 2>&1 && tap_skip="no socat (scripts/deps.sh installs it)"
[ -z "$tap_skip" ] && ! command -v ip >/dev/null 2>&1 && tap_skip="no ip (iproute2)"
if [ -z "$tap_skip" ]; then
    bash "$src/scripts/netns.sh" up "$NS" && ns_made=1 || tap_skip="cannot create a network namespace"
fi
if [ -n "$tap_skip" ]; then
    echo "SKIP - tap_echo over a TAP device: $tap_skip"
else
    for cc in gcc clang; do
        echo_bin=$tmp/ex-$cc-shared/tap_echo
        [ -x "$echo_bin" ] || continue
        ifc=bie$cc
        net=10.79.$([ $cc = gcc ] && echo 1 || echo 2)
        ip netns exec "$NS" env LD_LIBRARY_PATH="$L" "$echo_bin" --tap "$ifc" --ip "$net.2/24" --port 7 --once \
            >"$tmp/echo-$cc.out" 2>"$tmp/echo-$cc.err" &
        ep=$!
        echo $ep >>"$tmp/pids"
        if ! bash "$src/scripts/netns.sh" tap "$NS" "$ifc" "$net.1/24"; then
            bad "tap_echo ($cc): the TAP did not come up"
            cat "$tmp/echo-$cc.err"
            continue
        fi
        head -c 1000000 /dev/urandom >"$tmp/echo-in"
        ip netns exec "$NS" timeout 30 socat -t 10 - "TCP:$net.2:7,connect-timeout=10" <"$tmp/echo-in" \
            >"$tmp/echo-back" 2>"$tmp/socat.err"
        src_rc=$?
        wait $ep
        erc=$?
        check "tap_echo ($cc, shared): 1 MB from a kernel socket (socat) in a namespace echoed byte for byte" \
            "[ $src_rc = 0 ] && cmp -s '$tmp/echo-in' '$tmp/echo-back'"
        check "tap_echo ($cc): the connection ended cleanly after 1000000 bytes" \
            "[ $erc = 0 ] && [ \"\$(cat '$tmp/echo-$cc.out')\" = 1000000 ]"
        [ $src_rc = 0 ] && [ $erc = 0 ] || cat "$tmp/echo-$cc.err" "$tmp/socat.err"
    done
fi

echo "$pass passed, $fail failed"
[ $fail = 0 ]
