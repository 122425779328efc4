#!/usr/bin/env bash
# gzstack --group / --running against CDO (see CMakeLists.txt): one field
# per group, every time step within the claimed bound of cdo ymonmean /
# yseasstd1 / yearmax / timselmean / runvar / runmean, the same missing
# points, the same number of steps; the time axis with CF climatology or
# time bounds and cell_methods (ncdump), read by cdo sinfo; errors that
# name the option. A discrimination case checks that the comparison can
# fail.
set -u
# shellcheck source=climate_lib.sh
source "$(dirname "$0")/climate_lib.sh"
climate_setup "$1" "$2" cdo ncdump nces

nsteps() { cdo -s ntime "$1" | tr -d ' '; }

# compare DESCRIPTION GZ_OUT REF [far]: every step of both
compare() {
  local what=$1 g=$2 ref=$3 far=${4:-} diff c m ng nr nd
  if [ "$(nsteps "$g")" != "$(nsteps "$ref")" ]; then
    ko "$what: $(nsteps "$g") steps, the reference $(nsteps "$ref")"; return
  fi
  ok
  diff=$(cdo -s output -timmax -fldmax -abs -sub "$g" "$ref" | tr -d ' ')
  c=$(claimed "$g") m=$(refmax "$ref")
  judge "$what" "$diff" "$c" "$m" "$far" || return
  ng=$(nmiss "$g") nr=$(nmiss "$ref") nd=$(nmiss "$(cdo -s sub "$g" "$ref" "$TMP/d.nc" && echo "$TMP/d.nc")")
  if [ "$ng" = "$nr" ] && [ "$nr" = "$nd" ]; then ok; else ko "$what: missing points gzstack $ng, reference $nr, union $nd"; fi
  echo "  $what: $(nsteps "$g") steps, max |diff| $diff, claimed $c, missing $ng"
}

# INI keys: group, op, error_bound and algo from a config file
cat >"$TMP/g.ini" <<INI
input = $SST
var = sst
group = season
op = std1
error_bound = 1e-2
algo = ring
INI
cdo -s yseasstd1 "$SST" "$TMP/ref_ys.nc" || ko "cdo yseasstd1"
if run 3 "$GZ" stack --config "$TMP/g.ini" -o "$TMP/ini.nc" --verify -q >"$TMP/out" 2>&1; then ok; else
  ko "gzstack --config (group = season)"; cat "$TMP/out"; fi
compare "config group = season, op = std1 np 3" "$TMP/ini.nc" "$TMP/ref_ys.nc"


# month climatology (cdo ymonmean) at 1, 3 and 4 ranks
cdo -s ymonmean "$SST" "$TMP/ref_ym.nc" || ko "cdo ymonmean"
for np in 1 3 4; do
  gz $np "$TMP/ym_$np.nc" -i "$SST" --var sst --group month -e 1e-3
  compare "sst --group month np $np" "$TMP/ym_$np.nc" "$TMP/ref_ym.nc"
done
# seasons, sample std (cdo yseasstd1); years, max (cdo yearmax)
at134 ys "$TMP/ref_ys.nc" "sst --group season --op std1" "" -i "$SST" --var sst --group season --op std1 -e 1e-2
cdo -s yearmax "$SST" "$TMP/ref_yr.nc" || ko "cdo yearmax"
at134 yr "$TMP/ref_yr.nc" "sst --group year --op max" "" -i "$SST" --var sst --group year --op max -e 1e-3
# every 25 records, the last group of 10 (cdo timselmean,25)
cdo -s timselmean,25 -selvar,TREFHT "$TREFHT" "$TMP/ref_ts.nc" || ko "cdo timselmean"
at134 ts "$TMP/ref_ts.nc" "TREFHT --group 25" "" -i "$TREFHT" --var TREFHT --group 25 -e 1e-3
# running windows (cdo runvar,11 / runmean,11), with a date selection
cdo -s runvar,11 -selvar,TREFHT "$TREFHT" "$TMP/ref_rv.nc" || ko "cdo runvar"
at134 rv "$TMP/ref_rv.nc" "TREFHT --running 11 --op var" "" -i "$TREFHT" --var TREFHT --running 11 --op var -e 1e-3
cdo -s runmean,6 -selmon,6/8 "$SST" "$TMP/ref_rm.nc" || ko "cdo runmean"
at134 rm "$TMP/ref_rm.nc" "sst --running 6 --months 6/8" "" -i "$SST" --var sst --running 6 --months 6/8 -e 1e-3
# the comparison can fail: the month means against the month maxima
cdo -s ymonmax "$SST" "$TMP/ref_ymax.nc" || ko "cdo ymonmax"
compare "month mean vs ymonmax (must differ)" "$TMP/ym_3.nc" "$TMP/ref_ymax.nc" far

