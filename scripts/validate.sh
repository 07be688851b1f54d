#!/usr/bin/env bash
# Validation suite: dedupsim's timing model against SSDsim 2.1 and MQSim.
#
# Every trace (each sample under ../shared/traces, two Table II replicas and
# the 1M-request benchmark workload) is converted to SSDsim ASCII with
#   dedupsim trace convert --to ssdsim --volume merge --wrap
# (all volumes in one address space, folded into the device: exactly the
# requests dedupsim replays) and replayed on SSDsim (run.sh ssdsim), MQSim
# (run.sh mqsim) and `dedupsim run -p native`. Mean and P99 read and write
# latencies (us) go into a markdown table with the dedupsim/SSDsim ratios and
# a verdict: PASS when both means are within 10 % and both P99s within 20 %
# of SSDsim's (MQSim reports no percentiles), MISS otherwise. More tables:
# SSDsim against dedupsim with SSDsim's own serve-time allocation
# (allocation = "dynamic"); SSDsim and dedupsim both with static CWDP
# allocation (the timing models alone); MQSim against dedupsim run with
# MQSim's rules (static CWDP allocation, a write done at its program's end),
# PASS when both means are within 10 %. In these three tables dedupsim runs
# with the peer's own config file imported (`dedupsim config import`), so
# the two cannot drift. Isolation rows change one setting (dedupsim's or a
# peer's) to show a named model difference.
#
#   usage: scripts/validate.sh [--quick] [--no-big] [--only LIST] [--out FILE] [-- RUN_ARGS...]
#     --quick     only the first, small trace (UMass Financial1, 10k requests), for CI
#     --no-big    skip the 1M-request benchmark workload
#     --only LIST only the workloads whose label contains one of these comma-separated
#                 strings, e.g. --only msr,systor,mail@
#     --out FILE  the markdown report (default docs/validation.md)
#     RUN_ARGS    passed to every `dedupsim run`, e.g. -- --set timing.scheduling=fcfs
#   environment:
#     PEERS_BIN      where ../shared/peers/build.sh puts the peers (default /tmp/peers-bin)
#     PEERS_TIMEOUT  bound on each simulator run, timeout(1) syntax (default 20m)
#     TRACES         the trace samples (default ../shared/traces)
#     CARGO_TARGET_DIR  where cargo builds dedupsim (default ./target)
#
# Without ../shared/peers it prints a note and exits 0. A trace the converter
# cannot read is skipped with a note in the report; a failed peer run shows as
# "fail". Exit status 1 only if a dedupsim run failed. Needs jq or python3.
set -euo pipefail

usage() { sed -n '/^#   usage:/,/^#     CARGO_TARGET_DIR/s/^# \{0,1\}//p' "$0"; }
quick=0 big=1 only= out=docs/validation.md
run_args=()
while [ $# -gt 0 ]; do
  case $1 in
    --quick) quick=1; shift ;;
    --no-big) big=0; shift ;;
    --only) [ $# -ge 2 ] || { usage >&2; exit 2; }; only=$2; shift 2 ;;
    --only=*) only=${1#--only=}; shift ;;
    --out) [ $# -ge 2 ] || { usage >&2; exit 2; }; out=$2; shift 2 ;;
    --out=*) out=${1#--out=}; shift ;;
    --) shift; run_args=("$@"); break ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done
