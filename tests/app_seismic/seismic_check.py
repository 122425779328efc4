#!/usr/bin/python3
"""Independent side of tests/app_seismic: writes SEG-Y and RSF inputs with
python3-segyio / numpy and checks gzstack's outputs against numpy.

  gen SODA_RAW DIR NSHOTS     soda-lakes shots as SEG-Y gathers (IBM and IEEE,
                              big-endian; IEEE little-endian; int16) and RSF
  exact SGY RAW               RAW (f32 little-endian) holds SGY's samples,
                              bit for bit, as segyio decodes them
  stack OP E OUT IN...        OUT's samples within E (+ half a float32 ulp) of
                              numpy's OP over the INs; OUT's headers are IN[0]'s
                              (binary header but its format code, which is 5)
  ibmstack OP E OUT IN...     the same with OUT in IBM float (format 1): E plus
                              2^-20 of the value
  headers A B                 textual, binary and trace headers byte-identical
  samples A B E               same geometry, samples within E
  rsfstack OP E OUT.rsf RAW DIMS  OUT (single-file RSF) vs numpy OP over the
                              first axis of RAW (f32 LE, DIMS like 4x96x2048)
  gencube PATH                a 4 x 6 cube of 40 samples, positive above 80 ms
                              and negative below
  section PNG                 a section render: diverging map (blue and red ends,
                              white), positive (red) drawn above negative (blue)
  genmute RAW DIMS OUT.rsf     RAW (f32 LE cube) with zeros above a time growing
                              with the trace (mutes) and one dead trace per
                              record, as a one-file RSF, and OUT.npy
  sfstack MODE SCALES E OUT.rsf NPY  OUT vs sfstack over the first axis of NPY:
                              MODE norm (sum / non-zero count, 0 where none),
                              sum (norm=n), rms (rms=y: sqrt(sum x^2 / count));
                              SCALES "-" or a factor per record (scale=)
  tall PNG                    taller than wide (a gather drawn with time down)
  gengathers DIR              CDP gathers with their cdp keys spread over three
                              files (big/little-endian, IBM), zeros as mutes
  keystack [--scale=S,..] KEY NORM OP E OUT IN...  OUT is sustack key=KEY over the INs: one
                              trace per key value in the order of first
                              appearance, numpy's OP (mean divides by the fold,
                              or NORM=live by the non-zero samples, 0 where none)
                              within E; headers of each group's first trace with
                              nhs = fold, tracl = output number, offset = 0
Exit 0 when every check passes; 1 with a message otherwise; 77 when segyio
or numpy is missing.
"""
import sys

try:
    import numpy as np
    import segyio
except ImportError as e:  # pragma: no cover
    print("SKIP: %s" % e)
    sys.exit(77)

TEXT, BIN, TRH = 3200, 400, 240


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def write_gather(path, data, fmt, endian, shot):
    spec = segyio.spec()
    spec.format = fmt
    spec.samples = list(range(data.shape[1]))
    spec.tracecount = data.shape[0]
    spec.endian = endian
    with segyio.create(path, spec) as f:
        f.bin.update(hdt=250, hns=data.shape[1], format=fmt)
        for t in range(data.shape[0]):
            f.header[t] = {
                segyio.su.tracl: t + 1, segyio.su.tracr: shot * 1000 + t + 1,
                segyio.su.fldr: 1001 + shot, segyio.su.tracf: t + 1,
                segyio.su.cdp: 2 * t + shot, segyio.su.offset: 5 * t - 240,
                segyio.su.ns: data.shape[1], segyio.su.dt: 250,
            }
            f.trace[t] = data[t]
        f.text[0] = segyio.tools.create_text_header(
            {1: "SODA LAKES SHOT %d" % (1001 + shot), 2: "96 CHANNELS DT 0.25 MS"})


