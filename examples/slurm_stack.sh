#!/bin/bash
# slurm_stack.sh - stack wavefield snapshots on a cluster with gzstack.
#
#   sbatch examples/slurm_stack.sh                 # defaults below
#   NX=4096 NZ=4096 SNAPSHOTS=64 sbatch -N 4 examples/slurm_stack.sh
#
# Step 1 generates the snapshots once (one task; skipped when the file
# exists), step 2 stacks them on every task with parallel HDF5 reading and
# the compressed allreduce, verifies against the exact MPI stack and writes
# the metrics JSON next to the result. Run from the repository root after
# building into build/ (cmake -S . -B build && cmake --build build -j).
#SBATCH --job-name=gzstack
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=16
#SBATCH --cpus-per-task=1
#SBATCH --time=00:30:00
#SBATCH --output=gzstack-%j.out
set -euo pipefail

BUILD=${BUILD:-build}
OUT=${OUT:-$BUILD/demo/slurm-${SLURM_JOB_ID:-local}}
NX=${NX:-2048}
NZ=${NZ:-2048}
SNAPSHOTS=${SNAPSHOTS:-32}            # 2048 x 2048 x 32 float32 = 512 MiB
E=${E:-1e-4}
ALGO=${ALGO:-auto}                    # auto | redoub | ring | mpi
DATA=${DATA:-$BUILD/demo/wavefield_${NX}x${NZ}x${SNAPSHOTS}.h5}

# Site modules (adapt): an MPI with parallel HDF5, netCDF, libpng.
# module load openmpi hdf5-mpi netcdf-c libpng

mkdir -p "$OUT"
if [ ! -e "$DATA" ]; then
  ONE=""
  command -v srun >/dev/null && ONE="srun --ntasks=1 --nodes=1"
  $ONE "$BUILD/examples/wavefield_gen" -o "$DATA" \
    --nx "$NX" --nz "$NZ" --snapshots "$SNAPSHOTS"
fi

# Open MPI honours Slurm's allocation; with srun use: srun --mpi=pmix ...
mpirun "$BUILD/app/gzstack" stack -i "$DATA" --var /wavefield -e "$E" --algo "$ALGO" \
  -o "$OUT/stack.nc" --png "$OUT/stack.png" --metrics "$OUT/metrics.json" \
  --stats-png "$OUT/errors.png" --verify --force

# The same stack with rank 0 reading and the compressed scatter, for comparison.
mpirun "$BUILD/app/gzstack" stack -i "$DATA" --var /wavefield -e "$E" --read root \
  -o "$OUT/stack_root.nc" --metrics "$OUT/metrics_root.json" --verify --force --quiet

echo "results in $OUT: stack.nc, stack*.png, errors.png, metrics*.json"
