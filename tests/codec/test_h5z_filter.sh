#!/bin/bash
# test_h5z_filter.sh GZSTACK PLUGIN_DIR DATA_DIR
# gzstack compress -o x.nc writes a netCDF-4 file whose variable goes through
# the gzstack HDF5 filter (registered in-process: gzstack runs without
# HDF5_PLUGIN_PATH, and --verify reads the file back through the filter it
# wrote with, a single compression). With only HDF5_PLUGIN_PATH set, h5dump -d
# and h5py read every element back within the recorded bound (NaN stays NaN);
# without the plugin both fail with an error and return no values. Exits 77
# (skip) when h5dump, python3 with h5py and numpy, or the data are missing.
set -u
GZSTACK=$1 PLUGIN=$2 DATA=$3
PY=/usr/bin/python3
command -v h5dump >/dev/null && $PY -c "import h5py, numpy" 2>/dev/null || {
  echo "skip: h5dump or python3-h5py missing"; exit 77; }
[ -r "$DATA/seismic_soda_lakes/soda_lakes_24x96x2048_f32le.raw" ] || { echo "skip: no data"; exit 77; }
T=$(mktemp -d) && trap 'rm -rf "$T"' EXIT
fail=0
check() { # name, python expression of the original values, nc, var, bound asked
  local name=$1 ref=$2 nc=$3 var=$4 asked=$5
  env -i PATH="$PATH" HDF5_PLUGIN_PATH="$PLUGIN" h5dump -d "/$var" -b LE -o "$T/$name.bin" "$nc" \
    >"$T/$name.h5dump.log" 2>&1 || { echo "FAIL $name: h5dump with the plugin"; fail=1; }
  env -i PATH="$PATH" HDF5_PLUGIN_PATH="$PLUGIN" $PY - "$nc" "$var" "$T/$name.bin" <<PYEOF || fail=1
import sys, numpy as np, h5py
nc, var, dumped = sys.argv[1:4]
x = $ref
f = h5py.File(nc, "r")
eb = float(f[var].attrs["gzstack_abs_error_bound"][0])
for how, y in (("h5py", f[var][...]), ("h5dump", np.fromfile(dumped, "<f4").reshape(x.shape))):
    fin = np.isfinite(x)
    err = np.abs(x[fin].astype(np.float64) - y[fin].astype(np.float64))
    bad = int(np.count_nonzero(~(err <= eb))) + int(np.count_nonzero(~np.isnan(y[np.isnan(x)])))
    print("%s %s: %d values, bound %g, max error %g, %d violations" % (
        "$name", how, x.size, eb, err.max() if err.size else 0.0, bad))
    if bad or eb != $asked:
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
check soda "np.fromfile('$DATA/seismic_soda_lakes/soda_lakes_24x96x2048_f32le.raw', '<f4').reshape(24, 96, 2048)" \
  "$T/soda.nc" data 1e-4
if [ -r "$DATA/climate_ersst_v5/sst.mnmean.nc" ]; then
  "$GZSTACK" compress -i "$DATA/climate_ersst_v5/sst.mnmean.nc" --var sst -e 1e-3 \
    -o "$T/sst.nc" -q || { echo "FAIL: compress sst"; exit 1; }
  check sst "h5py.File('$DATA/climate_ersst_v5/sst.mnmean.nc', 'r')['sst'][...]" "$T/sst.nc" sst 1e-3
  # --verify on a .nc output reads the written file back; the bound of
  # --eb-mode psnr 70 comes from the range of the valid values (not the
  # missing value -9.97e36): 35.9029 x 10^(-70/20) = 0.0113535
  if "$GZSTACK" compress -i "$DATA/climate_ersst_v5/sst.mnmean.nc" --var sst -e 70 \
    --eb-mode psnr -o "$T/psnr.nc" --verify >"$T/psnr.log" 2>&1; then
    grep -q "PSNR [0-9.]* dB met" "$T/psnr.log" || { echo "FAIL: psnr .nc --verify"; cat "$T/psnr.log"; fail=1; }
    check psnr "h5py.File('$DATA/climate_ersst_v5/sst.mnmean.nc', 'r')['sst'][...]" "$T/psnr.nc" sst \
      "float(f[var].attrs['gzstack_abs_error_bound'][0]) if abs(eb - 0.0113535) < 1e-6 else -1"
  else
    echo "FAIL: compress sst --eb-mode psnr -o .nc --verify"; cat "$T/psnr.log"; fail=1
  fi
  ls "$T" | grep -q "tmp-\|\.part" && { echo "FAIL: temporary files left"; fail=1; }
fi
exit $fail
