#!/usr/bin/env bash
# End-to-end tests of gzstack compress / decompress (see CMakeLists.txt).
set -u
GZ=$1 CHECK=$2 MPIRUN=$3 WHOLE=$4
# shellcheck source=../app_lib.sh
source "$(dirname "$0")/../app_lib.sh"
declare -A peak
app_scratch

app_need_data

# netCDF-3 climate series, absolute bound, back to netCDF: every element checked
expect "compress TREFHT" "$GZ" compress -i "$TREFHT" --var TREFHT -e 1e-2 -o "$TMP/t.gzc" --verify
grep -q "held" "$TMP/out" && ok || ko "--verify reports the bound held"
grep -qE "ratio [0-9.]+, bit rate" "$TMP/out" && ok || ko "--verify prints ratio and bit rate"
expect "decompress TREFHT" "$GZ" decompress -i "$TMP/t.gzc" -o "$TMP/t.nc"
expect "TREFHT within 1e-2" "$CHECK" "$TREFHT" TREFHT "$TMP/t.nc" TREFHT 1e-2
# ERSST, land = missing_value -9.97e36: relative bound 1e-4 of the range of the
# valid values only (-1.8 .. 34.1 degC); the checker derives it independently
expect "compress sst" "$GZ" compress -i "$SST" --var sst -e 1e-4 --eb-mode rel -o "$TMP/s.gzc" --verify
grep -q "bound 0.00359029 = 0.0001 x range 35.9029" "$TMP/out" && ok || ko "rel: range of the valid values"
expect "decompress sst to HDF5" "$GZ" decompress -i "$TMP/s.gzc" -o "$TMP/s.h5"
expect "sst within 1e-4 x range, missing value kept" "$CHECK" "$SST" sst "$TMP/s.h5" sst rel:1e-4
# --eb-mode psnr / norm: strict bounds derived from the target; --verify and
# the checker both assert the achieved figure and every value within the bound
expect "compress sst psnr 80" "$GZ" compress -i "$SST" --var sst -e 80 --eb-mode psnr -o "$TMP/p.gzc" --verify
grep -qE "psnr 80: bound 0.00359029 = range 35.9029 x 10\^\(-80/20\); PSNR [0-9.]+ dB met" "$TMP/out" \
  && ok || { ko "--verify reports the PSNR target met"; cat "$TMP/out"; }
# the target and its absolute bound are recorded in the archive's metadata
# (read back by --verify), shown by decompress and carried to its output
grep -q "recorded (read back from $TMP/p.gzc): gzstack_eb_mode psnr, gzstack_eb_target 80, gzstack_abs_error_bound 0.0035902" \
  "$TMP/out" && ok || { ko "--verify reads the recorded psnr target back"; cat "$TMP/out"; }
expect "decompress sst psnr" "$GZ" decompress -i "$TMP/p.gzc" -o "$TMP/p.nc"
grep -q "max error 0.00359029 (recorded: --eb-mode psnr -e 80)" "$TMP/out" && ok ||
  { ko "decompress shows the recorded psnr target"; cat "$TMP/out"; }
ncdump -h "$TMP/p.nc" >"$TMP/hdr" 2>&1
grep -q 'sst:gzstack_eb_mode = "psnr"' "$TMP/hdr" && grep -q "sst:gzstack_eb_target = 80\." "$TMP/hdr" &&
  grep -q "sst:gzstack_abs_error_bound = 0.0035902" "$TMP/hdr" && ok ||
  { ko "decompressed netCDF carries the recorded target"; cat "$TMP/hdr"; }
expect "sst PSNR >= 80 dB, within range x 1e-4" "$CHECK" "$SST" sst "$TMP/p.nc" sst psnr:80
expect "compress TREFHT psnr 60" "$GZ" compress -i "$TREFHT" --var TREFHT -e 60 --eb-mode psnr -o "$TMP/tp.gzc"
expect "decompress TREFHT psnr" "$GZ" decompress -i "$TMP/tp.gzc" -o "$TMP/tp.nc"
grep -q "(recorded: --eb-mode psnr -e 60)" "$TMP/out" && ok ||
  { ko "streamed compress records the psnr target"; cat "$TMP/out"; }
