#!/usr/bin/env bash
# Bad input to gzstack stack / compress / decompress (see CMakeLists.txt).
# Every error case runs under `timeout 10` (times GZ_TEST_TIME_SCALE, which
# the valgrind run sets) and must: exit non-zero (not by the timeout), print
# a message matching a pattern that names the cause, not abort or crash,
# leave no rank running, and leave neither its output nor a temporary file.
# Already covered elsewhere (with the real data), not repeated here: wrong
# netCDF variable, shape/type mismatch, unknown config key, bad
# --op/--dims/--slice, existing output for stack/compress, a corrupted or
# truncated archive (tests/app_stack, tests/app_compress); a full disk for
# compress and signals (tests/app_failures).
set -u
GZ=$1 MPIRUN=$2 GEN=$3
TMP=$(mktemp -d)
trap 'chmod -R u+rwx "$TMP" 2>/dev/null; umount "$TMP/full" 2>/dev/null; rm -rf "$TMP"' EXIT
# shellcheck source=../app_lib.sh
source "$(dirname "$0")/../app_lib.sh" # ok, ko, bad (the contract above), LIMIT
M=("$MPIRUN" --oversubscribe -np) # "${M[@]}" N CMD...: on N ranks

good() { # good WHAT COMMAND...: must succeed
  local what=$1
  shift
  if timeout $((6 * LIMIT)) "$@" >"$TMP/out" 2>&1; then ok; else ko "$what: failed"; cat "$TMP/out"; fi
}

# --- inputs, all generated here ------------------------------------------
D=$TMP/in
good "generate h5" "$GEN" -o "$D/w.h5" --nx 32 --nz 16 --snapshots 3 -q
good "generate raw" "$GEN" -o "$D/w.raw" --nx 32 --nz 16 --snapshots 3 -q
good "netCDF-4 input" "${M[@]}" 1 "$GZ" -i "$D/w.h5" --var /wavefield -e 1e-4 -o "$D/w.nc" -q
good "archive" "$GZ" compress -i "$D/w.h5" --var /wavefield -e 1e-4 -o "$D/w.gzc" -q
for ext in nc h5 raw gzc; do : >"$D/empty.$ext"; done
head -c 3000 "$D/w.h5" >"$D/trunc.h5"
head -c 3000 "$D/w.nc" >"$D/trunc.nc"
head -c 1000 "$D/w.raw" >"$D/trunc.raw" # not a whole number of 16x32 snapshots
head -c 60 "$D/w.gzc" >"$D/trunc.gzc"
if command -v ncgen >/dev/null; then
  # a classic netCDF file, truncated in its header and in its data
  printf 'netcdf c {\ndimensions: time = UNLIMITED ; y = 30 ; x = 40 ;\nvariables: float t(time, y, x) ;\ndata: t = %s ;\n}\n' \
    "$(seq -s, 1 3600)" >"$D/c.cdl"
  good "ncgen classic" ncgen -b -k classic -o "$D/c.nc" "$D/c.cdl"
  head -c 100 "$D/c.nc" >"$D/trunc_header.nc"
  head -c 8000 "$D/c.nc" >"$D/trunc_data.nc"
else
  echo "note: ncgen not found; classic netCDF truncation cases not run"
fi
O=$TMP/o.nc
S=(--var /wavefield -e 1e-3 -o "$O")

# --- unusable inputs, every format, stack on 3 ranks and compress ---------
for ext in nc h5 raw; do
  bad "stack empty .$ext" "empty\.$ext: file is empty" "$O" "${M[@]}" 3 "$GZ" -i "$D/empty.$ext" \
    --dims 16x32 -e 1e-3 -o "$O"
done
bad "compress empty .h5" "empty\.h5: file is empty" "$TMP/o.gzc" "$GZ" compress \
  -i "$D/empty.h5" -e 1e-3 -o "$TMP/o.gzc"
bad "stack truncated HDF5" "trunc\.h5: .*truncated file" "$O" "${M[@]}" 3 "$GZ" -i "$D/trunc.h5" "${S[@]}"
bad "compress truncated HDF5" "trunc\.h5: .*truncated file" "$TMP/o.gzc" "$GZ" compress \
  -i "$D/trunc.h5" --var /wavefield -e 1e-3 -o "$TMP/o.gzc"
bad "stack truncated netCDF-4" "trunc\.nc: .*truncated file" "$O" "${M[@]}" 3 "$GZ" -i "$D/trunc.nc" \
  -e 1e-3 -o "$O"
bad "compress truncated raw" "trunc\.raw: size 1000 bytes is not a multiple" "$TMP/o.gzc" \
  "$GZ" compress -i "$D/trunc.raw" --dims 16x32 -e 1e-3 -o "$TMP/o.gzc"
bad "stack truncated raw" "trunc\.raw: size 1000 bytes is not a multiple" "$O" "${M[@]}" 3 "$GZ" \
  -i "$D/trunc.raw" --dims 16x32 -e 1e-3 -o "$O"