# --ensemble: record k of three members (TREFHT's years 1-30, 31-60,
# 61-90) against cdo ensmean / ensstd1 and nces, the time axis kept
for k in 1 2 3; do
  cdo -s seltimestep,$((30 * k - 29))/$((30 * k)) -selvar,TREFHT "$TREFHT" "$TMP/m$k.nc" || ko "member $k"
done
cdo -s ensmean "$TMP/m1.nc" "$TMP/m2.nc" "$TMP/m3.nc" "$TMP/ref_em.nc" || ko "cdo ensmean"
cdo -s ensstd1 "$TMP/m1.nc" "$TMP/m2.nc" "$TMP/m3.nc" "$TMP/ref_es.nc" || ko "cdo ensstd1"
nces -O "$TMP/m1.nc" "$TMP/m2.nc" "$TMP/m3.nc" "$TMP/ref_nces.nc" || ko "nces"
at134 em "$TMP/ref_em.nc" "TREFHT --ensemble (cdo ensmean)" "" -i "$TMP/m1.nc" "$TMP/m2.nc" "$TMP/m3.nc" --ensemble -e 1e-3
for np in 1 3 4; do compare "TREFHT --ensemble np $np (nces)" "$TMP/em_$np.nc" "$TMP/ref_nces.nc"; done
at134 es "$TMP/ref_es.nc" "TREFHT --ensemble --op std1 (cdo ensstd1)" "" -i "$TMP/m1.nc" "$TMP/m2.nc" "$TMP/m3.nc" --ensemble --op std1 -e 1e-2
[ "$(cdo -s showtimestamp "$TMP/em.nc")" = "$(cdo -s showtimestamp "$TMP/ref_em.nc")" ] && ok ||
  ko "ensemble: time stamps differ from cdo ensmean's"

# metadata: cdo reads the time axis; CF climatology bounds and cell_methods
for f in ym_3 ys yr ts rv em; do
  cdo -s sinfo "$TMP/$f.nc" >"$TMP/sinfo" 2>&1 && ok || { ko "cdo sinfo $f"; cat "$TMP/sinfo"; }
done
ncdump -h "$TMP/ym_3.nc" >"$TMP/hdr"
grep -q 'time:climatology = "climatology_bounds"' "$TMP/hdr" && ok || ko "month: no climatology attribute"
grep -q 'double climatology_bounds(time, bnds)' "$TMP/hdr" && ok || ko "month: no climatology_bounds"
grep -q 'cell_methods = "time: mean within years time: mean over years"' "$TMP/hdr" && ok ||
  ko "month: cell_methods"
grep -q 'time:calendar = "proleptic_gregorian"' "$TMP/hdr" && ok || ko "month: calendar not kept"
grep -q 'lat:standard_name = "latitude"' "$TMP/hdr" && ok || ko "month: lat attributes not kept"
grep -q ':history = ".*gzstack stack.*\\n.*created 07/2017' "$TMP/hdr" && ok || ko "month: history not appended"
# January: 2010-01-01 (76701) to 2020-02-01 (80384) in days since 1800-01-01;
# September (no 2020 record): 2010-09-01 to 2019-10-01
b=$(ncdump -v climatology_bounds "$TMP/ym_3.nc" | sed -n '/climatology_bounds =/,/;/p' | tr -d ' ;' | sed -n '2p;10p' | tr '\n' ' ')
[ "$b" = "76701,80384, 76944,80261, " ] && ok || ko "month: climatology bounds $b"
ncdump -h "$TMP/ts.nc" >"$TMP/hdr"
grep -q 'time:bounds = "time_bnds"' "$TMP/hdr" && ok || ko "group 25: no time bounds"
grep -q 'cell_methods = "time: mean"' "$TMP/hdr" && ok || ko "group 25: cell_methods"
ncdump -h "$TMP/ys.nc" | grep -q 'time: standard_deviation over years"' && ok || ko "season: cell_methods"

