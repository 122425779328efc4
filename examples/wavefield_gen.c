/*
 * wavefield_gen.c - snapshots of a 2-D acoustic wave for gzstack examples
 * and benchmarks: RTM-like fields of any size, written to HDF5 or raw.
 *
 * Physics: p_tt = v(x, z)^2 (p_xx + p_zz) + s(t) delta(x - x_s), solved
 * with second-order finite differences in time and fourth-order in space
 * on an NX x NZ grid (spacing dx), a Ricker source wavelet of peak
 * frequency f near the top, and Cerjan sponge layers on all four edges. The
 * velocity model has four layers (1500, 2000, 2700, 3500 m/s) separated by
 * gently dipping, slightly curved interfaces. The time step follows the CFL
 * limit (dt = 0.4 dx / v_max); K snapshots are taken at equal intervals up
 * to the total time (default: a wave at 2000 m/s crosses 80 % of the
 * diagonal).
 *
 * Output (by extension, or --format):
 *   .h5   dataset /wavefield (or --dataset), float32 (float64 with --double),
 *         dims [K][NZ][NX], attributes units, long_name, dx, dz, dt (s
 *         between snapshots), dt_solver, frequency, source_x, source_z,
 *         velocities; with the HDF5 high-level library, dimension scales
 *         time (s), z (m), x (m).
 *   .raw  the same array, little-endian, no header: stack it with
 *         `gzstack -i F.raw --dims NZxNX --dtype f32`.
 * The file is written under a temporary name and renamed when complete; an
 * existing file is kept unless --force. Memory: three time levels and the
 * velocity model (4 arrays of NX NZ floats); snapshots are written as they
 * are taken, so outputs of any size can be generated.
 *
 *   wavefield_gen -o build/demo/wavefield.h5 --nx 512 --nz 512 --snapshots 16
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <hdf5.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef WAVEGEN_HAVE_HL
#include <hdf5_hl.h>
#endif

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

typedef struct gen_opts {
  long nx, nz, snapshots;
  double dx, freq, time, amplitude;
  const char *output, *dataset, *format;
  int dbl, force, quiet;
} gen_opts_t;

static void usage(FILE *out) {
  fprintf(
      out,
      "wavefield_gen - 2-D acoustic wave snapshots (layered model, Ricker source)\n"
      "\n"
      "  wavefield_gen -o OUT.h5|OUT.raw [options]\n"
      "\n"
      "  -o, --output FILE     .h5 (HDF5) or .raw (little-endian, no header); parent\n"
      "                        directories are created\n"
      "  --nx N                grid points across (default 512)\n"
      "  --nz N                grid points in depth (default 512)\n"
      "  --snapshots K         snapshots written (default 16)\n"
      "  --dx M                grid spacing in metres (default 5)\n"
      "  --freq HZ             Ricker peak frequency (default: 1500 / (12 dx), "
      "about 10\n"
      "                        points per shortest wavelength)\n"
      "  --time S              simulated time (default: 0.8 x diagonal / 2000 m/s)\n"
      "  --amplitude A         source scale (default 20: peaks of order 1)\n"
      "  --dataset PATH        HDF5 dataset (default /wavefield)\n"
      "  --format h5|raw       override the extension\n"
      "  --double              write float64 instead of float32\n"
      "  --force               replace an existing output\n"
      "  -q, --quiet           no progress\n"
      "\n"
      "Sizes: K x NZ x NX x 4 bytes; e.g. --nx 2048 --nz 2048 --snapshots 32 is 512 "
      "MiB.\n"
      "Example:\n"
      "  wavefield_gen -o build/demo/wavefield.h5 --nx 512 --nz 512 --snapshots 16\n"
      "  mpirun -np 4 gzstack -i build/demo/wavefield.h5 --var /wavefield -e 1e-4 \\\n"
      "      -o build/demo/stack.nc --png build/demo/stack.png --verify\n");
}

static int parse_long(const char *s, long *v) {
  char *end;
  errno = 0;
  *v = strtol(s, &end, 10);
  return (errno || end == s || *end || *v <= 0) ? -1 : 0;
}

static int parse_pos(const char *s, double *v) {
  char *end;
  errno = 0;
  *v = strtod(s, &end);
  return (errno || end == s || *end || !(*v > 0) || !isfinite(*v)) ? -1 : 0;
}

/* 0 ok, 1 help, 2 error (printed). */
static int parse_args(int argc, char **argv, gen_opts_t *o) {
  memset(o, 0, sizeof *o);
  o->nx = o->nz = 512;
  o->snapshots = 16;
  o->dx = 5;
  o->amplitude = 20;
  o->dataset = "/wavefield";
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int bad = 0, takes = 1;
    if (!strcmp(a, "-h") || !strcmp(a, "--help"))
      return 1;
    if (!strcmp(a, "--double")) {
      o->dbl = 1;
      takes = 0;
    } else if (!strcmp(a, "--force")) {
      o->force = 1;
      takes = 0;
    } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
      o->quiet = 1;
      takes = 0;
    } else if (!v) {
      fprintf(stderr, "wavefield_gen: %s needs a value (see --help)\n", a);
      return 2;
    } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
      o->output = v;
    } else if (!strcmp(a, "--nx")) {
      bad = parse_long(v, &o->nx);
    } else if (!strcmp(a, "--nz")) {
      bad = parse_long(v, &o->nz);
    } else if (!strcmp(a, "--snapshots")) {
      bad = parse_long(v, &o->snapshots);
    } else if (!strcmp(a, "--dx")) {
      bad = parse_pos(v, &o->dx);
    } else if (!strcmp(a, "--freq")) {
      bad = parse_pos(v, &o->freq);
    } else if (!strcmp(a, "--amplitude")) {
      bad = parse_pos(v, &o->amplitude);
    } else if (!strcmp(a, "--time")) {
      bad = parse_pos(v, &o->time);
    } else if (!strcmp(a, "--dataset")) {
      o->dataset = v;
    } else if (!strcmp(a, "--format")) {
      o->format = v;
      bad = strcmp(v, "h5") && strcmp(v, "raw");
    } else {
      fprintf(stderr, "wavefield_gen: unknown option '%s' (see --help)\n", a);
      return 2;
    }
    if (bad) {
      fprintf(stderr, "wavefield_gen: %s %s: invalid value\n", a, v);
      return 2;
    }
    i += takes;
  }
  if (!o->output) {
    fprintf(stderr, "wavefield_gen: -o OUT.h5|OUT.raw is required (see --help)\n");
    return 2;
  }
  if (o->nx < 16 || o->nz < 16) {
    fprintf(stderr, "wavefield_gen: the grid must be at least 16 x 16\n");
    return 2;
  }
  if (!o->format) {
    size_t n = strlen(o->output);
    if (n > 3 && (!strcmp(o->output + n - 3, ".h5") ||
                  (n > 5 && !strcmp(o->output + n - 5, ".hdf5"))))
      o->format = "h5";
    else if (n > 4 &&
             (!strcmp(o->output + n - 4, ".raw") || !strcmp(o->output + n - 4, ".bin")))
      o->format = "raw";
    else {
      fprintf(stderr, "wavefield_gen: %s: use a .h5 or .raw name, or --format\n",
              o->output);
      return 2;
    }
  }
  if (!o->freq)
    o->freq = 1500.0 / (12.0 * o->dx);
  if (!o->time)
    o->time = 0.8 * hypot((double)o->nx, (double)o->nz) * o->dx / 2000.0;
  return 0;
}

