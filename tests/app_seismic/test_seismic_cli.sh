#!/usr/bin/env bash
# SEG-Y and RSF end to end (see CMakeLists.txt). Independent side:
# seismic_check.py (python3-segyio + numpy).
set -u
GZ=$1 MPIRUN=$2 PY=$3 CHECK=$4
# shellcheck source=../app_lib.sh
source "$(dirname "$0")/../app_lib.sh" # ok, ko, bad, app_scratch
app_scratch
M=("$MPIRUN" --oversubscribe -np)
good() { # good WHAT COMMAND...: must succeed
  local what=$1
  shift
  if "$@" >"$TMP/out" 2>&1; then ok; else ko "$what"; cat "$TMP/out"; fi
}

if ! "$PY" -c "import segyio, numpy" 2>/dev/null; then
  echo "SKIP: python3-segyio / numpy not found for $PY"; exit 77
fi
F3=$DATA/seismic_f3_cube/f3_Format5msb_ieee.sgy
SODA=$DATA/seismic_soda_lakes/soda_lakes_24x96x2048_f32le.raw
if [ ! -f "$F3" ] || [ ! -f "$SODA" ]; then
  echo "SKIP: the F3 and soda-lakes data are not in GZ_DATA_DIR"; exit 77
fi
D=$TMP/in
mkdir -p "$D"
good "generate SEG-Y and RSF" "$PY" "$CHECK" gen "$SODA" "$D" 4
"$PY" -c "import numpy as np; np.load('$D/shots.npy').astype('<f4').tofile('$D/shots.raw')"

# --- reading: every value bit for bit as segyio decodes it -----------------
# (the mean of one image with -e 0 is the image itself)
for k in ibm ieee lsb i16; do
  good "read $k" "$GZ" stack -i "$D/${k}_1.sgy" -e 0 -o "$TMP/x_$k.raw" -q
  good "$k bit-exact" "$PY" "$CHECK" exact "$D/${k}_1.sgy" "$TMP/x_$k.raw"
done
good "read F3" "$GZ" stack -i "$F3" -e 0 -o "$TMP/f3.nc" -q
good "F3 bit-exact" "$GZ" stack -i "$F3" -e 0 -o "$TMP/f3.raw" -q
good "F3 values" "$PY" "$CHECK" exact "$F3" "$TMP/f3.raw"
# the cube's geometry: inline x crossline x time, line numbers as coordinates
if command -v ncdump >/dev/null; then
  ncdump -h "$TMP/f3.nc" >"$TMP/f3.cdl"
  grep -q "float amplitude(inline, crossline, time)" "$TMP/f3.cdl" && ok || ko "F3 shape"
  grep -q "inline = 23 ;" "$TMP/f3.cdl" && grep -q "crossline = 18 ;" "$TMP/f3.cdl" && ok ||
    ko "F3 23 x 18 lines"
  ncdump -v inline,time "$TMP/f3.nc" | tr -d ' \n' | grep -q "inline=111,112,113" && ok ||
    ko "F3 inline numbers"
  ncdump -v time "$TMP/f3.nc" | tr -d ' \n' | grep -q "time=4,8,12" && ok || ko "F3 times (ms)"
fi

# a crossline-sorted cube keeps the file's order: [crossline][inline][time]
"$PY" -c "
import segyio, numpy as np
spec = segyio.spec(); spec.sorting = 1; spec.format = 5; spec.samples = list(range(10))
spec.ilines = [1, 2, 3]; spec.xlines = [10, 11]
with segyio.create('$D/xl.sgy', spec) as f:
    t = 0
    for x in spec.xlines:
        for i in spec.ilines:
            f.header[t] = {segyio.su.iline: i, segyio.su.xline: x}
            f.trace[t] = np.arange(10, dtype=np.float32) + 100 * i + 1000 * x
            t += 1
    f.bin.update(hdt=4000)"
