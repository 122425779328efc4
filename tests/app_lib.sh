# app_lib.sh - what the end-to-end scripts of tests/app_* share. Source it,
# then set TMP (a scratch folder; app_scratch makes one): pass/fail
# counters, the checks below, and app_finish for the closing "N passed, N
# failed" line and the exit status.
pass=0 fail=0
LIMIT=$((10 * ${GZ_TEST_TIME_SCALE:-1})) # seconds an error case (bad) may take
app_scratch() { # DATA (GZ_DATA_DIR) and a scratch folder TMP removed on exit
  DATA=${GZ_DATA_DIR:-}
  TMP=$(mktemp -d)
  trap 'rm -rf "$TMP"' EXIT
}
ok() { pass=$((pass + 1)); }
ko() { fail=$((fail + 1)); echo "FAIL: $*"; }
expect() { # expect DESCRIPTION COMMAND... : the command must succeed
  local what=$1; shift
  if "$@" >"$TMP/out" 2>&1; then ok; else ko "$what"; cat "$TMP/out"; fi
}
expect_error() { # expect_error DESCRIPTION PATTERN COMMAND...: non-zero exit, message matches, no abort
  local what=$1 pattern=$2; shift 2
  if "$@" >"$TMP/out" 2>&1; then ko "$what: exit 0"; cat "$TMP/out"; return; fi
  if grep -qE -- "$pattern" "$TMP/out"; then ok; else ko "$what: no '$pattern' in:"; cat "$TMP/out"; fi
  if grep -q "MPI_ABORT\|Abort\|Segmentation" "$TMP/out"; then ko "$what: aborted"; fi
}
no_output() { # no_output DESCRIPTION FILE...: none of the files exist
  local what=$1; shift
  for f in "$@"; do [ -e "$f" ] && { ko "$what: $f left behind"; return; }; done
  ok
}
# no_leftovers WHAT FILE...: none of FILE exists, no temporary file anywhere
# under $TMP, no process of ours (their command lines name $TMP) alive.
no_leftovers() {
  local what=$1 f
  shift
  for f in "$@"; do [ -e "$f" ] && ko "$what: $f left behind"; done
  find "$TMP" -name '*.tmp-*' | grep -q . && ko "$what: temporary files: $(find "$TMP" -name '*.tmp-*')"
  pgrep -f "$TMP/" >/dev/null && { ko "$what: processes still running"; pgrep -af "$TMP/"; }
  return 0
}
# bad WHAT PATTERN OUTPUT COMMAND...: the error contract: a non-zero exit
# within LIMIT s (not by the timeout), a message matching PATTERN, no abort
# or crash, and no_leftovers (OUTPUT, temporary files, processes).
bad() {
  local what=$1 pattern=$2 output=$3 rc t0=$SECONDS
  shift 3
  timeout $LIMIT "$@" >"$TMP/out" 2>&1
  rc=$?
  if [ $rc -eq 0 ]; then
    ko "$what: exit 0"; cat "$TMP/out"
  elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    ko "$what: still running after $LIMIT s"
  elif grep -qE -- "$pattern" "$TMP/out"; then
    ok
  else
    ko "$what: no '$pattern' in:"; cat "$TMP/out"
  fi
  grep -qE "MPI_ABORT|Segmentation|core dumped|AddressSanitizer|runtime error" "$TMP/out" &&
    { ko "$what: crashed or aborted"; cat "$TMP/out"; }
  no_leftovers "$what" "$output"
  [ $((SECONDS - t0)) -le $LIMIT ] || ko "$what: took $((SECONDS - t0)) s"
}
app_finish() {
  echo "$pass passed, $fail failed"
  [ "$fail" -eq 0 ]
}
app_need_tools() { # app_need_tools TOOL...: each on PATH, or fail naming it
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "FAIL: $tool not installed (scripts/gz.sh deps)"; exit 1; }
  done
}
app_need_data() { # the real datasets (GZ_DATA_DIR), or skip the whole script
  if [ -z "$DATA" ] || [ ! -d "$DATA" ]; then
    echo "SKIP: real datasets not found (GZ_DATA_DIR)"; exit 77
  fi
  TREFHT=$DATA/climate_ccsm3_trefht/TREFHT.B06.57.atm.1890-1999ANN.nc
  SST=$DATA/climate_ersst_v5/sst.mnmean.nc
  SODA=$DATA/seismic_soda_lakes/soda_lakes_24x96x2048_f32le.raw
  WRF=$DATA/weather_wrf_katrina/wrf_ci_test_file.nc
}