/* mkdir -p of the parent directory of path. */
static int make_parent(const char *path) {
  char buf[4096];
  size_t n = strlen(path);
  if (n >= sizeof buf)
    return -1;
  memcpy(buf, path, n + 1);
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/')
      continue;
    *p = '\0';
    if (mkdir(buf, 0777) != 0 && errno != EEXIST)
      return -1;
    *p = '/';
  }
  return 0;
}

/* ---- the model and the solver ------------------------------------------- */

static const double layer_v[4] = {1500.0, 2000.0, 2700.0, 3500.0};

/* Depth (fraction of the model) of interface k at horizontal fraction u. */
static double interface_depth(int k, double u) {
  static const double base[3] = {0.22, 0.48, 0.72}, dip[3] = {0.04, -0.06, 0.08};
  return base[k] + dip[k] * (u - 0.5) + 0.02 * sin(2 * M_PI * (u * (k + 1) + 0.3 * k));
}

static void build_model(const gen_opts_t *o, float *v2dt2, double dt) {
  for (long z = 0; z < o->nz; z++) {
    for (long x = 0; x < o->nx; x++) {
      double u = (double)x / (double)(o->nx - 1), w = (double)z / (double)(o->nz - 1);
      int layer = 0;
      while (layer < 3 && w > interface_depth(layer, u))
        layer++;
      /* (v dt / dx)^2, what the update needs */
      v2dt2[z * o->nx + x] = (float)pow(layer_v[layer] * dt / o->dx, 2);
    }
  }
}

