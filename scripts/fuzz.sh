#!/usr/bin/env bash
# Runs the cargo-fuzz targets of fuzz/ one after another (docs/reliability.md,
# "Fuzzing"). Not part of CI (.ci/run): needs cargo-fuzz and a nightly
# toolchain (`cargo install cargo-fuzz --locked`).
#
#   scripts/fuzz.sh                    # every target, 10^7 executions each
#   RUNS=100000 scripts/fuzz.sh trace_msr config
#   MAX_TIME=240 scripts/fuzz.sh      # stop each target after 240 s at the latest
#
# Seeds come from fuzz/seed.sh (run when fuzz/corpus is missing); corpora,
# crash artifacts and logs (fuzz/logs/TARGET.log) are generated, not
# committed. Sanitizer none: the parsers are safe Rust, so AddressSanitizer
# would only slow them down; debug assertions and overflow checks are on.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
RUNS=${RUNS:-10000000}
MAX_LEN=${MAX_LEN:-4096}
MAX_TIME=${MAX_TIME:-0} # seconds per target, 0 = no limit
[ -d corpus ] || ./seed.sh
targets=("$@")
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(cargo +nightly fuzz list)
cargo +nightly fuzz build -s none -a
mkdir -p logs
for t in "${targets[@]}"; do
  echo "== $t: $RUNS runs"
  mkdir -p "corpus/$t"
  cargo +nightly fuzz run -s none -a "$t" "corpus/$t" -- \
    -runs="$RUNS" -max_total_time="$MAX_TIME" -max_len="$MAX_LEN" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    > "logs/$t.log" 2>&1 || { echo "$t: FAILED (fuzz/logs/$t.log)"; tail -30 "logs/$t.log"; exit 1; }
  # libFuzzer's own count and time (the build before it is not counted).
  read -r execs secs < <(sed -n 's/^Done \([0-9]*\) runs in \([0-9]*\) second.*/\1 \2/p' "logs/$t.log")
  files=$(find "corpus/$t" -type f | wc -l)
  bytes=$(find "corpus/$t" -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}')
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  echo "$t: $execs execs in ${secs}s ($((execs / (secs > 0 ? secs : 1))) exec/s), corpus $files files, $bytes bytes, load $load"
done
