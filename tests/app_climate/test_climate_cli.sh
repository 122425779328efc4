#!/usr/bin/env bash
# gzstack's climate operators against CDO and NCO (see CMakeLists.txt).
# For each case: gzstack (with --verify: its own exact reference) and the
# reference tool on the same input; then
#   values   max |gzstack - reference| (cdo fldmax of the absolute
#            difference) <= the claimed bound gzstack wrote
#            (gzstack_claimed_bound) + half a float32 ulp of the reference's
#            largest value (the reference is rounded to float32 too)
#   missing  the same count of missing points in gzstack's field, the
#            reference's and their difference (so the same points)
#   metadata cdo sinfo reads the output; ncdump shows the CF cell_methods
#            and the history with gzstack's line first and the input's kept
# A discrimination case checks that the comparison can fail: population
# variance against the sample reference must differ beyond the bound.
set -u
# shellcheck source=climate_lib.sh
source "$(dirname "$0")/climate_lib.sh"
climate_setup "$1" "$2" cdo ncra ncdump

# reference FILE VAR OP OUT: the CDO / NCO result for a gzstack --op
reference() {
  local f=$1 v=$2 op=$3 out=$4
  case $op in
    var) cdo -s -O timvar -selvar,"$v" "$f" "$out" ;;
    var1) cdo -s -O timvar1 -selvar,"$v" "$f" "$out" ;;
    std) cdo -s -O timstd -selvar,"$v" "$f" "$out" ;;
    std1) cdo -s -O timstd1 -selvar,"$v" "$f" "$out" ;;
    rms) ncra -O -y rms -v "$v" "$f" "$out" ;;
  esac
}
# nmiss1 FILE: the Miss column of cdo infon (one step)
nmiss1() { cdo -s infon "$1" | awk 'NR == 2 { print $7 }'; }
# refmax1 FILE: the largest |value| (one step, from cdo infon)
refmax1() { cdo -s infon "$1" | awk 'NR == 2 { a = $9 < 0 ? -$9 : $9; b = $11 < 0 ? -$11 : $11; print (a > b ? a : b) }'; }

# compare DESCRIPTION GZ_OUT REF [expect_far]
compare() {
  local what=$1 g=$2 ref=$3 far=${4:-}
  local diff c m ng nr nd
  diff=$(cdo -s output -fldmax -abs -sub "$g" "$ref" | tr -d ' ')
  c=$(claimed "$g") m=$(refmax1 "$ref")
  judge "$what" "$diff" "$c" "$m" "$far" || return
  ng=$(nmiss1 "$g") nr=$(nmiss1 "$ref") nd=$(cdo -s infon -sub "$g" "$ref" | awk 'NR == 2 { print $7 }')
  if [ "$ng" = "$nr" ] && [ "$nr" = "$nd" ]; then ok; else ko "$what: missing points gzstack $ng, reference $nr, union $nd"; fi
  echo "  $what: max |diff| $diff, claimed $c, missing $ng"
}

# metadata OUT OP_CF
metadata() {
  local g=$1 cf=$2
  if cdo -s sinfo "$g" >"$TMP/sinfo" 2>&1; then ok; else ko "cdo sinfo $g"; cat "$TMP/sinfo"; fi
  ncdump -h "$g" >"$TMP/hdr" 2>&1 || { ko "ncdump -h $g"; return; }
  if grep -q "cell_methods = \".*time: $cf\"" "$TMP/hdr"; then ok; else ko "$g: no 'time: $cf' cell_methods"; fi
  if grep -q ':history = ".*gzstack stack' "$TMP/hdr"; then ok; else ko "$g: history without the gzstack line"; fi
}

cf_of() {
  case $1 in var | var1) echo variance ;; std | std1) echo standard_deviation ;; rms) echo root_mean_square ;; esac
}