case $out in /*) ;; *) out=$PWD/$out ;; esac
cd "$(dirname "$0")/.."

peers=../shared/peers
if [ ! -d "$peers" ]; then
  echo "validate: ../shared/peers not found, skipped"
  exit 0
fi
traces=${TRACES:-../shared/traces}
export PEERS_BIN=${PEERS_BIN:-/tmp/peers-bin}
export PEERS_TIMEOUT=${PEERS_TIMEOUT:-20m}
if command -v jq > /dev/null; then json=jq
elif command -v python3 > /dev/null; then json=python3
else echo "validate: needs jq or python3" >&2; exit 1; fi

say() { echo "validate: $*" >&2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/validate.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

# ---- the workloads: "label<TAB>kind<TAB>argument", kind = file | replica | synth
items=()
# Traces replayed only in part (label -> requests kept), with the reason.
declare -A cap=([derived-vdi-lun3-ronshih]=20000)
declare -A cap_why=([derived-vdi-lun3-ronshih]="synthetic timestamps 10 ns apart: all 202,725 requests \
arrive within 2 ms, and SSDsim's time grows with the square of the outstanding requests (20k: ~5 s, \
the whole trace: over 10 min)")
if [ -d "$traces" ]; then
  first=() rest=()
  for dir in "$traces"/*/; do
    files=()
    for f in "$dir"*; do
      case ${f##*/} in *.md | README* | SOURCE*) continue ;; esac
      [ -f "$f" ] && files+=("$f")
    done
    for f in ${files[@]+"${files[@]}"}; do
      label=$(basename "$dir")
      if [ ${#files[@]} -gt 1 ]; then # folder/file, without compression and format extensions
        name=$(basename "$f"); name=${name%.gz}; name=${name%.zst}
        label="$label/${name%.*}"
      fi
      # the first (and --quick's only) trace: the classic SSDsim trace, 10k requests
      case $label in umass-financial1*) first+=("$label	file	$f") ;; *) rest+=("$label	file	$f") ;; esac
    done
  done
  items+=(${first[@]+"${first[@]}"} ${rest[@]+"${rest[@]}"})
else
  say "$traces not found: synthetic workloads only"
fi
items+=("replica mail@0.1	replica	mail@0.1" "replica homes@0.1	replica	homes@0.1")
[ $big = 0 ] || items+=("synth benchmark (1M requests)	synth	benchmark")
# The benchmark workload at a quarter of its load: isolates allocation time
# (see "Divergences" below).
items+=("synth benchmark at 1/4 load (300k requests, 400 us mean gap)	synth	benchmark,requests=300000,iat=exp:400us")
# Isolation runs: the same trace again with one setting changed, in dedupsim
# or in a peer, to isolate a named model difference. All seven fields, "-"
# for none: "label<TAB>kind<TAB>argument<TAB>extra dedupsim args<TAB>SSDsim
# parameter edits (KEY=VALUE;...)<TAB>MQSim config edits (TAG=VALUE;...)<TAB>
# table", table = ssdsim or mqsim (the comparison the row belongs to).
for item in "${items[@]}"; do
  case ${item%%	*} in
    derived-vdi-lun3* | libcachesim-cloudphysics*) items+=("${item%%	*} [isolate: duplicate_read_shortcut]	${item#*	}	--set timing.duplicate_read_shortcut=true	-	-	ssdsim") ;;
  esac
  # Against MQSim: its host interface's fetch window (every queued command
  # fetched at once) and its PCIe transfers (made nearly free).
  case ${item%%	*} in
    derived-vdi-lun3* | mqsim-tpcc*) items+=("${item%%	*} [isolate: MQSim Queue_Fetch_Size=65535]	${item#*	}	-	-	Queue_Fetch_Size=65535	mqsim") ;;
    "synth benchmark (1M"* | *systor17-additional*) items+=("${item%%	*} [isolate: MQSim PCIe_Lane_Bandwidth=1000]	${item#*	}	-	-	PCIe_Lane_Bandwidth=1000	mqsim") ;;
  esac
