#!/usr/bin/env bash
# A sweep run by a real job runner gives exactly the in-process sweep.
#
# Runs one small grid (2 workloads x native, dedup, fad with two rho values,
# 2 seed shards: 16 cells) twice: in process (`dedupsim sweep`), and as the
# job list `sweep --emit-jobs` writes, run by RUNNER and merged by `sweep
# collect`. Then compares the two: every cell file byte for byte, and
# results.csv / results.json row for row (the in-process sweep lists rows in
# grid order, `collect` in cell-file order: rows are sorted before cmp).
#
#   usage: scripts/sweep-runners.sh RUNNER [--keep]
#     RUNNER  parallel  GNU parallel on this machine (Debian `parallel`)
#             slurm     a single-node Slurm started here for the run: slurmctld
#                       and slurmd on localhost with a generated slurm.conf
#                       and munge key (Debian `slurm-wlm`, `munge`; as root),
#                       the jobs as one array job (`sbatch --array --wait`),
#                       then stopped again (docs/reproduce.md, "On a Slurm cluster")
#             slurm-existing  the same array job on the Slurm cluster this
#                       machine already submits to (sbatch on PATH, its
#                       slurm.conf); the work directory must be on storage
#                       every node sees: set WORK to such a directory
#     --keep  keep the work directory (printed) instead of removing it
#   environment:
#     WORK       the work directory (default: a new one under ${TMPDIR:-/tmp})
#     JOBS       parallel's -j (default: the number of cores)
#     DEDUPSIM   the binary (default: built with cargo build --release)
#
# Exit status: 0 identical, 1 different or a job failed, 77 RUNNER cannot
# run here (not installed, not root, or the private Slurm did not come up;
# a message says why).
set -euo pipefail
usage() { sed -n '/^#   usage:/,/^#     DEDUPSIM/s/^# \{0,1\}//p' "$0"; }
[ $# -ge 1 ] || { usage >&2; exit 2; }
runner=$1 keep=0
shift
while [ $# -gt 0 ]; do
  case $1 in
    --keep) keep=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done
case $runner in parallel | slurm | slurm-existing) ;; -h | --help) usage; exit 0 ;; *) usage >&2; exit 2 ;; esac
cd "$(dirname "$0")/.."
say() { echo "sweep-runners: $*" >&2; }
skip() { say "$*"; exit 77; }

case $runner in
  parallel) command -v parallel > /dev/null || skip "GNU parallel not installed (apt-get install parallel): skipped" ;;
  slurm)
    for c in slurmctld slurmd sbatch munged munge; do
      command -v "$c" > /dev/null || skip "$c not installed (apt-get install slurm-wlm munge): skipped"
    done
    [ "$(id -u)" = 0 ] || skip "starting slurmctld and slurmd needs root: skipped"
    ;;
  slurm-existing) command -v sbatch > /dev/null || skip "sbatch not found: no Slurm client here" ;;
esac
if [ -z "${DEDUPSIM:-}" ]; then
  cargo build --release --quiet
  DEDUPSIM=${CARGO_TARGET_DIR:-$PWD/target}/release/dedupsim
