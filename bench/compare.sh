#!/usr/bin/env bash
# compare.sh — brisk side by side with the Linux kernel, in one run on this machine (issue 8):
#   1. kernel <-> kernel over a veth pair between two namespaces: goodput with iperf3 and with
#      tests/interop/ksock (source -> sink, every byte checked), and 1-byte request / response transactions
#      per second (ksock rr client <-> ksock echo server, NODELAY);
#   2. brisk (TAP) <-> kernel: brisk-perf server against iperf3 (both directions, GSO on); brisk-peer against
#      ksock, the same transfers as row 1's ksock row (both directions, GSO on and off); brisk-peer's rr
#      client against a ksock echo server;
#   3. lwIP (TAP) <-> kernel: bench/lwip/lwip-tap (Debian's liblwip, our harness) in brisk-peer's place: the
#      same ksock transfers both ways and the same rr against a ksock echo server;
#   4. unmodified programs (issue 21): Debian's iperf3 and nginx under brisk (libbrisk_preload.so through
#      brisk-run, TAP) against the kernel's iperf3 and wrk, beside the same programs on kernel sockets over
#      the veth pair: iperf3 Gbit/s both ways (-n BYTES; the kernel baseline is row 1's iperf3 row) and
#      nginx (daemon off, master_process off, one worker, a 32-byte page) requests/s to wrk (-t 1 -c 8,
#      COMPARE_WRK_SECS seconds);
#   5. brisk <-> brisk in-process (brisk-bench bulk and rr) and the memcpy single-copy limit.
# Prints one table with the ratios to the kernel and brisk / lwIP (issue 8's target: >= 2), and writes the
# figures as JSON. lwIP runs with the options Debian built it with (printed under the table; see
# docs/performance.md).
#
#   bench/compare.sh [BUILD_DIR] [BYTES] [RR_COUNT]   (defaults: build, 1G, 20000; rows 1-3 need root and
#                                                     /dev/net/tun, and row 3 lwip-tap, built when
#                                                     liblwip-dev is installed; skipped with the reason
#                                                     otherwise)
#   COMPARE_JSON=FILE bench/compare.sh ...             where to write the JSON (default BUILD_DIR/compare.json)
#   COMPARE_ONLY=rr bench/compare.sh ...               only the three rr rows (kernel, brisk, lwIP): quick
#                                                     enough to alternate several runs in one sitting
#   COMPARE_RR_ARGS="--busy-poll 50us" ...            extra brisk-peer options for brisk's rr row
#   COMPARE_WRK_SECS=N bench/compare.sh ...            wrk's duration for the nginx rows (default 5)
#
# The same two CPUs run both ends of every row, so the figures measure the stacks' CPU cost as much as
# anything: compare rows of one run, not runs on different machines.
set -u
build=${1:-build}
bytes=${2:-1G}
count=${3:-20000}
out=${COMPARE_JSON:-$build/compare.json}
only=${COMPARE_ONLY:-}
rr_args=${COMPARE_RR_ARGS:-}
wrk_secs=${COMPARE_WRK_SECS:-5}
case "$only" in "" | rr) ;; *) echo "compare: COMPARE_ONLY must be empty or rr" >&2; exit 2 ;; esac
case "$wrk_secs" in "" | *[!0-9]* | 0) echo "compare: COMPARE_WRK_SECS=$wrk_secs: want whole seconds > 0" >&2; exit 2 ;; esac
here=$(cd "$(dirname "$0")" && pwd)
netns=$here/../scripts/netns.sh
bench=$build/brisk-bench
ks=$build/ksock
peer=$build/brisk-peer
perf=$build/brisk-perf
lwip=$build/lwip-tap
brun=$build/brisk-run
plib=$build/libbrisk_preload.so
lwip_opts=""  # lwip-tap --info: the options Debian built liblwip with
lwip_note=""  # the few of them that explain lwIP's figures, for the lwIP rows' notes
tmp=$(mktemp -d)
NS=brisk-cmpb-$$
cleanup() {
    for p in $(cat "$tmp/pids" 2>/dev/null); do kill "$p" 2>/dev/null; done
    [ -f "$tmp/ns" ] && bash "$netns" down "$NS"
    rm -rf "$tmp"
}
trap cleanup EXIT

