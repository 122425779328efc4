#!/usr/bin/env bash
# run_bench.sh - the standard benchmark set on the emulated cluster
# (bench/cluster.sh); writes bench/results/*.csv|json|png|txt and regenerates
# the tables of BENCHMARKS.md (bench/render.sh). Needs root. Normally run as
# `bash scripts/gz.sh bench`, which installs the bench-only packages and builds.
#
#   bench/run_bench.sh BUILD_DIR [STEP...]
# Steps (default: all): ar4 (allreduce, 4 hosts, 1 Gbit), move4 (bcast and
# scatter at 64 MB), real4 (allreduce on a real dataset), ar8 (8 hosts),
# ar4x10 (4 hosts, 10 Gbit), e2e (gzstack end to end, cdo, ncra), codec
# (gzbench codec, one thread, no network), render.
# Environment: BENCH_MAX (largest size, default 64M; the issue's 512M needs
# more memory and time than the 2-core/24 GiB reference VM has), BENCH_ITERS
# (timed calls per size, 5), BENCH_WARMUP (1), BENCH_OUT (bench/results),
# BENCH_DATA (generated data, /tmp/gzbench-data), GZ_DATA_DIR (real data).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$(cd "${1:?usage: run_bench.sh BUILD_DIR [STEP...]}" && pwd)
shift
STEPS=("$@")
[ ${#STEPS[@]} -gt 0 ] || STEPS=(codec ar4 move4 real4 ar8 ar4x10 e2e render)
OUT=${BENCH_OUT:-$ROOT/bench/results}
DATA=${BENCH_DATA:-/tmp/gzbench-data}
MAX=${BENCH_MAX:-64M}
ITERS=${BENCH_ITERS:-5}
WARM=${BENCH_WARMUP:-1}
REAL=${GZ_DATA_DIR:-$ROOT/../shared/data}
CL=$ROOT/bench/cluster.sh
GZB=$BUILD/app/gzbench
GZS=$BUILD/app/gzstack
WAVE=$DATA/wavefield_16x2048x2048.raw

[ "$(id -u)" -eq 0 ] || {
  echo "run_bench.sh: needs root (network namespaces and tc)" >&2
  exit 1
}
mkdir -p "$OUT" "$DATA"
trap '"$CL" down' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

say() { printf '\n== %s\n' "$*"; }

# The machine, once per run: every table names it.
machine() {
  {
    echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
    echo "host: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -1)," \
      "$(free -g | awk '/^Mem:/ {print $2}') GiB, kernel $(uname -r)"
    echo "mpi: $(mpirun --version 2>/dev/null | head -1)"
    echo "gzstack: $("$GZS" --version 2>/dev/null | head -1)," \
      "git $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)$(git -C "$ROOT" diff --quiet 2>/dev/null || echo '+dirty')"
  } >"$OUT/machine.txt"
}

wavefield() {
  [ -s "$WAVE" ] && return
  say "generating the wavefield: 16 snapshots of 2048 x 2048 float32 (256 MiB)"
  "$BUILD/examples/wavefield_gen" --nx 2048 --nz 2048 --snapshots 16 -o "$WAVE" --force -q
}

# coll NAME HOSTS RATE [gzbench coll options...]: one gzbench run, its
# command line kept beside its results.
coll() {
  local name=$1 hosts=$2 rate=$3
  shift 3
  "$CL" up "$hosts" "$rate" 0 2>&1 | tail -1
  local cmd=(gzbench coll "$@" --iters "$ITERS" --warmup "$WARM" --explain
    --csv "$OUT/$name.csv" --json "$OUT/$name.json")
  say "$name: $hosts hosts, $rate: ${cmd[*]}"
  echo "bench/cluster.sh up $hosts $rate 0 && bench/cluster.sh run ${cmd[*]}" |
    sed "s#$DATA/##g; s#$OUT/##g; s#$REAL/##g" >"$OUT/$name.cmd"
  cp "$OUT/machine.txt" "$OUT/$name.machine" # this result's date and build
  "$CL" run "$GZB" "${cmd[@]:1}" | tee "$OUT/$name.txt"
}

chart() { # chart NAME TITLE: time against size per algorithm
  command -v gnuplot >/dev/null || {
    echo "gnuplot not installed: no chart for $1"
    return 0
  }
  local csv=$OUT/$1.csv plots="" a
  for a in $(awk -F, 'NR > 1 && !seen[$11]++ {print $11}' "$csv"); do
    awk -F, -v a="$a" 'NR > 1 && $11 == a {print $9 / 1048576, $13 / 1000}' "$csv" \
      >"$OUT/.$1.$a.dat"
    plots="$plots${plots:+, }\"$OUT/.$1.$a.dat\" using 1:2 with linespoints lw 2 title \"$a\""
  done
  gnuplot <<EOF
set terminal pngcairo size 900,560 noenhanced
set output "$OUT/$1.png"
set title "$2"
set logscale xy 2
set xlabel "message size per rank (MiB)"
set ylabel "time per call (ms), median, slowest rank"
set key top left
set grid
plot $plots
EOF
  rm -f "$OUT/.$1".*.dat
}

step_codec() {
  say "codec: gzbench codec -e 1e-4 --mb 64 --reps 3 (one thread, no network)"
  echo "gzbench codec -e 1e-4 --mb 64 --reps 3" >"$OUT/codec.cmd"
  cp "$OUT/machine.txt" "$OUT/codec.machine"
  GZ_DATA_DIR=$REAL "$GZB" codec -e 1e-4 --mb 64 --reps 3 | tee "$OUT/codec.txt"
}

# allreduce_sweep NAME HOSTS LINK "LINK AS SHOWN": the four allreduce
# algorithms on the wavefield from 1 MiB to MAX, and their chart
allreduce_sweep() {
  wavefield
  coll "$1" "$2" "$3" --coll allreduce --algos mpi,redoub,ring,auto \
    --min-bytes 1M --max-bytes "$MAX" -e 1e-4 --profile --data "$WAVE"
  chart "$1" "allreduce, $2 hosts, $4, float32 wavefield, e = 1e-4 strict"
}

step_ar4() { allreduce_sweep allreduce_4h_1g 4 1gbit "1 Gbit"; }

step_move4() {
  wavefield
  coll bcast_4h_1g 4 1gbit --coll bcast --algos mpi,binomial,auto \
    --min-bytes "$MAX" --max-bytes "$MAX" -e 1e-4 --profile --data "$WAVE"
  coll scatter_4h_1g 4 1gbit --coll scatter --algos mpi,binomial,auto \
    --min-bytes "$MAX" --max-bytes "$MAX" -e 1e-4 --profile --data "$WAVE"
}

step_real4() {
  coll allreduce_4h_1g_soda 4 1gbit --coll allreduce --algos mpi,redoub,ring,auto \
    --min-bytes 1M --max-bytes 16M -e 1e-4 \
    --data "$REAL/seismic_soda_lakes/soda_lakes_24x96x2048_f32le.raw"
}

step_ar8() { allreduce_sweep allreduce_8h_1g 8 1gbit "1 Gbit"; }

step_ar4x10() { allreduce_sweep allreduce_4h_10g 4 10gbit "10 Gbit"; }

# seconds of a command's wall time (bash's own clock)
walltime() {
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >/dev/null
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f\n", b - a}'
}

# max |a - b| of variable VAR in two netCDF files (values in file order;
# a leading time dimension of length 1 is fine)
maxdiff() {
  local a=$1 b=$2 var=$3
  paste -d' ' <(ncdump_values "$a" "$var") <(ncdump_values "$b" "$var") |
    awk 'NF == 2 { d = $1 - $2; if (d < 0) d = -d; if (d > m) m = d; n++ }
      END { if (n) printf "%.3g\n", m; else exit 1 }'
}

ncdump_values() { # ncdump_values FILE VAR: one value a line
  ncdump -v "$2" -p 9,17 "$1" |
    awk -v v="$2" '$1 == v && $2 == "=" { on = 1; sub(/^[^=]*=/, "") }
      on { last = /;/; gsub(/[;,]/, " "); for (i = 1; i <= NF; i++) print $i; if (last) on = 0 }'
}

step_e2e() {
  local tre=$REAL/climate_ccsm3_trefht/TREFHT.B06.57.atm.1890-1999ANN.nc
  local csv=$OUT/e2e.csv e2e=$DATA/e2e
  cp "$OUT/machine.txt" "$OUT/e2e.machine"
  wavefield
  mkdir -p "$e2e"
  echo "case,tool,hosts,rate,wall_s,max_diff_vs_mpi,command" >"$csv"
  "$CL" up 4 1gbit 0 2>&1 | tail -1
  for algo in mpi auto ring; do
    for _ in 1 2 3; do
      local t
      t=$(walltime "$CL" run "$GZS" -i "$WAVE" --dims 2048x2048 --dtype f32 -e 1e-4 \
        --algo $algo -o "$e2e/wave_$algo.nc" --metrics "$e2e/wave_$algo.json" --force)
      echo "$t" >>"$e2e/wave_$algo.times"
    done
  done
  for algo in mpi auto ring; do
    local med diff=
    med=$(sort -n "$e2e/wave_$algo.times" | sed -n 2p)
    rm -f "$e2e/wave_$algo.times"
    [ $algo = mpi ] || diff=$(maxdiff "$e2e/wave_$algo.nc" "$e2e/wave_mpi.nc" data || true)
    echo "wavefield 16x2048x2048 mean,gzstack --algo $algo,4,1gbit,$med,${diff:-n/a},gzstack -i wavefield_16x2048x2048.raw --dims 2048x2048 --dtype f32 -e 1e-4 --algo $algo -o wave.nc" >>"$csv"
  done
  for algo in mpi auto ring; do
    local t
    t=$(walltime "$CL" run "$GZS" -i "$tre" --var TREFHT -e 1e-4 --algo $algo \
      -o "$e2e/trefht_$algo.nc" --force)
    local diff=
    [ $algo = mpi ] || diff=$(maxdiff "$e2e/trefht_$algo.nc" "$e2e/trefht_mpi.nc" TREFHT || true)
    echo "TREFHT 110 years mean,gzstack --algo $algo,4,1gbit,$t,${diff:-n/a},gzstack -i TREFHT.B06.57.atm.1890-1999ANN.nc --var TREFHT -e 1e-4 --algo $algo -o trefht.nc" >>"$csv"
  done
  "$CL" down
  if command -v cdo >/dev/null; then
    local t diff
    t=$(walltime cdo -s -O timmean "$tre" "$e2e/trefht_cdo.nc")
    diff=$(maxdiff "$e2e/trefht_cdo.nc" "$e2e/trefht_mpi.nc" TREFHT || true)
    echo "TREFHT 110 years mean,cdo timmean (1 process),1,-,$t,${diff:-n/a},cdo -O timmean TREFHT.B06.57.atm.1890-1999ANN.nc trefht_cdo.nc" >>"$csv"
  fi
  if command -v ncra >/dev/null; then
    local t diff
    t=$(walltime ncra -O "$tre" "$e2e/trefht_ncra.nc")
    diff=$(maxdiff "$e2e/trefht_ncra.nc" "$e2e/trefht_mpi.nc" TREFHT || true)
    echo "TREFHT 110 years mean,ncra (1 process),1,-,$t,${diff:-n/a},ncra -O TREFHT.B06.57.atm.1890-1999ANN.nc trefht_ncra.nc" >>"$csv"
  fi
  cat "$csv"
}

machine
for s in "${STEPS[@]}"; do
  case $s in
  codec | ar4 | move4 | real4 | ar8 | ar4x10 | e2e) "step_$s" ;;
  render) bash "$ROOT/bench/render.sh" "$OUT" "$ROOT/BENCHMARKS.md" ;;
  *)
    echo "run_bench.sh: unknown step $s" >&2
    exit 2
    ;;
  esac
done