# (file, variable, bound): TREFHT in K (no missing values), SST in degC
# (land NaN); e relative to the tools' float32 output, big enough to let the
# compressed allreduce work.
for ds in "TREFHT:$TREFHT:1e-3" "sst:$SST:1e-2"; do
  v=${ds%%:*} rest=${ds#*:} f=${rest%:*} e=${rest##*:}
  for op in var var1 std std1 rms; do
    reference "$f" "$v" "$op" "$TMP/ref_${v}_$op.nc" 2>"$TMP/err" ||
      { ko "reference $v $op"; cat "$TMP/err"; continue; }
    for np in 1 3 4; do
      out=$TMP/g_${v}_${op}_$np.nc
      if run $np "$GZ" stack -i "$f" --var "$v" --op $op -e $e -o "$out" --verify -q \
        >"$TMP/out" 2>&1; then ok; else ko "$v $op np $np: gzstack failed"; cat "$TMP/out"; continue; fi
      compare "$v $op np $np" "$out" "$TMP/ref_${v}_$op.nc"
    done
    metadata "$TMP/g_${v}_${op}_3.nc" "$(cf_of $op)"
  done
done

# the comparison can fail: population var against the sample reference
compare "var vs timvar1 (must differ)" "$TMP/g_TREFHT_var_3.nc" "$TMP/ref_TREFHT_var1.nc" far

# a relative bound: E x range (var: x range^2)
for np in 1 3 4; do
  run $np "$GZ" stack -i "$SST" --var sst --op std1 -e 1e-4 --eb-mode rel -o "$TMP/rel$np.nc" --verify -q \
    >"$TMP/out" 2>&1 && ok || { ko "std1 rel np $np"; cat "$TMP/out"; }
  compare "sst std1 rel np $np" "$TMP/rel$np.nc" "$TMP/ref_sst_std1.nc"
done
# e = 0: the plain MPI allreduce, within double rounding of CDO
for np in 1 3 4; do
  run $np "$GZ" stack -i "$TREFHT" --var TREFHT --op var1 -e 0 -o "$TMP/exact$np.nc" --verify -q \
    >"$TMP/out" 2>&1 && ok || { ko "var1 e 0 np $np"; cat "$TMP/out"; }
  compare "TREFHT var1 e=0 np $np" "$TMP/exact$np.nc" "$TMP/ref_TREFHT_var1.nc"
done

# --steps START:STOP:STRIDE (STOP inclusive, as ncra -d time,START,STOP,STRIDE)
# against ncra and cdo seltimestep (1-based), in one file and across two
ncra -O -d time,0,119,12 -v sst "$SST" "$TMP/ref_steps.nc" || ko "ncra -d"
for np in 1 3 4; do
  run $np "$GZ" stack -i "$SST" --var sst --steps 0:119:12 -e 1e-3 -o "$TMP/st_$np.nc" --verify -q \
    >"$TMP/out" 2>&1 && ok || { ko "steps np $np"; cat "$TMP/out"; }
  compare "sst mean --steps 0:119:12 np $np" "$TMP/st_$np.nc" "$TMP/ref_steps.nc"
done
ncks -O -d time,0,49 "$TREFHT" "$TMP/a.nc" && ncks -O -d time,50,109 "$TREFHT" "$TMP/b.nc" ||
  ko "ncks split"
cdo -s -O timstd1 -seltimestep,4/101/7 -selvar,TREFHT "$TREFHT" "$TMP/ref_steps2.nc" ||
  ko "cdo seltimestep"
for np in 1 3 4; do
  run $np "$GZ" stack -i "$TMP/a.nc" "$TMP/b.nc" --var TREFHT --op std1 --steps 3:100:7 -e 1e-3 \
    -o "$TMP/st2_$np.nc" --verify -q >"$TMP/out" 2>&1 && ok || { ko "steps two files np $np"; cat "$TMP/out"; }
  compare "TREFHT std1 --steps 3:100:7 two files np $np" "$TMP/st2_$np.nc" "$TMP/ref_steps2.nc"
done
ncra -O -d time,3,100,7 -v TREFHT "$TREFHT" "$TMP/ref_steps3.nc" || ko "ncra -d 3,100,7"
for np in 1 3 4; do
  run $np "$GZ" stack -i "$TMP/a.nc" "$TMP/b.nc" --var TREFHT --steps 3:100:7 --read root -e 1e-3 \
    -o "$TMP/st3_$np.nc" --verify -q >"$TMP/out" 2>&1 && ok || { ko "steps root read np $np"; cat "$TMP/out"; }
  compare "TREFHT mean --steps 3:100:7 --read root np $np" "$TMP/st3_$np.nc" "$TMP/ref_steps3.nc"
done
# one record alone, from the second file: the record itself
ncks -O -d time,57 -v TREFHT "$TREFHT" "$TMP/ref_one.nc" || ko "ncks -d time,57"
for np in 1 3 4; do
  run $np "$GZ" stack -i "$TMP/a.nc" "$TMP/b.nc" --var TREFHT --steps 57 -e 0 -o "$TMP/one$np.nc" -q \
    >"$TMP/out" 2>&1 && ok || { ko "steps 57 np $np"; cat "$TMP/out"; }
  compare "TREFHT --steps 57 np $np" "$TMP/one$np.nc" "$TMP/ref_one.nc"
done
expect_steps_error() { # SPEC PATTERN: exit non-zero, the message, no output
  if run 3 "$GZ" stack -i "$TMP/a.nc" "$TMP/b.nc" --var TREFHT --steps "$1" -e 1 -o "$TMP/no.nc" \
    >"$TMP/out" 2>&1; then ko "--steps $1 accepted"; return; fi
  grep -qE -- "$2" "$TMP/out" && ok || { ko "--steps $1: no '$2' in:"; cat "$TMP/out"; }
  [ -e "$TMP/no.nc" ] && ko "--steps $1: output written" || ok
}
expect_steps_error 110: "--steps 110: selects no record \\(the inputs hold 110"
expect_steps_error 9:3 "--steps 9:3: STOP is before START"
expect_steps_error 0:9:0 "--steps 0:9:0: STRIDE must be"
expect_steps_error -1:5 "--steps -1:5: START must be"

# --years / --months / --seasons from the CF time coordinate, against cdo
# selyear / selmon / selseason: ERSST (standard calendar, days since
# 1800-1-1), TREFHT (no calendar attribute: standard), and copies of ERSST
# relabelled noleap and 360_day (both tools read the same values in the new
# calendar, so the selected records differ from the standard ones)
date_case() { # "NP..." FILE VAR OP CDO_SELECTION GZSTACK_OPTIONS...
  local nps=$1 f=$2 v=$3 op=$4 sel=$5 cop np
  shift 5
  case $op in mean) cop=timmean ;; std1) cop=timstd1 ;; esac
  cdo -s -O $cop $sel -selvar,"$v" "$f" "$TMP/ref_date.nc" || { ko "cdo $sel"; return; }
  for np in $nps; do
    if run $np "$GZ" stack -i "$f" --var "$v" --op $op -e 1e-3 "$@" -o "$TMP/date.nc" --force \
      --verify -q >"$TMP/out" 2>&1; then ok; else ko "$v $*: gzstack failed"; cat "$TMP/out"; continue; fi
    compare "$v $op $* np $np (cdo $sel)" "$TMP/date.nc" "$TMP/ref_date.nc"
  done
}
date_case "1 3 4" "$SST" sst mean "-selmon,12,1,2" --months 12,1,2
date_case "1 3 4" "$SST" sst std1 "-selseason,JJA -selyear,2012/2015" --seasons JJA --years 2012/2015
date_case "1 3 4" "$SST" sst mean "-selseason,DJF,SON -selmon,1/11" --seasons djf,SON --months 1/11
date_case "1 3 4" "$TREFHT" TREFHT mean "-selyear,1900/1909,1990" --years 1900/1909,1990
# --steps counts the inputs' records (before the dates): both must hold
date_case "1 3 4" "$TREFHT" TREFHT mean "-selyear,1900/1950 -seltimestep,11/100/2" --years 1900/1950 --steps 10:99:2
# --dates START/END (cdo seldate), at 1, 3 and 4 ranks; END a date alone is
# the whole day, START alone that day
for np in 1 3 4; do
  date_case $np "$SST" sst mean "-seldate,2012-03-15,2015-06-01" --dates 2012-03-15/2015-06-01