declare -A fig     # row key -> figure
declare -A unit    # row key -> unit
declare -A why     # row key -> skip reason
declare -A p50     # rr row key -> median transaction latency in microseconds, as the rr client measured it
skip() { why[$1]=$2; echo "compare: skip $1: $2" >&2; }
kv() { awk -v k="$2" '{ for (i = 1; i <= NF; i++) { split($i, a, "="); if (a[1] == k) v = a[2] } } END { print v }' "$1"; }
# iperf3's receiver figure in Gbit/s
iperf_gbps() {
    sed -n 's/.* \([0-9.]*\) \([GM]\)bits\/sec .*receiver$/\1 \2/p' "$1" | tail -n 1 |
        awk '{ print ($2 == "M") ? $1 / 1000 : $1 }'
}
json_num() { sed -n "s/.*\"$2\": \([0-9.e+-]*\).*/\1/p" "$1" | head -n "${3:-1}" | tail -n 1; }

# ---- 1-3: real networks ------------------------------------------------------------------------------------
# What every TAP / veth row needs (root, /dev/net/tun, ksock, a namespace); then each group its own tools.
net_why=""
if [ "$(id -u)" -ne 0 ]; then
    net_why="needs root (network namespaces, TAP)"
elif [ ! -c /dev/net/tun ]; then
    net_why="no /dev/net/tun"
elif [ ! -x "$ks" ]; then
    net_why="$ks not built (make)"
elif bash "$netns" up "$NS" >/dev/null 2>&1; then
    touch "$tmp/ns"
else
    net_why="cannot create a network namespace"
fi
veth_why=$net_why
if [ -z "$net_why" ] && ! bash "$netns" veth "$NS" 10.81.0.1/24 10.81.0.2/24 >/dev/null 2>&1; then
    veth_why="cannot create a veth pair"
fi
iperf_why=$net_why
if [ -z "$iperf_why" ]; then
    if ! command -v iperf3 >/dev/null 2>&1; then
        iperf_why="iperf3 not installed (scripts/deps.sh)"
    elif [ ! -x "$perf" ]; then
        iperf_why="$perf not built (make)"
    fi
fi
peer_why=$net_why
[ -z "$peer_why" ] && [ ! -x "$peer" ] && peer_why="$peer not built (make)"
lwip_why=$net_why
if [ -z "$lwip_why" ] && [ ! -x "$lwip" ]; then
    if pkg-config --exists lwip 2>/dev/null; then
        lwip_why="$lwip not built (make)"
    else
        lwip_why="liblwip-dev not installed (scripts/deps.sh, then make)"
    fi
fi

posix_why=$net_why
if [ -z "$posix_why" ]; then
    if [ ! -x "$brun" ] || [ ! -r "$plib" ]; then
        posix_why="$brun or $plib not built (make)"
    elif ! command -v iperf3 >/dev/null 2>&1; then
        posix_why="iperf3 not installed (scripts/deps.sh)"
    fi
fi
nginx_why=$posix_why
if [ -z "$nginx_why" ]; then
    if ! command -v nginx >/dev/null 2>&1 || ! command -v wrk >/dev/null 2>&1; then
        nginx_why="nginx or wrk not installed (scripts/deps.sh)"
    elif [ -n "$veth_why" ]; then
        nginx_why=$veth_why
    fi
fi

