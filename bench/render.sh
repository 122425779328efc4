#!/usr/bin/env bash
# render.sh - bench/results (CSV from `gzbench coll --csv`, e2e.csv, codec.txt,
# *.cmd, machine.txt) to markdown tables, written between the markers
#   <!-- bench/render.sh: begin -->  and  <!-- bench/render.sh: end -->
# of BENCHMARKS.md (the text around them is kept). bash + awk only.
#
#   bench/render.sh [RESULTS_DIR [BENCHMARKS.md]]
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RES=${1:-$ROOT/bench/results}
MD=${2:-$ROOT/BENCHMARKS.md}
BEGIN='<!-- bench/render.sh: begin -->'
END='<!-- bench/render.sh: end -->'

label() { # label NAME: machine, date and command of one result
  local machine=$RES/$1.machine # written when the result was measured
  [ -f "$machine" ] || machine=$RES/machine.txt
  echo
  sed 's/^/    /' "$machine"
  [ -f "$RES/$1.cmd" ] && echo "    command: $(cat "$RES/$1.cmd")"
  echo
}

# allreduce sweep: one row per size, the algorithms side by side
allreduce_table() {
  awk -F, '
    NR == 1 { next }
    { sz = $9; a = $11; if (!(sz in seen)) { seen[sz] = 1; order[++n] = sz }
      t[sz, a] = $13 / 1000; r[sz, a] = $19; err[sz, a] = $20; ps[sz, a] = $21;
      if (a == "auto") ran[sz] = $12; hosts = $2 }
    END {
      print "| size per rank | MPI_Allreduce ms | gz redoub ms | gz ring ms | gz auto ms (chose) | best gz vs MPI | auto vs best gz | ratio redoub / ring | max error | PSNR dB |"
      print "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
      for (i = 1; i <= n; i++) {
        s = order[i]; best = t[s, "redoub"]; bn = "redoub";
        if (((s, "ring") in t) && t[s, "ring"] < best) { best = t[s, "ring"]; bn = "ring" }
        printf "| %g MiB | %.1f | %.1f | %.1f | %.1f (%s) | %.2fx (%s) | %+.0f %% | %.1f / %.1f | %.2g | %.1f |\n",
          s / 1048576, t[s, "mpi"], t[s, "redoub"], t[s, "ring"], t[s, "auto"], ran[s],
          t[s, "mpi"] / best, bn, 100 * (t[s, "auto"] / best - 1), r[s, "redoub"],
          r[s, "ring"], (err[s, "ring"] > err[s, "redoub"] ? err[s, "ring"] : err[s, "redoub"]),
          ps[s, "ring"]
      }
      last = order[n]; best = t[last, "redoub"] < t[last, "ring"] ? t[last, "redoub"] : t[last, "ring"]
      printf "\nAt %g MiB the best compressed allreduce is %.2fx MPI_Allreduce: the 5x goal is %s. ",
        last / 1048576, t[last, "mpi"] / best, (t[last, "mpi"] / best >= 5 ? "**met**" : "**missed**")
      worst = 0; for (i = 1; i <= n; i++) { s = order[i];
        b = t[s, "redoub"] < t[s, "ring"] ? t[s, "redoub"] : t[s, "ring"];
        d = 100 * (t[s, "auto"] / b - 1); if (d > worst) { worst = d; ws = s } }
      printf "`auto` is within 10 %% of the best compressed algorithm at %s point of this sweep%s.\n",
        (worst <= 10 ? "every" : "not every"), (worst <= 10 ? "" : sprintf(" (worst: %+.0f %% at %g MiB)", worst, ws / 1048576))
      cross = ""; for (i = 1; i <= n; i++) { s = order[i]; w = t[s, "redoub"] < t[s, "ring"] ? "redoub" : "ring";
        if (i > 1 && w != pw) cross = cross sprintf(" %s -> %s between %g and %g MiB;", pw, w, order[i - 1] / 1048576, s / 1048576); pw = w }
      printf "Faster of ReDoub and ring by size:%s\n", cross == "" ? " " pw " at every size (no crossover in this range)." : cross
    }' "$1"
}

# the profile of the largest size: where the time goes
profile_table() {
  awk -F, '
    NR == 1 { next }
    { if ($9 + 0 >= big) { if ($9 + 0 > big) delete row; big = $9 + 0; row[$11] = $0 } }
    END {
      printf "Profile at %g MiB (slowest rank, medians; one pass of each codec phase over the rank'"'"'s %d values, all ranks at once):\n\n", big / 1048576, big / 4
      print "| algorithm | call ms | codec ms in the call | communication + wait ms | quantize ms | encode ms | decode+reduce ms | dequantize ms |"
      print "|---|---:|---:|---:|---:|---:|---:|---:|"
      split("mpi redoub ring binomial auto", names, " ")
      for (k = 1; k <= 5; k++) { a = names[k]; if (!(a in row)) continue; split(row[a], f, ",")
        if (a == "mpi") { printf "| MPI | %.1f | - | %.1f | - | - | - | - |\n", f[13] / 1000, f[13] / 1000; continue }
        printf "| %s%s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |\n", a, a == "auto" ? " (" f[12] ")" : "",
          f[13] / 1000, f[23] / 1000, (f[13] - f[23]) / 1000, f[24] / 1000, f[25] / 1000, f[26] / 1000, f[27] / 1000 }
    }' "$1"
}

