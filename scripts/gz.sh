#!/usr/bin/env bash
# gz.sh - set up, build, run and test gzstack from a fresh Debian 12 machine.
#
#   bash scripts/gz.sh run     install what is missing, build, run the 4-rank demo
#   bash scripts/gz.sh test    install what is missing, build, run the test suite
#   bash scripts/gz.sh ci      test + ASan/UBSan build and tests (-Werror),
#                              GZ_ENABLE_CUDA=OFF build, the emulated GPU
#                              kernels under TSan, ptxas budgets (with nvcc),
#                              clang-format check, fuzzing, valgrind on a
#                              selection
#   bash scripts/gz.sh deps | build | format | fuzz SECONDS
#   bash scripts/gz.sh valgrind [CTEST ARGS]  the whole suite (or the
#                              tests CTEST ARGS select) under valgrind memcheck
#   bash scripts/gz.sh bench [STEP...]  (root) the emulated-cluster benchmarks:
#                              installs gnuplot-nox, cdo, nco, builds into
#                              build-bench, runs bench/run_bench.sh, rewrites
#                              the tables of BENCHMARKS.md
#
# Environment: BUILD_DIR (default build), JOBS (default nproc),
# GZ_DATA_DIR (real datasets, default ../shared/data beside the checkout).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
export GZ_DATA_DIR=${GZ_DATA_DIR:-$ROOT/../shared/data}

PACKAGES=(build-essential cmake pkg-config git
  libopenmpi-dev openmpi-bin libhdf5-openmpi-dev hdf5-tools
  libnetcdf-dev netcdf-bin libpng-dev zlib1g-dev libzstd-dev libargtable2-dev libinih-dev
  libzfp-dev clang clang-format libclang-rt-14-dev valgrind python3-h5py
  libsegyio-dev segyio-bin python3-segyio python3-numpy
  cdo nco) # cdo, nco: tests/app_climate compares gzstack with them

# The tests CI runs under valgrind: the codec, each family of collectives
# at 2 ranks, the io round trips and the full-disk writes, the statistics.
VALGRIND_CI_TESTS='^(test_codec_codes|test_coll_(allreduce|reduce_scatter|movement)\.np2|test_io_roundtrip\.np1|test_io_full\.np1|test_error_stats)$'

say() { printf '\n== %s\n' "$*"; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

deps() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
      missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    say "Debian packages: all present"
    return
  fi
  say "installing: ${missing[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${missing[@]}"
}

# Open MPI refuses root without these, and 2-core machines need oversubscription.
mpi_env() {
  if [ "$(id -u)" -eq 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  fi
  export OMPI_MCA_rmaps_base_oversubscribe=1
}

# The device backend of the builds that run the tests: nvcc's CUDA kernels
# where a GPU is visible, else the same kernels compiled against the CPU
# emulation of the CUDA runtime (kernels/emu/, docs/gpu.md), so that the GPU
# tests run, not skip, on machines without a GPU. GZ_ENABLE_CUDA overrides.
device_backend() {
  if [ -n "${GZ_ENABLE_CUDA:-}" ]; then
    echo "$GZ_ENABLE_CUDA"
  elif nvidia-smi -L >/dev/null 2>&1; then
    echo AUTO
  else
    echo EMU
  fi
}

build() { # build DIR [cmake options...]
  local dir=$1
  shift
  say "configure and build in $dir"
  cmake -S "$ROOT" -B "$dir" -DGZ_DATA_DIR="$GZ_DATA_DIR" \
    -DGZ_ENABLE_CUDA="$(device_backend)" "$@" >"$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log"; return 1; }
  grep -E "^-- gzstack" "$dir.configure.log" || true
  cmake --build "$dir" -j "$JOBS"
}