done
[ $quick = 0 ] || items=("${items[0]}")
if [ -n "$only" ]; then
  kept=()
  for item in "${items[@]}"; do
    IFS=, read -ra wanted <<< "$only"
    for w in "${wanted[@]}"; do
      case ${item%%	*} in *"$w"*) kept+=("$item"); break ;; esac
    done
  done
  [ ${#kept[@]} -gt 0 ] || { echo "validate: --only $only matches no workload" >&2; exit 2; }
  items=("${kept[@]}")
fi

# ---- (a) the peers, (b) dedupsim
say "building the peers into $PEERS_BIN"
"$peers/build.sh" "$PEERS_BIN" >&2
say "building dedupsim (release)"
cargo build --release --quiet
dedupsim=${CARGO_TARGET_DIR:-$PWD/target}/release/dedupsim

# ---- helpers
# field KEY LINE: the value of KEY=VALUE in a run.sh output line
field() { awk -v k="$1" '{ for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) print substr($i, length(k) + 2) }' <<< "$2"; }
# latencies JSON: "mean_read mean_write p99_read p99_write" of the first report (nan without requests)
latencies() {
  if [ $json = jq ]; then
    jq -r 'def v(op; k): if op.count > 0 then op[k] | tostring else "nan" end;
      .[0].summary | [v(.read; "mean_us"), v(.write; "mean_us"), v(.read; "p99_us"), v(.write; "p99_us")] | join(" ")' "$1"
  else
    python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))[0]["summary"]
v = lambda x, k: str(x[k]) if x["count"] > 0 else "nan"
print(v(s["read"], "mean_us"), v(s["write"], "mean_us"), v(s["read"], "p99_us"), v(s["write"], "p99_us"))' "$1"
  fi
}
# cell VALUE: a latency for the table (1 decimal; n/a when the trace has none of that op)
cell() {
  case $1 in
    "") echo fail ;;
    nan) echo n/a ;;
    —) echo — ;;
    *) awk -v v="$1" 'BEGIN { printf "%.1f", v }' ;;
  esac
}
# ratio DEDUPSIM SSDSIM: dedupsim / SSDsim to 2 decimals, or — when either is missing
ratio() {
  case "$1 $2" in *nan* | *—* | " "* | *" ") echo —; return ;; esac
  awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "—" }'
}
# within RATIO TOLERANCE: 0 if |ratio - 1| <= tolerance
within() { awk -v r="$1" -v t="$2" 'BEGIN { d = r - 1; if (d < 0) d = -d; exit !(d <= t + 1e-9) }'; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
now() { date +%s.%N; }

# peer_config FILE EDITS STYLE NAME: a copy of a peer's config, $work/$i.NAME,
# with EDITS (KEY=VALUE;...) applied; STYLE ssdsim (KEY=VALUE; lines) or
# mqsim (<TAG>VALUE</TAG>). Prints the copy's path.
peer_config() {
  local copy=$work/$i.$4 e
  cp "$1" "$copy"
  IFS=';' read -ra edits <<< "$2"
  for e in "${edits[@]}"; do
    if [ "$3" = ssdsim ]; then
      grep -q "^${e%%=*}=" "$copy" || { echo "validate: no SSDsim parameter ${e%%=*}" >&2; exit 1; }
      sed -i "s/^${e%%=*}=[^;]*;/$e;/" "$copy"
    else
      grep -q "<${e%%=*}>" "$copy" || { echo "validate: no MQSim setting ${e%%=*}" >&2; exit 1; }
      sed -i "s|<${e%%=*}>[^<]*</${e%%=*}>|<${e%%=*}>${e#*=}</${e%%=*}>|" "$copy"
    fi
  done
  echo "$copy"
}
# judge REF RUN SPEC...: ratios RUN / REF of each SPEC ("metric tolerance name")
# into `ratios`, and the verdict into `verdict` (— if a run failed)
judge() {
  local ref=$1 run=$2 spec m tol name r
  shift 2
  ratios=() missed=()
  for spec in "$@"; do
    read -r m tol name <<< "$spec"
    r=$(ratio "${lat[$run.$m]:-}" "${lat[$ref.$m]:-}")
    ratios+=("$r")
    if [ "$r" != — ] && ! within "$r" "$tol"; then missed+=("$name"); fi
  done
  if [ -z "${lat[$ref.mr]:-}" ] || [ -z "${lat[$run.mr]:-}" ]; then verdict=—
  elif [ ${#missed[@]} -eq 0 ]; then verdict=PASS
  else verdict="MISS (${missed[*]})"; fi
}
# count TABLE: tallies `verdict` for table TABLE (isolation rows apart)
count() {
  if [ $iso = 1 ]; then n_iso[$1]=$((n_iso[$1] + 1))
  elif [ "$verdict" = PASS ]; then n_pass[$1]=$((n_pass[$1] + 1))
  elif [ "$verdict" != — ]; then n_miss[$1]=$((n_miss[$1] + 1)); fi
}
# The three comparisons (tables): 1 = SSDsim against dedupsim at its defaults;
# 2 = both with static CWDP allocation (SSDsim allocation=1 with
# static_allocation=1: the placement decided identically, so the timing
# models meet alone); 3 = MQSim against dedupsim with MQSim's rules where
# they are settings: static CWDP striping (MQSim has no dynamic allocation)
# and a write done when its program ends.
# 4 = SSDsim against dedupsim with SSDsim's own (serve-time, dynamic)
# allocation rule (dedupsim's `allocation = "dynamic"`; the peers have no
# deduplication, so every table runs Native).
# dedupsim's side of tables 2-4 is the peers' own config file, imported
# (`dedupsim config import`, docs/config-import.md), so that the two cannot
# drift: SSDsim's dynamic allocation (4), its static mode 1 = CWDP in the
# copy SSDsim runs with (2), MQSim's CWDP striping and program-end write
# completion (3). What the imports cannot represent is in $work/*.import.log.
static_edits="allocation=1;static_allocation=1"
i=import
import_config() { # import_config PEER_FILE NAME: $work/NAME.toml
  if ! "$dedupsim" config import "$1" -o "$work/$2.toml" 2> "$work/$2.import.log"; then
    cat "$work/$2.import.log" >&2
    echo "validate: dedupsim config import $1 failed" >&2
    exit 1
  fi
}
import_config "$peers/config/ssdsim-fad-table1.parameters" ssdsim
import_config "$(peer_config "$peers/config/ssdsim-fad-table1.parameters" "$static_edits" ssdsim static.parameters)" ssdsim-static
import_config "$peers/config/mqsim-fad-table1.xml" mqsim
dynamic_rules=(--config "$work/ssdsim.toml")
static_rules=(--config "$work/ssdsim-static.toml")
mq_rules=(--config "$work/mqsim.toml")
all4=("mr 0.10 rd" "mw 0.10 wr" "pr 0.20 P99-rd" "pw 0.20 P99-wr")

rows1=() rows2=() rows3=() rows4=() notes=()
dedupsim_failed=0
n_pass=(0 0 0 0 0) n_miss=(0 0 0 0 0) n_iso=(0 0 0 0 0)
# workloads at the defaults (every comparison; isolation rows not counted)
n_rows=0
for item in "${items[@]}"; do
  case $item in *"[isolate:"*) ;; *) n_rows=$((n_rows + 1)) ;; esac
done
i=0
for item in "${items[@]}"; do
  i=$((i + 1))
  IFS='	' read -r label kind arg extra ssd_edits mq_edits table <<< "$item"
  [ "${extra:--}" != - ] || extra=
  [ "${ssd_edits:--}" != - ] || ssd_edits=
  [ "${mq_edits:--}" != - ] || mq_edits=
  read -ra extra_args <<< "${extra:-}"
  iso=0
  case $label in *"[isolate:"*) iso=1 ;; esac
  say "[$i/${#items[@]}] $label"
  t0=$(now)
  src=$work/$i.src
  case $kind in
    file) src=$arg ;;
    replica) "$dedupsim" trace synth --replica "$arg" -o "$src" 2> "$work/$i.synth.log" ;;
    synth) "$dedupsim" trace synth --synth "$arg" -o "$src" 2> "$work/$i.synth.log" ;;
  esac
  ascii=$work/$i.ascii
  limit=()
  base=${label% \[isolate:*}
  if [ -n "${cap[$base]:-}" ]; then
    limit=(--max-requests "${cap[$base]}")
    [ "$base" != "$label" ] || notes+=("$label: first ${cap[$base]} requests only: ${cap_why[$base]}")
  fi
  if ! "$dedupsim" trace convert "$src" --to ssdsim --volume merge --wrap ${limit[@]+"${limit[@]}"} -o "$ascii" \
    2> "$work/$i.convert.log"; then
    why=$(grep -m1 '^error' "$work/$i.convert.log" || tail -n1 "$work/$i.convert.log")
    notes+=("$label: skipped, the converter cannot read it: ${why#error: }")
    say "  skipped: ${why#error: }"
    continue
  fi
  rm -f "$work/$i.src" # a synthetic source is not needed any more
  requests=$(wc -l < "$ascii" | tr -d ' ')
  timing="convert $(secs "$t0" "$(now)") s"

  # the tables this row is in, and the runs they need: peers ssdsim, ssdst
  # (SSDsim with static allocation), mqsim; dedupsim d (defaults), s
  # (static), q (MQSim's rules)
  case ${table:-} in ssdsim) tables=(1) ;; mqsim) tables=(3) ;; *) tables=(1 4 2 3) ;; esac
  case ${table:-} in
    ssdsim) peer_runs=(ssdsim mqsim) dedupsim_runs=(d) ;; # table 1 shows MQSim's figures too
    mqsim) peer_runs=(mqsim) dedupsim_runs=(q) ;;
    *) peer_runs=(ssdsim ssdst mqsim) dedupsim_runs=(d y s q) ;;
  esac
  # latencies: lat[RUN.METRIC], METRIC = mr mw pr pw (mean read, mean write,
  # P99 read, P99 write); unset = the run failed
  unset lat
  declare -A lat=()
  for run in "${peer_runs[@]}"; do
    sim=$run edits=
    case $run in
      ssdsim) edits=$ssd_edits ;;
      ssdst) sim=ssdsim edits="$static_edits${ssd_edits:+;$ssd_edits}" ;;
      mqsim) edits=$mq_edits ;;
    esac
    peer_args=()
    if [ -n "$edits" ]; then
      if [ $sim = ssdsim ]; then
        conf=$(peer_config "$peers/config/ssdsim-fad-table1.parameters" "$edits" ssdsim "$run.parameters") || exit 1
      else
        conf=$(peer_config "$peers/config/mqsim-fad-table1.xml" "$edits" mqsim "$run.xml") || exit 1
      fi
      peer_args=(--params "$conf")
    fi
    s0=$(now)
    # (run.sh keeps the run directory of a failed run: inside $work, removed at exit)
    if line=$(TMPDIR=$work "$peers/run.sh" "$sim" "$ascii" ${peer_args[@]+"${peer_args[@]}"} 2> "$work/$i.$run.log"); then
      lat[$run.mr]=$(field mean_read_us "$line") lat[$run.mw]=$(field mean_write_us "$line")
      lat[$run.pr]=$(field p99_read_us "$line") lat[$run.pw]=$(field p99_write_us "$line")
    else
      why=$(grep -m1 'run.sh:' "$work/$i.$run.log" || tail -n1 "$work/$i.$run.log")
      notes+=("$label: $run failed: ${why#run.sh: }")
    fi
    timing+=", $run $(secs "$s0" "$(now)") s"
  done
  if [ -n "${lat[mqsim.mr]:-}" ]; then lat[mqsim.pr]=— lat[mqsim.pw]=—; fi
  for run in "${dedupsim_runs[@]}"; do
    case $run in
      d) rules=() what= ;;
      y) rules=("${dynamic_rules[@]}") what=" (dynamic)" ;;
      s) rules=("${static_rules[@]}") what=" (static)" ;;
      q) rules=("${mq_rules[@]}") what=" (MQSim's rules)" ;;
    esac
    s0=$(now)
    if timeout --foreground "$PEERS_TIMEOUT" "$dedupsim" run -q -p native --trace "$ascii" --format ssdsim \
      --json "$work/$i.$run.json" ${rules[@]+"${rules[@]}"} ${run_args[@]+"${run_args[@]}"} \
      ${extra_args[@]+"${extra_args[@]}"} > "$work/$i.$run.log" 2>&1; then
      read -r "lat[$run.mr]" "lat[$run.mw]" "lat[$run.pr]" "lat[$run.pw]" < <(latencies "$work/$i.$run.json")
    else
      dedupsim_failed=1
      why=$(grep -m1 '^error' "$work/$i.$run.log" || tail -n1 "$work/$i.$run.log")
      notes+=("$label: dedupsim$what run failed: ${why#error: }")
    fi
    timing+=", dedupsim$what $(secs "$s0" "$(now)") s"
  done
  total=$(secs "$t0" "$(now)")
  rm -f "$ascii"

  # one row per table, with ratios and a verdict over the metrics the trace
  # has (one without reads is judged on writes)
  head="| $label${cap[$base]:+ (first ${cap[$base]})} | $requests"
  verdicts=()
  for t in "${tables[@]}"; do
    row=$head
    case $t in
      1)
        judge ssdsim d "${all4[@]}"
        for run in ssdsim mqsim d; do
          for m in mr mw pr pw; do row+=" | $(cell "${lat[$run.$m]:-}")"; done
        done
        ;;
      4)
        judge ssdsim y "${all4[@]}"
        for run in ssdsim y; do
          for m in mr mw pr pw; do row+=" | $(cell "${lat[$run.$m]:-}")"; done
        done
        ;;
      2)
        judge ssdst s "${all4[@]}"
        for run in ssdst s; do
          for m in mr mw pr pw; do row+=" | $(cell "${lat[$run.$m]:-}")"; done
        done
        ;;
      3)
        # MQSim reports no percentiles: both means within 10 %
        judge mqsim q "mr 0.10 rd" "mw 0.10 wr"
        for c in mqsim.mr mqsim.mw q.mr q.mw; do row+=" | $(cell "${lat[$c]:-}")"; done
        ;;
    esac
    for r in "${ratios[@]}"; do row+=" | $r"; done
    eval "rows$t+=(\"\$row | \$verdict |\")"
    count "$t"
    case $t in 1) name=SSDsim ;; 4) name="SSDsim dynamic" ;; 2) name="SSDsim static" ;; 3) name=MQSim ;; esac
    verdicts+=("$name: $verdict")
  done
  notes+=("$label: $total s ($timing)")
  say "  $(IFS=';'; echo "${verdicts[*]}" | sed 's/;/; /g') ($total s: $timing)"