# --group all: the single stack with a time axis of length 1 and its bounds
# (cdo timmean / timstd1 keep one time step), at 1, 3 and 4 ranks
cdo -s timmean "$SST" "$TMP/ref_all.nc" || ko "cdo timmean"
cdo -s timstd1 -selvar,TREFHT "$TREFHT" "$TMP/ref_all_std.nc" || ko "cdo timstd1"
bnds() { ncdump -v time_bnds "$1" | sed -n '/time_bnds =/,/;/p' | tr -d ' ;\n' | sed 's/time_bnds=//'; }
for np in 1 3 4; do
  gz $np "$TMP/all_$np.nc" -i "$SST" --var sst --group all -e 1e-3
  compare "sst --group all np $np (cdo timmean)" "$TMP/all_$np.nc" "$TMP/ref_all.nc"
  [ "$(nsteps "$TMP/all_$np.nc")" = 1 ] && ok || ko "--group all np $np: $(nsteps "$TMP/all_$np.nc") time steps"
  [ "$(bnds "$TMP/all_$np.nc")" = "$(bnds "$TMP/ref_all.nc")" ] && ok ||
    ko "--group all np $np: bounds $(bnds "$TMP/all_$np.nc"), cdo $(bnds "$TMP/ref_all.nc")"
  gz $np "$TMP/alls_$np.nc" -i "$TREFHT" --var TREFHT --group all --op std1 -e 1e-3
  compare "TREFHT --group all --op std1 np $np (cdo timstd1)" "$TMP/alls_$np.nc" "$TMP/ref_all_std.nc"
done
cdo -s sinfo "$TMP/all_3.nc" | grep -q "Bounds = true" && ok || ko "--group all: cdo sinfo shows no bounds"
ncdump -h "$TMP/all_3.nc" | grep -q 'cell_methods = "time: mean"' && ok || ko "--group all: cell_methods"
# one record: a stack of one, its time kept
ncks -O -d time,7 -v TREFHT "$TREFHT" "$TMP/one.nc" || ko "ncks one record"
gz 3 "$TMP/all_one.nc" -i "$TMP/one.nc" --group all -e 1e-3
compare "one record --group all np 3" "$TMP/all_one.nc" "$TMP/one.nc"
[ "$(cdo -s showtimestamp "$TMP/all_one.nc")" = "$(cdo -s showtimestamp "$TMP/one.nc")" ] && ok ||
  ko "one record: time stamp $(cdo -s showtimestamp "$TMP/all_one.nc") not the record's"

# the input's own time bounds (time:bounds = "time_bnds"): ERSST stamped on
# the 15th with cells of 10 days around each stamp (cdo settbounds, then
# ncap2), so they differ from the calendar months gzstack derives without
# them. CDO's group bounds span the cells of the group's records; gzstack's
# must be the same numbers (climatologies: climatology_bounds), the values
# as cdo's; cdo yearmonmean weighs by the calendar's month lengths, not by
# the cells, and so does --weights days. time_bnds is no data variable.
cbnds() { # FILE: its time_bnds or climatology_bounds, one line
  local v
  for v in time_bnds climatology_bounds; do
    ncdump -v $v "$1" 2>/dev/null | sed -n "/^ $v =/,\$p" | tr -d '\n ;}' | sed 's/^[a-z_]*=//'
  done
}
if cdo -s settbounds,month -setday,15 "$SST" "$TMP/sb.nc" &&
  ncap2 -O -s 'time_bnds(:,0)=time-5;time_bnds(:,1)=time+5;' "$TMP/sb.nc" "$TMP/s10.nc"; then ok; else ko "time bounds copy"; fi
for c in "timmean all" "yearmean year" "timselmean,25 25" "ymonmean month" "runmean,5 running" "yearmonmean yearmon"; do
  set -- $c
  cdo -s "$1" "$TMP/s10.nc" "$TMP/ref_b$2.nc" || ko "cdo $1 (bounds)"
  case $2 in
  running) a="--running 5" ;; yearmon) a="--group year --weights days" ;; *) a="--group $2" ;;
  esac
  # (rank 0 writes the bounds from the agreed record cells: every rank
  # count for the climatology and the single stack, 3 ranks for the rest)
  nps=3
  case $2 in all | month) nps="1 3 4" ;; esac
  for np in $nps; do
    # shellcheck disable=SC2086
    gz $np "$TMP/b$2_$np.nc" -i "$TMP/s10.nc" $a -e 1e-3 # (no --var: time_bnds is not data)
    if [ $2 = yearmon ]; then
      # cdo yearmonmean: up to a float32 ulp off itself (test_climate_weights.sh)
      d=$(cdo -s output -timmax -fldmax -abs -sub "$TMP/b$2_$np.nc" "$TMP/ref_b$2.nc" | tr -d ' ')
      within "$d" "$(claimed "$TMP/b$2_$np.nc")" 64 && ok || ko "--group year --weights days (bounds) np $np: $d"
    else
      compare "input bounds: $a np $np (cdo $1)" "$TMP/b$2_$np.nc" "$TMP/ref_b$2.nc"
    fi
    [ -n "$(cbnds "$TMP/ref_b$2.nc")" ] && [ "$(cbnds "$TMP/b$2_$np.nc")" = "$(cbnds "$TMP/ref_b$2.nc")" ] && ok ||
      ko "input bounds: $a np $np: bounds $(cbnds "$TMP/b$2_$np.nc" | cut -c1-80), cdo $(cbnds "$TMP/ref_b$2.nc" | cut -c1-80)"
  done
