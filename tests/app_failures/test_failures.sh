#!/usr/bin/env bash
# Signals and killed ranks during `gzstack stack` (see CMakeLists.txt).
# The input is large enough (2 snapshots of 4096 x 4096 float32) that the
# run is still reading, reducing or writing when the signal arrives; each
# case waits for the state it needs (a temporary output file, running ranks)
# before it signals, so no case depends on timing alone.
set -u
GZ=$1 MPIRUN=$2 KILLER=${3:-}
TMP=$(mktemp -d)
cleanup() {
  pkill -KILL -f "$TMP/in.raw" 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT
# Time limits below are multiplied by GZ_TEST_TIME_SCALE (the valgrind run).
SCALE=${GZ_TEST_TIME_SCALE:-1}
JOB_LIMIT=$((20 * SCALE)) # seconds a signalled job may take to end
pass=0 fail=0
ok() { pass=$((pass + 1)); }
ko() { fail=$((fail + 1)); echo "FAIL: $*"; }

dd if=/dev/zero of="$TMP/in.raw" bs=1M count=128 status=none || { echo "cannot write input"; exit 1; }

# start_job DIR: gzstack on 2 ranks in the background, writing DIR/out.nc.
# The signal-handler cases name their temporaries (GZ_NAMED_TEMPS=1: what
# happens where O_TMPFILE is missing) so that they can see the write begin;
# NAMED=0 start_job DIR: the default unnamed outputs.
start_job() {
  local named=()
  mkdir -p "$1"
  [ "${NAMED-1}" = 1 ] && named=(GZ_NAMED_TEMPS=1)
  env "${named[@]}" "$MPIRUN" --oversubscribe -np 2 "$GZ" -i "$TMP/in.raw" \
    --dims 4096x4096 -e 1e-3 -o "$1/out.nc" --png "$1/out.png" -q >"$1/log" 2>&1 &
  JOB=$!
}

# wait_for SECONDS COMMAND...: poll every 2 ms until COMMAND succeeds.
wait_for() {
  local limit=$1 i=0
  shift
  while ! "$@"; do
    i=$((i + 1))
    [ $i -gt $((limit * 500)) ] && return 1
    sleep 0.002
  done
}
temp_exists() { compgen -G "$1/*.tmp-*" >/dev/null; }
# job_ranks: the pids of this test's gzstack ranks (other tests may run
# gzstack at the same time: match the unique input path, not the name;
# under valgrind a rank's process is named after the valgrind tool).
job_ranks() {
  local p
  for p in $(pgrep -f "$TMP/in.raw"); do
    case $(cat /proc/$p/comm 2>/dev/null) in gzstack | memcheck*) echo "$p" ;; esac
  done
}
ranks_running() { [ "$(job_ranks | wc -l)" -ge 2 ]; }

# finish_job DESCRIPTION DIR: the job must end non-zero within JOB_LIMIT
# seconds and leave no temporary file; prints the elapsed seconds.
finish_job() {
  local what=$1 dir=$2 t0=$SECONDS rc
  for _ in $(seq 1 $((10 * JOB_LIMIT))); do kill -0 $JOB 2>/dev/null || break; sleep 0.1; done
  if kill -0 $JOB 2>/dev/null; then
    ko "$what: job still running after $JOB_LIMIT s"
    kill -KILL $JOB 2>/dev/null
  fi
  wait $JOB
  rc=$?
  [ $rc -ne 0 ] && ok || ko "$what: exit status 0"
  temp_exists "$dir" && ko "$what: temporary files left: $(ls "$dir")" || ok
  echo "$what: exit $rc after $((SECONDS - t0)) s; files: $(ls "$dir" | tr '\n' ' ')"
}