# ks_row KEY PROGRAM tx|rx N [ARGS...]: one connection moving $bytes of the checked pattern between PROGRAM
# (brisk-peer or lwip-tap, on TAP cmpbN, 10.79.N.2) and ksock (10.79.N.1): tx = PROGRAM connects and sends
# to a ksock sink, rx = a ksock source connects and sends to PROGRAM. Figure: the receiver's goodput (from
# the connection's start to the sender's FIN), and only when every byte arrived unaltered (hashes agree).
ks_row() {
    local key=$1 prog=$2 dir=$3 i=$4
    shift 4
    local ifc=cmpb$i net=10.79.$i r=$tmp/$key rx tx
    if [ "$dir" = tx ]; then
        ip netns exec "$NS" "$ks" --listen 5001 --mode sink --timeout 300 >"$r.k" 2>&1 &
        echo $! >>"$tmp/pids"
        sleep 0.2
        timeout 300 ip netns exec "$NS" "$prog" --tap "$ifc" --ip "$net.2/24" --connect "$net.1:5001" \
            --mode source --bytes "$bytes" --timeout 300s "$@" >"$r.s" 2>"$r.s.err" &
        echo $! >>"$tmp/pids"
        bash "$netns" tap "$NS" "$ifc" "$net.1/24" >/dev/null 2>&1
        wait
        tx=$r.s rx=$r.k
    else
        timeout 300 ip netns exec "$NS" "$prog" --tap "$ifc" --ip "$net.2/24" --listen 5001 --mode sink \
            --timeout 300s "$@" >"$r.s" 2>"$r.s.err" &
        echo $! >>"$tmp/pids"
        if bash "$netns" tap "$NS" "$ifc" "$net.1/24" >/dev/null 2>&1; then
            ip netns exec "$NS" "$ks" --connect "$net.2:5001" --mode source --bytes "$bytes" --timeout 300 \
                >"$r.k" 2>&1
        fi
        wait
        tx=$r.k rx=$r.s
    fi
    if [ -z "$(kv "$rx" rx_hash)" ] || [ "$(kv "$tx" tx_hash)" != "$(kv "$rx" rx_hash)" ] ||
        [ "$(kv "$rx" rx_bad)" != 0 ] || [ "$(kv "$rx" rx_bytes)" = 0 ]; then
        local got="$(kv "$rx" rx_bytes) bytes, result $(kv "$rx" result)"
        skip "$key" "the transfer failed or arrived altered ($got)"
        return
    fi
    fig[$key]=$(awk -v m="$(kv "$rx" mbps)" 'BEGIN { printf "%.4f", m / 1000 }')
}
rr_rate() { # transactions per second from a result line's rr= and secs=
    awk -v n="$(kv "$1" rr)" -v s="$(kv "$1" secs)" 'BEGIN { if (n > 0 && s > 0) printf "%.0f", n / s }'
}

if [ -z "$veth_why" ]; then
    echo "compare: kernel <-> kernel over veth..." >&2
    if [ -z "$iperf_why" ] && [ -z "$only" ]; then
        timeout 300 ip netns exec "$NS-peer" iperf3 -s -1 >/dev/null 2>&1 &
        echo $! >>"$tmp/pids"
        sleep 0.3
        ip netns exec "$NS" iperf3 -c 10.81.0.2 -n "$bytes" >"$tmp/kk_bulk" 2>&1
        wait
        fig[kernel_bulk]=$(iperf_gbps "$tmp/kk_bulk")
    fi
    if [ -z "$only" ]; then
        ip netns exec "$NS-peer" "$ks" --listen 5001 --mode sink --timeout 300 >"$tmp/kk_ks.k" 2>&1 &
        echo $! >>"$tmp/pids"
        sleep 0.3
        ip netns exec "$NS" "$ks" --connect 10.81.0.2:5001 --mode source --bytes "$bytes" --timeout 300 \
            >"$tmp/kk_ks.s" 2>&1
        wait
        if [ "$(kv "$tmp/kk_ks.k" rx_hash)" = "$(kv "$tmp/kk_ks.s" tx_hash)" ] &&
            [ "$(kv "$tmp/kk_ks.k" rx_bad)" = 0 ]; then
            fig[kernel_ks_bulk]=$(awk -v m="$(kv "$tmp/kk_ks.k" mbps)" 'BEGIN { printf "%.4f", m / 1000 }')
        fi
    fi
    ip netns exec "$NS-peer" "$ks" --listen 5002 --mode echo --nodelay --timeout 120 >/dev/null 2>&1 &
    echo $! >>"$tmp/pids"
    sleep 0.3
    ip netns exec "$NS" "$ks" --connect 10.81.0.2:5002 --mode rr --size 1 --count "$count" --nodelay \
        --timeout 120 >"$tmp/kk_rr" 2>&1
    wait
    fig[kernel_rr]=$(rr_rate "$tmp/kk_rr")
    p50[kernel_rr]=$(kv "$tmp/kk_rr" p50_us)
fi

if [ -n "$only" ]; then # the rows COMPARE_ONLY=rr leaves out
    for k in kernel_bulk kernel_ks_bulk brisk_bulk_tx brisk_bulk_rx brisk_ks_tx brisk_ks_rx brisk_ks_tx_nogso \
        brisk_ks_rx_nogso lwip_bulk_tx lwip_bulk_rx inproc_bulk inproc_bulk_gro inproc_bulk_gso \
        inproc_bulk_gso_gro inproc_rr memcpy; do
        why[$k]="COMPARE_ONLY=rr"
    done
fi