static double ricker(double t, double f) {
  double a = M_PI * f * (t - 1.2 / f);
  return (1 - 2 * a * a) * exp(-a * a);
}

/* Cerjan damping factors of one axis (sponge of width nb). */
static void sponge(long n, long nb, float *g) {
  double alpha = 0.32 / (double)nb;
  for (long i = 0; i < n; i++) {
    long d = i < nb ? nb - i : i >= n - nb ? i - (n - nb - 1) : 0;
    g[i] = (float)exp(-(alpha * (double)d) * (alpha * (double)d));
  }
}

/* One time step: next = 2 cur - prev + (v dt/dx)^2 lap4(cur) (next may
 * alias prev), then damping. */
static void step(long nx, long nz, const float *v2, const float *cur, float *prev,
                 const float *gx, const float *gz) {
  const float c0 = -5.0f / 2, c1 = 4.0f / 3, c2 = -1.0f / 12;
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
  for (long z = 2; z < nz - 2; z++) {
    const float *c = cur + z * nx;
    float *p = prev + z * nx;
    for (long x = 2; x < nx - 2; x++) {
      float lap = 2 * c0 * c[x] + c1 * (c[x - 1] + c[x + 1] + c[x - nx] + c[x + nx]) +
                  c2 * (c[x - 2] + c[x + 2] + c[x - 2 * nx] + c[x + 2 * nx]);
      float g = gx[x] * gz[z];
      p[x] = g * (2 * c[x] - g * p[x] + v2[z * nx + x] * lap);
    }
  }
}

/* ---- writers ------------------------------------------------------------- */

typedef struct sink {
  FILE *raw;
  hid_t file, dset, space;
  int big_endian_host;
} sink_t;