good "read crossline-sorted" "$GZ" stack -i "$D/xl.sgy" -e 0 -o "$TMP/xl.raw" -q
good "crossline-sorted bit-exact" "$PY" "$CHECK" exact "$D/xl.sgy" "$TMP/xl.raw"
if command -v ncdump >/dev/null; then
  good "crossline-sorted to netCDF" "$GZ" stack -i "$D/xl.sgy" -e 0 -o "$TMP/xl.nc" -q
  ncdump -h "$TMP/xl.nc" | grep -q "float amplitude(crossline, inline, time)" && ok ||
    ko "crossline-sorted shape"
fi

# --- image stacks: numpy within the bound, headers kept, 1/3/4 ranks -------
for k in ibm ieee lsb i16; do
  for np in 1 3 4; do
    good "stack $k np$np" "${M[@]}" $np "$GZ" -i "$D/${k}_"?.sgy -e 1e-3 -o "$TMP/s_${k}_$np.sgy" -q
  done
  # at every rank count: within the bound of numpy, headers kept. (The
  # quantized partial sums depend on the rank count, so the samples may
  # differ between rank counts, each within the bound; within one run every
  # rank holds the same bytes: tests/coll.)
  for np in 1 3 4; do
    good "stack $k np$np vs numpy" "$PY" "$CHECK" stack mean 1e-3 "$TMP/s_${k}_$np.sgy" "$D/${k}_"?.sgy
  done
done
# rank 0 reads and scatters; slabs smaller than a trace; both byte orders mixed
good "stack ibm --read root" "${M[@]}" 3 "$GZ" -i "$D/ibm_"?.sgy --read root -e 1e-3 -o "$TMP/root.sgy" -q
good "--read root vs numpy" "$PY" "$CHECK" stack mean 1e-3 "$TMP/root.sgy" "$D/ibm_"?.sgy
good "stack slabs, mixed byte order" "${M[@]}" 3 "$GZ" -i "$D/ibm_"?.sgy "$D/lsb_"?.sgy --slab-mb 0.01 \
  -e 1e-3 -o "$TMP/slab.sgy" -q
good "slabs vs numpy" "$PY" "$CHECK" stack mean 1e-3 "$TMP/slab.sgy" "$D/ibm_"?.sgy "$D/lsb_"?.sgy
for op in max min sum; do
  good "stack ibm $op" "${M[@]}" 3 "$GZ" -i "$D/ibm_"?.sgy --op $op -e 1e-2 -o "$TMP/o_$op.sgy" -q
  good "stack ibm $op vs numpy" "$PY" "$CHECK" stack $op 1e-2 "$TMP/o_$op.sgy" "$D/ibm_"?.sgy
done
# F3 volumes: three copies of the cube stack into the cube
cp "$F3" "$D/f3b.sgy"
cp "$F3" "$D/f3c.sgy"
good "stack F3 np3" "${M[@]}" 3 "$GZ" -i "$F3" "$D/f3b.sgy" "$D/f3c.sgy" -e 1e-2 -o "$TMP/f3s.sgy" -q
good "stack F3 vs numpy" "$PY" "$CHECK" stack mean 1e-2 "$TMP/f3s.sgy" "$F3" "$D/f3b.sgy" "$D/f3c.sgy"
# Debian's segyio tools read the outputs
if command -v segyio-catb >/dev/null; then
  segyio-catb "$TMP/f3s.sgy" | grep -qE "^format[[:space:]]+5$" && ok || ko "segyio-catb format"
  segyio-catb "$TMP/s_ibm_3.sgy" | grep -qE "^hns[[:space:]]+2048$" && ok || ko "segyio-catb hns"
  segyio-catr -t 1 "$TMP/f3s.sgy" | grep -qE "^iline[[:space:]]+111$" && ok || ko "segyio-catr iline"
  segyio-catr -t 96 "$TMP/s_ieee_3.sgy" | grep -qE "^tracl[[:space:]]+96$" && ok || ko "segyio-catr tracl"
else
  echo "note: segyio-catb not found (Debian segyio-bin): tool checks not run"
fi

