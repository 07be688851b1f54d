#!/usr/bin/env python3
"""Light-Dedup reproductions (docs/engines.md, "## `light-dedup`").

Runs `dedupsim run` (single policy `dedup`, one job at a time) and prints
markdown tables with the command behind every number:

  1. hint hit rate with and without trust degrees (paper §4.3.2, WebVMs:
     98.6% vs 60.0%), on the FIU-like replicas and on a sequential copy;
  2. duplicate-run-length distribution (paper Fig. 8: WebVMs 30% of
     duplicate blocks in runs > 10);
  3. LMT metadata amplification, entry- vs region-based, on §5.5's aging
     workload (fresh write, random half punched, new write into the holes),
     fresh and aged phase separately (paper Table 4: aged 19.35x / 9.86x vs
     6.10x / 3.43x read / write);
  4. write latency: caftl (32 us SHA-1) vs light-dedup with and without
     speculation.

usage: scripts/light-dedup.py [--scale S] [--bin PATH] [--pages N]
  --scale  replica scale (default 0.1: NAME@0.1)
  --pages  pages of the aging workload's first file (default 262144 = 1 GiB)
The aging and copy workloads are written as native traces under /tmp.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

REPLICAS = ["homes", "mail", "webvm"]


def run(binary, args):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    cmd = [binary, "run", "-p", "dedup", "-q", "-j", "1", "--json", out] + args
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        rep = json.load(f)[0]
    os.unlink(out)
    shown = "dedupsim run -p dedup " + " ".join(args)
    return rep, shown


def es(rep, key):
    return rep["engine_stats"][key]


def native_trace(path, steps, gap_ns=100_000):
    """steps: (op, lpn, contents-or-pages); one request per gap_ns."""
    with open(path, "w") as f:
        f.write("# dedupsim-trace v1\n")
        for i, (op, lpn, c) in enumerate(steps):
            t = i * gap_ns
            if op == "W":
                f.write(f"{t} W {lpn * 4096} {len(c) * 4096} 0 {','.join(map(str, c))}\n")
            else:
                f.write(f"{t} T {lpn * 4096} {c * 4096} 0\n")


def aging_steps(n, phases):
    """§5.5 at 4 KiB pages: write n pages (2 MiB = 512-page requests),
    punch n/2 random pages, write n/2 new pages. Contents all unique."""
    steps = []
    for k in range(0, n, 512):
        steps.append(("W", k, list(range(k + 1, min(k + 512, n) + 1))))
    if phases >= 2:
        order = list(range(n))
        random.Random(5).shuffle(order)
        for lpn in order[: n // 2]:
            steps.append(("T", lpn, 1))
        # One page written after the punches: the engine learns of freed
        # copies at its next lookup, so the deletions land in this phase.
        steps.append(("W", 2 * n, [2 * n + 1]))
    if phases >= 3:
        for k in range(0, n // 2, 512):
            steps.append(("W", n + k, list(range(n + k + 1, n + min(k + 512, n // 2) + 1))))
    return steps


def copy_steps(n):
    """A file written, then the same contents again in order (Copy, §5.3),
    in 256 KiB requests, one per 5 ms (no queueing)."""
    steps = []
    for base in (0, n):
        for k in range(0, n, 64):
            steps.append(("W", base + k, list(range(k + 1, min(k + 64, n) + 1))))
    return steps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", default="0.1")
    ap.add_argument("--bin", default="target/release/dedupsim")
    ap.add_argument("--pages", type=int, default=262144)
    a = ap.parse_args()
    b = a.bin
    ld = ["--engine", "light-dedup"]

    copy = "/tmp/light-dedup-copy.trace"
    native_trace(copy, copy_steps(65536), gap_ns=5_000_000)
    workloads = [(r, ["--replica", f"{r}@{a.scale}"]) for r in REPLICAS] + [("copy (256 MiB twice, 256 KiB requests)", ["-t", copy])]

    print("## Hint hit rate (followed hints that were right)\n")
    print("| workload | trust degrees: followed / hit rate | no trust degrees: followed / hit rate | all predictions right | command |")
    print("|---|---|---|---|---|")
    for name, w in workloads:
        t, cmd = run(b, w + ld)
        n, _ = run(b, w + ld + ["--set", "engine.light-dedup.trust=false"])
        print(
            f"| {name} | {es(t, 'engine_hint_followed'):.0f} / {100 * es(t, 'engine_hint_hit_rate'):.1f}% "
            f"| {es(n, 'engine_hint_followed'):.0f} / {100 * es(n, 'engine_hint_hit_rate'):.1f}% "
            f"| {100 * es(t, 'engine_hint_hits') / max(es(t, 'engine_hint_predictions'), 1):.1f}% "
            f"| `{cmd}` (+ `--set engine.light-dedup.trust=false`) |"
        )
    sys.stdout.flush()

    print("\n## Duplicate pages by run length (consecutive duplicate pages, LPN-contiguous)\n")
    print("| workload | dup pages | 1 | 2-4 | 5-10 | 11-100 | >100 | fraction in runs > 10 | command |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, w in workloads:
        t, cmd = run(b, w + ld)
        keys = ["1", "2_4", "5_10", "11_100", "over_100"]
        v = [es(t, f"engine_dup_run_pages_{k}") for k in keys]
        tot = sum(v)
        cells = " | ".join(f"{100 * x / max(tot, 1):.1f}%" for x in v)
        print(f"| {name} | {tot:.0f} | {cells} | {100 * es(t, 'engine_dup_run_frac_over_10'):.1f}% | `{cmd}` |")
    sys.stdout.flush()

    print("\n## LMT metadata amplification on the aging workload (per written page, over 40 B)\n")
    paths = {}
    for ph in (1, 2, 3):
        paths[ph] = f"/tmp/light-dedup-aging-{ph}.trace"
        native_trace(paths[ph], aging_steps(a.pages, ph))
    print("| layout | fresh read | fresh write | aged read | aged write | aged, LMT only: read / write | command |")
    print("|---|---|---|---|---|---|---|")
    for layout in ("entry", "region"):
        s = ld + ["--set", f"engine.light-dedup.layout={layout}"]
        r = {ph: run(b, ["-t", paths[ph]] + s) for ph in (1, 2, 3)}
        fresh = r[1][0]
        pages1 = es(fresh, "engine_pages")
        rd = lambda rep: es(rep, "engine_meta_region_reads") * 4096
        wr = lambda rep: es(rep, "engine_meta_region_programs") * 4096
        lrd = lambda rep: rd(rep) - es(rep, "engine_meta_rmap_reads") * 4096
        lwr = lambda rep: wr(rep) - es(rep, "engine_meta_rmap_programs") * 4096
        aged_pages = es(r[3][0], "engine_pages") - es(r[2][0], "engine_pages")
        aged = lambda f: (f(r[3][0]) - f(r[2][0])) / aged_pages / 40
        print(
            f"| {layout} | {rd(fresh) / pages1 / 40:.2f}x | {wr(fresh) / pages1 / 40:.2f}x "
            f"| {aged(rd):.2f}x | {aged(wr):.2f}x | {aged(lrd):.2f}x / {aged(lwr):.2f}x "
            f"| `{r[1][1]}`, `{r[2][1]}`, `{r[3][1]}` |"
        )
    sys.stdout.flush()

    print("\n## Write latency: verify reads vs hash time (mean / p99 us)\n")
    print(
        "| workload | caftl (32 us SHA-1) | light-dedup | light-dedup, speculative = false "
        "| light-dedup, all metadata cached | light-dedup hashed / skipped pages | commands |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, w in workloads:
        c, ccmd = run(b, w + ["--engine", "caftl"])
        t, tcmd = run(b, w + ld)
        n, _ = run(b, w + ld + ["--set", "engine.light-dedup.speculative=false"])
        m, _ = run(b, w + ld + ["--set", "engine.light-dedup.region_cache=4194304"])
        lat = lambda rep: f"{rep['summary']['write']['mean_us']:.1f} / {rep['summary']['write']['p99_us']:.1f}"
        print(
            f"| {name} | {lat(c)} | {lat(t)} | {lat(n)} | {lat(m)} | {es(t, 'engine_hashed_pages'):.0f} / {es(t, 'engine_skipped_hash_pages'):.0f} "
            f"| `{ccmd}`, `{tcmd}` (+ `--set engine.light-dedup.speculative=false`; "
            "+ `--set engine.light-dedup.region_cache=4194304`) |"
        )


if __name__ == "__main__":
    main()
