#!/usr/bin/env bash
# cluster.sh - an emulated cluster on one Linux machine: N virtual hosts as
# network namespaces on a bridge, every host link shaped with tc, Open MPI
# launched into them. Needs root (network namespaces, tc).
#
#   bench/cluster.sh up N [RATE [DELAY]]   create N hosts (default 4 1gbit 50us)
#   bench/cluster.sh run [--] MPIRUN-ARGS   mpirun over the hosts, one rank per
#                                           host by default (-np N --map-by node)
#   bench/cluster.sh exec HOST CMD...       run a command on virtual host HOST (0..N-1)
#   bench/cluster.sh status                 hosts, addresses, qdiscs
#   bench/cluster.sh down                   remove everything `up` created
#   bench/cluster.sh selftest               up 2, ping, one MPI run, down
#
# Topology. Host k is namespace gzh<k> with interface eth0 = 10.77.0.<k+1>/24
# (GZ_CLUSTER_NET=10.77.0 changes the prefix), the other end of its veth pair
# is gzv<k> on the bridge gzbr0 in the root namespace. The bridge has no
# address: only the addresses created here carry traffic, and mpirun itself
# runs inside host 0, so every byte between ranks crosses two shaped veths.
#   egress of eth0 (host k -> bridge): netem delay DELAY, then tbf RATE
#   egress of gzv<k> (bridge -> host k): tbf RATE
# so every host has RATE up and RATE down (a non-blocking switch) and the
# one-way latency between two hosts is DELAY (RTT 2 DELAY) plus the kernel.
# RATE and DELAY are tc units: 1gbit, 10gbit, 500mbit; 50us, 1ms. A kernel
# without sch_netem (Firecracker guests, for one) cannot add delay: `up` says
# so and shapes the rate only (tbf); the bridge then adds ~20-50 us.
#
# Open MPI. Each virtual host also gets its own UTS namespace (hostname
# gzh<k>: Open MPI tells nodes apart by name) and its own TMPDIR (session
# directories would collide otherwise). The launch agent (written by `up`)
# maps a host name to `ip netns exec gzh<k> unshare --uts`; `run` adds
#   --hostfile <dir>/hostfile --mca plm_rsh_agent <dir>/agent.sh
#   --mca plm_rsh_no_tree_spawn 1 --mca routed direct --mca btl tcp,self
#   --mca btl_tcp_if_include 10.77.0.0/24 --mca oob_tcp_if_include 10.77.0.0/24
# and passes on the GZCOLL_* variables set in the caller's environment (none
# by default: libgzcoll's `auto` measures the link at gz_ctx_create, see
# docs/performance-model.md; GZCOLL_LINK_BPS=... pins it).
#
# Honesty note: the hosts share this machine's CPU cores and memory bandwidth.
# On a 2-core VM, 4 ranks compress on 2 cores, and the kernel's veth/tc work
# runs on the same cores: compression-based collectives are disadvantaged
# relative to a real cluster where every host has its own cores.
#
# State lives in GZ_CLUSTER_DIR (default /tmp/gzcluster). `up` tears down
# whatever a previous `up` left; an error during `up` removes what it created.
set -euo pipefail

NET=${GZ_CLUSTER_NET:-10.77.0}
DIR=${GZ_CLUSTER_DIR:-/tmp/gzcluster}
BR=gzbr0

die() {
  echo "cluster.sh: $*" >&2
  exit 1
}

need_root() {
  [ "$(id -u)" -eq 0 ] || die "needs root (network namespaces and tc); run it as root or with sudo"
  command -v ip >/dev/null || die "ip (iproute2) not found"
  command -v tc >/dev/null || die "tc (iproute2) not found"
  command -v unshare >/dev/null || die "unshare (util-linux) not found"
}

nhosts() { cat "$DIR/n" 2>/dev/null || echo 0; }

# bytes per second of a tc rate ("1gbit", "500mbit", "10gbit", "100mbps")
rate_bps() {
  awk -v r="$1" 'BEGIN {
    r = tolower(r); n = r + 0; u = r; sub(/^[0-9.]+/, "", u);
    m["bit"] = 1 / 8; m["kbit"] = 1e3 / 8; m["mbit"] = 1e6 / 8; m["gbit"] = 1e9 / 8;
    m["bps"] = 1; m["kbps"] = 1e3; m["mbps"] = 1e6; m["gbps"] = 1e9;
    if (!(u in m) || n <= 0) exit 1;
    printf "%.0f\n", n * m[u] }'
}

