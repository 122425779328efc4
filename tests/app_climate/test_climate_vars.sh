#!/usr/bin/env bash
# gzstack --var a,b,c: several variables in one run, one output, and the
# netCDF-4 storage options --deflate / --shuffle / --chunks (see
# CMakeLists.txt). Each variable's field against the reference tool's
# (cdo timstd1 / timselmean per variable, ncwa -a Time for WRF, whose Time
# is not a record dimension for ncra) within that variable's claimed
# bound (its gzstack_claimed_bound attribute); errors naming --var. A
# discrimination case checks that the comparison can fail.
set -u
# shellcheck source=climate_lib.sh
source "$(dirname "$0")/climate_lib.sh"
climate_setup "$1" "$2" cdo ncdump ncap2 ncwa ncdiff

# cdo_compare WHAT GZ_OUT REF VAR [far]
cdo_compare() {
  local what=$1 g=$2 ref=$3 v=$4 far=${5:-} d c m
  d=$(cdo -s output -timmax -fldmax -abs -sub -selvar,"$v" "$g" -selvar,"$v" "$ref" | tr -d ' ')
  m=$(cdo -s output -timmax -fldmax -abs -selvar,"$v" "$ref" | tr -d ' ')
  c=$(claimed "$g" "$v")
  judge "$what" "$d" "$c" "$m" "$far" || return
  echo "  $what: max |diff| $d, claimed $c"
}

# two variables of one file (TC = TREFHT - 273.15, made with ncap2)
ncap2 -O -s 'TC=TREFHT-273.15f' "$TREFHT" "$TMP/two.nc" || ko "ncap2"
cdo -s timstd1 "$TMP/two.nc" "$TMP/ref_std1.nc" || ko "cdo timstd1"
for np in 1 3 4; do
  gz $np "$TMP/v_$np.nc" -i "$TMP/two.nc" --var TREFHT,TC --op std1 -e 1e-2
  for v in TREFHT TC; do cdo_compare "--var TREFHT,TC std1 $v np $np" "$TMP/v_$np.nc" "$TMP/ref_std1.nc" $v; done
done
cdo -s sinfo "$TMP/v_3.nc" >"$TMP/sinfo" 2>&1 && ok || { ko "cdo sinfo"; cat "$TMP/sinfo"; }
[ "$(cdo -s showname "$TMP/v_3.nc" | tr -s ' ')" = " TREFHT TC" ] && ok || ko "cdo showname: $(cdo -s showname "$TMP/v_3.nc")"
# with groups: every 25 records of both
cdo -s timselmean,25 "$TMP/two.nc" "$TMP/ref_ts.nc" || ko "cdo timselmean"
for np in 1 3 4; do
  gz $np "$TMP/vg$np.nc" -i "$TMP/two.nc" --var TC,TREFHT --group 25 -e 1e-3
  for v in TREFHT TC; do cdo_compare "--var TC,TREFHT --group 25 $v np $np" "$TMP/vg$np.nc" "$TMP/ref_ts.nc" $v; done
done
# the comparison can fail: TC against TREFHT's reference
cdo -s chname,TREFHT,TC -selvar,TREFHT "$TMP/ref_std1.nc" "$TMP/swap.nc" || ko "cdo chname"
cdo -s timmean "$TMP/two.nc" "$TMP/ref_mean.nc" || ko "cdo timmean"
cdo -s chname,TREFHT,TC -selvar,TREFHT "$TMP/ref_mean.nc" "$TMP/swap.nc" || ko "cdo chname"
gz 3 "$TMP/vm.nc" -i "$TMP/two.nc" --var TREFHT,TC -e 1e-3
cdo_compare "TC vs TREFHT's mean (must differ)" "$TMP/vm.nc" "$TMP/swap.nc" TC far

