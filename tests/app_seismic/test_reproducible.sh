#!/usr/bin/env bash
# --reproducible end to end (docs/design.md, "Partition-independent
# stacks"): for each case, gzstack at 1, 2, 3 and 4 ranks with -e > 0 writes
# the same output bytes (cmp), and every value lies within the claimed bound
# of an independent double-precision stack:
#   seismic  soda-lakes shots written as SEG-Y (mean, sum, max), generated
#            CDP gathers (sustack key=cdp, live normalisation) and the F3
#            cube keyed by crossline (traces split across ranks):
#            python3-segyio + numpy (seismic_check.py);
#   climate  TREFHT (mean, sum) and ERSST with its missing values (mean, max,
#            --group month): check_stack's own stack of the inputs.
# Discrimination: without --reproducible the 1- and 3-rank outputs differ
# (the comparison can fail). Refused combinations name --reproducible and
# leave no output. The history date comes from SOURCE_DATE_EPOCH.
set -u
GZ=$1 MPIRUN=$2 PY=$3 CHECK=$4 CHECK_STACK=$5
# shellcheck source=../app_lib.sh
source "$(dirname "$0")/../app_lib.sh"
app_scratch
app_need_data # TREFHT, SST, SODA
export SOURCE_DATE_EPOCH=1700000000
if ! "$PY" -c "import segyio, numpy" 2>/dev/null; then
  echo "SKIP: python3-segyio / numpy not found for $PY"; exit 77
fi
F3=$DATA/seismic_f3_cube/f3_Format5msb_ieee.sgy
D=$TMP/in
mkdir -p "$D"
expect "generate SEG-Y shots" "$PY" "$CHECK" gen "$SODA" "$D" 4

# same NAME OUT ARGS...: run at 1, 2, 3, 4 ranks, each in its own folder
# (the same command line, so the same provenance), then cmp with 1 rank
same() {
  local name=$1 out=$2 np
  shift 2
  for np in 1 2 3 4; do
    mkdir -p "$TMP/$name/np$np"
    (cd "$TMP/$name/np$np" &&
      "$MPIRUN" --oversubscribe -np $np "$GZ" stack "$@" -o "$out" -q --force \
        --metrics m.json) >"$TMP/out" 2>&1 || { ko "$name np$np"; cat "$TMP/out"; return 1; }
  done
  for np in 2 3 4; do
    if cmp "$TMP/$name/np1/$out" "$TMP/$name/np$np/$out"; then ok; else ko "$name: np$np differs from np1"; fi
  done
  grep -q '"reproducible": true' "$TMP/$name/np1/m.json" && ok || ko "$name: metrics say reproducible"
}

# --- seismic --------------------------------------------------------------
same seis_mean s.sgy -i "$D"/ieee_?.sgy -e 1e-3 --reproducible
expect "seis mean vs numpy" "$PY" "$CHECK" stack mean 1e-3 "$TMP/seis_mean/np1/s.sgy" "$D"/ieee_?.sgy
same seis_sum s.sgy -i "$D"/ibm_?.sgy -e 1e-3 --op sum --reproducible
expect "seis sum vs numpy" "$PY" "$CHECK" stack sum 1e-3 "$TMP/seis_sum/np1/s.sgy" "$D"/ibm_?.sgy
same seis_max s.sgy -i "$D"/lsb_?.sgy -e 1e-2 --op max --reproducible
expect "seis max vs numpy" "$PY" "$CHECK" stack max 1e-2 "$TMP/seis_max/np1/s.sgy" "$D"/lsb_?.sgy
# generated CDP gathers in three files (IEEE both byte orders, IBM; mutes and
# dead traces): sustack key=cdp with live-sample normalisation
expect "generate cdp gathers" "$PY" "$CHECK" gengathers "$D"
same cdp_live k.sgy -i "$D"/g0.sgy "$D"/g1.sgy "$D"/g2.sgy --key cdp --normalize live \
  -e 1e-3 --reproducible
expect "--key cdp live vs numpy" "$PY" "$CHECK" keystack cdp live mean 1e-3 \
  "$TMP/cdp_live/np1/k.sgy" "$D"/g0.sgy "$D"/g1.sgy "$D"/g2.sgy
same cdp_rms k.sgy -i "$D"/g0.sgy "$D"/g1.sgy "$D"/g2.sgy --key cdp --op rms -e 1e-3 --reproducible
expect "--key cdp rms vs numpy" "$PY" "$CHECK" keystack cdp fold rms 1e-3 \
  "$TMP/cdp_rms/np1/k.sgy" "$D"/g0.sgy "$D"/g1.sgy "$D"/g2.sgy
