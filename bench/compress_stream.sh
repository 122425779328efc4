#!/usr/bin/env bash
# compress_stream.sh - whole-process cost and peak memory of `gzstack compress
# --fast` and `gzstack decompress` (to .raw) on a 16 MB and a 256 MB float32
# raw file (a smooth wave plus noise), pinned to one core (taskset -c 1):
# medians of REPS runs of elapsed and CPU (user + sys) seconds, the largest
# peak RSS (/usr/bin/time), and the cost beyond the 16 MB run per byte (the
# issue-17 figure: "whole-process cost beyond fixed start-up on 256 MB").
#
#   bench/compress_stream.sh GZSTACK [GZSTACK...]   (REPS=5, DIR=/tmp/gzstream)
# Several binaries (e.g. before and after a change) run in the same session.
set -euo pipefail
REPS=${REPS:-5}
DIR=${DIR:-/tmp/gzstream}
PY=${PYTHON:-python3}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
mkdir -p "$DIR"
for mb in 16 256; do
  [ -s "$DIR/f$mb.raw" ] || "$PY" - "$DIR/f$mb.raw" "$mb" <<'PYEOF'
import sys
import numpy as np
n = int(sys.argv[2]) * (1 << 20) // 4
i = np.arange(n, dtype=np.float64)
f = np.sin(i * 1e-4) * np.cos(i * 3.7e-3) + 1e-3 * np.random.default_rng(2).standard_normal(n)
f.astype('<f4').tofile(sys.argv[1])
PYEOF
done
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
for bin in "$@"; do
  declare -A el cpu
  for mb in 16 256; do
    n=$((mb * 262144))
    cat "$DIR/f$mb.raw" >/dev/null # in the page cache for every binary
    for op in compress decompress; do
      : >"$DIR/times"
      for _ in $(seq "$REPS"); do
        rm -f "$DIR/o$mb.raw"
        [ $op = compress ] && rm -f "$DIR/o$mb.gzc"
        if [ $op = compress ]; then
          args=(compress -i "$DIR/f$mb.raw" --dims $n -e 1e-4 --fast -o "$DIR/o$mb.gzc" -q)
        else
          args=(decompress -i "$DIR/o$mb.gzc" -o "$DIR/o$mb.raw" -q)
        fi
        /usr/bin/time -f "%e %U %S %M" -a -o "$DIR/times" taskset -c 1 "$bin" "${args[@]}"
      done
      e=$(awk '{print $1}' "$DIR/times" | median)
      c=$(awk '{print $2 + $3}' "$DIR/times" | median)
      m=$(awk '{print $4}' "$DIR/times" | sort -n | tail -1)
      el[$op$mb]=$e cpu[$op$mb]=$c
      printf '%s %-10s %3d MB: elapsed %.2f s, cpu %.2f s, peak RSS %d MB\n' "$bin" $op $mb "$e" "$c" $((m / 1024))
    done
  done
  for op in compress decompress; do
    awk -v b="$bin" -v op=$op -v e1="${el[${op}16]}" -v e2="${el[${op}256]}" -v c1="${cpu[${op}16]}" \
      -v c2="${cpu[${op}256]}" 'BEGIN {B = 240 * 1048576 / 1e9; re = e2 > e1 ? B / (e2 - e1) : 0
      rc = c2 > c1 ? B / (c2 - c1) : 0
      printf "%s %-10s beyond 16 MB: elapsed %.2f GB/s, cpu %.2f GB/s\n", b, op, re, rc}'
  done
  unset el cpu
done
rm -f "$DIR"/o*.gzc "$DIR"/o*.raw "$DIR/times"
