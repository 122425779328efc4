#!/bin/bash
# test_h5z_filter.sh GZSTACK PLUGIN_DIR DATA_DIR
# gzstack compress -o x.nc (x.h5) writes a netCDF-4 (plain HDF5) file whose
# variable goes through the gzstack HDF5 filter (registered in-process:
# gzstack runs without HDF5_PLUGIN_PATH, and --verify reads the file back
# through the filter it wrote with, a single compression). With only
# HDF5_PLUGIN_PATH set, h5dump -d and h5py read every element back within the
# recorded bound (NaN stays NaN), and the recorded --eb-mode and target
# (gzstack_eb_mode, gzstack_eb_target) hold on what they read: PSNR over the
# valid values >= target, L2 norm of the error <= target. Without the plugin
# both fail with an error and return no values. Exits 77 (skip) when h5dump,
# python3 with h5py and numpy, or the data are missing.
set -u
GZSTACK=$1 PLUGIN=$2 DATA=$3
PY=/usr/bin/python3
command -v h5dump >/dev/null && $PY -c "import h5py, numpy" 2>/dev/null || {
  echo "skip: h5dump or python3-h5py missing"; exit 77; }
[ -r "$DATA/seismic_soda_lakes/soda_lakes_24x96x2048_f32le.raw" ] || { echo "skip: no data"; exit 77; }
T=$(mktemp -d) && trap 'rm -rf "$T"' EXIT
fail=0
check() { # name, python expression of the original values, file, var, bound asked[, mode, target]
  local name=$1 ref=$2 nc=$3 var=$4 asked=$5 mode=${6:-abs} target=${7:-$5}
  env -i PATH="$PATH" HDF5_PLUGIN_PATH="$PLUGIN" h5dump -d "/$var" -b LE -o "$T/$name.bin" "$nc" \
    >"$T/$name.h5dump.log" 2>&1 || { echo "FAIL $name: h5dump with the plugin"; fail=1; }
  env -i PATH="$PATH" HDF5_PLUGIN_PATH="$PLUGIN" $PY - "$nc" "$var" "$T/$name.bin" <<PYEOF || fail=1
import sys, numpy as np, h5py
nc, var, dumped = sys.argv[1:4]
x = $ref
f = h5py.File(nc, "r")
a = f[var].attrs
eb = float(a["gzstack_abs_error_bound"][0])
mode, target = a["gzstack_eb_mode"], float(a["gzstack_eb_target"][0])
mode = mode.decode() if isinstance(mode, bytes) else str(mode)
fill = float(a["_FillValue"][0]) if "_FillValue" in a else None
if mode != "$mode" or target != $target:
    print("$name: recorded --eb-mode %s %g, asked $mode $target" % (mode, target))
    sys.exit(1)
for how, y in (("h5py", f[var][...]), ("h5dump", np.fromfile(dumped, "<f4").reshape(x.shape))):
    fin = np.isfinite(x)
    d = x[fin].astype(np.float64) - y[fin].astype(np.float64)
    err = np.abs(d)
    bad = int(np.count_nonzero(~(err <= eb))) + int(np.count_nonzero(~np.isnan(y[np.isnan(x)])))
    valid = fin & (x != fill) if fill is not None else fin
    dv = x[valid].astype(np.float64) - y[valid].astype(np.float64)
    rng = float(x[valid].max()) - float(x[valid].min())
    psnr = 20 * np.log10(rng) - 10 * np.log10(np.mean(dv * dv)) if dv.any() else np.inf
    l2 = float(np.sqrt(np.sum(d * d)))
    met = psnr >= target if mode == "psnr" else l2 <= target if mode == "norm" else True
    print("%s %s: %d values, bound %g, max error %g, %d violations, PSNR %.2f, L2 %g, %s %g %s" % (
        "$name", how, x.size, eb, err.max() if err.size else 0.0, bad, psnr, l2, mode, target,
        "met" if met else "NOT MET"))
    if bad or eb != $asked or not met:
        sys.exit(1)
PYEOF
  # without the plugin: an error, no values
  if env -i PATH="$PATH" h5dump -d "/$var" -b LE -o "$T/$name.none" "$nc" >"$T/$name.none.log" 2>&1; then
    echo "FAIL $name: h5dump without the plugin succeeded"; fail=1
  fi
  [ -s "$T/$name.none" ] && { echo "FAIL $name: h5dump without the plugin wrote values"; fail=1; }
  if env -i PATH="$PATH" HDF5_PLUGIN_PATH="$T/empty" $PY -c "
import h5py, sys
f = h5py.File(sys.argv[1], 'r')
try:
    f[sys.argv[2]][...]
except OSError as e:
    print('without the plugin h5py says:', e); sys.exit(1)
" "$nc" "$var"; then
    echo "FAIL $name: h5py without the plugin read values"; fail=1
  fi
}