down() {
  local n k
  n=$(nhosts)
  for k in $(seq 0 $((n > 64 ? 64 : n > 0 ? n - 1 : 0))); do
    ip netns del "gzh$k" 2>/dev/null || true # removes eth0 and its veth peer
    ip link del "gzv$k" 2>/dev/null || true
  done
  # leftovers of a run whose state file is gone
  for ns in $(ip netns list 2>/dev/null | awk '/^gzh[0-9]+/ {print $1}'); do
    ip netns del "$ns" 2>/dev/null || true
  done
  for l in $(ip -o link show 2>/dev/null | awk -F': ' '$2 ~ /^gzv[0-9]+/ {sub(/@.*/, "", $2); print $2}'); do
    ip link del "$l" 2>/dev/null || true
  done
  ip link del "$BR" 2>/dev/null || true
  rm -rf "$DIR"
}

shape() { # shape DEV RATE [DELAY] [netns]
  local dev=$1 rate=$2 delay=${3:-} ns=${4:-} bps burst
  local -a T=(tc)
  [ -n "$ns" ] && T=(ip netns exec "$ns" tc)
  bps=$(rate_bps "$rate") || die "bad rate '$rate' (e.g. 1gbit, 10gbit, 500mbit)"
  # burst: 2 ms at the rate, at least 256 KiB (veth passes 64 KiB GSO segments)
  burst=$((bps / 500 > 262144 ? bps / 500 : 262144))
  if [ -n "$delay" ] && [ "$delay" != 0 ] &&
    "${T[@]}" qdisc add dev "$dev" root handle 1: netem delay "$delay" limit 100000 2>/dev/null; then
    "${T[@]}" qdisc add dev "$dev" parent 1:1 handle 10: tbf rate "$rate" burst "$burst" \
      limit $((burst * 16))
  else
    if [ -n "$delay" ] && [ "$delay" != 0 ] && [ ! -f "$DIR/delay.actual" ]; then
      echo "cluster.sh: tc netem is not available in this kernel (CONFIG_NET_SCH_NETEM):" \
        "no added delay, links shaped by rate only" >&2
      echo "none (no netem)" >"$DIR/delay.actual"
    fi
    "${T[@]}" qdisc add dev "$dev" root handle 10: tbf rate "$rate" burst "$burst" \
      limit $((burst * 16))
  fi
}

