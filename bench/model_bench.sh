#!/usr/bin/env bash
# model_bench.sh - does `auto` pick right on the network it runs on, and does
# the model predict the measured times? (issue 15, docs/performance-model.md)
# Nothing GZCOLL_* is set: the library measures the link itself.
#
#   bench/model_bench.sh BUILD_DIR SETUP [N RATE]
#     SETUP: shm, or any name starting with shm (N ranks on shared memory, no
#     cluster), or a name for the emulated cluster of N hosts at RATE
#     (bench/cluster.sh up N RATE).
# Per setup, into $BENCH_OUT (bench/results)/model_SETUP.txt:
#   0. gzbench model --probe --check: the model's times for N ranks (and 512)
#      from inputs probed on these hosts and learnt from allreduces of
#      LEARN_SIZE, then each algorithm timed at 64 MiB in the same run
#      (CHECK_CALLS calls), model beside measurement;
#   1. gzbench coll allreduce, 1 MiB .. 64 MiB per rank, mpi/redoub/ring/auto;
#   2. gzstack on N 4096 x 4096 float32 wavefield snapshots (64 MiB each, one
#      per rank): --algo auto, mpi, ring, redoub (metrics JSON kept);
#   3. examples/plain_allreduce (4 Mi floats) plain and through
#      libgzcoll_pmpi (GZCOLL_ERROR_BOUND=1e-4, GZCOLL_VERBOSE=1), auto and
#      each algorithm forced by GZCOLL_ALGO.
# Environment: BENCH_ITERS (3), BENCH_OUT, BENCH_DATA (/tmp/gz15), STEPS
# ("model coll stack pmpi"), LEARN_SIZE (16MiB), CHECK_CALLS (3), STACK_REPS
# (1: rounds of the four gzstack runs, interleaved in a balanced order; the medians and auto's
# distance to the best forced one are printed), PMPI_REPS (1: the same for
# plain_allreduce through libgzcoll_pmpi, auto and each algorithm forced).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$(cd "${1:?usage: model_bench.sh BUILD_DIR SETUP [N RATE]}" && pwd)
SETUP=${2:?setup name}
N=${3:-4}
RATE=${4:-1gbit}
OUT=${BENCH_OUT:-$ROOT/bench/results}
DATA=${BENCH_DATA:-/tmp/gz15}
ITERS=${BENCH_ITERS:-3}
STEPS=${STEPS:-model coll stack pmpi}
STACK_REPS=${STACK_REPS:-1}
LEARN_SIZE=${LEARN_SIZE:-16MiB}
CHECK_CALLS=${CHECK_CALLS:-3}
CL=$ROOT/bench/cluster.sh
LOG=$OUT/model_$SETUP.txt
mkdir -p "$OUT" "$DATA"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for v in $(env | sed -n 's/^\(GZCOLL_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done

if [[ "$SETUP" == shm* ]]; then
  launch() { mpirun -np "$N" --oversubscribe "$@"; }
else
  "$CL" up "$N" "$RATE" 50us
  trap '"$CL" down' EXIT
  launch() { "$CL" run -np "$N" "$@"; }
fi

{
  echo "# model_bench $SETUP: $N ranks, ${RATE} ($([[ "$SETUP" == shm* ]] && echo 'shared memory' || echo 'bench/cluster.sh'))"
  echo "# date $(date -u +%Y-%m-%dT%H:%MZ), host $(nproc) cores $(lscpu | sed -n 's/^Model name: *//p' | head -1), shared with other jobs"
  echo "# git $(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet || echo +dirty)"
} >"$LOG"

if [[ " $STEPS " == *" model "* ]]; then
  MARGS="--probe --ranks $N,512 --size 64MiB --learn-size $LEARN_SIZE --check $CHECK_CALLS"
  echo "## gzbench model $MARGS" >>"$LOG"
  # shellcheck disable=SC2086 # MARGS is a list of options
  launch "$BUILD/app/gzbench" model $MARGS >>"$LOG" 2>&1
fi

if [[ " $STEPS " == *" coll "* ]]; then
  echo "## gzbench coll --coll allreduce --algos mpi,redoub,ring,auto --min-bytes 1M --max-bytes 64M --iters $ITERS --warmup 1 --explain" >>"$LOG"
  launch "$BUILD/app/gzbench" coll --coll allreduce --algos mpi,redoub,ring,auto \
    --min-bytes 1M --max-bytes 64M --iters "$ITERS" --warmup 1 --explain \
    --csv "$OUT/model_${SETUP}_coll.csv" >>"$LOG" 2>&1
fi

if [[ " $STEPS " == *" stack "* ]]; then
  IN=$DATA/wave$N.h5
  if [ "$N" = 8 ] && [ ! -s "$IN" ] && [ -s "$DATA/wave4.h5" ]; then
    # generating 4096 x 4096 takes ~20 min on the shared 2-core host: 8 hosts
    # stack the 4 snapshots twice (two copies of the file)
    cp "$DATA/wave4.h5" "$DATA/wave4b.h5"
    IN="$DATA/wave4.h5 $DATA/wave4b.h5"
  fi
  [ -s "${IN%% *}" ] || "$BUILD/examples/wavefield_gen" --nx 4096 --nz 4096 \
    --snapshots "$N" -o "$IN" --force -q
  # the algorithms interleaved, STACK_REPS rounds; the order of a round
  # cycles through a balanced Latin square (each algorithm first once and
  # right after each other one once in every four rounds: no run always
  # follows the same one); then each one's median
  ORDERS=("auto mpi redoub ring" "mpi ring auto redoub" "ring redoub mpi auto"
    "redoub auto ring mpi")
  for rep in $(seq "$STACK_REPS"); do
    for algo in ${ORDERS[$(((rep - 1) % 4))]}; do
      echo "## gzstack -i $IN --var /wavefield --op sum -e 1e-4 --algo $algo (round $rep)" >>"$LOG"
      # shellcheck disable=SC2086 # IN may name two files
      launch "$BUILD/app/gzstack" -i $IN --var /wavefield --op sum -e 1e-4 --algo "$algo" \
        -o "$DATA/out_$SETUP.h5" --metrics "$OUT/model_${SETUP}_stack_${algo}_$rep.json" \
        --force -q >>"$LOG" 2>&1
    done
  done
  python3 - "$OUT" "$SETUP" "$STACK_REPS" >>"$LOG" <<'EOF'
import json, statistics, sys
out, setup, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
med = {}
for algo in ("auto", "mpi", "ring", "redoub"):
    runs = [json.load(open("%s/model_%s_stack_%s_%d.json" % (out, setup, algo, r)))
            for r in range(1, reps + 1)]
    for m in runs:
        t = m["time"]
        print("  %-7s ran %-7s total %.3f s compress %.3f communicate %.3f predicted %.3f "
              "measured %.3f ratio %.3g | %s" % (
              algo, m.get("algorithm"), t["total"], t["compress"], t["communicate"],
              m.get("allreduce_predicted_s", 0), m.get("allreduce_measured_s", 0),
              m.get("compression_ratio", 0), m.get("algorithm_reason", "")[:70]))
    med[algo] = statistics.median(m["time"]["total"] for m in runs)
best = min(("mpi", "ring", "redoub"), key=med.get)
print("# medians of %d: %s; auto vs best forced (%s): %+.1f %%" % (
    reps, ", ".join("%s %.3f s" % (a, med[a]) for a in med), best,
    100 * (med["auto"] / med[best] - 1)))
EOF
  rm -f "$DATA/out_$SETUP.h5"
fi

if [[ " $STEPS " == *" pmpi "* ]]; then
  # plain MPI, then through the interposer with auto and with each algorithm
  # forced (GZCOLL_ALGO), PMPI_REPS rounds interleaved; the medians of the
  # allreduce's seconds per call and auto's distance to the best forced one
  PRELOAD=(-x LD_PRELOAD="$BUILD/pmpi/libgzcoll_pmpi.so" -x GZCOLL_ERROR_BOUND=1e-4)
  for rep in $(seq "${PMPI_REPS:-1}"); do
    echo "## plain_allreduce 4194304 5 (plain MPI, round $rep)" >>"$LOG"
    launch "$BUILD/examples/plain_allreduce" 4194304 5 >>"$LOG" 2>&1
    for algo in auto mpi ring redoub; do
      echo "## plain_allreduce 4194304 5 with LD_PRELOAD=libgzcoll_pmpi.so GZCOLL_ERROR_BOUND=1e-4 GZCOLL_ALGO=$algo GZCOLL_VERBOSE=1 (round $rep)" >>"$LOG"
      launch "${PRELOAD[@]}" -x GZCOLL_ALGO="$algo" -x GZCOLL_VERBOSE=1 \
        "$BUILD/examples/plain_allreduce" 4194304 5 >>"$LOG" 2>&1
    done
  done
  python3 - "$LOG" >>"$LOG" <<'EOF'
import re, statistics, sys
runs, cur = {}, None
for line in open(sys.argv[1]):
    if line.startswith("## plain_allreduce"):
        a = re.search(r"GZCOLL_ALGO=(\w+)", line)
        cur = "pmpi " + a.group(1) if a else "plain MPI"
    m = re.match(r"ranks \d+ +values \d+ +allreduce ([0-9.eE+-]+) s", line)
    if m and cur:
        runs.setdefault(cur, []).append(float(m.group(1)))
        cur = None
med = {k: statistics.median(v) for k, v in runs.items()}
forced = [k for k in med if k.startswith("pmpi ") and k != "pmpi auto"]
if "pmpi auto" in med and forced:
    best = min(forced, key=med.get)
    print("# pmpi allreduce s per call, medians of %d: %s; auto vs best forced (%s): %+.1f %%"
          % (len(runs["pmpi auto"]), ", ".join("%s %.4f" % (k, med[k]) for k in med), best,
             100 * (med["pmpi auto"] / med[best] - 1)))
EOF
fi

echo "model_bench: $LOG"