if [ -z "$iperf_why" ] && [ -z "$only" ]; then
    echo "compare: brisk (TAP) <-> kernel, iperf3..." >&2
    timeout 300 ip netns exec "$NS" "$perf" server -1 --tap cmpb1 --ip 10.79.1.2/24 >"$tmp/ps1" 2>&1 &
    echo $! >>"$tmp/pids"
    if bash "$netns" tap "$NS" cmpb1 10.79.1.1/24 >/dev/null 2>&1; then
        sleep 0.3
        ip netns exec "$NS" iperf3 -c 10.79.1.2 -n "$bytes" -R >"$tmp/bk_tx" 2>&1
        fig[brisk_bulk_tx]=$(iperf_gbps "$tmp/bk_tx")
    fi
    wait
    timeout 300 ip netns exec "$NS" "$perf" server -1 --tap cmpb2 --ip 10.79.2.2/24 >"$tmp/ps2" 2>&1 &
    echo $! >>"$tmp/pids"
    if bash "$netns" tap "$NS" cmpb2 10.79.2.1/24 >/dev/null 2>&1; then
        sleep 0.3
        ip netns exec "$NS" iperf3 -c 10.79.2.2 -n "$bytes" >"$tmp/bk_rx" 2>&1
        fig[brisk_bulk_rx]=$(iperf_gbps "$tmp/bk_rx")
    fi
    wait
fi

if [ -z "$peer_why" ]; then
    echo "compare: brisk (TAP) <-> kernel, ksock..." >&2
    if [ -z "$only" ]; then
        ks_row brisk_ks_tx "$peer" tx 4
        ks_row brisk_ks_rx "$peer" rx 5
        ks_row brisk_ks_tx_nogso "$peer" tx 6 --gso 0
        ks_row brisk_ks_rx_nogso "$peer" rx 7 --gso 0
    fi
    ip netns exec "$NS" "$ks" --listen 5003 --mode echo --nodelay --timeout 120 >/dev/null 2>&1 &
    echo $! >>"$tmp/pids"
    timeout 300 ip netns exec "$NS" "$peer" --tap cmpb3 --ip 10.79.3.2/24 --connect 10.79.3.1:5003 --mode rr --size 1 \
        --count "$count" --timeout 120s $rr_args >"$tmp/bk_rr" 2>"$tmp/bk_rr.err" &
    echo $! >>"$tmp/pids"
    bash "$netns" tap "$NS" cmpb3 10.79.3.1/24 >/dev/null 2>&1
    wait
    fig[brisk_rr]=$(rr_rate "$tmp/bk_rr")
    p50[brisk_rr]=$(kv "$tmp/bk_rr" p50_us)
fi

# 3: lwIP, the same transfers as brisk's ksock rows and brisk's rr row, lwip-tap in brisk-peer's place.
if [ -z "$lwip_why" ]; then
    echo "compare: lwIP (TAP) <-> kernel, ksock..." >&2
    lwip_opts=$("$lwip" --info)
    echo "$lwip_opts" >"$tmp/lwip_opts"
    lwip_note="lwIP $(kv "$tmp/lwip_opts" lwip), TCP_WND=$(kv "$tmp/lwip_opts" tcp_wnd),"
    lwip_note="$lwip_note TCP_MSS=$(kv "$tmp/lwip_opts" tcp_mss),"
    lwip_note="$lwip_note TCP_SND_BUF=$(kv "$tmp/lwip_opts" tcp_snd_buf),"
    lwip_note="$lwip_note SACK=$(kv "$tmp/lwip_opts" sack_out), timestamps=$(kv "$tmp/lwip_opts" timestamps),"
    lwip_note="$lwip_note no offloads (software checksums, 1500-byte frames)"
    if [ -z "$only" ]; then
        ks_row lwip_bulk_tx "$lwip" tx 8
        ks_row lwip_bulk_rx "$lwip" rx 9
    fi
    ip netns exec "$NS" "$ks" --listen 5004 --mode echo --nodelay --timeout 120 >/dev/null 2>&1 &
    echo $! >>"$tmp/pids"
    timeout 300 ip netns exec "$NS" "$lwip" --tap cmpb10 --ip 10.79.10.2/24 --connect 10.79.10.1:5004 \
        --mode rr --size 1 --count "$count" --timeout 120 >"$tmp/lw_rr" 2>"$tmp/lw_rr.err" &
    echo $! >>"$tmp/pids"
    bash "$netns" tap "$NS" cmpb10 10.79.10.1/24 >/dev/null 2>&1
    wait
    fig[lwip_rr]=$(rr_rate "$tmp/lw_rr")
    p50[lwip_rr]=$(kv "$tmp/lw_rr" p50_us)