run_demo() {
  local demo=$BUILD_DIR/demo
  mkdir -p "$demo"
  mpi_env
  say "generating 16 wavefield snapshots (512 x 512, acoustic FD on a layered model)"
  "$BUILD_DIR/examples/wavefield_gen" --nx 512 --nz 512 --snapshots 16 \
    -o "$demo/wavefield.h5" --force
  # On one machine shared memory beats compression, so `--algo auto` would pick
  # plain MPI here; the demo forces the compressed ring allreduce to show it.
  say "mpirun -np 4 gzstack: compressed stacking (ring allreduce), e = 1e-4"
  mpirun -np 4 "$BUILD_DIR/app/gzstack" -i "$demo/wavefield.h5" --var /wavefield \
    -e 1e-4 --algo ring -o "$demo/stack.nc" --png "$demo/stack.png" \
    --metrics "$demo/metrics.json" --stats-png "$demo/error_stats.png" --verify --force
  say "outputs in $demo: stack.nc (result), stack*.png (renders), error_stats.png, metrics.json"
  ls -l "$demo"
}

run_tests() { # run_tests DIR
  mpi_env
  say "ctest in $1"
  (cd "$1" && ctest --output-on-failure -j "$JOBS" --timeout 600)
}

fuzz() { # fuzz SECONDS: each libFuzzer target for SECONDS
  local dir=$ROOT/build-fuzz secs=${1:-60}
  build "$dir" -DCMAKE_C_COMPILER=clang -DGZ_BUILD_FUZZ=ON -DGZ_ENABLE_CUDA=OFF \
    -DGZ_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=Debug
  # LeakSanitizer/ASan suppressions cover the netCDF and HDF5 libraries only
  # (see tests/fuzz/*.supp and the top of tests/fuzz/fuzz_readers.c).
  export LSAN_OPTIONS=suppressions=$ROOT/tests/fuzz/lsan.supp
  for f in "$dir"/tests/fuzz/fuzz_*; do
    [ -x "$f" ] || continue
    local name extra=() asan=
    name=$(basename "$f")
    say "fuzzing $name for ${secs}s (a crash is kept in $dir/artifacts/$name/)"
    local corpus=$dir/corpus/$name
    mkdir -p "$corpus" "$dir/artifacts/$name"
    cp -n "$ROOT/tests/fuzz/corpus/$name"/* "$corpus"/ 2>/dev/null || true
    if [ "$name" = fuzz_readers ]; then
      extra=(-fork=1 -ignore_ooms=1 -ignore_timeouts=1 -timeout=10)
      asan=allocator_may_return_null=1:suppressions=$ROOT/tests/fuzz/asan.supp
    fi
    ASAN_OPTIONS=$asan "$f" -max_total_time="$secs" -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$dir/artifacts/$name/" "${extra[@]}" "$corpus"
  done
}

# valgrind memcheck over the whole test suite: a build whose tests start
# every program (test executables, every gzstack rank, the scripts' checkers
# and generators) under valgrind, with 20 times the time limits. Each
# process logs to DIR/valgrind/<pid>.log; any memory error or definite or
# indirect leak in a log fails the run, including in processes whose exit
# status a test expects to be non-zero. Open MPI's, HDF5's and netCDF's own
# start-up allocations are suppressed by scripts/valgrind.supp.
valgrind_run() { # valgrind_run DIR [ctest arguments...]
  local dir=$1 logs=$1/valgrind rc=0
  shift
  mpi_env
  rm -rf "$logs"
  mkdir -p "$logs"
  (cd "$dir" && ctest --output-on-failure -j "$JOBS" "$@") || rc=1
  # -q: a clean process leaves an empty log; the lines below are reports.
  local bad
  bad=$(grep -lE "^==[0-9]+== [^ W]" "$logs"/*.log 2>/dev/null || true)
  say "valgrind: $(ls "$logs" | wc -l) processes checked, $(echo -n "$bad" | grep -c .) with reports"
  for f in $bad; do
    echo "--- $f"
    head -n 60 "$f"
  done
  [ -z "$bad" ] && [ $rc -eq 0 ]
}

# The emulated GPU kernels (kernels/emu/) under ThreadSanitizer, one OS
# thread per GPU thread: a missing __syncthreads or a racy index is a
# reported race (docs/gpu.md). A small build: the test and what it links.
tsan_gpu() {
  local dir=$ROOT/build-tsan
  say "configure and build in $dir (ThreadSanitizer, emulated GPU)"
  cmake -S "$ROOT" -B "$dir" -DGZ_DATA_DIR="$GZ_DATA_DIR" -DGZ_WERROR=ON -DGZ_ENABLE_CUDA=EMU \
    -DGZ_TSAN=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log"; return 1; }
  cmake --build "$dir" -j "$JOBS" --target test_gpu_codec
  mpi_env
  (cd "$dir" && ctest --output-on-failure -L tsan --timeout 900)
}

valgrind_suite() { # valgrind_suite [ctest arguments...]: build, then valgrind_run
  local vgdir=${VALGRIND_BUILD_DIR:-$ROOT/build-valgrind} vg
  vg="valgrind;--tool=memcheck;--leak-check=full;--show-leak-kinds=definite,indirect"
  vg+=";--errors-for-leak-kinds=definite,indirect;--error-exitcode=99;--num-callers=30"
  vg+=";--suppressions=$ROOT/scripts/valgrind.supp;-q;--log-file=$vgdir/valgrind/%p.log"
  build "$vgdir" -DGZ_ENABLE_CUDA=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DGZ_TEST_LAUNCHER=$vg" -DGZ_TEST_TIME_SCALE=20
  valgrind_run "$vgdir" "$@"
}

cmd=${1:-help}
case $cmd in
deps) deps ;;
build)
  deps
  build "$BUILD_DIR"
  ;;
run)
  deps
  build "$BUILD_DIR"
  run_demo
  ;;
test)
  deps
  build "$BUILD_DIR"
  run_tests "$BUILD_DIR"
  ;;
ci)
  deps
  build "$BUILD_DIR" -DGZ_WERROR=ON
  run_tests "$BUILD_DIR"
  # ASan+UBSan in a Debug build run programs 2-4x slower: the error cases'
  # "ends within N s" limits scale by 3 there (by 20 under valgrind)
  build "$ROOT/build-asan" -DGZ_WERROR=ON -DGZ_SANITIZE=ON -DGZ_ENABLE_CUDA=OFF \
    -DCMAKE_BUILD_TYPE=Debug -DGZ_TEST_TIME_SCALE=3
  run_tests "$ROOT/build-asan"
  tsan_gpu
  say "ptxas register / local-memory budgets of the kernels"
  bash "$ROOT/kernels/ptxas_budgets.sh"
  say "clang-format check"
  cmake --build "$BUILD_DIR" --target format-check
  fuzz "${GZ_FUZZ_SECONDS:-45}" # 6 targets: 4.5 minutes
  # memcheck on a selection (a few minutes); `bash scripts/gz.sh valgrind`
  # runs the whole suite (about two hours on 2 cores)
  valgrind_suite -R "${GZ_VALGRIND_CI_TESTS:-$VALGRIND_CI_TESTS}"
  ;;
format)
  build "$BUILD_DIR"
  cmake --build "$BUILD_DIR" --target format
  ;;
fuzz)
  deps
  fuzz "${2:-600}"
  ;;
valgrind)
  deps
  shift
  valgrind_suite "$@"
  ;;
bench)
  deps
  PACKAGES=(gnuplot-nox cdo nco) # bench only: CI stays lean
  deps
  build "${BENCH_BUILD_DIR:-$ROOT/build-bench}" -DCMAKE_BUILD_TYPE=Release
  shift
  as_root env GZ_DATA_DIR="$GZ_DATA_DIR" bash "$ROOT/bench/run_bench.sh" \
    "${BENCH_BUILD_DIR:-$ROOT/build-bench}" "$@"
  ;;
*)
  sed -n '2,19p' "${BASH_SOURCE[0]}"
  [ "$cmd" = help ] || exit 2
  ;;
esac