expect "TREFHT PSNR >= 60 dB" "$CHECK" "$TREFHT" TREFHT "$TMP/tp.nc" TREFHT psnr:60
expect "compress soda norm 0.05" "$GZ" compress -i "$SODA" --dims 96x2048 -e 0.05 --eb-mode norm \
  -o "$TMP/sn.gzc" --verify
grep -qE "norm 0.05: bound [0-9.e-]+ = 0.05 / sqrt\(4718592\); L2 norm of error [0-9.e-]+ met" "$TMP/out" \
  && ok || { ko "--verify reports the L2 target met"; cat "$TMP/out"; }
grep -q "recorded (read back from $TMP/sn.gzc): gzstack_eb_mode norm, gzstack_eb_target 0.05," "$TMP/out" \
  && ok || { ko "--verify reads the recorded norm target back"; cat "$TMP/out"; }
expect "decompress soda norm" "$GZ" decompress -i "$TMP/sn.gzc" -o "$TMP/sn.raw"
grep -q "(recorded: --eb-mode norm -e 0.05)" "$TMP/out" && ok ||
  { ko "decompress shows the recorded norm target"; cat "$TMP/out"; }
expect "soda L2 <= 0.05" "$CHECK" "$SODA" - "$TMP/sn.raw" - norm:0.05 24x96x2048
# --fast: stream format 3 (bigger than the default archive), same strict bound
expect "compress soda --fast" "$GZ" compress -i "$SODA" --dims 96x2048 -e 1e-4 --fast \
  -o "$TMP/f.gzc" --verify
expect "compress soda default" "$GZ" compress -i "$SODA" --dims 96x2048 -e 1e-4 -o "$TMP/d.gzc"
[ "$(stat -c %s "$TMP/f.gzc")" -gt "$(stat -c %s "$TMP/d.gzc")" ] && ok \
  || ko "--fast writes the other format (bigger than the default's)"
expect "decompress soda --fast" "$GZ" decompress -i "$TMP/f.gzc" -o "$TMP/f.raw"
expect "soda --fast within 1e-4" "$CHECK" "$SODA" - "$TMP/f.raw" - 1e-4 24x96x2048
expect "compress sst --fast" "$GZ" compress -i "$SST" --var sst -e 1e-4 --eb-mode rel --fast \
  -o "$TMP/sf.gzc"
expect "decompress sst --fast" "$GZ" decompress -i "$TMP/sf.gzc" -o "$TMP/sf.h5"
expect "sst --fast within 1e-4 x range, missing value kept" "$CHECK" "$SST" sst "$TMP/sf.h5" sst rel:1e-4
expect_error "--fast with -o .nc" "archives only" "$GZ" compress -i "$SST" --var sst -e 1e-2 \
  --fast -o "$TMP/ff.nc"
expect_error "--fast on decompress" "a compress option" "$GZ" decompress -i "$TMP/sf.gzc" \
  --fast -o "$TMP/ff.raw"
expect "compress WRF norm 1" "$GZ" compress -i "$WRF" --var T -e 1 --eb-mode norm -o "$TMP/wn.gzc"
expect "decompress WRF norm" "$GZ" decompress -i "$TMP/wn.gzc" -o "$TMP/wn.nc"
expect "WRF T L2 <= 1" "$CHECK" "$WRF" T "$TMP/wn.nc" T norm:1
# raw seismic shots: --dims of one record, the shot count from the file size
expect "compress soda lakes" "$GZ" compress -i "$SODA" --dims 96x2048 --dtype f32 -e 1e-4 \
  -o "$TMP/soda.gzc"
expect "decompress soda lakes" "$GZ" decompress -i "$TMP/soda.gzc" -o "$TMP/soda.raw"
expect "soda within 1e-4" "$CHECK" "$SODA" - "$TMP/soda.raw" - 1e-4 24x96x2048
# lossless
expect "lossless WRF T" "$GZ" compress -i "$WRF" --var T -e 0 -o "$TMP/w.gzc"
expect "decompress WRF T" "$GZ" decompress -i "$TMP/w.gzc" -o "$TMP/w.nc"
expect "WRF T exact" "$CHECK" "$WRF" T "$TMP/w.nc" T 0
# Streaming: the archive is written a few chunks at a time (compress_streamed),
# and --verify reads it back from the file a few chunks at a time. Both must
# write the bytes gz_compress() writes for the whole field in one call
# (whole_stream): raw float32 and float64, netCDF, HDF5, formats 1 (--fast)
# and 2, rel/psnr bounds (a first pass for the range), several threads and
# many chunks. Decompress is streamed too (below).
perl -e 'binmode STDOUT; for $i (0..300006) { print pack("d<", sin($i * 1e-3) * 50 + ($i % 7) * 1e-3) }' \
  >"$TMP/s64.raw"