# 1. SIGTERM to the ranks while the output is being written: the handler
#    removes the temporary file. (If the write completed between the check
#    and the signal, out.nc was renamed into place whole: outputs are only
#    ever written under their temporary name.)
nc_temp_exists() { compgen -G "$1/out.nc.tmp-*" >/dev/null; }
for sig in TERM INT; do
  d=$TMP/rank_$sig
  start_job "$d"
  if wait_for $((60 * SCALE)) nc_temp_exists "$d"; then
    kill -$sig $(job_ranks)
    finish_job "SIG$sig to the ranks while writing" "$d"
  else
    ko "SIG$sig: no temporary output appeared in time"; cat "$d/log"
  fi
done

# signal_mpirun SIG DIR: SIG to mpirun once the output is being written;
# finish_job's checks on the job in DIR
signal_mpirun() {
  local sig=$1 d=$2
  start_job "$d"
  if wait_for $((60 * SCALE)) temp_exists "$d"; then
    kill -"$sig" $JOB
    finish_job "SIG$sig to mpirun while writing" "$d"
  else
    ko "SIG$sig to mpirun: no temporary output appeared"; cat "$d/log"
  fi
}

# 2. SIGTERM to mpirun: Open MPI terminates the ranks; the job ends non-zero,
#    no temporary file remains, and an output, if the write finished before
#    the ranks were stopped, is complete (it was renamed into place whole).
signal_mpirun TERM "$TMP/mpirun_term"

# 3. SIGKILL of one rank while the job reads and reduces: mpirun notices the
#    lost rank and ends the job; no output and no temporary file.
d=$TMP/rank_kill
start_job "$d"
if wait_for $((60 * SCALE)) ranks_running; then
  sleep 0.3
  victim=$(job_ranks | tail -n 1)
  if temp_exists "$d" || [ -e "$d/out.nc" ]; then
    ko "SIGKILL case: the run reached its output before the kill (input too small)"
  fi
  kill -KILL "$victim"
  finish_job "SIGKILL of one rank" "$d"
  [ ! -e "$d/out.nc" ] && ok || ko "SIGKILL of one rank: out.nc left behind"
else
  ko "SIGKILL case: ranks never started"; cat "$d/log"
fi

# 3b. SIGKILL of one rank inside a compressed allreduce (a loop of ring
#     allreduces of 16 MiB; the last rank kills itself in call 3): the
#     other ranks are blocked in the collective; mpirun must notice and end
#     the job non-zero within JOB_LIMIT seconds.
if [ -n "$KILLER" ]; then
  t0=$SECONDS
  timeout $JOB_LIMIT "$MPIRUN" --oversubscribe -np 3 "$KILLER" 3 >"$TMP/kill.log" 2>&1
  rc=$?
  grep -q "killing rank 2 in call 3" "$TMP/kill.log" && ok || { ko "SIGKILL in a collective: no kill"; cat "$TMP/kill.log"; }
  [ $rc -ne 0 ] && [ $rc -ne 124 ] && ok || { ko "SIGKILL in a collective: exit $rc (124: hung)"; cat "$TMP/kill.log"; }
  grep -q "the loop ended without the kill" "$TMP/kill.log" && ko "SIGKILL in a collective: a rank left the loop"
  echo "SIGKILL of a rank inside a compressed allreduce: exit $rc after $((SECONDS - t0)) s"
fi

# 3c. SIGINT to mpirun (Ctrl-C) while the output is being written.
signal_mpirun INT "$TMP/mpirun_int"

# 3d. SIGKILL (no handler can run) to the ranks while they write outputs that
#     have no name until complete (O_TMPFILE, docs/reliability.md): an
#     archive per rank, compressed and read back by --verify. Whenever the
#     kill lands, the folder holds no partial file: only what was complete.
#     Where the file system has no O_TMPFILE the outputs are named
#     temporaries (the handler's case above), and this case is skipped.
unnamed_open() { # an open file "DIR/#inode (deleted)" in one of the ranks
  local p
  for p in $(job_ranks); do
    ls -l /proc/"$p"/fd 2>/dev/null | grep -q -- "-> $1/#[0-9]* (deleted)" && return 0
  done
  return 1
}
d=$TMP/unnamed
mkdir -p "$d"
cp "$TMP/in.raw" "$TMP/in2.raw"
"$MPIRUN" --oversubscribe -np 2 "$GZ" compress -i "$TMP/in.raw" "$TMP/in2.raw" --dims 4096 \
  -e 1e-3 --verify -o "$d" -q >"$TMP/unnamed.log" 2>&1 &