static int attr_double(hid_t obj, const char *name, const double *v, hsize_t n) {
  hid_t sp = H5Screate_simple(1, &n, NULL), a;
  int rc = -1;
  if (sp < 0)
    return -1;
  a = H5Acreate2(obj, name, H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
  if (a >= 0) {
    rc = H5Awrite(a, H5T_NATIVE_DOUBLE, v) < 0 ? -1 : 0;
    H5Aclose(a);
  }
  H5Sclose(sp);
  return rc;
}

static int attr_text(hid_t obj, const char *name, const char *text) {
  hid_t t = H5Tcopy(H5T_C_S1), sp = H5Screate(H5S_SCALAR), a;
  int rc = -1;
  H5Tset_size(t, strlen(text) + 1);
  H5Tset_strpad(t, H5T_STR_NULLTERM);
  a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
  if (a >= 0) {
    rc = H5Awrite(a, t, text) < 0 ? -1 : 0;
    H5Aclose(a);
  }
  H5Sclose(sp);
  H5Tclose(t);
  return rc;
}

#ifdef WAVEGEN_HAVE_HL
/* A 1-D coordinate dataset made a dimension scale and attached. */
static int scale(hid_t file, hid_t dset, unsigned dim, const char *name,
                 const char *units, double first, double step, hsize_t n) {
  double *v = malloc(sizeof(double) * n);
  hid_t sp, d;
  int rc = -1;
  if (!v)
    return -1;
  for (hsize_t i = 0; i < n; i++)
    v[i] = first + step * (double)i;
  sp = H5Screate_simple(1, &n, NULL);
  d = H5Dcreate2(file, name, H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (d >= 0 && H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0 &&
      attr_text(d, "units", units) == 0 && H5DSset_scale(d, name) >= 0 &&
      H5DSattach_scale(dset, d, dim) >= 0)
    rc = 0;
  if (d >= 0)
    H5Dclose(d);
  H5Sclose(sp);
  free(v);
  return rc;
}
#endif

static int sink_open(sink_t *s, const gen_opts_t *o, const char *tmp, double dt_snap,
                     double dt, long sx, long sz) {
  union {
    uint32_t u;
    unsigned char b[4];
  } probe = {1};
  memset(s, 0, sizeof *s);
  s->file = s->dset = s->space = -1;
  s->big_endian_host = probe.b[0] == 0;
  if (!strcmp(o->format, "raw")) {
    s->raw = fopen(tmp, "wb");
    return s->raw ? 0 : -1;
  }
  {
    hsize_t dims[3] = {(hsize_t)o->snapshots, (hsize_t)o->nz, (hsize_t)o->nx};
    double attrs[8];
    s->file = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (s->file < 0)
      return -1;
    s->space = H5Screate_simple(3, dims, NULL);
    s->dset = H5Dcreate2(s->file, o->dataset, o->dbl ? H5T_IEEE_F64LE : H5T_IEEE_F32LE,
                         s->space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (s->dset < 0)
      return -1;
    attrs[0] = o->dx;
    attrs[1] = dt_snap;
    attrs[2] = dt;
    attrs[3] = o->freq;
    attrs[4] = (double)sx * o->dx;
    attrs[5] = (double)sz * o->dx;
    if (attr_text(s->dset, "units", "1") ||
        attr_text(s->dset, "long_name", "acoustic pressure (source-normalized)") ||
        attr_double(s->dset, "dx", &attrs[0], 1) ||
        attr_double(s->dset, "dz", &attrs[0], 1) ||
        attr_double(s->dset, "dt", &attrs[1], 1) ||
        attr_double(s->dset, "dt_solver", &attrs[2], 1) ||
        attr_double(s->dset, "frequency", &attrs[3], 1) ||
        attr_double(s->dset, "source_x", &attrs[4], 1) ||
        attr_double(s->dset, "source_z", &attrs[5], 1) ||
        attr_double(s->dset, "velocities", layer_v, 4) ||
        attr_text(s->file, "title",
                  "gzstack example: 2-D acoustic wavefield snapshots") ||
        attr_text(s->file, "source",
                  "examples/wavefield_gen.c (4th-order FD, Ricker, "
                  "Cerjan sponge, layered model)"))
      return -1;
#ifdef WAVEGEN_HAVE_HL
    if (scale(s->file, s->dset, 0, "time", "s", dt_snap, dt_snap, dims[0]) ||
        scale(s->file, s->dset, 1, "z", "m", 0, o->dx, dims[1]) ||
        scale(s->file, s->dset, 2, "x", "m", 0, o->dx, dims[2]))
      return -1;
#endif
  }
  return 0;
}

static int sink_write(sink_t *s, const gen_opts_t *o, long k, const float *p, void *buf) {
  size_t n = (size_t)o->nx * (size_t)o->nz;
  if (o->dbl) {
    double *d = buf;
    for (size_t i = 0; i < n; i++)
      d[i] = p[i];
  } else {
    memcpy(buf, p, n * sizeof(float));
  }
  if (s->raw) {
    size_t esz = o->dbl ? 8 : 4;
    if (s->big_endian_host) {
      unsigned char *b = buf;
      for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < esz / 2; j++) {
          unsigned char t = b[i * esz + j];
          b[i * esz + j] = b[i * esz + esz - 1 - j];
          b[i * esz + esz - 1 - j] = t;
        }
    }
    return fwrite(buf, esz, n, s->raw) == n ? 0 : -1;
  }
  {
    hsize_t start[3] = {(hsize_t)k, 0, 0}, count[3] = {1, (hsize_t)o->nz, (hsize_t)o->nx};
    hid_t mem = H5Screate_simple(3, count, NULL);
    int rc;
    H5Sselect_hyperslab(s->space, H5S_SELECT_SET, start, NULL, count, NULL);
    rc = H5Dwrite(s->dset, o->dbl ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT, mem, s->space,
                  H5P_DEFAULT, buf) < 0
             ? -1
             : 0;
    H5Sclose(mem);
    return rc;
  }
}

static int sink_close(sink_t *s) {
  int rc = 0;
  if (s->raw)
    rc = fclose(s->raw) == 0 ? 0 : -1;
  if (s->dset >= 0)
    rc |= H5Dclose(s->dset) < 0;
  if (s->space >= 0)
    H5Sclose(s->space);
  if (s->file >= 0)
    rc |= H5Fclose(s->file) < 0;
  return rc ? -1 : 0;
}

int main(int argc, char **argv) {
  gen_opts_t o;
  sink_t s;
  char tmp[4200];
  float *v2, *a, *b, *gx, *gz;
  void *buf;
  double dt, dt_snap;
  long steps, every, sx, sz, k = 0, n;
  int rc = parse_args(argc, argv, &o), ok = 1, tty = isatty(2);
  struct stat st;

  if (rc == 1) {
    usage(stdout);
    return 0;
  }
  if (rc)
    return 2;
  if (stat(o.output, &st) == 0 && !o.force) {
    fprintf(stderr, "wavefield_gen: %s exists (use --force to replace it)\n", o.output);
    return 1;
  }
  if (make_parent(o.output) != 0) {
    fprintf(stderr, "wavefield_gen: cannot create the directory of %s: %s\n", o.output,
            strerror(errno));
    return 1;
  }
  snprintf(tmp, sizeof tmp, "%s.tmp-%ld", o.output, (long)getpid());

  n = o.nx * o.nz;
  dt = 0.4 * o.dx / layer_v[3];
  every = (long)ceil(o.time / (double)o.snapshots / dt);
  dt = o.time / (double)o.snapshots / (double)every; /* snapshots fall on steps */
  dt_snap = dt * (double)every;
  steps = every * o.snapshots;
  sx = o.nx / 2;
  sz = o.nz / 20 + 8;

  v2 = malloc(sizeof(float) * (size_t)n);
  a = calloc((size_t)n, sizeof(float));
  b = calloc((size_t)n, sizeof(float));
  gx = malloc(sizeof(float) * (size_t)o.nx);
  gz = malloc(sizeof(float) * (size_t)o.nz);
  buf = malloc((size_t)n * (o.dbl ? 8 : 4));
  if (!v2 || !a || !b || !gx || !gz || !buf) {
    fprintf(stderr, "wavefield_gen: out of memory for a %ld x %ld grid\n", o.nx, o.nz);
    return 1;
  }
  build_model(&o, v2, dt);
  sponge(o.nx, o.nx / 10 < 60 ? o.nx / 10 : 60, gx);
  sponge(o.nz, o.nz / 10 < 60 ? o.nz / 10 : 60, gz);
  if (!o.quiet)
    fprintf(
        stderr,
        "wavefield_gen: %ld x %ld grid, dx %.3g m, Ricker %.3g Hz, %ld steps of %.3g s, "
        "%ld snapshots every %.4g s -> %s (%.1f MiB)\n",
        o.nx, o.nz, o.dx, o.freq, steps, dt, o.snapshots, dt_snap, o.output,
        (double)n * (double)o.snapshots * (o.dbl ? 8 : 4) / 1048576.0);
  if (sink_open(&s, &o, tmp, dt_snap, dt, sx, sz) != 0) {
    fprintf(stderr, "wavefield_gen: cannot create %s\n", tmp);
    sink_close(&s);
    unlink(tmp);
    return 1;
  }
  for (long it = 1; it <= steps && ok; it++) {
    float *t;
    /* b = next (overwrites prev), then rotate: a = current */
    step(o.nx, o.nz, v2, a, b, gx, gz);
    b[sz * o.nx + sx] +=
        (float)(o.amplitude * v2[sz * o.nx + sx] * ricker((double)it * dt, o.freq));
    t = a;
    a = b;
    b = t;
    if (it % every == 0) {
      ok = sink_write(&s, &o, k++, a, buf) == 0;
      if (!o.quiet)
        fprintf(stderr, "%swavefield_gen: snapshot %ld/%ld (t = %.3f s)%s",
                tty ? "\r" : "", k, o.snapshots, (double)it * dt, tty ? "" : "\n");
    }
  }
  if (!o.quiet && tty)
    fprintf(stderr, "\n");
  ok = sink_close(&s) == 0 && ok;
  if (ok && rename(tmp, o.output) != 0)
    ok = 0;
  if (!ok) {
    fprintf(stderr, "wavefield_gen: cannot write %s: %s\n", o.output, strerror(errno));
    unlink(tmp);
  }
  free(v2);
  free(a);
  free(b);
  free(gx);
  free(gz);
  free(buf);
  return ok ? 0 : 1;
}