def gen(soda, out, nshots):
    shots = np.fromfile(soda, dtype="<f4").reshape(24, 96, 2048)[:nshots]
    for s in range(nshots):
        write_gather("%s/ibm_%d.sgy" % (out, s), shots[s], 1, "big", s)
        write_gather("%s/ieee_%d.sgy" % (out, s), shots[s], 5, "big", s)
        write_gather("%s/lsb_%d.sgy" % (out, s), shots[s], 5, "little", s)
        write_gather("%s/i16_%d.sgy" % (out, s),
                     np.round(shots[s] * 10000).astype(np.float32), 3, "big", s)
    # RSF: the shots as one cube (n3 = shots): header + separate data, and xdr
    shots.astype("<f4").tofile("%s/soda.rsf@" % out)
    with open("%s/soda.rsf" % out, "w") as h:
        h.write('sfspike:\n\tn1=2048 d1=0.00025 o1=0 label1="Time" unit1="s"\n'
                '\tn2=96 d2=5 o2=-240 label2="Offset" unit2="m"\n\tn3=%d d3=1 o3=1001\n'
                '\tdata_format="native_float" esize=4 in="%s/soda.rsf@"\n' % (nshots, out))
    shots.astype(">f4").tofile("%s/sodaxdr.rsf@" % out)
    with open("%s/sodaxdr.rsf" % out, "w") as h:
        h.write('\tn1=2048 n2=96 n3=%d\n\tdata_format=xdr_float esize=4\n'
                '\tin=sodaxdr.rsf@\n' % nshots)
    np.save("%s/shots.npy" % out, shots)


def endian(path):
    with open(path, "rb") as f:
        f.seek(3224)
        code = f.read(2)
    return "big" if 1 <= int.from_bytes(code, "big") <= 16 else "little"


def open_sgy(path):
    return segyio.open(path, ignore_geometry=True, endian=endian(path))


def traces(path):
    with open_sgy(path) as f:
        return f.trace.raw[:].astype(np.float64), int(f.bin[segyio.BinField.Format])


def raw_layout(path):
    """(text, bin, ext headers bytes, ns, element size, trace count, raw bytes)"""
    b = open(path, "rb").read()
    order = "<" if endian(path) == "little" else ">"
    fmt = int(np.frombuffer(b[3224:3226], dtype=order + "i2")[0])
    ns = int(np.frombuffer(b[3220:3222], dtype=order + "u2")[0])
    es = {1: 4, 2: 4, 3: 2, 5: 4, 6: 8, 8: 1}[fmt]
    ntr = (len(b) - TEXT - BIN) // (TRH + ns * es)
    return b, ns, es, ntr


def trace_headers(b, ns, es, ntr):
    return [b[3600 + t * (TRH + ns * es):3600 + t * (TRH + ns * es) + TRH]
            for t in range(ntr)]


def exact(sgy, raw):
    with open_sgy(sgy) as f:
        want = f.trace.raw[:].astype(np.float32).ravel()
    got = np.fromfile(raw, dtype="<f4")
    if got.size != want.size:
        fail("%s: %d values, segyio reads %d" % (raw, got.size, want.size))
    bad = np.flatnonzero(got.view(np.uint32) != want.view(np.uint32))
    if bad.size:
        fail("%s: %d values differ from segyio's, first at %d: %r vs %r"
             % (raw, bad.size, bad[0], got[bad[0]], want[bad[0]]))
    print("ok: %d values bit-identical to segyio" % got.size)


def reduce(op, stack):
    if op == "mean":
        return stack.mean(axis=0)
    if op == "sum":
        return stack.sum(axis=0)
    if op == "max":
        return stack.max(axis=0)
    return stack.min(axis=0)


