#!/usr/bin/env bash
# gzstack --weights (see CMakeLists.txt): weighted means against ncra
# --prw -w (a list, and a file with zero weights on ERSST's missing
# values) and cdo yearmonmean (--group year --weights days), at 1, 3 and 4
# ranks, within the claimed bound, the same missing points; errors naming
# --weights; a discrimination case (the unweighted mean must differ).
set -u
# shellcheck source=climate_lib.sh
source "$(dirname "$0")/climate_lib.sh"
climate_setup "$1" "$2" cdo ncra ncdump

# compare WHAT GZ_OUT REF [far|ULPS]: ULPS halves of a float32 ulp of the
# reference's rounding (1 unless given)
compare() {
  local what=$1 g=$2 ref=$3 far=${4:-} d c m k=1
  case $far in [0-9]*) k=$far far= ;; esac
  d=$(cdo -s output -timmax -fldmax -abs -sub "$g" "$ref" | tr -d ' ')
  m=$(refmax "$ref") c=$(claimed "$g")
  judge "$what" "$d" "$c" "$m" "$far" "$k" || return
  [ "$(nmiss "$g")" = "$(nmiss "$ref")" ] && ok || ko "$what: missing points $(nmiss "$g") vs $(nmiss "$ref")"
  echo "  $what: max |diff| $d, claimed $c, missing $(nmiss "$g")"
}

# a list of per-record weights 1..7 (ncra --prw -w)
W=$(seq 1 110 | awk '{ print $1 % 7 + 1 }' | paste -sd, -)
ncra -O --prw -w "$W" -v TREFHT "$TREFHT" "$TMP/ref_w.nc" || ko "ncra -w"
for np in 1 3 4; do
  gz $np "$TMP/w_$np.nc" -i "$TREFHT" --var TREFHT --weights "$W" -e 1e-3
  compare "TREFHT --weights 1..7 np $np" "$TMP/w_$np.nc" "$TMP/ref_w.nc"
done
cdo -s timmean -selvar,TREFHT "$TREFHT" "$TMP/ref_mean.nc" || ko "cdo timmean"
compare "weighted vs unweighted mean (must differ)" "$TMP/w_3.nc" "$TMP/ref_mean.nc" far
# a file of weights 0..4 on SST (land NaN; some records weigh 0)
seq 1 128 | awk '{ print $1 % 5 }' >"$TMP/w.txt"
ncra -O --prw -w "$(paste -sd, "$TMP/w.txt")" -v sst "$SST" "$TMP/ref_wf.nc" || ko "ncra -w file"
at134 wf "$TMP/ref_wf.nc" "sst --weights FILE" "" -i "$SST" --var sst --weights "$TMP/w.txt" -e 1e-3
# days per month by year (cdo yearmonmean). CDO's own result can be a whole
# float32 ulp off (its weights arithmetic): 2010 with ncra --dbl and the
# days of 2010's months is within half an ulp of gzstack -e 0, CDO's is one
# ulp away, so the CDO comparison allows the reference a full ulp.
cdo -s yearmonmean "$SST" "$TMP/ref_ymm.nc" || ko "cdo yearmonmean"
at134 ymm "$TMP/ref_ymm.nc" "sst --group year --weights days" 2 -i "$SST" --var sst --group year --weights days -e 1e-3
ncra -O --dbl --prw -w 31,28,31,30,31,30,31,31,30,31,30,31 -d time,0,11 -v sst "$SST" \
  "$TMP/ref_2010.nc" || ko "ncra 2010"
at134 y2010 "$TMP/ref_2010.nc" "sst --years 2010 --weights days -e 0 (ncra --dbl)" "" -i "$SST" --var sst --years 2010 --weights days -e 0

# --file-weights: one weight per input file. TREFHT split into three files
# of 30 records (ncra -w 1,2,3 across files; nces -w 1,2,3 with --ensemble)
# and into 30 + 40 + 40 (ncra divides by the record count times the mean
# file weight, which is the weighted mean only for files of equal length:
# there the reference is ncra --prw with each record's file weight)
for k in 1 2 3; do
  ncks -O -d time,$((30 * k - 30)),$((30 * k - 1)) -v TREFHT "$TREFHT" "$TMP/m$k.nc" || ko "ncks m$k"
done
ncks -O -d time,0,29 -v TREFHT "$TREFHT" "$TMP/u1.nc" && ncks -O -d time,30,69 -v TREFHT "$TREFHT" "$TMP/u2.nc" &&
  ncks -O -d time,70,109 -v TREFHT "$TREFHT" "$TMP/u3.nc" || ko "ncks u1-u3"
