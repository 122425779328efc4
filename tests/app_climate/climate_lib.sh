# climate_lib.sh - what the tests/app_climate scripts share, on top of
# ../app_lib.sh. Source it, then call climate_setup GZSTACK MPIRUN TOOL...
# shellcheck source=../app_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../app_lib.sh"

# climate_setup GZSTACK MPIRUN TOOL...: GZ, MPIRUN, DATA and a scratch TMP
# removed on exit (app_scratch); the tools on PATH (else fail), the real
# datasets (else skip: TREFHT, SST, SODA, WRF); no CDO history lines
climate_setup() {
  GZ=$1 MPIRUN=$2
  shift 2
  app_scratch
  app_need_tools "$@"
  app_need_data
  export CDO_HISTORY_INFO=0
}
run() { "$MPIRUN" --oversubscribe -np "$@"; }

# missing values summed over the steps (cdo infon's Miss column)
# (the field before the second ':', as some cdo dates hold no space: yseasstd1)
nmiss() { cdo -s infon "$1" | awk 'NR > 1 { for (i = 3; i <= NF; i++) if ($i == ":") { n += $(i - 1); break } } END { print n + 0 }'; }
# the largest |value| over every step
refmax() { cdo -s output -timmax -fldmax -abs "$1" | tr -d ' '; }
# claimed FILE [VAR]: the claimed bound gzstack wrote (VAR's own, if given)
claimed() { ncdump -h "$1" | sed -n "s/.*${2:-}:gzstack_claimed_bound = \([^ ;]*\).*/\1/p"; }
# within DIFF CLAIMED REFMAX [K]: diff <= claimed + K halves (1 unless
# given) of a float32 ulp of the largest reference value (2^(floor(log2
# refmax) - 24): the reference is rounded to float32 too)
within() {
  awk -v d="$1" -v c="$2" -v m="$3" -v k="${4:-1}" 'BEGIN {
    u = 0; if (m > 0) { u = 1; while (u * 2 <= m) u *= 2; while (u > m) u /= 2; u /= 16777216 }
    exit !(d + 0 <= c + k * u) }'
}
# judge WHAT DIFF CLAIMED REFMAX FAR [K]: all three read (else a failure);
# with FAR set, the discrimination case: DIFF must lie beyond the bound;
# without, DIFF within it (K as for within). Returns 1 where the caller's
# comparison ends (a value missing, or FAR), 0 after the bound check.
judge() {
  local what=$1 d=$2 c=$3 m=$4 far=$5 k=${6:-1}
  if [ -z "$d" ] || [ -z "$c" ] || [ -z "$m" ]; then ko "$what: no difference ($d), claim ($c) or max ($m)"; return 1; fi
  if [ -n "$far" ]; then
    if within "$d" "$c" "$m"; then ko "$what: expected a difference beyond $c, got $d"; else ok; fi
    return 1
  fi
  if within "$d" "$c" "$m" "$k"; then ok; else ko "$what: |gzstack - reference| = $d > claimed $c (+ f32 of $m)"; fi
}

# gz NP OUT ARGS...: a gzstack run that must succeed; on several ranks the
# compressed ring allreduce (auto may pick the plain MPI one on a busy machine)
gz() {
  local np=$1 out=$2 algo=
  shift 2
  [ "$np" -gt 1 ] && algo="--algo ring"
  if run "$np" "$GZ" stack "$@" $algo -o "$out" --verify -q >"$TMP/out" 2>&1; then ok; else
    ko "gzstack $* (np $np) failed"; cat "$TMP/out"; fi
}

# at134 NAME REF DESCRIPTION CMP ARGS...: the run and the script's compare
# (CMP: its 4th argument, or "") at 1, 3 and 4 ranks ($TMP/NAME_NP.nc;
# $TMP/NAME.nc is the 3-rank one)
at134() {
  local name=$1 ref=$2 what=$3 cmp=$4 np
  shift 4
  for np in 1 3 4; do
    gz $np "$TMP/${name}_$np.nc" "$@"
    compare "$what np $np" "$TMP/${name}_$np.nc" "$ref" $cmp
  done
  cp "$TMP/${name}_3.nc" "$TMP/$name.nc"
}

# refused NP CODE PATTERN OUT ARGS...: gzstack stack ARGS -e 1e-3 on NP ranks
# exits with CODE, says PATTERN and writes no OUT
refused() {
  local np=$1 code=$2 pat=$3 out=$4 rc
  shift 4
  run "$np" "$GZ" stack "$@" -e 1e-3 -o "$out" -q >"$TMP/out" 2>&1
  rc=$?
  if [ $rc -eq "$code" ] && grep -q -- "$pat" "$TMP/out" && [ ! -e "$out" ]; then ok; else
    ko "$* -> exit $rc (expected $code, '$pat')"; cat "$TMP/out"; fi
}