def within(got, want, e, what, ibm=False):
    tol = e + np.spacing(np.abs(want).astype(np.float32)).astype(np.float64) / 2 * 1.001
    if ibm:  # IBM float: 24-bit mantissa, hexadecimal exponent
        tol += (np.abs(want) + e) * 2.0 ** -20 * 1.001
    err = np.abs(got - want)
    if not np.all(err <= tol):
        i = np.argmax(err - tol)
        fail("%s: error %g at %d exceeds %g" % (what, err.flat[i], i, tol.flat[i]))
    print("ok: %s: max error %.3g (bound %g) over %d values" % (what, err.max(), e, err.size))


def stack(op, e, out, ins, want_fmt=5):
    ref = reduce(op, np.stack([traces(p)[0] for p in ins]))
    got, fmt = traces(out)
    if fmt != want_fmt:
        fail("%s: sample format %d, not %d" % (out, fmt, want_fmt))
    within(got, ref, e, "%s of %d files (format %d)" % (op, len(ins), fmt), fmt == 1)
    a, nsa, esa, ntra = raw_layout(ins[0])
    b, nsb, esb, ntrb = raw_layout(out)
    if (nsa, ntra) != (nsb, ntrb):
        fail("geometry differs: %d x %d vs %d x %d" % (ntra, nsa, ntrb, nsb))
    if a[:34 * 80] != b[:34 * 80]:
        fail("textual header lines 1-34 differ")
    with open_sgy(out) as f:
        text = segyio.tools.wrap(f.text[0].decode("latin1"))
    if "C35 GZSTACK" not in text or "ERROR BOUND" not in text:
        fail("no provenance in lines C35-C39:\n" + text[-600:])
    ba, bb = bytearray(a[3200:3600]), bytearray(b[3200:3600])
    ba[24:26] = bb[24:26] = b"\0\0"
    if ba != bb:
        fail("binary headers differ beyond the format code")
    if trace_headers(a, nsa, esa, ntra) != trace_headers(b, nsb, esb, ntrb):
        fail("trace headers differ")
    print("ok: headers kept (text 1-34, binary, %d trace headers), provenance in C35-C39"
          % ntrb)


def headers(pa, pb):
    a, nsa, esa, ntra = raw_layout(pa)
    b, nsb, esb, ntrb = raw_layout(pb)
    if a[:3600] != b[:3600]:
        fail("textual or binary headers differ")
    if trace_headers(a, nsa, esa, ntra) != trace_headers(b, nsb, esb, ntrb):
        fail("trace headers differ")
    print("ok: %d header bytes identical" % (3600 + ntra * TRH))


def samples(pa, pb, e):
    a, _ = traces(pa)
    b, _ = traces(pb)
    if a.shape != b.shape:
        fail("shapes differ: %s vs %s" % (a.shape, b.shape))
    within(b, a, e, "samples")


def rsfstack(op, e, out, raw, dims):
    shape = [int(x) for x in dims.split("x")]
    ref = reduce(op, np.fromfile(raw, dtype="<f4").astype(np.float64).reshape(shape))
    b = open(out, "rb").read()
    sep = b.index(b"\x0c\x0c\x04")
    head = b[:sep].decode()
    for key in ("n1=%d" % shape[-1], "n2=%d" % shape[-2], 'data_format="native_float"',
                'in="stdin"', "d1=0.00025", 'label2="Offset"'):
        if key not in head:
            fail("%s: no %s in the header:\n%s" % (out, key, head))
    got = np.frombuffer(b[sep + 3:], dtype="<f4").astype(np.float64)
    within(got, ref.ravel(), e, "RSF %s" % op)


def gencube(path):
    spec = segyio.spec()
    spec.sorting = 2
    spec.format = 5
    spec.samples = [4.0 * i for i in range(40)]
    spec.ilines = [1, 2, 3, 4]
    spec.xlines = [10, 11, 12, 13, 14, 15]
    t = np.arange(40)
    with segyio.create(path, spec) as f:
        f.bin.update(hdt=4000, hns=40)
        k = 0
        for il in spec.ilines:
            for xl in spec.xlines:
                f.header[k] = {segyio.su.iline: il, segyio.su.xline: xl,
                               segyio.su.ns: 40, segyio.su.dt: 4000}
                f.trace[k] = (np.where(t < 20, 1.0, -1.0) * (1 + 0.1 * xl)).astype(np.float32)
                k += 1
    print("ok: cube %s" % path)