ncra -O -w 1,2,3 "$TMP/m1.nc" "$TMP/m2.nc" "$TMP/m3.nc" "$TMP/ref_fw.nc" || ko "ncra -w per file"
nces -O -w 1,2,3 "$TMP/m1.nc" "$TMP/m2.nc" "$TMP/m3.nc" "$TMP/ref_fe.nc" || ko "nces -w"
UW=$( (seq 30 | sed 's/.*/1/'; seq 40 | sed 's/.*/2/'; seq 40 | sed 's/.*/3/') | paste -sd, -)
ncra -O --dbl --prw -w "$UW" -v TREFHT "$TREFHT" "$TMP/ref_fu.nc" || ko "ncra --prw per-file weights"
for np in 1 3 4; do
  gz $np "$TMP/fw_$np.nc" -i "$TMP/m1.nc" "$TMP/m2.nc" "$TMP/m3.nc" --file-weights 1,2,3 -e 1e-3
  compare "--file-weights 1,2,3 np $np (ncra -w)" "$TMP/fw_$np.nc" "$TMP/ref_fw.nc"
  gz $np "$TMP/fe_$np.nc" -i "$TMP/m1.nc" "$TMP/m2.nc" "$TMP/m3.nc" --ensemble --file-weights 1,2,3 -e 1e-3
  compare "--ensemble --file-weights 1,2,3 np $np (nces -w)" "$TMP/fe_$np.nc" "$TMP/ref_fe.nc"
  gz $np "$TMP/fu_$np.nc" -i "$TMP/u1.nc" "$TMP/u2.nc" "$TMP/u3.nc" --file-weights 1,2,3 -e 1e-3
  # (ncra's own float32 rounding is half an ulp; cdo prints 6 digits: 2 halves)
  compare "--file-weights, files of 30, 40, 40 records np $np (ncra --prw)" "$TMP/fu_$np.nc" "$TMP/ref_fu.nc" 2
done
compare "file-weighted vs unweighted mean (must differ)" "$TMP/fw_3.nc" "$TMP/ref_mean.nc" far

# weighted var / std / rms (reliability weights for var1 / std1: sum w (x -
# m)^2 / (W - sum w^2 / W), CDO fldvar1's estimator with area weights).
# Neither cdo nor nco has a weighted timvar (ncra -y rms ignores --prw
# weights), so the reference is built with their weighted mean in double:
# m = ncra --prw -w W, then ncra --prw -w W of cdo sqr -sub x m (the
# weighted population variance; var1 = that times W^2 / (W^2 - sum w^2)
# where no value is missing), rms = sqrt of ncra --prw -w W of x^2.
wref() { # IN WEIGHTS OUT_PREFIX: OUT_PREFIX_var.nc, _var1.nc (no missing values), _rms.nc
  local in=$1 w=$2 p=$3 f
  ncra -O --prw -w "$w" "$in" "${p}_m.nc" && cdo -s sqr -sub "$in" "${p}_m.nc" "${p}_d2.nc" &&
    ncra -O --prw -w "$w" "${p}_d2.nc" "${p}_var.nc" && cdo -s sqr "$in" "${p}_x2.nc" &&
    ncra -O --prw -w "$w" "${p}_x2.nc" "${p}_ms.nc" && cdo -s sqrt "${p}_ms.nc" "${p}_rms.nc" || ko "reference $p"
  f=$(echo "$w" | tr , '\n' | awk '{ W += $1; Q += $1 * $1 } END { printf "%.17g", W * W / (W * W - Q) }')
  cdo -s mulc,"$f" "${p}_var.nc" "${p}_var1.nc" && cdo -s sqrt "${p}_var1.nc" "${p}_std1.nc" &&
    cdo -s sqrt "${p}_var.nc" "${p}_std.nc" || ko "reference $p var1"
}
cdo -s -b F64 selvar,TREFHT "$TREFHT" "$TMP/t64.nc" || ko "cdo -b F64"
wref "$TMP/t64.nc" "$W" "$TMP/rw"
for np in 1 3 4; do
  for op in var var1 std1 rms; do
    gz $np "$TMP/wm_$op$np.nc" -i "$TREFHT" --var TREFHT --weights "$W" --op $op -e 1e-3
    compare "TREFHT --weights 1..7 --op $op np $np" "$TMP/wm_$op$np.nc" "$TMP/rw_$op.nc"
  done
