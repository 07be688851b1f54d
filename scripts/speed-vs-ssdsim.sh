#!/usr/bin/env bash
# Issue 12's speed figure in one command: `dedupsim run -p native` end to
# end (the trace read as it is replayed, both passes: `run`'s default for a
# trace file) against SSDsim 2.1 on the same SSDsim ASCII
# trace, CPU time (user + sys) and peak resident memory of each process, in
# interleaved rounds (dedupsim, SSDsim, dedupsim, ...) so that a slow
# interval of a shared machine hits both. BENCHMARKS.md records the results.
#
#   scripts/speed-vs-ssdsim.sh                  # the benchmark workload (1,000,000 requests), 3 rounds
#   ROUNDS=5 scripts/speed-vs-ssdsim.sh TRACE   # another plain SSDsim ASCII trace
#
# Needs ../shared/peers (SSDsim's source, built here with its build.sh into
# PEERS_BIN, default /tmp/peers-bin, about a minute the first time), gcc and
# GNU time (/usr/bin/time). Not part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
PEERS=${PEERS:-../shared/peers}
PEERS_BIN=${PEERS_BIN:-/tmp/peers-bin}
[ -x /usr/bin/time ] || { echo "speed-vs-ssdsim: needs GNU time at /usr/bin/time" >&2; exit 1; }
[ -x "$PEERS/build.sh" ] || { echo "speed-vs-ssdsim: no $PEERS/build.sh (set PEERS to the peers directory)" >&2; exit 1; }

cargo build --release --quiet
bin=$PWD/target/release/dedupsim
"$PEERS/build.sh" "$PEERS_BIN" ssdsim > /dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

trace=${1:-}
if [ -z "$trace" ]; then
  "$bin" trace synth --synth benchmark --out "$work/bench.native" > /dev/null
  "$bin" trace convert --to ssdsim --out "$work/bench.ascii" "$work/bench.native" > /dev/null
  rm "$work/bench.native"
  trace=$work/bench.ascii
fi
[ -f "$trace" ] || { echo "speed-vs-ssdsim: $trace: no such file" >&2; exit 1; }
case $trace in *.gz | *.zst | *.zstd) echo "speed-vs-ssdsim: $trace: SSDsim reads plain text only; decompress it first" >&2; exit 1 ;; esac
trace=$(cd "$(dirname "$trace")" && pwd)/$(basename "$trace")

# SSDsim reads page.parameters from its working directory and the trace
# name from stdin.
mkdir "$work/ssd"
cp "$PEERS/config/ssdsim-fad-table1.parameters" "$work/ssd/page.parameters"
ln -s "$trace" "$work/ssd/trace"

requests=$(wc -l < "$trace")
echo "trace $trace ($requests lines, $(du -h "$trace" | cut -f1)), $ROUNDS rounds, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| round | dedupsim CPU (s) | dedupsim requests/s | dedupsim peak (MiB) | SSDsim 2.1 CPU (s) | SSDsim peak (MiB) | SSDsim / dedupsim |"
echo "|---|---:|---:|---:|---:|---:|---:|"
# GNU time's last line (a non-zero exit adds a line before it).
cpu() { tail -n 1 "$1" | awk '{printf "%.2f", $1 + $2}'; }
mib() { tail -n 1 "$1" | awk '{printf "%.1f", $3 / 1024}'; }
ratios=
for r in $(seq 1 "$ROUNDS"); do
  /usr/bin/time -f "%U %S %M" -o "$work/d.time" "$bin" run -q -p native --trace "$trace" --format ssdsim > /dev/null
  # SSDsim ends with status 1 after a complete run (peers/README.md).
  rc=0
  (cd "$work/ssd" && echo trace | /usr/bin/time -f "%U %S %M" -o "$work/s.time" "$PEERS_BIN/ssd" > stdout.txt 2> stderr.txt) || rc=$?
  [ "$rc" -le 1 ] || { echo "speed-vs-ssdsim: SSDsim failed (exit $rc); see $work/ssd" >&2; trap - EXIT; exit 1; }
  d=$(cpu "$work/d.time")
  s=$(cpu "$work/s.time")
  ratio=$(awk -v s="$s" -v d="$d" 'BEGIN {printf "%.1f", s / d}')
  rps=$(awk -v n="$requests" -v d="$d" 'BEGIN {printf "%.0f", n / d}')
  ratios="$ratios $ratio"
  echo "| $r | $d | $rps | $(mib "$work/d.time") | $s | $(mib "$work/s.time") | ${ratio}x |"
done
echo
echo "SSDsim / dedupsim CPU time:$(echo "$ratios" | sed 's/ \([0-9.]*\)/ \1x/g') (median $(echo $ratios | tr ' ' '\n' | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')x)"
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