def png_rgb(path):
    """8-bit RGB, non-interlaced PNG (what gzstack writes) -> rows of pixels."""
    import struct
    import zlib
    b = open(path, "rb").read()
    if b[:8] != b"\x89PNG\r\n\x1a\n":
        fail("%s: not a PNG" % path)
    pos, idat, w = 8, b"", 0
    while pos < len(b):
        n, kind = struct.unpack(">I4s", b[pos:pos + 8])
        data = b[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", data[:10])
            if (depth, ctype) != (8, 2):
                fail("%s: not 8-bit RGB" % path)
        elif kind == b"IDAT":
            idat += data
        pos += 12 + n
    raw, stride = zlib.decompress(idat), 3 * w
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - 3] if i >= 3 else 0
            up = prev[i]
            c = prev[i - 3] if i >= 3 else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + up) & 255
            elif f == 3:
                line[i] = (line[i] + (a + up) // 2) & 255
            elif f == 4:
                p = a + up - c
                pa, pb, pc = abs(p - a), abs(p - up), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else up if pb <= pc else c)) & 255
        rows.append(np.frombuffer(bytes(line), dtype=np.uint8).reshape(w, 3))
        prev = line
    return np.array(rows).astype(int)


def section(path):
    img = png_rgb(path)
    r, g, b = img[..., 0], img[..., 1], img[..., 2]
    red = (r > 150) & (g < 90) & (b < 90)
    blue = (b > 150) & (r < 120) & (g < 130)
    # the colour bar holds both ends too: take the widest block of the field,
    # the columns left of the bar (the bar is the rightmost coloured column run)
    cols = np.flatnonzero((red | blue).any(axis=0))
    if cols.size == 0:
        fail("%s: no red or blue pixel: not the diverging map" % path)
    gaps = np.flatnonzero(np.diff(cols) > 1)
    field = cols[:gaps[-1] + 1] if gaps.size else cols
    fr, fb = red[:, field], blue[:, field]
    if not fr.any() or not fb.any():
        fail("%s: the field has no red or no blue pixel" % path)
    yr, yb = np.nonzero(fr)[0].mean(), np.nonzero(fb)[0].mean()
    if not yr < yb:
        fail("%s: positive (red, mean row %.0f) is not above negative (blue, %.0f): "
             "time does not run down" % (path, yr, yb))
    print("ok: %s: diverging map, positive above negative (rows %.0f < %.0f), %dx%d"
          % (path, yr, yb, img.shape[1], img.shape[0]))


