#!/usr/bin/env bash
# test_gzbench_model.sh GZBENCH MPIEXEC - `gzbench model`: the printed times
# follow the model's formula for given inputs (MPI's allreduce, checked
# against the formula of docs/performance-model.md computed here), `auto` is
# the cheapest column, --probe takes its inputs from a context on the
# launched ranks, and bad options fail with a message on every launch.
set -u
BENCH=$1 MPIRUN=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# shellcheck source=../app_lib.sh
source "$(dirname "$0")/../app_lib.sh"

# given inputs: no measurement at all
expect "given inputs" "$BENCH" model --ranks 4,5 --link 1gbit --alpha 50e-6 --codec-eps 1e8 \
  --ratio 3 --size 64MiB
cp "$TMP/out" "$TMP/given"
python3 - "$TMP/given" <<'PY' && ok || ko "given inputs: rows do not follow the model"
import math, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip() and not l.startswith(("#", "   ranks"))]
head = [l.split() for l in open(sys.argv[1]) if l.startswith("   ranks")][0]
assert len(rows) == 2, rows
for r in rows:
    P, D = int(r[0]), float(r[1])
    alpha, beta = 50e-6, 1 / 1.25e8
    L = math.ceil(math.log2(P))
    mpi = L * alpha + min(L * (alpha + D * beta), 2 * (P - 1) * alpha + 2 * (P - 1) / P * D * beta)
    vals = {}  # algorithm -> ms, from "<v> ms" pairs or "-"
    cells, k = r[2:-1], 0
    for name in head[2:-1]:
        if cells[k] == "-":
            k += 1
        else:
            vals[name] = float(cells[k]); k += 2
    assert abs(vals["mpi"] - mpi * 1e3) <= 1e-3 * mpi * 1e3, (P, vals["mpi"], mpi * 1e3)
    assert r[-1] == min(vals, key=vals.get), (r[-1], vals)
PY

# --probe on 2 ranks: the inputs come from the launched ranks (probe, then
# what the context learns from allreduces)
expect "probe on 2 ranks" "$MPIRUN" --oversubscribe -np 2 "$BENCH" model --probe --ranks 2,512 \
  --size 1MiB --learn-size 1MiB --field-mb 1
grep -q "(probed and learnt on these ranks)" "$TMP/out" && ok || { ko "probe: link not probed"; cat "$TMP/out"; }
grep -q "per pass (learnt)" "$TMP/out" && ok || ko "probe: codec speed not learnt"
[ "$(grep -cE '^ +(2|512) +1048576 ' "$TMP/out")" = 2 ] && ok || ko "probe: not one row per rank count"
# the probe alone (no learning calls): the ratio from gzbench coll's field at e / P
expect "probe only" "$MPIRUN" --oversubscribe -np 2 "$BENCH" model --probe --learn-calls 0 \
  --ranks 2 --size 1MiB --field-mb 1
grep -q "(probed on these ranks).*per pass (probed).*(measured at e / P)" "$TMP/out" && ok ||
  { ko "probe only: sources"; cat "$TMP/out"; }

# --check on 3 ranks: every allreduce algorithm timed in the same run, its
# model column the same figure as the table's row for 3 ranks
expect "check on 3 ranks" "$MPIRUN" --oversubscribe -np 3 "$BENCH" model --probe --ranks 3 \
  --size 1MiB --learn-size 1MiB --learn-calls 2 --field-mb 1 --check 2
python3 - "$TMP/out" <<'PY' && ok || { ko "check: rows"; cat "$TMP/out"; }
import sys
lines = open(sys.argv[1]).read().splitlines()
head = [l.split() for l in lines if l.startswith("   ranks")][0]
row = [l.split() for l in lines if l.split()[:2] == ["3", "1048576"]][0]
table, cells, k = {}, row[2:-1], 0
for name in head[2:-1]:
    if cells[k] == "-":
        k += 1
    else:
        table[name] = float(cells[k]); k += 2
start = [i for i, l in enumerate(lines) if l.startswith("# check:")][0]
checked = {}
for l in lines[start + 2:]:
    name, model, measured, diff = l.split()
    checked[name] = (float(model), float(measured), diff)
assert set(checked) == set(table) == {"mpi", "redoub", "ring"}, (checked, table)
for name, (model, measured, diff) in checked.items():
    assert abs(model - table[name]) <= 1e-3 * table[name], (name, model, table[name])
    assert measured > 0 and diff.endswith("%"), (name, measured, diff)
PY
expect_error "check of bcast" "--check times allreduce only" \
  "$MPIRUN" --oversubscribe -np 2 "$BENCH" model --probe --collective bcast --learn-calls 0 \
  --size 1MiB --field-mb 1 --check 1
expect_error "bad rank count, checked" "--ranks: bad rank count" \
  "$MPIRUN" --oversubscribe -np 2 "$BENCH" model --probe --ranks x --check 1

# bad options: a message, exit 2, no hang with or without --probe
expect_error "bad rank count" "--ranks: bad rank count 'x'" "$BENCH" model --ranks x
expect_error "bad rank count, probed" "--ranks: bad rank count" \
  "$MPIRUN" --oversubscribe -np 2 "$BENCH" model --probe --ranks x
expect_error "bad link" "--link: bad rate 'fast'" "$BENCH" model --link fast --codec-eps 1e8 --ratio 3
app_finish