if [ -f "$F3" ]; then
  # 414 traces, 18 crosslines of 23 traces; integer-valued samples, so e =
  # 3 (h = 4) leaves errors to check
  same f3_key k.sgy -i "$F3" --key xline -e 3 --reproducible
  expect "F3 --key xline vs numpy" "$PY" "$CHECK" keystack xline fold mean 3 \
    "$TMP/f3_key/np1/k.sgy" "$F3"
  same f3_keysum k.sgy -i "$F3" --key xline --op sum -e 30 --reproducible
  expect "F3 --key xline sum vs numpy" "$PY" "$CHECK" keystack xline fold sum 30 \
    "$TMP/f3_keysum/np1/k.sgy" "$F3"
fi

# --- climate --------------------------------------------------------------
# check NAME OP OUT INPUT: check_stack against the 3-rank run (--verify)
check() {
  (cd "$TMP/$1/np3" && "$CHECK_STACK" -o "$3" -j m.json -n 3 --op "$2" "$4") >"$TMP/out" 2>&1 &&
    ok || { ko "$1 vs check_stack"; cat "$TMP/out"; }
}
same trefht_mean t.nc -i "$TREFHT" -e 1e-3 --reproducible --verify
check trefht_mean mean t.nc "$TREFHT"
same trefht_sum t.nc -i "$TREFHT" -e 1e-2 --op sum --reproducible --verify
check trefht_sum sum t.nc "$TREFHT"
same sst_mean s.nc -i "$SST" -e 1e-3 --reproducible --verify
check sst_mean mean s.nc "$SST"
same sst_max s.nc -i "$SST" -e 1e-2 --op max --reproducible --verify
check sst_max max s.nc "$SST"
same sst_month s.nc -i "$SST" -e 1e-3 --group month --reproducible --verify
grep -q '"within_bound": true' "$TMP/sst_month/np4/m.json" && ok || ko "sst_month within"

# var / std / rms (two passes, each reproducible) against CDO / NCO
# (their float32 output: the claim plus half an ulp of the largest value)
if command -v cdo >/dev/null && command -v ncra >/dev/null; then
  export CDO_HISTORY_INFO=0
  claimed() { ncdump -h "$1" | sed -n 's/.*:gzstack_claimed_bound = \([^ ;]*\).*/\1/p'; }
  near_ref() { # WHAT OUT REF
    local d c m
    d=$(cdo -s output -fldmax -abs -sub "$2" "$3" | tr -d ' ')
    m=$(cdo -s output -fldmax -abs "$3" | tr -d ' ')
    c=$(claimed "$2")
    if awk -v d="$d" -v c="$c" -v m="$m" 'BEGIN { u = 1; while (u * 2 <= m) u *= 2; while (u > m) u /= 2;
      exit !(d != "" && c != "" && d + 0 <= c + u / 16777216) }'; then ok; else ko "$1: |diff| $d > claimed $c"; fi
  }
  cdo -s timstd1 "$SST" "$TMP/ref_std1.nc" && cdo -s timvar -selvar,TREFHT "$TREFHT" "$TMP/ref_var.nc" &&
    ncra -O -y rms -v TREFHT "$TREFHT" "$TMP/ref_rms.nc" || ko "cdo / ncra references"
  same sst_std1 s.nc -i "$SST" -e 1e-2 --op std1 --reproducible --verify
  near_ref "sst std1 (cdo timstd1)" "$TMP/sst_std1/np3/s.nc" "$TMP/ref_std1.nc"
  same trefht_var t.nc -i "$TREFHT" --var TREFHT -e 1e-3 --op var --reproducible --verify
  near_ref "TREFHT var (cdo timvar)" "$TMP/trefht_var/np4/t.nc" "$TMP/ref_var.nc"
  same trefht_rms t.nc -i "$TREFHT" --var TREFHT -e 1e-3 --op rms --reproducible --verify
  near_ref "TREFHT rms (ncra -y rms)" "$TMP/trefht_rms/np2/t.nc" "$TMP/ref_rms.nc"
fi

# --- the comparison can fail: the compressed partial sums differ ------------
for np in 1 3; do
  mkdir -p "$TMP/plain/np$np"
  (cd "$TMP/plain/np$np" && "$MPIRUN" --oversubscribe -np $np "$GZ" stack -i "$TREFHT" \
    -e 1e-3 --algo ring -o t.nc -q) || ko "plain np$np"
done
if cmp -s "$TMP/plain/np1/t.nc" "$TMP/plain/np3/t.nc"; then
  ko "without --reproducible the 1- and 3-rank outputs are identical: the check cannot fail"
else ok; fi

# --- refused combinations ----------------------------------------------------
for bad in "-e 0" "-e 1e-3 --eb-mode rel" "-e 1e-3 --file-weights 1" "-e 1e-3 --weights 1" \
  "-e 1e-3 --read root" "-e 1e-3 --bound per-message"; do
  # shellcheck disable=SC2086
  expect_error "--reproducible $bad" "reproducible" "$MPIRUN" --oversubscribe -np 2 "$GZ" \
    stack -i "$TREFHT" $bad --reproducible -o "$TMP/bad.nc" -q
  no_output "--reproducible $bad" "$TMP/bad.nc"
done
app_finish