# --- key-based stacking (sustack key=cdp) -----------------------------------
# generated CDP gathers over three files (IEEE big/little-endian, IBM), mutes
# and dead traces as zeros: every output trace checked against numpy's group
# mean (fold or live-sample normalised), the headers against the first trace
good "generate cdp gathers" "$PY" "$CHECK" gengathers "$D"
G3=("$D/g0.sgy" "$D/g1.sgy" "$D/g2.sgy")
for np in 1 3 4; do
  good "--key live np$np" "${M[@]}" $np "$GZ" -i "${G3[@]}" --key cdp --normalize live \
    --algo ring -e 1e-3 -o "$TMP/kl_$np.sgy" -q
  good "--key live np$np vs numpy" "$PY" "$CHECK" keystack cdp live mean 1e-3 "$TMP/kl_$np.sgy" "${G3[@]}"
  # exact (-e 0): the same bytes at every rank count
  good "--key exact np$np" "${M[@]}" $np "$GZ" -i "${G3[@]}" --key 21 --normalize live -e 0 \
    -o "$TMP/k0_$np.sgy" -q
done
# (the textual header's claimed bound counts the ranks: binary header on)
same_from_3201() { cmp -s <(tail -c +3201 "$1") <(tail -c +3201 "$2"); }
same_from_3201 "$TMP/k0_1.sgy" "$TMP/k0_3.sgy" && same_from_3201 "$TMP/k0_1.sgy" "$TMP/k0_4.sgy" &&
  ok || ko "--key -e 0: outputs differ between 1, 3 and 4 ranks"
good "--key exact vs numpy" "$PY" "$CHECK" keystack cdp live mean 0 "$TMP/k0_4.sgy" "${G3[@]}"
good "--key fold" "${M[@]}" 3 "$GZ" -i "${G3[@]}" --key CDP --algo ring -e 1e-3 -o "$TMP/kf.sgy" -q
good "--key fold vs numpy" "$PY" "$CHECK" keystack cdp fold mean 1e-3 "$TMP/kf.sgy" "${G3[@]}"
for op in max rms; do
  good "--key $op" "${M[@]}" 3 "$GZ" -i "${G3[@]}" --key cdp --op $op -e 1e-3 -o "$TMP/k_$op.sgy" -q
  good "--key $op vs numpy" "$PY" "$CHECK" keystack cdp fold $op 1e-3 "$TMP/k_$op.sgy" "${G3[@]}"
done
good "--key --scale" "${M[@]}" 3 "$GZ" -i "${G3[@]}" --key cdp --normalize live --scale 1,-0.5,2 \
  --algo ring -e 1e-3 -o "$TMP/kscale.sgy" -q
good "--key --scale vs numpy" "$PY" "$CHECK" keystack --scale=1,-0.5,2 cdp live mean 1e-3 \
  "$TMP/kscale.sgy" "${G3[@]}"
# IBM output (--segy-format ibm): segyio reads it back within E + 2^-20 |value|
good "--key IBM out" "${M[@]}" 3 "$GZ" -i "${G3[@]}" --key cdp --normalize live --algo redoub \
  --segy-format ibm -e 1e-3 -o "$TMP/kibm.sgy" -q
good "--key IBM out vs numpy" "$PY" "$CHECK" keystack cdp live mean 1e-3 "$TMP/kibm.sgy" "${G3[@]}"
good "IBM out little-endian" "${M[@]}" 4 "$GZ" -i "$D/lsb_"?.sgy --segy-format ibm -e 1e-3 \
  -o "$TMP/sibm.sgy" -q
good "IBM out little-endian vs numpy" "$PY" "$CHECK" ibmstack mean 1e-3 "$TMP/sibm.sgy" "$D/lsb_"?.sgy
good "IBM in, IBM out" "$GZ" -i "$D/ibm_0.sgy" --segy-format ibm -e 0 -o "$TMP/ibm1.sgy" -q
good "IBM in, IBM out: samples" "$PY" "$CHECK" ibmstack mean 0 "$TMP/ibm1.sgy" "$D/ibm_0.sgy"
# IBM values are float32 values: IBM in, -e 0, IBM out gives back the same
# bytes after the textual header
cmp -s <(tail -c +3201 "$D/ibm_0.sgy") <(tail -c +3201 "$TMP/ibm1.sgy") && ok ||
  ko "IBM in, IBM out: binary header, trace headers and samples not byte-identical"