# same_stream NAME INPUT VAR|- DIMS|- f32|f64 CHUNK ARGS...: the streamed
# archive, with and without --verify, is the whole-buffer one
same_stream() {
  local name=$1 in=$2 var=$3 dims=$4 dtype=$5 chunk=$6 pred=auto
  shift 6
  local args=(-i "$in" "$@")
  [ "$var" != - ] && args+=(--var "$var")
  [ "$dims" != - ] && args+=(--dims "$dims" --dtype "$dtype")
  [ "$chunk" != 0 ] && args+=(--chunk "$chunk")
  case " $* " in *" --fast "*) pred=none ;; esac
  rm -f "$TMP/st1.gzc" "$TMP/st2.gzc"
  if "$GZ" compress "${args[@]}" -o "$TMP/st1.gzc" -q >"$TMP/out" 2>&1 &&
    "$GZ" compress "${args[@]}" -o "$TMP/st2.gzc" --verify >"$TMP/out" 2>&1 &&
    cmp -s "$TMP/st1.gzc" "$TMP/st2.gzc" &&
    "$WHOLE" "$TMP/st1.gzc" "$in" "$var" "$dims" "$dtype" "$chunk" "$pred" >>"$TMP/out" 2>&1
  then ok; else ko "streamed archive differs: $name"; cat "$TMP/out"; fi
}
for fast in "" --fast; do
  same_stream "soda rel $fast" "$SODA" - 24x96x2048 f32 0 -e 1e-4 --eb-mode rel $fast
  same_stream "soda threads $fast" "$SODA" - 24x96x2048 f32 4096 -e 1e-3 --threads 2 $fast
  same_stream "f64 $fast" "$TMP/s64.raw" - 300007 f64 8192 -e 1e-5 $fast
  same_stream "sst psnr $fast" "$SST" sst - f32 0 -e 70 --eb-mode psnr $fast
  same_stream "hdf5 $fast" "$TMP/s.h5" /sst - f32 0 -e 1e-3 $fast
  same_stream "WRF lossless $fast" "$WRF" T - f32 0 -e 0 $fast
done
for fast in "" --fast; do
  rm -f "$TMP/s64.gzc" "$TMP/s64o.raw"
  expect "compress f64 lossless $fast" "$GZ" compress -i "$TMP/s64.raw" --dims 300007 --dtype f64 \
    -e 0 --chunk 8192 $fast -o "$TMP/s64.gzc"
  expect "decompress f64 lossless $fast" "$GZ" decompress -i "$TMP/s64.gzc" -o "$TMP/s64o.raw"
  cmp -s "$TMP/s64.raw" "$TMP/s64o.raw" && ok || ko "f64 lossless round trip (streamed) $fast"
done
# Decompress streams every format: the chunks are decoded a batch at a time
# as the writer asks for the values. soda (18 batches): each format holds
# exactly the values of the raw output.
expect "compress soda for every format" "$GZ" compress -i "$SODA" --dims 96x2048 -e 1e-3 -o "$TMP/sf3.gzc"
expect "decompress soda to raw" "$GZ" decompress -i "$TMP/sf3.gzc" -o "$TMP/sf3.raw"
for ext in nc h5 sgy rsf; do
  expect "decompress soda to .$ext" "$GZ" decompress -i "$TMP/sf3.gzc" -o "$TMP/sf3.$ext"
  expect "soda .$ext holds the raw output's values" "$CHECK" "$TMP/sf3.raw" - "$TMP/sf3.$ext" - 0 24x96x2048
