#!/usr/bin/env python3
"""codec_peers.py - gzstack's codec (format 1, the fast one, and format 2, the
archive one) against SZ3 and ZFP, one core, same absolute bound, on a
generated smooth 3-D field and the real fields of ../shared/data. Prints a
Markdown table (ratio, compress and decompress GB/s, violations).

Run with a virtualenv OUTSIDE the repository that has pysz, zfpy, numpy and
scipy (scipy reads netCDF-3; netCDF-4 files are converted with nccopy):
  python3 -m venv /work/venv-bench
  /work/venv-bench/bin/pip install pysz zfpy numpy scipy
  OMP_NUM_THREADS=1 taskset -c 1 /work/venv-bench/bin/python bench/codec_peers.py \
      --build build --data /work/shared/data [--eb 1e-4] [--smooth-mb 128]
gzstack runs through build/tests/codec/gz_codec_run (one thread, median of
--repeats runs); SZ3 (pysz, default algorithm, OpenMP off) and ZFP (zfpy
fixed accuracy) run in this process, median of --repeats runs each.
Speeds are input bytes over the median compress (decompress) time, measured both as wall
clock and as CPU time of the process (time.process_time, CLOCK_PROCESS_CPUTIME_ID):
on a shared machine the CPU time is what each codec itself cost, and the
speed ratio column uses it.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from scipy.io import netcdf_file

import pysz
import zfpy


def smooth_field(mb):
    """A smooth 3-D float32 field of about mb MB: a few plane waves and a
    Gaussian bump, seeded."""
    n2 = 512
    n1 = 256
    n0 = max(1, int(mb * 2**20 / 4 / (n1 * n2)))
    rng = np.random.default_rng(18)
    z = np.linspace(0, 1, n0, dtype=np.float64)[:, None, None]
    y = np.linspace(0, 1, n1, dtype=np.float64)[None, :, None]
    x = np.linspace(0, 1, n2, dtype=np.float64)[None, None, :]
    f = np.zeros((n0, n1, n2), dtype=np.float32)
    for _ in range(4):
        k = rng.uniform(1, 6, 3)
        ph = rng.uniform(0, 2 * np.pi)
        f += np.float32(rng.uniform(0.2, 1.0)) * np.sin(
            2 * np.pi * (k[0] * z + k[1] * y + k[2] * x) + ph).astype(np.float32)
    f += (2.0 * np.exp(-((x - 0.5) ** 2 + (y - 0.4) ** 2 + (z - 0.6) ** 2) / 0.05)
          ).astype(np.float32)
    return f


def read_nc(path, var, tmp):
    """A variable of a netCDF file as float32 (netCDF-4 via nccopy -k classic)."""
    try:
        with netcdf_file(path, "r", mmap=False) as f:
            return np.array(f.variables[var][:], dtype=np.float32)
    except Exception:
        out = os.path.join(tmp, os.path.basename(path) + "." + var + ".nc3")
        subprocess.run(["nccopy", "-k", "classic", path, out], check=True)
        with netcdf_file(out, "r", mmap=False) as f:
            v = f.variables[var]
            a = np.array(v[:], dtype=np.float32)
            fill = getattr(v, "_FillValue", None)
            if fill is not None:
                a[a == np.float32(fill)] = np.nan
            return a


def violations(x, y, eb):
    x = x.ravel()
    y = y.ravel().astype(np.float32)
    fin = np.isfinite(x)
    bad = int(np.count_nonzero(~(np.abs(x[fin].astype(np.float64) - y[fin]) <= eb)))
    bad += int(np.count_nonzero(~(np.isnan(y[np.isnan(x)]))))
    return bad


def median_time(fn, repeats):
    """(median wall seconds, median CPU seconds, last result)"""
    ts, cs, out = [], [], None
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        cs.append(time.process_time() - c0)
        ts.append(time.perf_counter() - t0)
    return sorted(ts)[len(ts) // 2], sorted(cs)[len(cs) // 2], out


def run_gz(build, x, eb, repeats, tmp, predictor=3):
    """predictor 3 (AUTO): format 2, what `gzstack compress` writes; 0: format
    1, the fast codec of `gzbench codec` and the collectives."""
    raw = os.path.join(tmp, "field.raw")
    x.astype("<f4").tofile(raw)
    dims = "x".join(str(d) for d in x.shape)
    exe = os.path.join(build, "tests", "codec", "gz_codec_run")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    out = subprocess.run([exe, raw, dims, repr(eb), str(repeats), str(predictor)],
                         check=True, capture_output=True, text=True, env=env).stdout
    kv = dict(item.split("=") for item in out.split())
    os.remove(raw)
    gbs = lambda key: x.nbytes / float(kv[key]) / 1e9
    return dict(ratio=float(kv["ratio"]), comp=gbs("compress_s"), comp_cpu=gbs("compress_cpu_s"),
                dec=gbs("decompress_s"), dec_cpu=gbs("decompress_cpu_s"),
                bad=int(kv["violations"]))


def run_sz3(x, eb, repeats):
    conf = pysz.szConfig(x.shape)
    conf.errorBoundMode = pysz.szErrorBoundMode.ABS
    conf.absErrorBound = eb
    conf.openmp = False
    t, tc, (c, ratio) = median_time(lambda: pysz.sz.compress(x, conf), repeats)
    td, tdc, (y, _) = median_time(lambda: pysz.sz.decompress(c, np.float32, x.shape), repeats)
    g = x.nbytes / 1e9
    return dict(ratio=x.nbytes / c.nbytes, comp=g / t, comp_cpu=g / tc, dec=g / td,
                dec_cpu=g / tdc, bad=violations(x, y, eb))


def run_zfp(x, eb, repeats):
    t, tc, c = median_time(lambda: zfpy.compress_numpy(x, tolerance=eb), repeats)
    td, tdc, y = median_time(lambda: zfpy.decompress_numpy(c), repeats)
    g = x.nbytes / 1e9
    return dict(ratio=x.nbytes / len(c), comp=g / t, comp_cpu=g / tc, dec=g / td,
                dec_cpu=g / tdc, bad=violations(x, y, eb))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "..", "..",
                                                   "shared", "data"))
    ap.add_argument("--eb", type=float, default=1e-4)
    ap.add_argument("--smooth-mb", type=float, default=128)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    d = a.data
    with tempfile.TemporaryDirectory() as tmp:
        fields = [
            ("generated smooth 3-D field, %g MB" % a.smooth_mb, lambda: smooth_field(a.smooth_mb)),
            ("CCSM3 TREFHT (110x64x128)", lambda: read_nc(
                os.path.join(d, "climate_ccsm3_trefht", "TREFHT.B06.57.atm.1890-1999ANN.nc"),
                "TREFHT", tmp)),
            ("ERSST v5 sst (128x89x180, land = missing values)", lambda: read_nc(
                os.path.join(d, "climate_ersst_v5", "sst.mnmean.nc"), "sst", tmp)),
            ("WRF Katrina T (4x14x48x48)", lambda: read_nc(
                os.path.join(d, "weather_wrf_katrina", "wrf_ci_test_file.nc"), "T", tmp)),
            ("soda lakes shots (24x96x2048)", lambda: np.fromfile(os.path.join(
                d, "seismic_soda_lakes", "soda_lakes_24x96x2048_f32le.raw"),
                dtype="<f4").reshape(24, 96, 2048)),
            ("F3 raw cube (23x18x75)", lambda: np.fromfile(os.path.join(
                d, "seismic_f3_cube", "f3_23x18x75_f32le.raw"), dtype="<f4").reshape(23, 18, 75)),
        ]
        # each cell: ratio; compress GB/s CPU (wall); decompress GB/s CPU (wall)
        cell = lambda r: "%.2f; %.3f (%.3f); %.3f (%.3f)" % (
            r["ratio"], r["comp_cpu"], r["comp"], r["dec_cpu"], r["dec"])
        print("| field | gzstack fast (format 1) | gzstack archive (format 2, AUTO) | SZ3 "
              "| ZFP | violations fast/archive/SZ3/ZFP "
              "| fast/SZ3 comp speed | archive/SZ3 ratio, comp speed |")
        print("|---|---|---|---|---|---|---|---|")
        for name, load in fields:
            x = np.ascontiguousarray(load(), dtype=np.float32)
            f1 = run_gz(a.build, x, a.eb, a.repeats, tmp, predictor=0)
            f2 = run_gz(a.build, x, a.eb, a.repeats, tmp)
            s = run_sz3(x, a.eb, a.repeats)
            z = run_zfp(x, a.eb, a.repeats)
            print("| %s | %s | %s | %s | %s | %d/%d/%d/%d | %.1fx | %.2f, %.1fx |" % (
                name, cell(f1), cell(f2), cell(s), cell(z), f1["bad"], f2["bad"], s["bad"],
                z["bad"], f1["comp_cpu"] / s["comp_cpu"], f2["ratio"] / s["ratio"],
                f2["comp_cpu"] / s["comp_cpu"]))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
