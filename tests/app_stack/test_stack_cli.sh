#!/usr/bin/env bash
# End-to-end tests of `gzstack stack` (see CMakeLists.txt). Every successful
# run is checked by check_stack against its own double-precision stack of
# the inputs; every error case must print its message, exit non-zero on
# every rank and leave no output behind.
set -u
GZ=$1 CHECK=$2 MPIRUN=$3 GEN=$4 CONFIGS=$5
# shellcheck source=../app_lib.sh
source "$(dirname "$0")/../app_lib.sh"
app_scratch
run() { "$MPIRUN" --oversubscribe -np "$@"; }

app_need_data
T=$TMP

# --- CCSM3 TREFHT mean at 1, 3 and 4 ranks (netCDF-3, 110 snapshots) ------
for np in 1 3 4; do
  expect "TREFHT mean np$np" run $np "$GZ" -i "$TREFHT" --var TREFHT -e 1e-3 -o "$T/t$np.nc" \
    --png "$T/t$np.png" --metrics "$T/t$np.json" --verify --algo ring
  grep -q "within the bound" "$T/out" && ok || ko "TREFHT np$np: summary says within the bound"
  expect "TREFHT np$np checked" "$CHECK" -o "$T/t$np.nc" -j "$T/t$np.json" -n $np --var TREFHT \
    --png "$T/t$np.png" "$TREFHT"
done
# the result does not depend on the algorithm beyond the bound: redoub, sum, per-message
expect "TREFHT sum redoub np4" run 4 "$GZ" stack -i "$TREFHT" --var TREFHT --op sum -e 0.5 \
  --algo redoub -o "$T/tsum.h5" --metrics "$T/tsum.json" --verify -q
expect "TREFHT sum checked" "$CHECK" -o "$T/tsum.h5" -j "$T/tsum.json" -n 4 --var TREFHT --op sum "$TREFHT"
expect "TREFHT per-message np3" run 3 "$GZ" -i "$TREFHT" --var TREFHT -e 1e-3 --bound per-message \
  --algo redoub -o "$T/tpm.nc" --metrics "$T/tpm.json" --verify -q
expect "TREFHT per-message checked" "$CHECK" -o "$T/tpm.nc" -j "$T/tpm.json" -n 3 --var TREFHT \
  --per-message "$TREFHT"
grep -q '"policy": "per-message"' "$T/tpm.json" && ok || ko "per-message policy echoed"

# --- ERSST: NaN land, relative bound, HDF5 output, error statistics --------
expect "ERSST mean np3" run 3 "$GZ" -i "$SST" --var sst -e 1e-4 --eb-mode rel -o "$T/s.h5" \
  --png "$T/s.png" --metrics "$T/s.json" --stats-png "$T/s_stats.png" --algo redoub
expect "ERSST checked" "$CHECK" -o "$T/s.h5" -j "$T/s.json" -n 3 --var sst --png "$T/s.png" --grey \
  --plot "$T/s_stats.png" "$SST"
grep -q '"masked_points": 5032' "$T/s.json" && ok || ko "ERSST: 5032 land points masked"
expect "ERSST root read np4" run 4 "$GZ" -i "$SST" --var sst -e 1e-3 --read root -o "$T/sr.nc" \
  --metrics "$T/sr.json" --verify -q --algo ring
expect "ERSST root read checked" "$CHECK" -o "$T/sr.nc" -j "$T/sr.json" -n 4 --var sst "$SST"

# --- Soda Lakes: raw shots, --dims of one shot, root read and slabs --------
expect "soda root np4" run 4 "$GZ" -i "$SODA" --dims 96x2048 --dtype f32 -e 1e-5 --read root \
  -o "$T/soda.raw" --png "$T/soda.png" --metrics "$T/soda.json" --verify
expect "soda checked" "$CHECK" -o "$T/soda.raw" -j "$T/soda.json" -n 4 --dims 96x2048 --dtype f32 \
  --png "$T/soda.png" "$SODA"
expect "soda slabs np3" run 3 "$GZ" -i "$SODA" --dims 96x2048 -e 1e-4 --slab-mb 0.5 --algo ring \
  -o "$T/soda2.nc" --metrics "$T/soda2.json" --verify -q
expect "soda slabs checked" "$CHECK" -o "$T/soda2.nc" -j "$T/soda2.json" -n 3 --dims 96x2048 "$SODA"