done
date_case "1 3 4" "$TREFHT" TREFHT mean "-seldate,1900-01-01,1950-12-31" --dates 1900-01-01/1950-12-31
date_case "1 3 4" "$SST" sst std1 "-seldate,2010-01-01T00:00:00,2011-12-31T23:00:00" \
  --dates 2010-01-01T00:00:00/2011-12-31T23:00
date_case "1 3 4" "$SST" sst mean "-seldate,2013-07-01,2013-07-01" --dates 2013-07-01
for cal in noleap 360_day; do
  cp "$SST" "$TMP/sst_$cal.nc" && ncatted -O -a calendar,time,o,c,$cal "$TMP/sst_$cal.nc" ||
    ko "ncatted $cal"
  date_case "1 3 4" "$TMP/sst_$cal.nc" sst mean "-selyear,2015 -selmon,3/5" --years 2015 --months 3/5
  date_case "1 3 4" "$TMP/sst_$cal.nc" sst mean "-seldate,2011-02-10,2014-11-30" --dates 2011-02-10/2014-11-30
done
if run 3 "$GZ" stack -i "$SST" --var sst --dates 1990-01-01/1999-12-31 -e 1 -o "$TMP/no.nc" >"$TMP/out" 2>&1; then
  ko "--dates 1990s accepted"; else
  grep -q -- "--dates 1990-01-01/1999-12-31 selects no record" "$TMP/out" && ok || { ko "--dates 1990s message"; cat "$TMP/out"; }; fi