good "IBM provenance in C36" "$PY" -c "
import segyio
with segyio.open('$TMP/ibm1.sgy', ignore_geometry=True) as f:
    assert b'MEAN OF 1 IMAGES, STRICT BOUND, IBM SAMPLES' in f.text[0].upper(), f.text[0][2800:]"
if command -v segyio-catb >/dev/null; then
  segyio-catb "$TMP/kibm.sgy" | grep -qE "^format[[:space:]]+1$" && ok || ko "segyio-catb IBM format"
fi
# soda-lakes shots (IBM, cdp = shot + 2 channel) into CDP gathers; by shot
good "--key soda np3" "${M[@]}" 3 "$GZ" -i "$D/ibm_"?.sgy --key cdp --normalize live -e 1e-3 \
  -o "$TMP/ksoda.sgy" -q
good "--key soda vs numpy" "$PY" "$CHECK" keystack cdp live mean 1e-3 "$TMP/ksoda.sgy" "$D/ibm_"?.sgy
good "--key fldr" "${M[@]}" 4 "$GZ" -i "$D/ieee_"?.sgy --key FieldRecord --op sum -e 1e-2 \
  -o "$TMP/kfldr.sgy" -q
good "--key fldr vs numpy" "$PY" "$CHECK" keystack fldr fold sum 1e-2 "$TMP/kfldr.sgy" "$D/ieee_"?.sgy
if command -v segyio-catr >/dev/null; then
  segyio-catr -t 3 "$TMP/kl_3.sgy" | grep -qE "^nhs[[:space:]]+3$" && ok || ko "segyio-catr nhs"
  segyio-catb "$TMP/kl_3.sgy" | grep -qE "^hns[[:space:]]+120$" && ok || ko "segyio-catb key stack"
fi

# --- sections (--png, --png-section) ------------------------------------------
# a cube positive above 80 ms and negative below: inline and crossline
# sections are drawn with time down in the diverging map; a time slice; a
# key stack's section
good "generate cube" "$PY" "$CHECK" gencube "$D/cube.sgy"
for s in inline=3 crossline=12; do
  good "section $s" "$GZ" -i "$D/cube.sgy" -e 1e-3 -o "$TMP/c.sgy" --force \
    --png "$TMP/c_$s.png" --png-section $s -q
  good "section $s: time down, diverging" "$PY" "$CHECK" section "$TMP/c_$s.png"
done
good "time slice" "$GZ" -i "$D/cube.sgy" -e 1e-3 -o "$TMP/c.nc" --png "$TMP/ct.png" \
  --png-section time=40 -q
[ -s "$TMP/ct.png" ] && ok || ko "time slice: no PNG"
good "key stack section" "$GZ" -i "${G3[@]}" --key cdp -e 1e-3 -o "$TMP/ks.sgy" \
  --png "$TMP/ks.png" -q
good "key stack section: time down" "$PY" "$CHECK" tall "$TMP/ks.png"

# --- compress / decompress keeps the headers --------------------------------
for src in "$F3" "$D/ieee_0.sgy" "$D/lsb_0.sgy"; do
  b=$(basename "$src" .sgy)
  good "compress $b" "$GZ" compress -i "$src" -e 1e-3 -o "$TMP/$b.gzc" -q
  good "decompress $b" "$GZ" decompress -i "$TMP/$b.gzc" -o "$TMP/$b.back.sgy" -q
  good "$b headers byte-identical" "$PY" "$CHECK" headers "$src" "$TMP/$b.back.sgy"
  good "$b samples within 1e-3" "$PY" "$CHECK" samples "$src" "$TMP/$b.back.sgy" 1e-3