done
# The HDF5 filter path written a chunk at a time: a 3 x 700 x 1500 slice of
# soda has chunks of 1 x 699 x 1500 (a 1-row chunk after each), soda itself
# 5 x 96 x 2048 (the last one 4 deep); every value back within the bound,
# through the file's own reader and through --verify.
head -c $((3 * 700 * 1500 * 4)) "$SODA" >"$TMP/odd.raw"
for ext in nc h5; do
  expect "compress odd chunks to .$ext" "$GZ" compress -i "$TMP/odd.raw" --dims 3x700x1500 \
    -e 1e-3 --eb-mode rel -o "$TMP/odd.$ext" --verify
  grep -q "held" "$TMP/out" && ok || ko "odd chunks .$ext: --verify reports the bound held"
  expect "odd chunks .$ext within 1e-3 x range" "$CHECK" "$TMP/odd.raw" - "$TMP/odd.$ext" - \
    rel:1e-3 3x700x1500
  expect "compress soda to .$ext" "$GZ" compress -i "$SODA" --dims 96x2048 -e 1e-4 \
    -o "$TMP/sodaf.$ext"
  expect "soda .$ext within 1e-4" "$CHECK" "$SODA" - "$TMP/sodaf.$ext" - 1e-4 24x96x2048
done
rm -f "$TMP/odd.raw" "$TMP"/odd.* "$TMP"/sodaf.*

# Memory: a few chunks, not the field. The peak RSS of a singleton gzstack
# (python3's getrusage of its children) for a 96 MiB field and for a 32 MiB
# one (past the codec's fixed scratch, which levels off by 16 MiB) differ by
# much less than the 64 MiB between the fields (limit 32 MiB); compress -o
# .nc/.h5 too; decompress to every format, .h5 included (written into the file a
# box at a time, not built in memory: docs/cli.md, "Memory").
# Under ASan, freed blocks sit in its quarantine (256 MB) instead of being
# reused, so a writer that allocates per chunk (libhdf5's filter buffers)
# grows with the field there only: peak RSS is measured with no quarantine
# (ignored by builds without ASan).
peak_kb() {
  ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0 python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@"
}
for z in 32 96; do
  head -c $((z << 20)) /dev/zero >"$TMP/z.raw"
  peak[${z}_c]=$(peak_kb "$GZ" compress -i "$TMP/z.raw" --dims 1024 -e 1e-3 -o "$TMP/z.gzc" \
    --verify --force) || ko "compress --verify of $z MiB"
  for ext in nc h5; do # the HDF5 filter path, read back chunk by chunk
    peak[${z}_c$ext]=$(peak_kb "$GZ" compress -i "$TMP/z.raw" --dims 1024 -e 1e-3 \
      -o "$TMP/zc.$ext" --verify --force) || ko "compress -o .$ext --verify of $z MiB"
    rm -f "$TMP/zc.$ext"
  done
  for ext in raw nc sgy rsf h5; do
    peak[${z}_$ext]=$(peak_kb "$GZ" decompress -i "$TMP/z.gzc" -o "$TMP/zo.$ext") ||
      ko "decompress $z MiB to .$ext"
    rm -f "$TMP/zo.$ext"
  done
done
for k in c cnc ch5 raw nc sgy rsf h5; do
  grow=$((${peak[96_$k]:-999999} - ${peak[32_$k]:-0}))
  [ $grow -lt 32768 ] && ok || ko "peak memory $k: +$grow KiB for a field 64 MiB larger"
  echo "peak RSS $k: ${peak[32_$k]:-?} KiB (32 MiB field), ${peak[96_$k]:-?} KiB (96 MiB)"
done
rm -f "$TMP/z.raw" "$TMP/z.gzc"
# The filtered .h5 (compress -o X.h5) is written into the file a chunk at a
# time (io_hdf5.c, put_chunks), not built in memory: on random bytes (float32
# of every exponent, NaNs among them) kept lossless, which compress to about
# their own size, its peak RSS does not grow with the file (32 against 96 MiB, the
# 96 MiB field's file over 64 MiB). Built in memory, it grew by about twice
# the file (the in-memory file and its image).
for z in 32 96; do
  python3 -c 'import random, sys