fi

# 4: unmodified programs. iperf3 under brisk (brisk-run, LD_PRELOAD) on TAP cmpb11 against a kernel iperf3
# server, both ways (its kernel <-> kernel figure is row 1's iperf3 row); nginx on kernel sockets in the
# veth's peer namespace, then under brisk on TAP cmpb12, each to the same wrk from the kernel.
# nginx_conf DIR ADDR: a one-worker, foreground nginx serving DIR/www/index.html on ADDR:8080, no access log
nginx_conf() {
    mkdir -p "$1/www"
    printf '<html><body>brisk</body></html>\n' >"$1/www/index.html"
    cat >"$1/nginx.conf" <<CONF
daemon off;
master_process off;
worker_processes 1;
error_log $1/error.log warn;
pid $1/nginx.pid;
events { worker_connections 256; }
http {
    access_log off;
    client_body_temp_path $1/body;
    proxy_temp_path $1/proxy;
    fastcgi_temp_path $1/fastcgi;
    uwsgi_temp_path $1/uwsgi;
    scgi_temp_path $1/scgi;
    keepalive_requests 1000000;
    server {
        listen $2:8080;
        root $1/www;
    }
}
CONF
}
# wrk_row KEY NS ADDR: wrk -t 1 -c 8 for $wrk_secs s from NS against ADDR:8080 once it accepts (5 s);
# figure: requests/s, only when wrk saw no socket errors and no non-2xx answers
wrk_row() {
    local key=$1 ns=$2 addr=$3 r=$tmp/$1.wrk up=0
    for _ in $(seq 1 50); do
        ip netns exec "$ns" timeout 1 bash -c ": </dev/tcp/$addr/8080" 2>/dev/null && up=1 && break
        sleep 0.1
    done
    if [ $up -eq 0 ]; then
        skip "$key" "nginx did not accept on $addr:8080"
        return
    fi
    ip netns exec "$ns" timeout $((wrk_secs + 20)) wrk -t 1 -c 8 -d "${wrk_secs}s" "http://$addr:8080/" >"$r" 2>&1
    if grep -q -e 'Socket errors' -e 'Non-2xx' "$r" || ! grep -q '^Requests/sec:' "$r"; then
        skip "$key" "wrk failed or saw errors: $(grep -m1 -e 'Socket errors' -e 'Non-2xx' -e rror "$r")"
        return
    fi
    fig[$key]=$(awk '/^Requests\/sec:/ { printf "%.0f", $2 }' "$r")
}
if [ -n "$only" ]; then
    for k in posix_iperf_tx posix_iperf_rx kernel_nginx posix_nginx; do why[$k]="COMPARE_ONLY=rr"; done
fi
if [ -z "$posix_why" ] && [ -z "$only" ]; then
    echo "compare: iperf3 under brisk (brisk-run, TAP) <-> kernel iperf3..." >&2
    # brisk-run --kernel-ip makes the TAP and the kernel's address first, so the kernel's server can bind it
    if ip netns exec "$NS" "$brun" --lib "$plib" --tap cmpb11 --ip 10.79.11.2/24 --kernel-ip 10.79.11.1/24 \
        -- true 2>"$tmp/pi.err"; then
        for dir in tx rx; do
            timeout 300 ip netns exec "$NS" iperf3 -s -1 -B 10.79.11.1 >/dev/null 2>&1 &
            echo $! >>"$tmp/pids"
            sleep 0.3
            rflag=""
            [ $dir = rx ] && rflag=-R
            timeout 300 ip netns exec "$NS" "$brun" --lib "$plib" --tap cmpb11 --ip 10.79.11.2/24 -- \
                iperf3 -c 10.79.11.1 -n "$bytes" $rflag >"$tmp/pi_$dir" 2>&1
            wait
            fig[posix_iperf_$dir]=$(iperf_gbps "$tmp/pi_$dir")
        done
    else
        skip posix_iperf_tx "brisk-run could not make TAP cmpb11: $(head -n 1 "$tmp/pi.err")"
        skip posix_iperf_rx "brisk-run could not make TAP cmpb11"
    fi