# a collective at one size: algorithms as rows
move_table() {
  awk -F, '
    NR == 1 { next }
    { if ($11 == "mpi") mpi[$9] = $13; rows[++n] = $0 }
    END {
      print "| collective | size | algorithm | ms | vs MPI | ratio | max error | PSNR dB | codec ms |"
      print "|---|---:|---|---:|---:|---:|---:|---:|---:|"
      for (i = 1; i <= n; i++) { split(rows[i], f, ",")
        printf "| %s | %g MiB | %s%s | %.1f | %.2fx | %.1f | %.2g | %s | %.1f |\n", f[1], f[9] / 1048576,
          f[11], f[11] == "auto" ? " (" f[12] ")" : "", f[13] / 1000, mpi[f[9]] / f[13], f[19], f[20],
          f[21] == "inf" ? "exact" : sprintf("%.1f", f[21]), f[23] / 1000 }
    }' "$1"
}

generate() {
  local f name
  echo "$BEGIN"
  echo
  echo "_Generated by \`bench/render.sh\` from \`bench/results/\`; do not edit by hand._"
  for f in "$RES"/allreduce_*.csv; do
    [ -f "$f" ] || continue
    name=$(basename "$f" .csv)
    local hosts rate data
    hosts=$(echo "$name" | sed -n 's/.*_\([0-9]*\)h_.*/\1/p')
    rate=$(echo "$name" | sed -n 's/.*h_\([0-9]*\)g.*/\1/p')
    data=$(awk -F, 'NR == 2 {n = split($3, p, "/"); print p[n]}' "$f")
    echo
    echo "### allreduce: $hosts hosts, $rate Gbit/s links, float32, $data, e = 1e-4 strict"
    label "$name"
    allreduce_table "$f"
    if awk -F, 'NR > 1 && $24 != "" {found = 1} END {exit !found}' "$f"; then
      echo
      profile_table "$f"
    fi
    [ -f "$RES/$name.png" ] && printf '\n![%s](bench/results/%s.png)\n' "$name" "$name"
  done
  for name in bcast_4h_1g scatter_4h_1g; do
    [ -f "$RES/$name.csv" ] || continue
    echo
    echo "### ${name%%_*}: 4 hosts, 1 Gbit/s links, float32 wavefield, e = 1e-4"
    label "$name"
    move_table "$RES/$name.csv"
    awk -F, 'NR > 1 { if ($11 == "mpi") m = $13; else if (b == "" || $13 < b) b = $13 }
      END { printf "\nBest compressed vs MPI: %.2fx; the 5x goal is %s.\n", m / b, (m / b >= 5 ? "**met**" : "**missed**") }' \
      "$RES/$name.csv"
  done
  if [ -f "$RES/e2e.csv" ]; then
    echo
    echo "### End to end: gzstack (read, stack, write) vs --algo mpi, cdo and NCO"
    label e2e
    echo "| case | tool | hosts | links | wall s | max difference vs gzstack --algo mpi |"
    echo "|---|---|---:|---|---:|---:|"
    awk -F, 'NR > 1 {printf "| %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6}' "$RES/e2e.csv"
    echo
    echo "Commands (in the cluster: \`bench/cluster.sh run ...\`):"
    echo
    awk -F, 'NR > 1 {print "    " $7}' "$RES/e2e.csv"
  fi
  if [ -f "$RES/codec.txt" ]; then
    echo
    echo "### Codec alone (one thread, no network)"
    label codec
    grep '^|' "$RES/codec.txt"
  fi
  echo
  echo "$END"
}

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
generate >"$tmp"
if [ -f "$MD" ] && grep -qF "$BEGIN" "$MD" && grep -qF "$END" "$MD"; then
  awk -v b="$BEGIN" -v e="$END" -v gen="$tmp" '
    $0 == b { while ((getline line < gen) > 0) print line; skip = 1; next }
    $0 == e { skip = 0; next }
    !skip' "$MD" >"$MD.new"
  mv "$MD.new" "$MD"
else
  { [ -f "$MD" ] && cat "$MD"; echo; cat "$tmp"; } >"$MD.new"
  mv "$MD.new" "$MD"
fi
echo "render.sh: tables written to $MD"