mkdir -p "$T/empty"
# gzstack registers the filter in-process: writing needs no plugin path
unset HDF5_PLUGIN_PATH
"$GZSTACK" compress -i "$DATA/seismic_soda_lakes/soda_lakes_24x96x2048_f32le.raw" --dims 24x96x2048 \
  --dtype f32 -e 1e-4 -o "$T/soda.nc" -q || { echo "FAIL: compress soda"; exit 1; }
SODA="np.fromfile('$DATA/seismic_soda_lakes/soda_lakes_24x96x2048_f32le.raw', '<f4').reshape(24, 96, 2048)"
check soda "$SODA" "$T/soda.nc" data 1e-4
# a plain HDF5 file through the same filter; --eb-mode norm recorded
"$GZSTACK" compress -i "$DATA/seismic_soda_lakes/soda_lakes_24x96x2048_f32le.raw" --dims 24x96x2048 \
  --dtype f32 -e 1e-4 -o "$T/soda.h5" -q || { echo "FAIL: compress soda -o .h5"; exit 1; }
check soda_h5 "$SODA" "$T/soda.h5" data 1e-4
"$GZSTACK" compress -i "$DATA/seismic_soda_lakes/soda_lakes_24x96x2048_f32le.raw" --dims 24x96x2048 \
  --dtype f32 -e 0.05 --eb-mode norm -o "$T/norm.h5" --verify >"$T/norm.log" 2>&1 || {
  echo "FAIL: compress soda --eb-mode norm -o .h5 --verify"; cat "$T/norm.log"; fail=1; }
grep -q "L2 norm of error [0-9.e-]* met" "$T/norm.log" &&
  grep -q "recorded (read back from $T/norm.h5): gzstack_eb_mode norm, gzstack_eb_target 0.05" "$T/norm.log" ||
  { echo "FAIL: norm .h5 --verify report"; cat "$T/norm.log"; fail=1; }
check norm_h5 "$SODA" "$T/norm.h5" data \
  "float(f[var].attrs['gzstack_abs_error_bound'][0]) if abs(eb - 0.05 / 4718592 ** 0.5) < 1e-12 else -1" \
  norm 0.05
if [ -r "$DATA/climate_ersst_v5/sst.mnmean.nc" ]; then
  "$GZSTACK" compress -i "$DATA/climate_ersst_v5/sst.mnmean.nc" --var sst -e 1e-3 \
    -o "$T/sst.nc" -q || { echo "FAIL: compress sst"; exit 1; }
  check sst "h5py.File('$DATA/climate_ersst_v5/sst.mnmean.nc', 'r')['sst'][...]" "$T/sst.nc" sst 1e-3
  # --verify on a .nc / .h5 output reads the written file back; the bound of
  # --eb-mode psnr 70 comes from the range of the valid values (not the
  # missing value -9.97e36): 35.9029 x 10^(-70/20) = 0.0113535
  for ext in nc h5; do
    if "$GZSTACK" compress -i "$DATA/climate_ersst_v5/sst.mnmean.nc" --var sst -e 70 \
      --eb-mode psnr -o "$T/psnr.$ext" --verify >"$T/psnr_$ext.log" 2>&1; then
      grep -q "PSNR [0-9.]* dB met" "$T/psnr_$ext.log" &&
        grep -q "recorded (read back from $T/psnr.$ext): gzstack_eb_mode psnr, gzstack_eb_target 70," \
          "$T/psnr_$ext.log" || { echo "FAIL: psnr .$ext --verify"; cat "$T/psnr_$ext.log"; fail=1; }
      check "psnr_$ext" "h5py.File('$DATA/climate_ersst_v5/sst.mnmean.nc', 'r')['sst'][...]" \
        "$T/psnr.$ext" sst \
        "float(f[var].attrs['gzstack_abs_error_bound'][0]) if abs(eb - 0.0113535) < 1e-6 else -1" psnr 70
      # a fresh gzstack process reads its filtered file without a plugin path
      "$GZSTACK" compress -i "$T/psnr.$ext" --var sst -e 1e-3 -o "$T/again_$ext.gzc" --verify \
        >"$T/again_$ext.log" 2>&1 || { echo "FAIL: gzstack reading psnr.$ext"; cat "$T/again_$ext.log"; fail=1; }
    else
      echo "FAIL: compress sst --eb-mode psnr -o .$ext --verify"; cat "$T/psnr_$ext.log"; fail=1
    fi
  done
  ls "$T" | grep -q "tmp-\|\.part" && { echo "FAIL: temporary files left"; fail=1; }
fi
exit $fail