if [ -f "$D/c.nc" ]; then
  bad "stack truncated classic header" "trunc_header\.nc: truncated: the header runs past the end of the file" "$O" \
    "${M[@]}" 3 "$GZ" -i "$D/trunc_header.nc" --var t -e 1e-3 -o "$O"
  bad "stack truncated classic data" "trunc_data\.nc: truncated: 8000 bytes" "$O" \
    "${M[@]}" 3 "$GZ" -i "$D/trunc_data.nc" --var t -e 1e-3 -o "$O"
  bad "compress truncated classic data" "trunc_data\.nc: truncated: 8000 bytes" "$TMP/o.gzc" \
    "$GZ" compress -i "$D/trunc_data.nc" --var t -e 1e-3 -o "$TMP/o.gzc"
fi
bad "decompress empty archive" "empty\.gzc: not a gzstack archive" "$TMP/o.nc" \
  "$GZ" decompress -i "$D/empty.gzc" -o "$TMP/o.nc"
bad "decompress truncated archive header" "trunc\.gzc: .*(truncated|corrupt)" "$TMP/o.nc" \
  "$GZ" decompress -i "$D/trunc.gzc" -o "$TMP/o.nc"
bad "stack a directory" "in: is a directory" "$O" "${M[@]}" 3 "$GZ" -i "$D" "${S[@]}"
bad "stack missing among good" "nope\.h5: No such file" "$O" "${M[@]}" 3 "$GZ" -i "$D/w.h5" \
  "$D/nope.h5" "${S[@]}"
bad "wrong HDF5 dataset" "no dataset '/nope' \(datasets: " "$O" "${M[@]}" 3 "$GZ" -i "$D/w.h5" \
  --var /nope -e 1e-3 -o "$O"
bad "compress wrong HDF5 dataset" "no dataset '/nope'" "$TMP/o.gzc" "$GZ" compress \
  -i "$D/w.h5" --var /nope -e 1e-3 -o "$TMP/o.gzc"
cp "$D/w.h5" "$D/closed.h5"
chmod 000 "$D/closed.h5"
if [ "$(id -u)" -eq 0 ] || [ -r "$D/closed.h5" ]; then
  echo "note: running as root (permissions are not enforced): unreadable-file case not run"
else
  bad "stack unreadable" "closed\.h5: cannot read: Permission denied" "$O" "${M[@]}" 3 "$GZ" \
    -i "$D/closed.h5" "${S[@]}"
  bad "compress unreadable" "closed\.h5: cannot read: Permission denied" "$TMP/o.gzc" \
    "$GZ" compress -i "$D/closed.h5" --var /wavefield -e 1e-3 -o "$TMP/o.gzc"
fi
chmod 644 "$D/closed.h5"

# --- error bounds ------------------------------------------------------------
msg="(-e|--error-bound) [^ ]*: the error bound must be a finite number >= 0|invalid argument"
for e in nan inf -1e-3; do
  bad "stack -e $e" "$msg" "$O" "${M[@]}" 3 "$GZ" -i "$D/w.h5" --var /wavefield -e "$e" -o "$O"
done
for e in nan -inf 1e-3x; do
  bad "compress -e $e" "$msg" "$TMP/o.gzc" "$GZ" compress -i "$D/w.h5" --var /wavefield \
    -e "$e" -o "$TMP/o.gzc"
done
# -e 0 is valid: stack exact (plain MPI), compress lossless (bit for bit)
good "stack -e 0" "${M[@]}" 3 "$GZ" -i "$D/w.h5" --var /wavefield -e 0 -o "$TMP/exact.nc" --verify
grep -q "within the bound" "$TMP/out" && ok || ko "stack -e 0: not verified exact"
good "compress -e 0" "$GZ" compress -i "$D/w.raw" --dims 16x32 -e 0 -o "$TMP/l.gzc"
good "decompress -e 0" "$GZ" decompress -i "$TMP/l.gzc" -o "$TMP/l.raw"
cmp -s "$D/w.raw" "$TMP/l.raw" && ok || ko "-e 0 is not lossless"

# --- options and config files -----------------------------------------------
bad "stack unknown option" "invalid option \"--colour\"" "$O" "${M[@]}" 3 "$GZ" -i "$D/w.h5" \
  "${S[@]}" --colour red
bad "compress unknown option" "invalid option \"--colour\"" "$TMP/o.gzc" "$GZ" compress \
  -i "$D/w.h5" -e 1 -o "$TMP/o.gzc" --colour red
bad "decompress unknown option" "invalid option \"--colour\"" "$TMP/o.nc" "$GZ" decompress \
  -i "$D/w.gzc" -o "$TMP/o.nc" --colour red
bad "unknown command" "unknown command 'stak'" "" "${M[@]}" 3 "$GZ" stak -i "$D/w.h5"
bad "stack missing option value" "option \"-e\" requires an argument|missing" "$O" \
  "${M[@]}" 3 "$GZ" -i "$D/w.h5" --var /wavefield -o "$O" -e