def genmute(raw, dims, out):
    shape = [int(v) for v in dims.split("x")]
    x = np.fromfile(raw, dtype="<f4").reshape(shape).copy()
    for r in range(shape[0]):
        for t in range(shape[1]):
            x[r, t, :(37 * t + 101 * r) % (shape[2] // 2)] = 0.0
        x[r, (7 * r + 3) % shape[1], :] = 0.0
    np.save(out + ".npy", x)
    with open(out, "wb") as f:
        f.write(('n1=%d d1=0.004 o1=0 label1="time" unit1="s"\nn2=%d n3=%d\n'
                 'data_format="native_float" esize=4 in="stdin"\n' %
                 (shape[2], shape[1], shape[0])).encode())
        f.write(b"\x0c\x0c\x04")
        f.write(x.astype("<f4").tobytes())
    print("ok: %s, %.1f %% zeros" % (out, 100.0 * (x == 0).mean()))


def sfstack(mode, scales, e, out, npy):
    x = np.load(npy).astype(np.float64)
    if scales != "-":
        x = x * np.array([float(v) for v in scales.split(",")])[:, None, None]
    fold = (x != 0).sum(axis=0)
    if mode == "sum":
        ref = x.sum(axis=0)
    elif mode == "norm":
        ref = np.where(fold > 0, x.sum(axis=0) / np.maximum(fold, 1), 0.0)
    else:
        ref = np.where(fold > 0, np.sqrt((x * x).sum(axis=0) / np.maximum(fold, 1)), 0.0)
    b = open(out, "rb").read()
    sep = b.index(b"\x0c\x0c\x04")
    got = np.frombuffer(b[sep + 3:], dtype="<f4").astype(np.float64)
    if got.size != ref.size:
        fail("%s: %d values, sfstack gives %d" % (out, got.size, ref.size))
    within(got, ref.ravel(), e, "sfstack %s scale=%s (%d of %d points without a live "
           "sample)" % (mode, scales, int((fold == 0).sum()), fold.size))


def gengathers(out):
    """Three files of CDP-sorted-by-shot traces: file k holds shots whose
    traces land on cdp = shot + 2 * channel, so every cdp gathers traces from
    several files; each trace is muted (zeros) above a time growing with the
    offset, one trace in each file is dead (all zeros), and the files have
    different trace counts."""
    rng = np.random.default_rng(20)
    ns, nch = 120, 12
    t = np.arange(ns)
    specs = [("g0.sgy", [0, 1], 5, "big"), ("g1.sgy", [2, 3, 4], 5, "little"),
             ("g2.sgy", [5], 1, "big")]
    for name, shots, fmt, end in specs:
        data, heads = [], []
        for s in shots:
            for c in range(nch):
                x = rng.normal(0, 1, ns) * np.exp(-t / 80.0) * 100.0
                x[:(3 * c) % 40] = 0.0  # mute above a time growing with offset
                if c == 5 and s in (1, 3, 5):
                    x[:] = 0.0  # a dead trace
                data.append(x.astype(np.float32))
                heads.append({segyio.su.tracl: len(heads) + 1, segyio.su.fldr: 100 + s,
                              segyio.su.tracf: c + 1, segyio.su.cdp: 1000 + s + 2 * c,
                              segyio.su.offset: 25 * c + 10, segyio.su.sx: 50 * s,
                              segyio.su.gx: 50 * s + 25 * c, segyio.su.ns: ns,
                              segyio.su.dt: 4000, segyio.su.nhs: 1})
        spec = segyio.spec()
        spec.format = fmt
        spec.samples = list(range(ns))
        spec.tracecount = len(data)
        spec.endian = end
        with segyio.create("%s/%s" % (out, name), spec) as f:
            f.bin.update(hdt=4000, hns=ns, format=fmt)
            for i, (x, h) in enumerate(zip(data, heads)):
                f.header[i] = h
                f.trace[i] = x
            f.text[0] = segyio.tools.create_text_header({1: "GATHERS %s" % name})
    print("ok: gathers in %s" % out)


def keystack(key, norm, op, e, out, ins, scales=None):
    xs, hs, raws = [], [], []
    for k, p in enumerate(ins):
        with open_sgy(p) as f:
            xs.append(f.trace.raw[:].astype(np.float64) * (scales[k] if scales else 1.0))
            hs += [dict(f.header[i]) for i in range(f.tracecount)]
        b, ns, es, ntr = raw_layout(p)
        raws += [(h, endian(p)) for h in trace_headers(b, ns, es, ntr)]
    x = np.concatenate(xs)
    field = getattr(segyio.su, key)
    keys = np.array([h[field] for h in hs])
    order, firsts = [], {}
    for i, k in enumerate(keys):
        if k not in firsts:
            firsts[k] = i
            order.append(k)
    ref = []
    for k in order:
        g = x[keys == k]
        if op == "mean" and norm == "live":
            live = (g != 0).sum(axis=0)
            ref.append(np.where(live > 0, g.sum(axis=0) / np.maximum(live, 1), 0.0))
        elif op == "rms":
            ref.append(np.sqrt((g * g).mean(axis=0)))
        else:
            ref.append(reduce(op, g))
    ref = np.array(ref)
    got, fmt = traces(out)
    if got.shape != ref.shape:
        fail("%s: %s traces x samples, sustack gives %s" % (out, got.shape, ref.shape))
    within(got, ref, e, "--key %s %s (%s) of %d traces into %d, format %d" %
           (key, op, norm, x.shape[0], len(order), fmt), fmt == 1)
    with open_sgy(out) as f:
        oh = [dict(f.header[i]) for i in range(f.tracecount)]
    b, ns, es, ntr = raw_layout(out)
    outraw = trace_headers(b, ns, es, ntr)
    a = open(ins[0], "rb").read(3600)
    if a[:34 * 80] != b[:34 * 80]:
        fail("textual header lines 1-34 differ from %s" % ins[0])
    with open_sgy(out) as f:
        text = f.text[0].upper()
    want = b"%s BY %s OF %d TRACES" % (op.upper().encode(), key.upper().encode(), x.shape[0])
    if want not in text:
        fail("no '%s' in the textual header (C36)" % want.decode())
    for i, k in enumerate(order):
        want = dict(hs[firsts[k]])
        want[segyio.su.nhs] = int((keys == k).sum())
        want[segyio.su.tracl] = i + 1
        if key != "offset":
            want[segyio.su.offset] = 0
        if oh[i] != want:
            diff = {f: (oh[i][f], want[f]) for f in want if oh[i][f] != want[f]}
            fail("output trace %d (%s %d): headers differ (got, want): %s" %
                 (i + 1, key, k, diff))
        if raws[firsts[k]][1] == endian(out) and key != "offset":
            r = bytearray(raws[firsts[k]][0])
            o = bytearray(outraw[i])
            for lo, hi in ((0, 4), (32, 34), (36, 40)):
                r[lo:hi] = o[lo:hi] = b"\0" * (hi - lo)
            if r != o:
                fail("output trace %d: header bytes beyond tracl/nhs/offset differ" % (i + 1))
    folds = [int((keys == k).sum()) for k in order]
    print("ok: %d output headers = first trace's, nhs = fold (%d..%d)" %
          (len(order), min(folds), max(folds)))


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "gen":
        gen(args[0], args[1], int(args[2]))
    elif cmd == "exact":
        exact(*args)
    elif cmd == "stack":
        stack(args[0], float(args[1]), args[2], args[3:])
    elif cmd == "ibmstack":
        stack(args[0], float(args[1]), args[2], args[3:], want_fmt=1)
    elif cmd == "headers":
        headers(*args)
    elif cmd == "samples":
        samples(args[0], args[1], float(args[2]))
    elif cmd == "rsfstack":
        rsfstack(args[0], float(args[1]), args[2], args[3], args[4])
    elif cmd == "gencube":
        gencube(args[0])
    elif cmd == "section":
        section(args[0])
    elif cmd == "tall":
        img = png_rgb(args[0])
        if not img.shape[0] > img.shape[1]:
            fail("%s: %dx%d, not taller than wide" % (args[0], img.shape[1], img.shape[0]))
        print("ok: %s: %dx%d" % (args[0], img.shape[1], img.shape[0]))
    elif cmd == "genmute":
        genmute(*args)
    elif cmd == "sfstack":
        sfstack(args[0], args[1], float(args[2]), args[3], args[4])
    elif cmd == "gengathers":
        gengathers(args[0])
    elif cmd == "keystack":
        sc = None
        if args[0].startswith("--scale="):
            sc = [float(v) for v in args.pop(0)[8:].split(",")]
        keystack(args[0], args[1], args[2], float(args[3]), args[4], args[5:], sc)
    else:
        fail("unknown command " + cmd)