done

# ---- (d) the report
# summary TABLE TAIL: the verdict count line of a table
summary() {
  echo "${n_pass[$1]} PASS, ${n_miss[$1]} MISS, $((n_rows - n_pass[$1] - n_miss[$1])) without a verdict (skipped or failed) of $n_rows $2"
}
commit=$(git describe --always --dirty 2> /dev/null || echo unknown)
stamp() { cut -c1-12 "$PEERS_BIN/$1.inputs" 2> /dev/null || echo "?"; }
args="${run_args[*]:-}"
{
  echo "# Validation: dedupsim against SSDsim 2.1 and MQSim"
  echo
  echo "Generated by \`scripts/validate.sh$([ $quick = 1 ] && echo " --quick")$([ $big = 0 ] && echo " --no-big")${only:+ --only $only}${args:+ -- $args}\`"
  echo "on $(date -u +%Y-%m-%d) (dedupsim $commit; peers: ssd inputs $(stamp ssd), MQSim inputs $(stamp MQSim)),"
  echo "device FAD Table I (\`fad-table1\`, the peers' \`config/\`)${args:+, dedupsim run with \`$args\`}."
  echo
  echo "Each trace is converted with \`dedupsim trace convert --to ssdsim --volume merge --wrap\`"
  echo "(one address space, folded into the device, page-aligned: the three simulators replay"
  echo "identical requests) and replayed on SSDsim and MQSim (\`../shared/peers/run.sh\`) and on"
  echo "\`dedupsim run -p native\`. Latencies in µs, arrival to completion of the whole request."
  echo "P99: SSDsim nearest rank, dedupsim HDR histogram; MQSim reports no percentiles (—)."
  echo "n/a: the trace has no request of that type. Ratios are dedupsim / SSDsim; the target"
  echo "(PASS) is both means within 10 % and both P99s within 20 % of SSDsim; MISS lists the"
  echo "metrics outside it."
  echo
  echo "| trace | requests | SSDsim rd | SSDsim wr | SSDsim P99 rd | SSDsim P99 wr | MQSim rd | MQSim wr | MQSim P99 rd | MQSim P99 wr | dedupsim rd | dedupsim wr | dedupsim P99 rd | dedupsim P99 wr | × rd | × wr | × P99 rd | × P99 wr | target |"
  echo "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|"
  printf '%s\n' ${rows1[@]+"${rows1[@]}"}
  echo
  summary 1 "workloads at the defaults; ${n_iso[1]} isolation run(s) (rows marked [isolate: ...], one setting changed) not counted."
  echo
  echo "## Against SSDsim, with SSDsim's dynamic allocation"
  echo
  echo "The same SSDsim runs, against \`dedupsim run -p native --config ssdsim.toml\`, where ssdsim.toml is"
  echo "\`dedupsim config import ../shared/peers/config/ssdsim-fad-table1.parameters\` (SSDsim's file itself:"
  echo "\`allocation = \"dynamic\"\`, no copyback, no wear levelling): SSDsim's own allocation rule, applied when"
  echo "a channel serves the write (docs/simulator.md, \"Dynamic allocation\"), which is also \`fad-table1\`'s default"
  echo "(issue 25 item 6; before, \`least-loaded\`, its approximation at processing time, was). So this table"
  echo "checks that the imported peer file and the preset agree: no validation workload runs GC, where"
  echo "copyback and wear levelling would matter. Same columns and target as above. dedupsim's dynamic"
  echo "allocation serves every placement-free policy (Native, Deduplication, HAR, FCRC) with every driver"
  echo "and engine; the peers have no deduplication, so the rows are Native's."
  echo
  echo "| trace | requests | SSDsim rd | SSDsim wr | SSDsim P99 rd | SSDsim P99 wr | dedupsim rd | dedupsim wr | dedupsim P99 rd | dedupsim P99 wr | × rd | × wr | × P99 rd | × P99 wr | target |"
  echo "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|"
  printf '%s\n' ${rows4[@]+"${rows4[@]}"}
  echo
  summary 4 "workloads."
  echo
  echo "## Against SSDsim, with static allocation in both"
  echo
  echo "The one model choice the two make differently at their defaults is when a write's page is"
  echo "placed (see \"Allocation time\" below). Here both place it by its LPN, the same way:"
  echo "SSDsim with \`$static_edits\` (static, channel fastest, then chip, die, plane) and"
  echo "\`dedupsim run -p native --config\` with that edited file imported (\`dedupsim config import\`:"
  echo "\`allocation = \"static:CWDP\"\`). Left alone, the timing models (chips, buses,"
  echo "read priority, completion rules, preconditioning) are compared. Same columns and target as above."
  echo
  echo "| trace | requests | SSDsim rd | SSDsim wr | SSDsim P99 rd | SSDsim P99 wr | dedupsim rd | dedupsim wr | dedupsim P99 rd | dedupsim P99 wr | × rd | × wr | × P99 rd | × P99 wr | target |"
  echo "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|"
  printf '%s\n' ${rows2[@]+"${rows2[@]}"}
  echo
  summary 2 "workloads."
  echo
  echo "## Against MQSim, with MQSim's rules"
  echo
  echo "MQSim differs from SSDsim in two choices that are dedupsim settings: it has no dynamic"
  echo "allocation (its config stripes pages by LPN, \`CWDP\`) and a write is done when its program"
  echo "ends. So each trace is also replayed with \`dedupsim run -p native --config mqsim.toml\`, where"
  echo "mqsim.toml is \`dedupsim config import ../shared/peers/config/mqsim-fad-table1.xml\` (\`static:CWDP\`,"
  echo "\`write_completion = \"program\"\`, only pages read before they are written preconditioned),"
  echo "and compared with MQSim. Means in µs (MQSim reports no percentiles); ratios dedupsim / MQSim;"
  echo "PASS: both means within 10 %. Rows marked [isolate: ...] change one MQSim setting (below)."
  echo
  echo "| trace | requests | MQSim rd | MQSim wr | dedupsim rd | dedupsim wr | × rd | × wr | target |"
  echo "|---|--:|--:|--:|--:|--:|--:|--:|---|"
  printf '%s\n' ${rows3[@]+"${rows3[@]}"}
  echo
  summary 3 "workloads; ${n_iso[3]} isolation run(s) not counted."
  echo
  cat << 'EOF_DIVERGENCES'
## Divergences: named model differences and the runs that isolate them

Where dedupsim's defaults miss the target, the cause is one of these model
differences (docs/simulator.md, "Known differences from SSDsim 2.1"); the
row named after each isolates it.

* **Duplicate-read shortcut** (derived-vdi-lun3 and
  libcachesim-cloudphysics-sample, in the SSDsim tables). SSDsim completes a
  read of a physical page that already has a read waiting on its channel
  1 us after it arrives, with no flash work. The VDI trace (synthetic
  timestamps 10 ns apart: 20,000 requests, 94% reads of few distinct pages,
  within 0.2 ms) is almost entirely such reads, so SSDsim serves most reads
  in 1 us while dedupsim reads the flash for each; the CloudPhysics sample
  is overloaded (SSDsim's mean read 18 ms) and re-reads pages while reads
  of them wait. The rows `[isolate: duplicate_read_shortcut]` replay each
  with SSDsim's rule (`--set timing.duplicate_read_shortcut=true`): with
  dynamic allocation at the defaults (issue 25 item 6) both come within
  the target on every metric (VDI from 16 times off; with `least-loaded`
  its mean reads stayed about 15% off). The shortcut is off by default
  because the data cannot be in the controller before the first read has
  sensed it.
* **Allocation time** (synth benchmark, writes; no longer a miss at the
  defaults). SSDsim allocates a write page when it is served, from one
  global write queue, to the first idle channel and chip; dedupsim does the
  same at its default (`allocation = "dynamic"`, issue 25 item 6). Its
  former default, `allocation = "least-loaded"`, places a page when its
  request is processed, on the least-loaded chip by an estimate of its
  queued work; the estimate cannot foresee reads that arrive later and
  overtake queued programs, so near saturation (the benchmark keeps the
  channels about 60% busy) writes waited longer (1.23x SSDsim's mean write
  on the benchmark, against 0.99x now). "synth benchmark at 1/4 load", the
  same workload at a quarter of the load, where queues are short, agreed
  under either rule, and the table "Against SSDsim, with static allocation
  in both" replays every workload with the *same* placement in both
  simulators: the benchmark agrees there too, so the timing model was
  never the cause. With `allocation = "cyclic"` (round-robin at processing
  time) the benchmark's writes are slower still.
* **Sector-granular transfers and read-modify-write** (not in this table:
  the converter page-aligns every trace). SSDsim moves only the sectors a
  request covers and reads the old sectors before a partial-page write;
  dedupsim moves whole pages. On the original, sub-page UMass Financial1
  trace SSDsim gives 148.5 / 144.9 us mean read / write
  (../shared/peers/README.md), on its page-aligned conversion 161.3 / 114.4.

### Against MQSim

With MQSim's two rules set in dedupsim (static `CWDP` striping, a write done
when its program ends), the remaining differences are MQSim's host
interface, which dedupsim (like SSDsim) does not model; the rows named after
each change that one MQSim setting (`../shared/peers/run.sh mqsim --params`
with an edited copy of `config/mqsim-fad-table1.xml`).

* **Fetch window** (derived-vdi-lun3, mqsim-tpcc-small: overloaded, thousands
  of requests outstanding). MQSim's NVMe controller fetches at most
  `Queue_Fetch_Size` = 512 commands into the device; the rest wait in the
  host's submission queue in arrival order, where a read cannot overtake a
  write, so MQSim's reads wait longer and its writes less. dedupsim hands
  every request to the device when it arrives. `[isolate: MQSim
  Queue_Fetch_Size=65535]` fetches every command at once: both traces move
  to within about 10% of dedupsim's means, from 0.45-0.81 (reads) and
  1.15-1.52 (writes).
* **Host transfers** (synth benchmark, systor17-additional-sample). MQSim
  moves each request's data over PCIe (4 lanes of `PCIe_Lane_Bandwidth` =
  1 GB/s: 4 us per 16 KiB), which adds a few microseconds to every
  request and queues under load. `[isolate: MQSim PCIe_Lane_Bandwidth=1000]`
  makes those transfers nearly free: both rows come within the target.