up() {
  local n=${1:-4} rate=${2:-1gbit} delay=${3:-50us} k
  [[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le 64 ] || die "N must be 1..64"
  rate_bps "$rate" >/dev/null || die "bad rate '$rate' (e.g. 1gbit, 10gbit, 500mbit)"
  down
  mkdir -p "$DIR"
  echo "$n" >"$DIR/n"
  trap 'echo "cluster.sh: up failed, tearing down" >&2; down' ERR
  ip link add "$BR" type bridge
  ip link set "$BR" up
  : >"$DIR/hostfile"
  for k in $(seq 0 $((n - 1))); do
    ip netns add "gzh$k"
    ip link add "gzv$k" type veth peer name "gzp$k"
    ip link set "gzp$k" netns "gzh$k"
    ip -n "gzh$k" link set "gzp$k" name eth0
    ip -n "gzh$k" addr add "$NET.$((k + 1))/24" dev eth0
    ip -n "gzh$k" link set lo up
    ip -n "gzh$k" link set eth0 up
    ip link set "gzv$k" master "$BR"
    ip link set "gzv$k" up
    shape eth0 "$rate" "$delay" "gzh$k"
    shape "gzv$k" "$rate"
    mkdir -p "$DIR/h$k/tmp"
    echo "gzh$k slots=64" >>"$DIR/hostfile"
  done
  echo "$rate" >"$DIR/rate"
  if [ -f "$DIR/delay.actual" ]; then delay=$(cat "$DIR/delay.actual"); fi
  echo "$delay" >"$DIR/delay"
  cat >"$DIR/agent.sh" <<EOF
#!/usr/bin/env bash
# Open MPI launch agent of the emulated cluster (written by cluster.sh up):
# agent.sh [ssh-style options] HOST COMMAND... runs COMMAND on virtual host HOST.
while [ \$# -gt 0 ] && [ "\${1#-}" != "\$1" ]; do shift; done
h=\$1
shift
k=\${h#gzh}
[ -d "$DIR/h\$k" ] || { echo "agent.sh: unknown host \$h" >&2; exit 1; }
exec ip netns exec "gzh\$k" unshare --uts /bin/sh -c "hostname gzh\$k; export TMPDIR=$DIR/h\$k/tmp; \$*"
EOF
  chmod +x "$DIR/agent.sh"
  trap - ERR
  # wait until every bridge port forwards (and every host answers host 0
  # where ping is installed)
  for k in $(seq 0 $((n - 1))); do
    local ok=0
    for _ in $(seq 1 50); do
      if bridge link show dev "gzv$k" 2>/dev/null | grep -q "state forwarding" &&
        { ! command -v ping >/dev/null ||
          ip netns exec gzh0 ping -c1 -W1 "$NET.$((k + 1))" >/dev/null 2>&1; }; then
        ok=1
        break
      fi
      sleep 0.2
    done
    [ $ok = 1 ] || {
      down
      die "host $k does not answer"
    }
  done
  echo "cluster.sh: $n hosts up ($NET.1-$NET.$n on $BR), links $rate, one-way delay $delay"
}

run() {
  local n v
  n=$(nhosts)
  [ "$n" -ge 1 ] || die "no cluster: run 'cluster.sh up N RATE DELAY' first"
  [ "${1:-}" = "--" ] && shift
  local -a np=() xs=()
  for v in $(env | sed -n 's/^\(GZCOLL_[A-Z_]*\)=.*/\1/p'); do xs+=(-x "$v"); done
  case " $* " in
  *" -np "* | *" -n "* | *" --np "*) ;;
  *) np=(-np "$n") ;;
  esac
  # mpirun runs inside host 0 (its own hostname and TMPDIR too)
  exec ip netns exec gzh0 unshare --uts env TMPDIR="$DIR/h0/tmp" \
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    /bin/sh -c 'hostname gzh0; exec "$@"' sh \
    mpirun "${np[@]}" --hostfile "$DIR/hostfile" --map-by node \
    --mca plm_rsh_agent "$DIR/agent.sh" --mca plm_rsh_no_tree_spawn 1 \
    --mca routed direct --mca btl tcp,self \
    --mca btl_tcp_if_include "$NET.0/24" --mca oob_tcp_if_include "$NET.0/24" \
    "${xs[@]}" -x PATH ${LD_LIBRARY_PATH:+-x LD_LIBRARY_PATH} "$@"
}

status() {
  local n k
  n=$(nhosts)
  [ "$n" -ge 1 ] || {
    echo "no cluster"
    return 0
  }
  echo "$n hosts, links $(cat "$DIR/rate"), one-way delay $(cat "$DIR/delay"), state $DIR"
  for k in $(seq 0 $((n - 1))); do
    echo "gzh$k: $(ip -n "gzh$k" -4 -o addr show dev eth0 | awk '{print $4}')"
    ip netns exec "gzh$k" tc qdisc show dev eth0 | sed 's/^/  eth0  /'
    tc qdisc show dev "gzv$k" | sed 's/^/  gzv'"$k"'  /'
  done
}

selftest() {
  trap down EXIT
  up 2 1gbit 100us
  run -np 2 hostname
}

cmd=${1:-help}
[ $# -gt 0 ] && shift
case $cmd in
up)
  need_root
  up "$@"
  ;;
run)
  need_root
  run "$@"
  ;;
exec)
  need_root
  [ $# -ge 2 ] || die "usage: cluster.sh exec HOST CMD..."
  h=$1
  shift
  exec ip netns exec "gzh$h" "$@"
  ;;
status)
  need_root
  status
  ;;
down)
  need_root
  down
  ;;
selftest)
  need_root
  selftest
  ;;
*)
  sed -n '2,12p' "${BASH_SOURCE[0]}"
  [ "$cmd" = help ] || exit 2
  ;;
esac