fi
if [ -n "${WORK:-}" ]; then
  mkdir -p "$WORK"
  work=$(cd "$WORK" && pwd)
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/sweep-runners.XXXXXX")
fi
started=() # pid files of the daemons this script started
cleanup() {
  local f pids=() p _
  for f in ${started[@]+"${started[@]}"}; do
    [ -s "$f" ] && pids+=("$(cat "$f")")
  done
  for p in ${pids[@]+"${pids[@]}"}; do kill "$p" 2> /dev/null || true; done
  # The daemons write their state while they stop: wait for them (10 s at
  # most) before removing the directory they write into.
  for _ in $(seq 100); do
    alive=0
    for p in ${pids[@]+"${pids[@]}"}; do kill -0 "$p" 2> /dev/null && alive=1; done
    [ $alive = 0 ] && break
    sleep 0.1
  done
  if [ $keep = 1 ]; then say "kept $work"; else rm -rf "$work" 2> /dev/null || { sleep 1; rm -rf "$work" || true; }; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- the grid: 16 cells, a few seconds in all
cat > "$work/grid.toml" << 'EOF'
name = "runners"
base = "fad-table1"
seed = 42
content = "zipf:a=0.2,dedup=0.5"
[grid]
workloads = ["synth:name=mixed,requests=3000,read=0.5,footprint=64MiB,hot=0.4:16MiB",
             "synth:name=writes,requests=2000,read=0.3,footprint=32MiB,hot=0.4:8MiB,iat=exp:300us"]
policies = ["native", "dedup", "fad"]
[grid.set]
"policy.fad.rho" = [0.1, 0.3]
seed = [1, 2]
EOF
say "in-process sweep"
"$DEDUPSIM" sweep "$work/grid.toml" --out "$work/inproc" -q > /dev/null
"$DEDUPSIM" sweep "$work/grid.toml" --emit-jobs "$work/jobs.txt" --out "$work/jobs" 2> /dev/null
n=$(wc -l < "$work/jobs.txt" | tr -d ' ')
say "$n job lines in $work/jobs.txt, run by $runner"

# ---- the runner
t0=$(date +%s.%N)
case $runner in
  parallel)
    parallel --will-cite -j "${JOBS:-$(nproc)}" --halt now,fail=1 --joblog "$work/parallel.log" \
      < "$work/jobs.txt" 2> "$work/parallel.out"
    say "parallel: $(tail -n +2 "$work/parallel.log" | awk '$7 == 0' | wc -l | tr -d ' ') of $n jobs exited 0"
    ;;
  slurm)
    # A private single-node cluster: its own munge key and socket, ports
    # 16817/16818, state and logs in $work/slurm; nothing system-wide changes.
    s=$work/slurm
    cannot() { # cannot DAEMON: it did not start; say why, skip
      tail -n 5 "$s"/log/*.log >&2 2> /dev/null || true
      skip "slurm: $1 did not start here (log lines above), so Slurm cannot run on this machine: skipped"
    }
    mkdir -p "$s/munge" "$s/state" "$s/spool" "$s/log"
    chmod 711 "$s/munge"
    dd if=/dev/urandom of="$s/munge/munge.key" bs=1024 count=1 2> /dev/null
    chmod 400 "$s/munge/munge.key"
    munged --force -S "$s/munge/sock" --key-file="$s/munge/munge.key" --log-file="$s/log/munged.log" \
      --pid-file="$s/munge/munged.pid" --seed-file="$s/munge/seed" || cannot munged
    started+=("$s/munge/munged.pid")
    host=$(hostname -s)
    cat > "$s/slurm.conf" << EOF
ClusterName=dedupsim
SlurmctldHost=$host
SlurmctldAddr=127.0.0.1
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$s/munge/sock
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
StateSaveLocation=$s/state
SlurmdSpoolDir=$s/spool
SlurmctldPidFile=$s/slurmctld.pid
SlurmdPidFile=$s/slurmd.pid
SlurmctldLogFile=$s/log/slurmctld.log
SlurmdLogFile=$s/log/slurmd.log
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
    export SLURM_CONF=$s/slurm.conf
    slurmctld -f "$SLURM_CONF" || cannot slurmctld
    started+=("$s/slurmctld.pid")
    slurmd -f "$SLURM_CONF" || cannot slurmd
    started+=("$s/slurmd.pid")
    for _ in $(seq 30); do # the node registers within a few seconds
      state=$(sinfo -h -n "$host" -o %T 2> /dev/null || true)
      case $state in idle*) break ;; esac
      sleep 1
    done
    case $state in
      idle*) say "slurm: slurmctld and slurmd up ($(slurmctld -V)), node $host $state, $(nproc) CPUs" ;;
      *)
        say "slurm: node $host not idle after 30 s (state '${state:-none}'), so Slurm cannot run here: skipped; logs:"
        tail -n 5 "$s/log/munged.log" "$s/log/slurmctld.log" "$s/log/slurmd.log" >&2 || true
        exit 77
        ;;
    esac
    ;;
esac
case $runner in
  slurm | slurm-existing)
    mkdir -p "$work/slurm-out"
    # One array task per job line; --wait returns when all have ended (non-zero if one failed).
    sbatch --wait --job-name=dedupsim-sweep --array="1-$n" --output="$work/slurm-out/task-%a.out" \
      --chdir="$work" --wrap "eval \"\$(sed -n \${SLURM_ARRAY_TASK_ID}p '$work/jobs.txt')\"" >&2
    done_lines=$(cat "$work"/slurm-out/task-*.out | grep -c ': done (key ' || true)
    say "slurm: $done_lines of $n array tasks wrote their cell ($(ls "$work/slurm-out" | wc -l | tr -d ' ') task logs)"
    ;;
esac
say "runner took $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
"$DEDUPSIM" sweep collect "$work/jobs" > /dev/null

# ---- the comparison
status=0
cells=0
for f in "$work"/inproc/cells/*.json; do
  cells=$((cells + 1))
  if ! cmp -s "$f" "$work/jobs/cells/${f##*/}"; then
    say "cell ${f##*/}: differs or is missing from the $runner run"
    status=1
  fi
done
jobs_cells=$(ls "$work"/jobs/cells/*.json | wc -l | tr -d ' ')
[ "$jobs_cells" = "$cells" ] || { say "$runner wrote $jobs_cells cell files, in-process $cells"; status=1; }
sorted_csv() { head -n 1 "$1"; tail -n +2 "$1" | LC_ALL=C sort; }
sorted_json() {
  if command -v jq > /dev/null; then
    jq -S 'sort_by(.experiment, .workload_spec, .policy, .params)' "$1"
  else
    python3 -c 'import json, sys
rows = json.load(open(sys.argv[1]))
rows.sort(key=lambda r: (r["experiment"], r["workload_spec"], r["policy"], r["params"]))
print(json.dumps(rows, indent=2, sort_keys=True))' "$1"
  fi
}
if cmp -s <(sorted_csv "$work/inproc/results.csv") <(sorted_csv "$work/jobs/results.csv"); then
  say "results.csv: identical ($(($(wc -l < "$work/jobs/results.csv") - 1)) rows)"
else
  say "results.csv: DIFFERENT"
  status=1
fi
if cmp -s <(sorted_json "$work/inproc/results.json") <(sorted_json "$work/jobs/results.json"); then
  say "results.json: identical"
else
  say "results.json: DIFFERENT"
  status=1
fi
[ $status = 0 ] && say "OK: $cells cell files byte-identical; $runner + sweep collect = in-process sweep"
exit $status