fi
if [ -z "$nginx_why" ] && [ -z "$only" ]; then
    echo "compare: nginx + wrk, kernel (veth) and under brisk (TAP)..." >&2
    nginx_conf "$tmp/ngk" 10.81.0.2
    timeout 300 ip netns exec "$NS-peer" nginx -e "$tmp/ngk/error.log" -p "$tmp/ngk" -c "$tmp/ngk/nginx.conf" \
        >/dev/null 2>&1 &
    ngp=$!
    echo $ngp >>"$tmp/pids"
    wrk_row kernel_nginx "$NS" 10.81.0.2
    kill $ngp 2>/dev/null
    wait
    nginx_conf "$tmp/ngb" 10.79.12.2
    if ip netns exec "$NS" "$brun" --lib "$plib" --tap cmpb12 --ip 10.79.12.2/24 --kernel-ip 10.79.12.1/24 \
        -- true 2>"$tmp/pn.err"; then
        BRISK_EXIT_WAIT=1s timeout 300 ip netns exec "$NS" "$brun" --lib "$plib" --tap cmpb12 --ip 10.79.12.2/24 -- \
            nginx -e "$tmp/ngb/error.log" -p "$tmp/ngb" -c "$tmp/ngb/nginx.conf" >/dev/null 2>&1 &
        ngp=$!
        echo $ngp >>"$tmp/pids"
        wrk_row posix_nginx "$NS" 10.79.12.2
        kill $ngp 2>/dev/null
        wait
    else
        skip posix_nginx "brisk-run could not make TAP cmpb12: $(head -n 1 "$tmp/pn.err")"
    fi
fi
for k in posix_iperf_tx posix_iperf_rx; do
    [ -n "${fig[$k]:-}" ] || [ -n "${why[$k]:-}" ] || skip $k "${posix_why:-the run produced no figure}"
done
for k in kernel_nginx posix_nginx; do
    [ -n "${fig[$k]:-}" ] || [ -n "${why[$k]:-}" ] || skip $k "${nginx_why:-the run produced no figure}"
done

if [ -n "$iperf_why" ] && [ -z "$veth_why" ]; then skip kernel_bulk "$iperf_why"; fi
for k in kernel_bulk kernel_ks_bulk kernel_rr; do
    [ -n "${fig[$k]:-}" ] || [ -n "${why[$k]:-}" ] || skip $k "${veth_why:-the run produced no figure}"
done
for k in brisk_bulk_tx brisk_bulk_rx; do
    [ -n "${fig[$k]:-}" ] || [ -n "${why[$k]:-}" ] || skip $k "${iperf_why:-the run produced no figure}"
done
for k in brisk_ks_tx brisk_ks_rx brisk_ks_tx_nogso brisk_ks_rx_nogso brisk_rr; do
    [ -n "${fig[$k]:-}" ] || [ -n "${why[$k]:-}" ] || skip $k "${peer_why:-the run produced no figure}"
done
for k in lwip_bulk_tx lwip_bulk_rx lwip_rr; do
    [ -n "${fig[$k]:-}" ] || [ -n "${why[$k]:-}" ] || skip $k "${lwip_why:-the run produced no figure}"
done

# ---- 5: in-process -----------------------------------------------------------------------------------------
if [ -n "$only" ]; then
    :
elif [ -x "$bench" ]; then
    echo "compare: brisk <-> brisk in-process (brisk-bench)..." >&2
    "$bench" bulk --json >"$tmp/bulk.json" 2>/dev/null && {
        # runs in brisk-bench's order: no_offload, csum, gro, gso, gso_gro
        fig[inproc_bulk]=$(json_num "$tmp/bulk.json" gbps_per_cpu_s 2)
        fig[inproc_bulk_gro]=$(json_num "$tmp/bulk.json" gbps_per_cpu_s 3)
        fig[inproc_bulk_gso]=$(json_num "$tmp/bulk.json" gbps_per_cpu_s 4)
        fig[inproc_bulk_gso_gro]=$(json_num "$tmp/bulk.json" gbps_per_cpu_s 5)
    }
    "$bench" rr --json >"$tmp/rr.json" 2>/dev/null && fig[inproc_rr]=$(json_num "$tmp/rr.json" transactions_per_cpu_s)
    "$bench" memcpy --json >"$tmp/memcpy.json" 2>/dev/null && fig[memcpy]=$(json_num "$tmp/memcpy.json" memcpy_gbps)
else
    for k in inproc_bulk inproc_bulk_gro inproc_bulk_gso inproc_bulk_gso_gro inproc_rr memcpy; do
        skip $k "$bench not built (make)"
    done
fi