# errors: nothing selected, no time coordinate, a bad list
if run 3 "$GZ" stack -i "$SST" --var sst --years 1800 -e 1 -o "$TMP/no.nc" >"$TMP/out" 2>&1; then
  ko "--years 1800 accepted"; else
  grep -q -- "--years 1800 selects no record" "$TMP/out" && ok || { ko "--years 1800 message"; cat "$TMP/out"; }; fi
ncks -O -C -x -v time "$TMP/a.nc" "$TMP/notime.nc" || ko "ncks -x -v time"
if run 2 "$GZ" stack -i "$TMP/notime.nc" --var TREFHT --months 1 -e 1 -o "$TMP/no.nc" >"$TMP/out" 2>&1; then
  ko "--months without time coordinate accepted"; else
  grep -q -- "--months: .*notime.nc: variable TREFHT has no time coordinate" "$TMP/out" && ok ||
    { ko "no time coordinate message"; cat "$TMP/out"; }; fi
for bad in "--months 13" "--seasons DJJ" "--years 1999/1990" "--dates 2012-13-01" "--dates 2012-01-01/x"; do
  if run 1 "$GZ" stack -i "$SST" --var sst $bad -e 1 -o "$TMP/no.nc" >"$TMP/out" 2>&1; then
    ko "$bad accepted"; else grep -q -- "$bad:" "$TMP/out" && ok || { ko "$bad message"; cat "$TMP/out"; }; fi
done
[ -e "$TMP/no.nc" ] && ko "an error case wrote output" || ok

# the INI keys: op = std1, steps = 0:119:12 (as on the command line)
cdo -s -O timstd1 -seltimestep,1/120/12 -selvar,sst "$SST" "$TMP/ref_ini.nc" || ko "cdo ini ref"
printf '[stack]\ninput = %s\nvar = sst\nop = std1\nsteps = 0:119:12\nerror_bound = 1e-3\noutput = %s\nverify = true\n' \
  "$SST" "$TMP/ini.nc" >"$TMP/c.ini"
run 3 "$GZ" stack --config "$TMP/c.ini" -q >"$TMP/out" 2>&1 && ok || { ko "config op/steps"; cat "$TMP/out"; }
compare "sst std1 from the INI keys np 3" "$TMP/ini.nc" "$TMP/ref_ini.nc"

# errors name the option; nothing written
if run 2 "$GZ" stack -i "$TREFHT" --var TREFHT --op std --read root -e 1e-3 -o "$TMP/no.nc" \
  >"$TMP/out" 2>&1; then ko "--op std --read root accepted"; else
  grep -q -- "--read root" "$TMP/out" && ok || { ko "--read root message"; cat "$TMP/out"; }
  [ -e "$TMP/no.nc" ] && ko "--read root: output written" || ok
fi
if run 1 "$GZ" stack -i "$TREFHT" --var TREFHT --op stdev -e 1e-3 -o "$TMP/no.nc" >"$TMP/out" 2>&1; then
  ko "--op stdev accepted"; else grep -q -- "--op stdev" "$TMP/out" && ok || { ko "--op stdev message"; cat "$TMP/out"; }; fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