done
ncdump -h "$TMP/wm_var13.nc" | grep -q 'TREFHT:cell_methods = "time: variance"' && ok || ko "weighted var: cell_methods"
cdo -s timvar1 "$TMP/t64.nc" "$TMP/ref_v1u.nc" || ko "cdo timvar1"
compare "weighted var1 vs unweighted timvar1 (must differ)" "$TMP/wm_var13.nc" "$TMP/ref_v1u.nc" far
# weights 1: var1 as cdo timvar1 (W - sum w^2 / W = count - 1)
ONES=$(seq 110 | sed 's/.*/1/' | paste -sd, -)
at134 w1_var1 "$TMP/ref_v1u.nc" "TREFHT --weights 1,1,... --op var1 (cdo timvar1)" "" -i "$TREFHT" --var TREFHT --weights "$ONES" --op var1 -e 1e-3
# ERSST with its land points missing and the weights file (zeros included):
# the population std per point over its own valid values
cdo -s -b F64 copy "$SST" "$TMP/s64.nc" || ko "cdo -b F64 sst"
wref "$TMP/s64.nc" "$(paste -sd, "$TMP/w.txt")" "$TMP/rs"
at134 ws_std "$TMP/rs_std.nc" "sst --weights FILE --op std" "" -i "$SST" --var sst --weights "$TMP/w.txt" --op std -e 1e-3
# per file (ncra -w 1,2,3 on files of 30 records: each record its file's weight)
FW=$( (seq 30 | sed 's/.*/1/'; seq 30 | sed 's/.*/2/'; seq 30 | sed 's/.*/3/') | paste -sd, -)
cdo -s seltimestep,1/90 "$TMP/t64.nc" "$TMP/t90.nc" && wref "$TMP/t90.nc" "$FW" "$TMP/rf"
at134 fw_var1 "$TMP/rf_var1.nc" "--file-weights 1,2,3 --op var1" "" -i "$TMP/m1.nc" "$TMP/m2.nc" "$TMP/m3.nc" --file-weights 1,2,3 --op var1 -e 1e-3
# days per month within years: --group year --op std, 2010 (the first group)
cdo -s seltimestep,1/12 "$TMP/s64.nc" "$TMP/s2010.nc" || ko "2010"
wref "$TMP/s2010.nc" 31,28,31,30,31,30,31,31,30,31,30,31 "$TMP/ry"
for np in 1 3 4; do
  gz $np "$TMP/yd_std$np.nc" -i "$SST" --var sst --group year --weights days --op std -e 1e-3
  cdo -s seltimestep,1 "$TMP/yd_std$np.nc" "$TMP/yd_1std$np.nc" || ko "seltimestep"
  compare "sst --group year --weights days --op std np $np, 2010" "$TMP/yd_1std$np.nc" "$TMP/ry_std.nc"
done

expect() { refused 2 "$1" "$2" "$TMP/err.nc" "${@:3}"; }
expect 1 "--weights 1,2,3: 3 weights for 110 selected records" -i "$TREFHT" --var TREFHT --weights 1,2,3
expect 1 "--weights 0,0: every weight is 0" -i "$TREFHT" --var TREFHT --steps 0:1 --weights 0,0
expect 2 "--weights 1,-2" -i "$TREFHT" --var TREFHT --weights 1,-2
expect 2 "--weights days.*--op mean, var" -i "$TREFHT" --var TREFHT --op max --weights days
expect 2 "--weights 1.*sum, max" -i "$TREFHT" --var TREFHT --op sum --weights 1
expect 1 "--weights $TMP/nosuch" -i "$TREFHT" --var TREFHT --weights "$TMP/nosuch"
head -c $((96 * 20 * 4 * 3)) /dev/zero >"$TMP/raw.raw"
expect 1 "--weights days.*no time coordinate" -i "$TMP/raw.raw" --dims 96x20 --weights days
expect 1 "--file-weights 1,2: 2 weights for 3 input files" -i "$TMP/m1.nc" "$TMP/m2.nc" "$TMP/m3.nc" --file-weights 1,2
expect 2 "exclude each other" -i "$TMP/m1.nc" --weights 1 --file-weights 1
expect 2 "--file-weights 1,-1" -i "$TMP/m1.nc" "$TMP/m2.nc" --file-weights 1,-1
expect 2 "--file-weights.*--op mean" -i "$TMP/m1.nc" --op max --file-weights 1
expect 1 "--file-weights 0,0: every weight is 0" -i "$TMP/m1.nc" "$TMP/m2.nc" --file-weights 0,0

echo "test_climate_weights: $pass passed, $fail failed"
[ $fail -eq 0 ]