# ---- the table -----------------------------------------------------------------------------------------------
rows=(kernel_bulk brisk_bulk_tx brisk_bulk_rx kernel_ks_bulk brisk_ks_tx brisk_ks_rx brisk_ks_tx_nogso
    brisk_ks_rx_nogso lwip_bulk_tx lwip_bulk_rx kernel_rr brisk_rr lwip_rr posix_iperf_tx posix_iperf_rx
    kernel_nginx posix_nginx inproc_bulk inproc_bulk_gro
    inproc_bulk_gso inproc_bulk_gso_gro inproc_rr memcpy)
declare -A label=(
    [kernel_bulk]="kernel -> kernel, veth, iperf3"
    [brisk_bulk_tx]="brisk -> kernel, TAP, brisk-perf/iperf3"
    [brisk_bulk_rx]="kernel -> brisk, TAP, iperf3/brisk-perf"
    [kernel_ks_bulk]="kernel -> kernel, veth, ksock"
    [brisk_ks_tx]="brisk -> kernel, TAP, ksock, GSO"
    [brisk_ks_rx]="kernel -> brisk, TAP, ksock, GSO"
    [brisk_ks_tx_nogso]="brisk -> kernel, TAP, ksock, no GSO"
    [brisk_ks_rx_nogso]="kernel -> brisk, TAP, ksock, no GSO"
    [lwip_bulk_tx]="lwIP -> kernel, TAP, ksock"
    [lwip_bulk_rx]="kernel -> lwIP, TAP, ksock"
    [kernel_rr]="kernel <-> kernel, veth, 1-byte rr"
    [brisk_rr]="brisk <-> kernel, TAP, 1-byte rr"
    [lwip_rr]="lwIP <-> kernel, TAP, 1-byte rr"
    [posix_iperf_tx]="iperf3 on brisk -> kernel, TAP, preload"
    [posix_iperf_rx]="kernel -> iperf3 on brisk, TAP, preload"
    [kernel_nginx]="nginx <- wrk, kernel, veth"
    [posix_nginx]="nginx on brisk <- wrk, TAP, preload"
    [inproc_bulk]="brisk <-> brisk in-process, MTU 1500, checksum offload"
    [inproc_bulk_gro]="brisk <-> brisk in-process, MTU 1500, checksum offload + GRO"
    [inproc_bulk_gso]="brisk <-> brisk in-process, 64 KB GSO"
    [inproc_bulk_gso_gro]="brisk <-> brisk in-process, 64 KB GSO + GRO"
    [inproc_rr]="brisk <-> brisk in-process, rr 1 flow"
    [memcpy]="memcpy 1448-byte chunks"
)
for k in kernel_bulk brisk_bulk_tx brisk_bulk_rx kernel_ks_bulk brisk_ks_tx brisk_ks_rx brisk_ks_tx_nogso \
    brisk_ks_rx_nogso lwip_bulk_tx lwip_bulk_rx posix_iperf_tx posix_iperf_rx; do unit[$k]="Gbit/s"; done
for k in kernel_nginx posix_nginx; do unit[$k]="requests/s"; done
for k in kernel_rr brisk_rr lwip_rr; do unit[$k]="transactions/s"; done
for k in inproc_bulk inproc_bulk_gro inproc_bulk_gso inproc_bulk_gso_gro memcpy; do unit[$k]="Gbit/s per CPU-s"; done
unit[inproc_rr]="transactions per CPU-s"
declare -A base=([brisk_bulk_tx]=kernel_bulk [brisk_bulk_rx]=kernel_bulk [brisk_ks_tx]=kernel_ks_bulk
    [brisk_ks_rx]=kernel_ks_bulk [brisk_ks_tx_nogso]=kernel_ks_bulk [brisk_ks_rx_nogso]=kernel_ks_bulk
    [lwip_bulk_tx]=kernel_ks_bulk [lwip_bulk_rx]=kernel_ks_bulk [brisk_rr]=kernel_rr [lwip_rr]=kernel_rr
    [posix_iperf_tx]=kernel_bulk [posix_iperf_rx]=kernel_bulk [posix_nginx]=kernel_nginx
    [inproc_bulk]=memcpy [inproc_bulk_gro]=memcpy [inproc_bulk_gso]=memcpy [inproc_bulk_gso_gro]=memcpy)