done
# IBM: decompressed as IEEE (IBM rounding would break the bound); every
# header byte but the format code (3225-3226) kept
good "compress ibm" "$GZ" compress -i "$D/ibm_0.sgy" -e 1e-3 -o "$TMP/ibm.gzc" -q
good "decompress ibm" "$GZ" decompress -i "$TMP/ibm.gzc" -o "$TMP/ibm.back.sgy" -q
cmp -s <(head -c 3224 "$D/ibm_0.sgy") <(head -c 3224 "$TMP/ibm.back.sgy") && ok || ko "ibm text/binary"
cmp -s <(tail -c +3227 "$D/ibm_0.sgy" | head -c 374) <(tail -c +3227 "$TMP/ibm.back.sgy" | head -c 374) &&
  ok || ko "ibm binary header after the format code"
good "ibm samples within 1e-3" "$PY" "$CHECK" samples "$D/ibm_0.sgy" "$TMP/ibm.back.sgy" 1e-3

# two extended textual headers (revision 1): read, and kept by decompress
"$PY" -c "
import segyio, numpy as np
spec = segyio.spec(); spec.format = 1; spec.samples = list(range(20)); spec.tracecount = 5
spec.ext_headers = 2
with segyio.create('$D/ext.sgy', spec) as f:
    for t in range(5):
        f.header[t] = {segyio.su.tracl: t + 1}
        f.trace[t] = np.arange(20, dtype=np.float32) * (t + 1)
    f.bin.update(hdt=2000, exth=2, rev=1)
    f.text[1] = b'C 1 EXTENDED ONE'.ljust(3200)
    f.text[2] = b'C 1 EXTENDED TWO'.ljust(3200)"
good "read extended headers" "$GZ" stack -i "$D/ext.sgy" -e 0 -o "$TMP/ext.raw" -q
good "extended headers: values" "$PY" "$CHECK" exact "$D/ext.sgy" "$TMP/ext.raw"
good "compress ext" "$GZ" compress -i "$D/ext.sgy" -e 1e-3 -o "$TMP/ext.gzc" -q
good "decompress ext" "$GZ" decompress -i "$TMP/ext.gzc" -o "$TMP/ext.back.sgy" -q
good "ext: every header byte but the format code" "$PY" -c "
a = open('$D/ext.sgy', 'rb').read(); b = open('$TMP/ext.back.sgy', 'rb').read()
assert len(a) == len(b) and a[:3224] == b[:3224] and a[3226:10000] == b[3226:10000]
assert all(a[10000 + t * 320:10240 + t * 320] == b[10000 + t * 320:10240 + t * 320] for t in range(5))
print('ok: textual, binary, 2 extended and 5 trace headers kept')"

# --- Madagascar RSF -----------------------------------------------------------
for np in 1 3; do
  good "stack RSF np$np" "${M[@]}" $np "$GZ" -i "$D/soda.rsf" -e 1e-3 -o "$TMP/r$np.rsf" -q
done
good "RSF vs numpy" "$PY" "$CHECK" rsfstack mean 1e-3 "$TMP/r3.rsf" "$D/shots.raw" 4x96x2048
good "stack xdr RSF" "${M[@]}" 4 "$GZ" -i "$D/sodaxdr.rsf" --op max -e 1e-3 -o "$TMP/rx.sgy" -q
good "xdr RSF to SEG-Y" "$PY" -c "
import segyio, numpy as np
with segyio.open('$TMP/rx.sgy', ignore_geometry=True) as f:
    got = f.trace.raw[:].astype(np.float64)
ref = np.load('$D/shots.npy').astype(np.float64).max(axis=0)
e = np.abs(got - ref).max()
assert e <= 1e-3 * 1.0001, e
print('ok: xdr RSF max -> SEG-Y, error', e)"
# sfstack equivalents on a muted cube (zeros above a time growing with the
# trace, dead traces): norm=y (the default: divide by the non-zero count),
# norm=n, rms=y, scale=
good "muted RSF cube" "$PY" "$CHECK" genmute "$D/shots.raw" 4x96x2048 "$D/mute.rsf"
for np in 1 4; do
  good "sfstack norm np$np" "${M[@]}" $np "$GZ" -i "$D/mute.rsf" --normalize live --algo ring \
    -e 1e-3 -o "$TMP/mn$np.rsf" -q
  good "sfstack norm np$np vs numpy" "$PY" "$CHECK" sfstack norm - 1e-3 "$TMP/mn$np.rsf" "$D/mute.rsf.npy"