random.seed(17)
sys.stdout.buffer.write(random.randbytes(int(sys.argv[1]) << 20))' $z >"$TMP/n.raw"
  peak[${z}_nh5]=$(peak_kb "$GZ" compress -i "$TMP/n.raw" --dims 1024 -e 0 -o "$TMP/n.h5" \
    --force) || ko "compress -o .h5 of $z MiB of random bytes"
  nsize=$(stat -c %s "$TMP/n.h5" 2>/dev/null || echo 0)
done
[ "$nsize" -gt $((64 << 20)) ] && ok || ko "random bytes: a filtered .h5 of $nsize bytes, not about 96 MiB"
grow=$((${peak[96_nh5]:-999999} - ${peak[32_nh5]:-0}))
[ $grow -lt 32768 ] && ok || ko "peak memory of the filtered .h5: +$grow KiB for a file 64 MiB larger"
echo "peak RSS filtered .h5 of random bytes: ${peak[32_nh5]:-?} KiB (32 MiB), ${peak[96_nh5]:-?} KiB (96 MiB; file $nsize bytes)"
rm -f "$TMP/n.raw" "$TMP/n.h5"

# A disk that fills up while .h5 outputs are written (a 24 MiB tmpfs where
# mounting is allowed): two ranks each decompress a 16 MiB field into it;
# each fits alone, so both pass the space check made before writing, but
# not both. The run fails with a message naming the file and the cause,
# exits non-zero, no rank crashes (libhdf5 1.10.8 crashed at exit after a
# failed flush: io_hdf5.c), nothing partial or temporary is left, and an
# output that was finished reads back within its bound.
F=$TMP/full
mkdir -p "$F"
trap 'umount "$F" 2>/dev/null; rm -rf "$TMP"' EXIT
if mount -t tmpfs -o size=24m gzfull "$F" 2>/dev/null; then
  head -c $((16 << 20)) /dev/zero >"$TMP/z16.raw"
  expect "16 MiB archive" "$GZ" compress -i "$TMP/z16.raw" --dims 4096x1024 -e 1e-3 \
    -o "$TMP/a.gzc" -q
  cp "$TMP/a.gzc" "$TMP/b.gzc"
  "$MPIRUN" -np 2 "$GZ" decompress -i "$TMP/a.gzc" "$TMP/b.gzc" -o "$F" --format h5 \
    >"$TMP/full.log" 2>&1 && ko "full disk .h5: exit 0" || ok
  grep -qE "[ab]\.gzc\.h5: .*No space left on device" "$TMP/full.log" && ok ||
    { ko "full disk .h5: no message naming the file and the cause"; cat "$TMP/full.log"; }
  grep -qiE "signal|segmentation|core dumped" "$TMP/full.log" &&
    { ko "full disk .h5: a rank crashed"; cat "$TMP/full.log"; } || ok
  for f in "$F"/*; do
    case $f in
    "$F/*") ;; # nothing there
    *.gzc.h5) expect "finished $f within 1e-3" "$CHECK" "$TMP/z16.raw" - "$f" - 1e-3 4096x1024 ;;
    *) ko "full disk .h5: left behind: $f" ;;
    esac
  done
  umount "$F"
  rm -f "$TMP/z16.raw" "$TMP/a.gzc" "$TMP/b.gzc"
else
  echo "note: cannot mount a tmpfs here; the full-disk .h5 case is not run"
fi

# many inputs under mpirun: one rank each, outputs in a directory
mkdir -p "$TMP/many"
expect "mpirun -np 3 compress" "$MPIRUN" -np 3 "$GZ" compress -i "$TREFHT" "$SST" "$SODA" \
  --dims 96x2048 -e 1e-3 -o "$TMP/many" -q 2>/dev/null
[ -f "$TMP/many/sst.mnmean.nc.gzc" ] && [ -f "$TMP/many/TREFHT.B06.57.atm.1890-1999ANN.nc.gzc" ] && ok || ko "one archive per input"

# errors: message names the cause, non-zero exit, nothing written
expect_error "missing input" "nope.nc" "$GZ" compress -i "$TMP/nope.nc" -e 1e-3 -o "$TMP/x.gzc"
[ ! -e "$TMP/x.gzc" ] && ok || ko "no output after a failed compress"
expect_error "wrong variable" "NOVAR" "$GZ" compress -i "$TREFHT" --var NOVAR -e 1e-3 -o "$TMP/x.gzc"
expect_error "existing output" "exists" "$GZ" compress -i "$TREFHT" --var TREFHT -e 1e-2 -o "$TMP/t.gzc"
expect_error "negative bound" "error bound" "$GZ" compress -i "$TREFHT" -e -1 -o "$TMP/x.gzc"
expect_error "psnr 0" "-e 0: the error bound is the target PSNR in dB and must be > 0 \(--eb-mode psnr\)" \
  "$GZ" compress -i "$TREFHT" -e 0 --eb-mode psnr -o "$TMP/x.gzc"
expect_error "negative norm" "-e -1: the error bound must be a finite number >= 0 \(--eb-mode norm\)" \
  "$GZ" compress -i "$TREFHT" -e -1 --eb-mode norm -o "$TMP/x.gzc"
expect_error "infinite psnr" "--eb-mode psnr" "$GZ" compress -i "$TREFHT" -e inf --eb-mode psnr -o "$TMP/x.gzc"
expect_error "unknown mode" "--eb-mode l3: use abs, rel, psnr or norm" \
  "$GZ" compress -i "$TREFHT" -e 1 --eb-mode l3 -o "$TMP/x.gzc"
expect_error "--fast to HDF5" "-o $TMP/x.h5: --fast writes .gzc archives only" \
  "$GZ" compress -i "$TREFHT" -e 1e-2 --fast -o "$TMP/x.h5"
expect "compress TREFHT to filtered HDF5" "$GZ" compress -i "$TREFHT" --var TREFHT -e 1e-2 -o "$TMP/t.h5"
expect_error "existing HDF5 output" "t.h5.*exists" "$GZ" compress -i "$TREFHT" --var TREFHT -e 1e-3 -o "$TMP/t.h5"
expect "--force replaces it" "$GZ" compress -i "$TREFHT" --var TREFHT -e 1e-3 -o "$TMP/t.h5" --force
expect "filtered HDF5 within 1e-3 (read in-process)" "$CHECK" "$TREFHT" TREFHT "$TMP/t.h5" /TREFHT 1e-3
expect_error "wrong variable to HDF5" "NOVAR" "$GZ" compress -i "$TREFHT" --var NOVAR -e 1e-3 -o "$TMP/x.h5"
[ ! -e "$TMP/x.h5" ] && ok || ko "no HDF5 output after a failed compress"
expect_error "bad dims" "--dims" "$GZ" compress -i "$SODA" --dims 96xZ -e 1e-3 -o "$TMP/x.gzc"
head -c 1000 "$TMP/t.gzc" >"$TMP/trunc.gzc"
expect_error "truncated archive" "corrupt|truncat" "$GZ" decompress -i "$TMP/trunc.gzc" -o "$TMP/x.nc"
cp "$TMP/t.gzc" "$TMP/flip.gzc"
printf '\x55' | dd of="$TMP/flip.gzc" bs=1 seek=5000 conv=notrunc status=none
expect_error "corrupted archive" "corrupt" "$GZ" decompress -i "$TMP/flip.gzc" -o "$TMP/x.nc"
# a chunk count of 2^31 in the stream header: refused before anything that size is allocated
msize=$(od -An -t u8 -j 8 -N 8 "$TMP/t.gzc" | tr -d ' ')
cp "$TMP/t.gzc" "$TMP/count.gzc"
printf '\xff\xff\xff\x7f' | dd of="$TMP/count.gzc" bs=1 seek=$((20 + msize + 36)) conv=notrunc status=none
expect_error "huge chunk count" "corrupt" "$GZ" decompress -i "$TMP/count.gzc" -o "$TMP/x.raw"
echo "not an archive" >"$TMP/junk.gzc"
expect_error "not an archive" "not a gzstack archive" "$GZ" decompress -i "$TMP/junk.gzc" -o "$TMP/x.nc"
[ ! -e "$TMP/x.nc" ] && [ ! -e "$TMP/x.raw" ] && ok || ko "no output after a failed decompress"
ls "$TMP" | grep -q "tmp-" && ko "temporary files left behind" || ok

app_finish