done
cdo -s sinfo "$TMP/bmonth_3.nc" | grep -q "Bounds = true" && ok || ko "input bounds: cdo sinfo shows no bounds"
# ensemble members keep the first input's cells (cdo ensmean)
cdo -s seltimestep,1/6 "$TMP/s10.nc" "$TMP/e1.nc" && cdo -s seltimestep,7/12 "$TMP/s10.nc" "$TMP/e2.nc" &&
  cdo -s ensmean "$TMP/e1.nc" "$TMP/e2.nc" "$TMP/ref_be.nc" || ko "cdo ensmean (bounds)"
for np in 1 4; do
  gz $np "$TMP/be_$np.nc" -i "$TMP/e1.nc" "$TMP/e2.nc" --ensemble -e 1e-3
  compare "input bounds: --ensemble np $np (cdo ensmean)" "$TMP/be_$np.nc" "$TMP/ref_be.nc"
  [ "$(cbnds "$TMP/be_$np.nc")" = "$(cbnds "$TMP/ref_be.nc")" ] && ok || ko "input bounds: --ensemble np $np: $(cbnds "$TMP/be_$np.nc")"
done
# the calendar months without the bounds: the same stack, other bounds
ncks -O -C -x -v time_bnds "$TMP/s10.nc" "$TMP/s10nb.nc" && ncatted -O -a bounds,time,d,, "$TMP/s10nb.nc" || ko "ncks -x time_bnds"
gz 3 "$TMP/bnb.nc" -i "$TMP/s10nb.nc" --group year -e 1e-3
[ "$(cbnds "$TMP/bnb.nc")" != "$(cbnds "$TMP/byear_3.nc")" ] && ok || ko "bounds from the calendar equal the input's"
# time:bounds naming a variable the file does not hold: an error naming the file
cp "$TMP/s10.nc" "$TMP/badb.nc" && ncatted -O -a bounds,time,o,c,nosuch "$TMP/badb.nc" || ko "ncatted bounds"
if run 3 "$GZ" stack -i "$TMP/badb.nc" --var sst --group year -e 1e-3 -o "$TMP/badb_out.nc" -q >"$TMP/out" 2>&1; then
  ko "time:bounds = nosuch accepted"
else
  grep -q -- "--group year: .*badb.nc: time:bounds names nosuch" "$TMP/out" && ok || { ko "bad bounds: message"; cat "$TMP/out"; }
  [ -e "$TMP/badb_out.nc" ] && ko "bad bounds: output left" || ok
fi