done
good "sfstack rms=y scale=" "${M[@]}" 4 "$GZ" -i "$D/mute.rsf" --op rms --normalize live \
  --scale 1,2,0.5,-1 --algo ring -e 1e-3 -o "$TMP/mr.rsf" -q
good "sfstack rms=y scale= vs numpy" "$PY" "$CHECK" sfstack rms 1,2,0.5,-1 1e-3 "$TMP/mr.rsf" "$D/mute.rsf.npy"
good "sfstack norm=n scale=" "${M[@]}" 3 "$GZ" -i "$D/mute.rsf" --op sum --scale 1,2,0.5,-1 \
  --algo redoub -e 1e-3 -o "$TMP/ms.rsf" -q
good "sfstack norm=n scale= vs numpy" "$PY" "$CHECK" sfstack sum 1,2,0.5,-1 1e-3 "$TMP/ms.rsf" "$D/mute.rsf.npy"
# SEG-Y to RSF: the time axis in ms from the SEG-Y headers
good "SEG-Y to RSF" "$GZ" stack -i "$D/ieee_0.sgy" -e 0 -o "$TMP/g.rsf" -q
grep -aq 'n1=2048 d1=0.25 o1=0 label1="time" unit1="ms"' "$TMP/g.rsf" && ok || ko "RSF axis 1 from SEG-Y"

# --- bad input ------------------------------------------------------------------
O=$TMP/bad.sgy
printf 'C 1 this is not seismic at all\n%.0s' $(seq 100) >"$D/text.sgy"
bad "not SEG-Y" "text\.sgy: not a SEG-Y file" "$O" "${M[@]}" 3 "$GZ" -i "$D/text.sgy" -e 1e-3 -o "$O"
head -c 1000 "$F3" >"$D/short.sgy"
bad "shorter than the headers" "short\.sgy: not a SEG-Y file: 1000 bytes" "$O" \
  "$GZ" -i "$D/short.sgy" -e 1e-3 -o "$O"
head -c $((3600 + 95 * 8432 + 1000)) "$D/ieee_0.sgy" >"$D/trunc.sgy"
bad "truncated trace" "trunc\.sgy: truncated trace 96: 1000 of its 8432 bytes" "$O" \
  "${M[@]}" 3 "$GZ" -i "$D/ieee_0.sgy" "$D/trunc.sgy" -e 1e-3 -o "$O"
bad "compress truncated trace" "trunc\.sgy: truncated trace 96" "$TMP/t.gzc" \
  "$GZ" compress -i "$D/trunc.sgy" -e 1e-3 -o "$TMP/t.gzc"
head -c $((3600 + 90 * 8432)) "$D/ieee_0.sgy" >"$D/fewer.sgy"
bad "fewer traces" "fewer\.sgy: snapshot shape 90x2048 f32 differs from 96x2048 f32" "$O" \
  "${M[@]}" 3 "$GZ" -i "$D/ieee_0.sgy" "$D/ieee_1.sgy" "$D/fewer.sgy" -e 1e-3 -o "$O"
bad "other sample count" "f3b\.sgy: snapshot shape 23x18x75 f32 differs from 96x2048" "$O" \
  "${M[@]}" 3 "$GZ" -i "$D/ieee_0.sgy" "$D/f3b.sgy" -e 1e-3 -o "$O"
patch_format() { # patch_format IN OUT CODE: big-endian sample format code
  cp "$1" "$2"
  printf "$(printf '\\%03o\\%03o' $(($3 >> 8)) $(($3 & 255)))" |
    dd of="$2" bs=1 seek=3224 conv=notrunc status=none
}
patch_format "$D/ieee_0.sgy" "$D/fmt4.sgy" 4
bad "format 4" "fmt4\.sgy: sample format 4 \(fixed point with gain \(obsolete\)\) is not supported" \
  "$O" "$GZ" -i "$D/fmt4.sgy" -e 1e-3 -o "$O"