# --- WRF Katrina: 3-D fields, max with a named slice, mean ---------------
expect "WRF T max np3" run 3 "$GZ" -i "$WRF" --var T --op max -e 0.01 -o "$T/w.nc" \
  --png "$T/w.png" --slice bottom_top=0 --metrics "$T/w.json" --verify --algo ring
expect "WRF T max checked" "$CHECK" -o "$T/w.nc" -j "$T/w.json" -n 3 --var T --op max --png "$T/w.png" "$WRF"
expect "WRF QVAPOR min np4" run 4 "$GZ" -i "$WRF" --var QVAPOR --op min -e 1e-6 -o "$T/q.nc" \
  --png "$T/q.png" --slice 0=5 --metrics "$T/q.json" --verify -q
expect "WRF QVAPOR checked" "$CHECK" -o "$T/q.nc" -j "$T/q.json" -n 4 --var QVAPOR --op min "$WRF"

# --- generated wavefields: HDF5 (collective MPI-IO open), globs, raw -------
expect "generator h5" "$GEN" -o "$T/gen/w_a.h5" --nx 96 --nz 64 --snapshots 7 -q
expect "generator h5 (2)" "$GEN" -o "$T/gen/w_b.h5" --nx 96 --nz 64 --snapshots 5 --time 0.5 -q
expect "generator raw" "$GEN" -o "$T/gen/w.raw" --nx 96 --nz 64 --snapshots 6 -q
expect "wavefield glob np4" run 4 "$GZ" -i "$T/gen/w_*.h5" --var /wavefield -e 1e-4 \
  -o "$T/wg.nc" --png "$T/wg.png" --metrics "$T/wg.json" --verify --algo redoub
expect "wavefield glob checked" "$CHECK" -o "$T/wg.nc" -j "$T/wg.json" -n 4 --var /wavefield \
  --png "$T/wg.png" "$T/gen/w_a.h5" "$T/gen/w_b.h5"
grep -q '"snapshots": 12' "$T/wg.json" && ok || ko "glob: 7 + 5 snapshots"
expect "wavefield raw np3 root" run 3 "$GZ" -i "$T/gen/w.raw" --dims 64x96 -e 1e-4 --read root \
  -o "$T/wr.raw" --metrics "$T/wr.json" --verify -q
expect "wavefield raw checked" "$CHECK" -o "$T/wr.raw" -j "$T/wr.json" -n 3 --dims 64x96 "$T/gen/w.raw"

# --- config files: the bundled ones, and the command line over the file ---
mkdir -p "$T/cfg"
for c in trefht_mean ersst_mean wrf_katrina_max soda_lakes_stack; do
  expect "config $c" env GZ_OUT="$T/cfg" "$MPIRUN" --oversubscribe -np 3 "$GZ" \
    --config "$CONFIGS/$c.ini" -q
done
expect "config trefht checked" "$CHECK" -o "$T/cfg/trefht_mean.nc" -j "$T/cfg/trefht_mean.json" \
  -n 3 --var TREFHT --png "$T/cfg/trefht_mean.png" "$TREFHT"
cat >"$T/my.ini" <<INI
# a user's file
[stack]
input = $TREFHT
var = TREFHT
error_bound = 0.5
op = max
output = $T/c.nc
metrics = $T/c.json
verify = yes
INI
expect "config + override" run 3 "$GZ" --config "$T/my.ini" -e 0.01 --op mean -q
grep -q '"error_bound": 0.01' "$T/c.json" && grep -q '"op": "mean"' "$T/c.json" &&
  grep -q "\"config\": \"$T/my.ini\"" "$T/c.json" && ok || ko "command line overrides the file"
expect "config run checked" "$CHECK" -o "$T/c.nc" -j "$T/c.json" -n 3 --var TREFHT "$TREFHT"

# --- GPU request without a GPU path: a note, then the CPU ----------------
expect "device gpu" run 3 "$GZ" -i "$TREFHT" --var TREFHT -e 1e-2 -o "$T/g.nc" --device gpu
grep -q "\-\-device gpu: .*running on the CPU" "$T/out" && ok || ko "--device gpu note"

# --- help -------------------------------------------------------------------
expect "help" run 1 "$GZ" stack --help
grep -q "Examples:" "$T/out" && grep -q "\-\-read parallel|root" "$T/out" && ok || ko "help text"