# --png with groups: every group drawn (FILE_gK.png, K zero-padded), one
# picture per record of the output, all the same size, no two the same
# picture, no FILE.png; an existing group picture is refused without
# --force and nothing is left
# (gz runs --verify: each group also gets FILE_gK_exact.png and
# FILE_gK_error.png, its exact field and its error at +- its bound)
pics() { ls "$TMP/$1"_g*.png 2>/dev/null | grep -v -e '_exact\.png$' -e '_error\.png$'; }
png_groups() { # NP NAME ARGS...
  local np=$1 name=$2 n k sizes kind
  shift 2
  gz "$np" "$TMP/$name.nc" "$@" --png "$TMP/$name.png"
  n=$(nsteps "$TMP/$name.nc")
  [ "$(pics "$name" | wc -l)" = "$n" ] && ok || ko "$name: $(pics "$name" | wc -l) pictures for $n groups"
  for kind in exact error; do
    [ "$(ls "$TMP/${name}"_g*_$kind.png 2>/dev/null | wc -l)" = "$n" ] && ok ||
      ko "$name: $(ls "$TMP/${name}"_g*_$kind.png 2>/dev/null | wc -l) --verify $kind maps for $n groups"
  done
  for k in $(pics "$name"); do # a group's error map is neither its picture nor its exact map
    cmp -s "${k%.png}_error.png" "${k%.png}_exact.png" && { ko "$name: ${k%.png}_error.png is the exact map"; break; }
  done
  [ -e "$TMP/$name.png" ] && ko "$name: $name.png written beside the groups" || ok
  [ -e "$TMP/${name}_exact.png" ] || [ -e "$TMP/${name}_error.png" ] && ko "$name: ungrouped maps written" || ok
  sizes=$(file $(pics "$name") | sed 's/.*PNG image data, \([0-9]* x [0-9]*\).*/\1/' | sort -u | wc -l)
  [ "$sizes" = 1 ] && ok || ko "$name: pictures of $sizes sizes"
  for k in $(seq 2 "$n"); do
    local a b
    a=$(pics "$name" | sed -n 1p) b=$(pics "$name" | sed -n ${k}p)
    cmp -s "$a" "$b" && { ko "$name: $b is the same picture as $a"; break; }
  done
  ok
}
png_groups 1 pg_season -i "$SST" --var sst --group season -e 1e-2
[ -e "$TMP/pg_season_g4.png" ] && ok || ko "season pictures are not _g1.._g4"
png_groups 3 pg_25 -i "$TREFHT" --var TREFHT --group 25 -e 1e-3
png_groups 4 pg_month -i "$SST" --var sst --group month -e 1e-3
[ -e "$TMP/pg_month_g01.png" ] && [ -e "$TMP/pg_month_g12.png" ] && ok || ko "month pictures are not _g01.._g12"
rm -f "$TMP"/pg_season_g[1234]*.png "$TMP/pg_again.nc"
touch "$TMP/pg_season_g3_error.png" # an existing --verify map is refused too
if run 3 "$GZ" stack -i "$SST" --var sst --group season -e 1e-2 -o "$TMP/pg_again.nc" \
  --png "$TMP/pg_season.png" --verify -q >"$TMP/out" 2>&1; then ko "existing group error map replaced"; else
  grep -q "pg_season_g3_error.png" "$TMP/out" && ok || { ko "existing error map: message"; cat "$TMP/out"; }
  [ -e "$TMP/pg_again.nc" ] || [ -e "$TMP/pg_season_g1.png" ] && ko "existing error map: output left" || ok
fi
rm -f "$TMP/pg_season_g3_error.png"
gz 1 "$TMP/pg_season.nc" -i "$SST" --var sst --group season -e 1e-2 --png "$TMP/pg_season.png" --force
rm -f "$TMP"/pg_season_g[123].png "$TMP"/pg_season_g*_e*.png "$TMP/pg_again.nc"
if run 3 "$GZ" stack -i "$SST" --var sst --group season -e 1e-2 -o "$TMP/pg_again.nc" \
  --png "$TMP/pg_season.png" -q >"$TMP/out" 2>&1; then ko "existing group picture replaced"; else
  grep -q "pg_season_g4.png" "$TMP/out" && ok || { ko "existing picture: message"; cat "$TMP/out"; }
  [ -e "$TMP/pg_again.nc" ] && ko "existing picture: pg_again.nc left" || ok
  [ -e "$TMP/pg_season_g1.png" ] && ko "existing picture: pg_season_g1.png drawn" || ok
fi

# errors name the option (exit 2: usage, 1: the data)
expect() { refused 1 "$1" "$2" "$TMP/err.nc" "${@:3}"; }
expect 2 "--group foo.*all" -i "$SST" --var sst --group foo
expect 2 "exclude each other" -i "$SST" --var sst --group month --running 3
expect 2 "--running 2.5" -i "$SST" --var sst --running 2.5
expect 1 "--running 200" -i "$TREFHT" --var TREFHT --running 200
expect 1 "--group 111" -i "$TREFHT" --var TREFHT --group 111
expect 2 "--ensemble excludes" -i "$SST" --var sst --group year --ensemble
expect 1 "--scale: not with --group" -i "$SST" --var sst --group year --scale 2
cdo -s seltimestep,1/29 "$TMP/m2.nc" "$TMP/m29.nc" || ko "member of 29"
expect 1 "--ensemble: .*m29.nc holds 29 selected records" -i "$TMP/m1.nc" "$TMP/m29.nc" --ensemble
head -c $((96 * 20 * 4 * 3)) /dev/zero >"$TMP/raw.raw"
expect 1 "--group month.*no time coordinate" -i "$TMP/raw.raw" --dims 96x20 --group month

echo "test_climate_groups: $pass passed, $fail failed"
[ $fail -eq 0 ]