patch_format "$D/ieee_0.sgy" "$D/fmt9.sgy" 9
bad "format 9" "fmt9\.sgy: sample format 9 \(int64\) is not supported" "$O" \
  "$GZ" compress -i "$D/fmt9.sgy" -e 1e-3 -o "$O"
patch_format "$D/ieee_0.sgy" "$D/fmt77.sgy" 77
bad "format 77" "fmt77\.sgy: not a SEG-Y file: the sample format code .* is 77" "$O" \
  "$GZ" -i "$D/fmt77.sgy" -e 1e-3 -o "$O"
printf 'n1=100 n2=10 data_format=native_float in="%s"\n' "$D/nothere@" >"$D/nodata.rsf"
bad "RSF without data" "nodata\.rsf: its data file .*nothere@: No such file" "$O" \
  "$GZ" -i "$D/nodata.rsf" -e 1e-3 -o "$O"
head -c 1000 "$D/soda.rsf@" >"$D/half.rsf@"
sed "s|in=.*|in=\"$D/half.rsf@\"|" "$D/soda.rsf" >"$D/half.rsf"
bad "RSF truncated" "half\.rsf: truncated: .* holds 1000 bytes of data" "$O" \
  "$GZ" -i "$D/half.rsf" -e 1e-3 -o "$O"
printf 'n1=10 data_format=native_int in="%s"\n' "$D/soda.rsf@" >"$D/int.rsf"
bad "RSF int" "int\.rsf: data_format=native_int is not supported" "$O" \
  "$GZ" -i "$D/int.rsf" -e 1e-3 -o "$O"

# --key: an unknown field, traces of another length, a file that is not SEG-Y
bad "--key unknown field" "--key cdpz: no such trace header field" "$O" \
  "$GZ" -i "$D/g0.sgy" --key cdpz -e 1e-3 -o "$O"
bad "--key sample counts" "ieee_0\.sgy: 2048 samples per trace, but .*g0\.sgy has 120 \(--key cdp" \
  "$O" "${M[@]}" 3 "$GZ" -i "$D/g0.sgy" "$D/ieee_0.sgy" --key cdp -e 1e-3 -o "$O"
bad "--key RSF" "soda\.rsf: --key cdp groups SEG-Y traces .* rsf file" "$O" \
  "$GZ" -i "$D/soda.rsf" --key cdp -e 1e-3 -o "$O"
bad "--segy-format ibm to netCDF" "--segy-format ibm: IBM samples are for a SEG-Y output" \
  "$TMP/bad.nc" "$GZ" -i "$D/g0.sgy" --segy-format ibm -e 1e-3 -o "$TMP/bad.nc"
bad "--png-section no such inline" "--png-section inline=9: no inline 9 \(1 \.\. 4\)" \
  "$O" "$GZ" -i "$D/cube.sgy" -e 1e-3 -o "$O" --png "$TMP/bad.png" --png-section inline=9
bad "--png-section no such axis" "--png-section depth=9: no dimension of that name" \
  "$O" "$GZ" -i "$D/cube.sgy" -e 1e-3 -o "$O" --png "$TMP/bad.png" --png-section depth=9
[ -e "$TMP/bad.png" ] && ko "--png-section: bad.png left behind"
bad "--scale count" "--scale 1,2: 2 factors for 4 stacked records" "$TMP/bad.rsf" \
  "${M[@]}" 3 "$GZ" -i "$D/mute.rsf" --scale 1,2 -e 1e-3 -o "$TMP/bad.rsf"
bad "--scale not a number" "--scale 1,x: expected finite numbers" "$TMP/bad.rsf" \
  "$GZ" -i "$D/mute.rsf" --scale 1,x -e 1e-3 -o "$TMP/bad.rsf"
bad "--key with --steps" "--key cdp: --key stacks every trace" "$O" \
  "$GZ" -i "$D/g0.sgy" --steps 0:1 --key cdp -e 1e-3 -o "$O"
bad "--normalize live --op max" "--normalize live: .* use it with --op mean" "$O" \
  "$GZ" -i "$D/g0.sgy" --key cdp --normalize live --op max -e 1e-3 -o "$O"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