# --- errors: message, non-zero exit on every rank, no output --------------
X="$T/x.nc"; XJ="$T/x.json"; XP="$T/x.png"
expect_error "missing file" "nope.nc" run 3 "$GZ" -i "$T/nope.nc" -e 1 -o "$X" --metrics "$XJ"
echo "not a data file" >"$T/junk.nc"
expect_error "unreadable file" "junk.nc" run 3 "$GZ" -i "$TREFHT" "$T/junk.nc" --var TREFHT -e 1 -o "$X"
expect_error "wrong variable" "NOVAR" run 3 "$GZ" -i "$TREFHT" --var NOVAR -e 1 -o "$X"
expect "generator other shape" "$GEN" -o "$T/gen2/w_c.h5" --nx 80 --nz 64 --snapshots 3 -q
expect_error "shape mismatch" "w_c.h5: snapshot shape 64x80 f32 differs from 64x96 f32" \
  run 3 "$GZ" -i "$T/gen/w_a.h5" "$T/gen2/w_c.h5" --var /wavefield -e 1 -o "$X" --png "$XP"
expect "generator double" "$GEN" -o "$T/gen2/w_d.h5" --nx 96 --nz 64 --snapshots 3 --double -q
expect_error "dtype mismatch" "w_d.h5: snapshot shape 64x96 f64 differs from 64x96 f32" \
  run 4 "$GZ" -i "$T/gen/w_a.h5" "$T/gen2/w_d.h5" --var /wavefield -e 1 -o "$X"
expect_error "raw size" "not a multiple" run 3 "$GZ" -i "$SODA" --dims 95x2048 -e 1 -o "$X"
expect_error "bad op" "--op median: use mean, sum, max, min, var, var1, std, std1 or rms" run 3 "$GZ" -i "$TREFHT" -e 1 -o "$X" --op median
expect_error "bad eb-mode" "--eb-mode" run 3 "$GZ" -i "$TREFHT" -e 1 -o "$X" --eb-mode pct
expect_error "bad bound" "error bound must be" run 3 "$GZ" -i "$TREFHT" -e -1 -o "$X"
expect_error "bad dims" "--dims 96xZ" run 3 "$GZ" -i "$SODA" --dims 96xZ -e 1 -o "$X"
expect_error "bad read" "--read" run 3 "$GZ" -i "$TREFHT" -e 1 -o "$X" --read all
expect_error "bad output type" "extension" run 3 "$GZ" -i "$TREFHT" -e 1 -o "$T/x.txt"
expect_error "bad slice" "--slice 0=99: out of range" run 3 "$GZ" -i "$WRF" --var T -e 1 -o "$X" \
  --png "$XP" --slice 0=99
expect_error "slice on 2-D" "--slice" run 3 "$GZ" -i "$TREFHT" -e 1 -o "$X" --slice 0=1
expect_error "unknown option" "invalid option" run 3 "$GZ" -i "$TREFHT" -e 1 -o "$X" --bogus
expect_error "no bound" "error-bound is required" run 3 "$GZ" -i "$TREFHT" -o "$X"
expect_error "no glob match" "no file matches" run 3 "$GZ" -i "$T/none_*.h5" -e 1 -o "$X"
printf '[stack]\ncolour = red\n' >"$T/bad.ini"
expect_error "unknown config key" "unknown key 'colour'" run 3 "$GZ" --config "$T/bad.ini" -i "$TREFHT" -e 1 -o "$X"
expect_error "missing config" "--config" run 3 "$GZ" --config "$T/none.ini" -i "$TREFHT" -e 1 -o "$X"
expect_error "existing output" "exists" run 3 "$GZ" -i "$TREFHT" --var TREFHT -e 1e-3 -o "$T/t3.nc"
expect_error "existing metrics" "exists" run 3 "$GZ" -i "$TREFHT" --var TREFHT -e 1e-3 -o "$X" \
  --metrics "$T/t3.json"
expect_error "output directory" "cannot write into" run 3 "$GZ" -i "$TREFHT" -e 1 -o "$T/nodir/x.nc"
no_output "after the errors" "$X" "$XJ" "$XP" "$T/x_exact.png" "$T/x_error.png" "$T/x.txt"
ls "$T" | grep -q "tmp-" && ko "temporary files left behind" || ok

app_finish