JOB=$!
HAVE_UNNAMED=0
if wait_for $((60 * SCALE)) unnamed_open "$d"; then
  HAVE_UNNAMED=1
  kill -KILL $(job_ranks)
  finish_job "SIGKILL of the ranks while writing unnamed outputs" "$d"
  for f in "$d"/*; do
    [ -e "$f" ] || continue
    cmp -s <(head -c 4 "$f") <(printf GZCA) && [ "$(stat -c %s "$f")" -gt 100 ] && ok ||
      ko "SIGKILL while writing unnamed outputs: $f is not a whole archive"
  done
elif temp_exists "$d"; then
  echo "note: no O_TMPFILE here (named temporaries); unnamed-output case not run"
  wait $JOB
else
  ko "SIGKILL case: no unnamed output seen while writing"; cat "$TMP/unnamed.log"; wait $JOB
fi
rm -f "$TMP/in2.raw"

# 3e. The same for a netCDF output: netCDF creates its file by name, which
#     gzstack moves at once into an unnamed file (io_commit.c,
#     gz_io_temp_adopt); a SIGKILL while `decompress` writes it leaves
#     neither a temporary nor out.nc.
if [ "$HAVE_UNNAMED" = 1 ]; then
  d=$TMP/nc_unnamed
  mkdir -p "$d"
  "$GZ" compress -i "$TMP/in.raw" --dims 8192x4096 -e 1e-3 -o "$TMP/in.raw.gzc" -q
  "$GZ" decompress -i "$TMP/in.raw.gzc" -o "$d/out.nc" -q >"$d/log" 2>&1 &
  JOB=$!
  if wait_for $((60 * SCALE)) unnamed_open "$d"; then
    kill -KILL $(job_ranks)
    finish_job "SIGKILL while decompress writes an unnamed netCDF output" "$d"
    [ ! -e "$d/out.nc" ] && ok || ko "SIGKILL while writing netCDF: out.nc left"
  else
    ko "SIGKILL case: no unnamed netCDF output seen while writing"; cat "$d/log"; wait $JOB
  fi
  rm -f "$TMP/in.raw.gzc"
fi

# 4. A full disk (a 300 KiB tmpfs; needs root and mount): the output that
#    does not fit is reported with the cause, nothing partial is left. Skipped
#    with a note where mounting is not allowed.
d=$TMP/small
mkdir -p "$d"
if mount -t tmpfs -o size=300k gztest "$d" 2>/dev/null; then
  head -c 290000 /dev/zero >"$d/fill" 2>/dev/null
  # random bits, lossless: an archive of about 4 MiB that cannot fit (zeros
  # compress to a few hundred bytes since the codec's rANS stage)
  head -c 4194304 /dev/urandom >"$TMP/noise.raw"
  "$MPIRUN" --oversubscribe -np 2 "$GZ" compress -i "$TMP/noise.raw" --dims 1024x1024 -e 0 \
    -o "$d/full.gzc" >"$TMP/full.log" 2>&1 && ko "full disk: exit 0"
  grep -q "No space left on device" "$TMP/full.log" && ok || { ko "full disk: no cause"; cat "$TMP/full.log"; }
  compgen -G "$d/full.gzc*" >/dev/null && ko "full disk: partial output: $(ls "$d")" || ok
  umount "$d"
else
  echo "note: cannot mount a tmpfs here; full-disk case not run"
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