* Not modelled either, and not isolated because MQSim has no switch for
  them: MQSim always issues multi-plane commands when it can, and charges
  ONFI command and address cycles. With the fetch window or the host
  transfers isolated, every row but one is within the target; that one
  (mqsim-tpcc-small, reads at 0.89 with every command fetched) is not
  the host transfers: making them free as well moved MQSim's means by
  under 0.1% (47,605.2 / 220,099.0 us; measured once, not a row here),
  which leaves these two as the likely cause.
EOF_DIVERGENCES
  if [ ${#notes[@]} -gt 0 ]; then
    echo
    echo "Notes (wall times: conversion, each simulator):"
    echo
    printf -- '* %s\n' "${notes[@]}"
  fi
} > "$work/report.md"
mkdir -p "$(dirname "$out")"
cp "$work/report.md" "$out.tmp.$$" && mv "$out.tmp.$$" "$out"
say "wrote $out (SSDsim: ${n_pass[1]} PASS, ${n_miss[1]} MISS; SSDsim dynamic: ${n_pass[4]} PASS, ${n_miss[4]} MISS; SSDsim static: ${n_pass[2]} PASS, ${n_miss[2]} MISS; MQSim: ${n_pass[3]} PASS, ${n_miss[3]} MISS)"
exit $dedupsim_failed