# brisk / lwIP (issue 8's target): each lwIP row against brisk's row of the same transfer, brisk as it runs by
# default (GSO on), and for goodput also brisk without GSO (plain MTU frames, as lwIP sends them).
declare -A over=([lwip_bulk_tx]=brisk_ks_tx [lwip_bulk_rx]=brisk_ks_rx [lwip_rr]=brisk_rr)
declare -A over_nogso=([lwip_bulk_tx]=brisk_ks_tx_nogso [lwip_bulk_rx]=brisk_ks_rx_nogso)
div() { # div X_KEY Y_KEY: fig[X] / fig[Y] or "-"
    if [ -n "$1" ] && [ -n "$2" ] && [ -n "${fig[$1]:-}" ] && [ -n "${fig[$2]:-}" ]; then
        awk -v x="${fig[$1]}" -v y="${fig[$2]}" 'BEGIN { if (y > 0) printf "%.3f", x / y; else print "-" }'
    else
        echo -
    fi
}
ratio() { div "$1" "${base[$1]:-}"; } # a row / its reference
echo "brisk side by side, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), bulk $bytes, rr $count, wrk ${wrk_secs}s"
printf '%-40s %12s  %-24s %s\n' row figure unit "ratio (vs); brisk / lwIP (brisk row)"
for k in "${rows[@]}"; do
    if [ -n "${fig[$k]:-}" ]; then
        r=$(ratio "$k")
        extra=""
        if [ -n "${over[$k]:-}" ]; then
            extra="; brisk/lwIP $(div "${over[$k]}" "$k") (${over[$k]})"
            [ -n "${over_nogso[$k]:-}" ] &&
                extra="$extra, $(div "${over_nogso[$k]}" "$k") (${over_nogso[$k]})"
        fi
        printf '%-40s %12.6g  %-24s %s\n' "${label[$k]}" "${fig[$k]}" "${unit[$k]}" \
            "$r${base[$k]:+ (vs ${base[$k]})}$extra"
    else
        printf '%-40s %12s  %-24s skipped: %s\n' "${label[$k]}" - "${unit[$k]}" "${why[$k]:-no figure}"
    fi
done
if [ -n "${p50[kernel_rr]:-}${p50[brisk_rr]:-}${p50[lwip_rr]:-}" ]; then
    echo "rr median latency (us): kernel ${p50[kernel_rr]:--}, brisk ${p50[brisk_rr]:--}, lwIP ${p50[lwip_rr]:--}${rr_args:+ (brisk with $rr_args)}"
fi
if [ -n "$lwip_opts" ]; then
    echo "notes, lwIP rows: $lwip_note"
    echo "lwIP as built by Debian: $lwip_opts"
fi
jnum() { [ "$1" = - ] && echo null || echo "$1"; }
{
    echo "{"
    echo "  \"bytes\": \"$bytes\", \"rr_count\": $count, \"only\": \"$only\", \"rr_args\": \"$rr_args\", \"wrk_secs\": $wrk_secs,"
    echo "  \"lwip_options\": \"$lwip_opts\","
    echo "  \"rows\": ["
    sep=""
    for k in "${rows[@]}"; do
        if [ -n "${fig[$k]:-}" ]; then
            extra=""
            if [ -n "${over[$k]:-}" ]; then
                x=$(jnum "$(div "${over[$k]}" "$k")")
                extra=", \"brisk_over_lwip\": $x, \"brisk_row\": \"${over[$k]}\", \"notes\": \"$lwip_note\""
                if [ -n "${over_nogso[$k]:-}" ]; then
                    x=$(jnum "$(div "${over_nogso[$k]}" "$k")")
                    extra="$extra, \"brisk_nogso_over_lwip\": $x, \"brisk_nogso_row\": \"${over_nogso[$k]}\""
                fi
            fi
            [ -n "${p50[$k]:-}" ] && extra="$extra, \"p50_us\": ${p50[$k]}"
            printf '%s    {"row": "%s", "label": "%s", "figure": %s, "unit": "%s", "ratio": %s, "vs": "%s"%s}' \
                "$sep" "$k" "${label[$k]}" "${fig[$k]}" "${unit[$k]}" "$(jnum "$(ratio "$k")")" \
                "${base[$k]:-}" "$extra"
        else
            printf '%s    {"row": "%s", "label": "%s", "figure": null, "unit": "%s", "skipped": "%s"}' \
                "$sep" "$k" "${label[$k]}" "${unit[$k]}" "${why[$k]:-no figure}"
        fi
        sep=$',\n'
    done
    printf '\n  ]\n}\n'
} >"$out"
echo "compare: figures written to $out" >&2
