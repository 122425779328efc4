#!/usr/bin/env bash
# test_gzbench_coll.sh GZBENCH MPIEXEC - `gzbench coll` at 3 ranks (odd):
# every row of the sweep is in its --csv and --json files with the same
# figures, each compressed row is within the bound with no element wrong,
# MPI's own rows are exact, the JSON header says what ran; bad options fail
# with a message on every rank.
set -u
BENCH=$1 MPIRUN=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# shellcheck source=../app_lib.sh
source "$(dirname "$0")/../app_lib.sh"
run() { "$MPIRUN" --oversubscribe -np "$@"; }

for coll in allreduce scatter; do
  algos=mpi,ring
  [ "$coll" = scatter ] && algos=mpi,binomial
  expect "$coll sweep" run 3 "$BENCH" coll --coll "$coll" --algos "$algos" --min-bytes 64k \
    --max-bytes 256k --iters 2 --warmup 1 --csv "$TMP/$coll.csv" --json "$TMP/$coll.json"
  python3 - "$TMP/$coll.csv" "$TMP/$coll.json" "$coll" <<'PY' && ok || ko "$coll: files disagree or a check failed"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
doc = json.load(open(sys.argv[2]))
coll = sys.argv[3]
assert doc["benchmark"] == "gzbench coll" and doc["collective"] == coll, doc
assert doc["ranks"] == 3 and doc["type"] == "f32" and doc["policy"] == "strict", doc
e = doc["error_bound"]
jr = doc["rows"]
assert len(rows) == len(jr) == 6, (len(rows), len(jr))  # 64k, 128k, 256k x 2 algorithms
for c, j in zip(rows, jr):
    assert int(c["size"]) == j["size"] and c["algo"] == j["algo"] and c["ran"] == j["ran"], (c, j)
    assert abs(float(c["time_us"]) - j["time_us"]) <= 1e-3 * j["time_us"] + 1e-3, (c, j)
    assert j["wrong"] == 0, j
    if j["ran"] == "mpi":
        assert j["ratio"] == 1, j
    else:
        assert j["ratio"] > 1 and j["max_err"] <= e * (1 + 1e-9) + 1e-6, j
PY
done
expect_error "unknown collective" "--coll: not one of allreduce" run 2 "$BENCH" coll --coll gather
expect_error "unknown algorithm" "--algos: pipeline: unknown algorithm" run 2 "$BENCH" coll \
  --coll allreduce --algos mpi,pipeline
expect_error "sizes swapped" "--min-bytes is larger than --max-bytes" run 2 "$BENCH" coll \
  --min-bytes 1M --max-bytes 64k
app_finish