# WRF: four variables of three shapes, against ncwa -a Time
ncwa -O -a Time -v T,QVAPOR,T2,U "$WRF" "$TMP/wref.nc" || ko "ncwa on WRF"
for np in 1 3 4; do
  gz $np "$TMP/w.nc" -i "$WRF" --var T,QVAPOR,T2,U -e 1e-3 --force
  if ncdiff -O -v T,QVAPOR,T2,U "$TMP/w.nc" "$TMP/wref.nc" "$TMP/wd.nc" &&
    ncap2 -O -v -s 'T=abs(T).max();QVAPOR=abs(QVAPOR).max();T2=abs(T2).max();U=abs(U).max()' "$TMP/wd.nc" "$TMP/wmax.nc"; then
    for v in T QVAPOR T2 U; do
      d=$(ncdump -v $v "$TMP/wmax.nc" | sed -n "s/^ $v = \([^ ;]*\).*/\1/p") c=$(claimed "$TMP/w.nc" $v)
      if [ -n "$d" ] && [ -n "$c" ] && within "$d" "$c" 400; then ok; else ko "WRF $v np $np: |diff| $d > claimed $c"; fi
      echo "  WRF --var T,QVAPOR,T2,U $v np $np: max |diff| $d, claimed $c"
    done
  else
    ko "ncdiff / ncap2 on WRF np $np"
  fi
done

# --var all: every numeric variable along the record dimension (TC and
# TREFHT; not lat, lon, time)
for np in 1 3 4; do
  gz $np "$TMP/va.nc" -i "$TMP/two.nc" --var all -e 1e-3 --force
  [ "$(cdo -s showname "$TMP/va.nc" | tr -s ' ')" = " TC TREFHT" ] && ok || ko "--var all: $(cdo -s showname "$TMP/va.nc")"
  for v in TREFHT TC; do cdo_compare "--var all $v np $np" "$TMP/va.nc" "$TMP/ref_mean.nc" $v; done
done

# netCDF-4 deflate + shuffle and chunks (ncks -L 4 --cnk_dmn): the same
# values, smaller, the storage ncdump -hs reports
gz 3 "$TMP/vz.nc" -i "$TMP/two.nc" --var TREFHT,TC --op std1 -e 1e-2 --deflate 4 --chunks 32x64
for v in TREFHT TC; do cdo_compare "--deflate 4 --chunks 32x64 $v np 3" "$TMP/vz.nc" "$TMP/ref_std1.nc" $v; done
ncdump -hs "$TMP/vz.nc" >"$TMP/hdr"
for v in TREFHT TC; do
  grep -q "$v:_DeflateLevel = 4" "$TMP/hdr" && grep -q "$v:_Shuffle = \"true\"" "$TMP/hdr" &&
    grep -q "$v:_ChunkSizes = 32, 64" "$TMP/hdr" && ok || ko "$v: deflate / shuffle / chunks not stored"
done
[ "$(stat -c %s "$TMP/vz.nc")" -lt "$(stat -c %s "$TMP/v_3.nc")" ] && ok || ko "deflated output not smaller"
gz 1 "$TMP/vz0.nc" -i "$TMP/two.nc" --var TREFHT --deflate 1 --shuffle off -e 1e-3
ncdump -hs "$TMP/vz0.nc" | grep -q 'TREFHT:_DeflateLevel = 1' && ! ncdump -hs "$TMP/vz0.nc" | grep -q 'TREFHT:_Shuffle' &&
  ok || ko "--shuffle off"

# errors name --var
expect() { refused 2 "$@"; }
expect 1 "--var TREFHT,lat: .*variable lat has no dimension time" "$TMP/e.nc" -i "$TREFHT" --var TREFHT,lat
expect 2 "--var TREFHT,: an empty variable name" "$TMP/e.nc" -i "$TREFHT" --var TREFHT,
expect 2 "--var TREFHT,TC: several variables" "$TMP/e.h5" -i "$TMP/two.nc" --var TREFHT,TC
expect 1 "nosuch" "$TMP/e.nc" -i "$TMP/two.nc" --var TREFHT,nosuch
head -c 4096 /dev/zero >"$TMP/raw.raw"
expect 1 "--var all: .*raw.raw is not a netCDF file" "$TMP/e.nc" -i "$TMP/raw.raw" --dims 32 --var all
expect 1 "--deflate applies to .nc" "$TMP/e.h5" -i "$TMP/two.nc" --var TREFHT --deflate 4
expect 2 "--deflate 12" "$TMP/e.nc" -i "$TMP/two.nc" --var TREFHT --deflate 12
expect 1 "--chunks needs 2 sizes" "$TMP/e.nc" -i "$TMP/two.nc" --var TREFHT --chunks 1x2x3

echo "test_climate_vars: $pass passed, $fail failed"
[ $fail -eq 0 ]
