# repeated gzstack auto / ring / mpi / redoub: medians. rep.sh MODE OUT FILES...
set -u
B=${B:-/work/i15/build}; MODE=$1; OUT=$2; shift 2; IN="$*"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for r in 1 2 3; do for a in auto ring mpi redoub; do
  if [ "$MODE" = shm ]; then L="mpirun -np 4 --oversubscribe"; else L="/work/i15/bench/cluster.sh run"; fi
  $L $B/app/gzstack -i $IN --var /wavefield --op sum -e 1e-4 --algo $a -o /tmp/gz15/o.h5 --metrics /tmp/gz15/m.json --force -q >/dev/null 2>&1
  python3 -c "import json;m=json.load(open('/tmp/gz15/m.json'));t=m['time'];print('$a',m['algorithm'],'%.3f'%t['total'],'%.3f'%m['allreduce_predicted_s'],'%.3f'%m['allreduce_measured_s'],m['algorithm_reason'][:70])" >> $OUT
done; done