printf '[plot]\ninput = %s\n' "$D/w.h5" >"$TMP/section.ini"
bad "config unknown section" "section.ini: unknown section \[plot\]" "$O" "${M[@]}" 3 "$GZ" \
  --config "$TMP/section.ini" -e 1 -o "$O"
printf 'input = %s\nthis line has no equals sign\n' "$D/w.h5" >"$TMP/syntax.ini"
bad "config syntax" "syntax.ini: line 2: expected \`key = value\`" "$O" "${M[@]}" 3 "$GZ" \
  --config "$TMP/syntax.ini" -e 1 -o "$O"
printf 'input = %s\nvar = /wavefield\nerror_bound = nan\noutput = %s\n' "$D/w.h5" "$O" >"$TMP/nan.ini"
bad "config NaN bound" "nan.ini: error_bound = nan: the error bound must be" "$O" "${M[@]}" 3 "$GZ" \
  --config "$TMP/nan.ini"
printf 'input = %s\nerror_bound = 1\noutput = %s\nverify = perhaps\n' "$D/w.h5" "$O" >"$TMP/bool.ini"
bad "config bad boolean" "bool.ini: verify = perhaps: use true or false" "$O" "${M[@]}" 3 "$GZ" \
  --config "$TMP/bool.ini"
bad "config is a directory" "--config $D: cannot read the file" "$O" "${M[@]}" 3 "$GZ" \
  --config "$D" -i "$D/w.h5" -e 1 -o "$O"

# --- outputs --------------------------------------------------------------------
bad "compress into a missing folder" "nodir/o\.gzc: cannot write into .*nodir: No such file" \
  "$TMP/nodir" "$GZ" compress -i "$D/w.h5" -e 1 -o "$TMP/nodir/o.gzc"
bad "decompress into a missing folder" "nodir/o\.h5: cannot write into .*nodir: No such file" \
  "$TMP/nodir" "$GZ" decompress -i "$D/w.gzc" -o "$TMP/nodir/o.h5"
good "decompress once" "$GZ" decompress -i "$D/w.gzc" -o "$TMP/d.h5"
cp "$TMP/d.h5" "$TMP/d.h5.orig"
bad "decompress over an existing output" "d\.h5 exists \(use --force" "" "$GZ" decompress \
  -i "$D/w.gzc" -o "$TMP/d.h5"
cmp -s "$TMP/d.h5" "$TMP/d.h5.orig" && ok || ko "existing output changed without --force"
bad "stack --png into a missing folder" "nodir/o\.png: cannot write into" "$O" "${M[@]}" 3 "$GZ" \
  -i "$D/w.h5" "${S[@]}" --png "$TMP/nodir/o.png"

# --- a full disk ---------------------------------------------------------------
# Two 12 MiB snapshots (2048 x 1536 float32): zeros to stack, random bits
# (incompressible, -e 0) to compress and decompress. Nothing of it fits: a
# 1 MiB tmpfs where mounting is allowed (ENOSPC), otherwise a file-size
# limit on the ranks only (EFBIG; mpirun's own shared-memory files need more
# than the limit, so it is set inside the job: 8 MiB).
head -c 25165824 /dev/zero >"$D/big0.raw"
head -c 25165824 /dev/urandom >"$D/big.raw"
good "big archive" "$GZ" compress -i "$D/big.raw" --dims 2048x1536 -e 0 -o "$D/big.gzc" -q
F=$TMP/full
mkdir -p "$F"
if mount -t tmpfs -o size=1m gzfull "$F" 2>/dev/null; then
  limit=() why="No space left on device"
  echo "note: full disk: a 1 MiB tmpfs"
else
  limit=(bash -c 'ulimit -f 8192; exec "$@"' limit) why="File too large"
  echo "note: cannot mount a tmpfs: full disk emulated with ulimit -f 8192 on the ranks"
fi
for ext in nc h5 raw; do
  bad "stack full disk (.$ext)" "o\.$ext.*$why|$why.*o\.$ext" "$F/o.$ext" "${M[@]}" 2 "${limit[@]}" \
    "$GZ" -i "$D/big0.raw" --dims 2048x1536 -e 1e-3 -o "$F/o.$ext" -q
done
for ext in nc h5; do
  bad "decompress full disk (.$ext)" "d\.$ext.*$why" "$F/d.$ext" "${M[@]}" 1 "${limit[@]}" \
    "$GZ" decompress -i "$D/big.gzc" -o "$F/d.$ext"
done
bad "compress full disk" "$why" "$F/c.gzc" "${M[@]}" 1 "${limit[@]}" "$GZ" compress -i "$D/big.raw" \
  --dims 2048x1536 -e 0 -o "$F/c.gzc"
[ -z "$(ls -A "$F")" ] && ok || ko "full disk: files left: $(ls -A "$F")"
umount "$F" 2>/dev/null

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
