#!/usr/bin/env bash
# `dedupsim serve` driven by real clients (docs/serve.md): qemu-io, qemu-img,
# fio's nbd engine, and a real ext4 through nbdfuse + fuse2fs. Each part is
# skipped with a message when its tool is missing. Prints what it measured.
#
#   scripts/serve-clients.sh [--bench]     (--bench: also the fio speed runs)
#
# Needs a release build (cargo build --release). Exits non-zero on the first
# failed check.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${DEDUPSIM:-target/release/dedupsim}
BENCH=0
[ "${1:-}" = "--bench" ] && BENCH=1
. scripts/lib-serve.sh

if have qemu-io && have qemu-img; then
  echo "== qemu-io: patterns at many offsets and sizes, read back with -P"
  start qemu --size 64MiB --check --check-every 1000
  for i in $(seq 0 40); do
    off=$(( (i * 1048573) % (60 * 1048576) )); len=$(( 512 + (i * 7919) % 200000 ))
    # Ranges overlap: each is verified right after its own write.
    qemu-io -f raw "$URI" -c "write -P $(( i % 250 + 1 )) $off $len" -c "read -P $(( i % 250 + 1 )) $off $len" \
      > "$W/qio.log" 2>&1 || { cat "$W/qio.log"; exit 1; }
    if grep -q "verification failed" "$W/qio.log"; then cat "$W/qio.log"; exit 1; fi
  done
  echo "qemu-io: 41 write/read-verify pairs OK"
  stop qemu
  grep "^serve:" "$W/qemu.out"
  echo "== qemu-img convert onto the export, qemu-img compare back"
  start img --size 32MiB
  head -c 24M /dev/urandom > "$W/img.raw"
  # Half of it repeated: duplicates for the device to find.
  head -c 8M "$W/img.raw" >> "$W/img.raw"
  qemu-img convert -n -f raw -O raw "$W/img.raw" "$URI"
  qemu-img compare -f raw -F raw "$W/img.raw" "$URI"
  stop img
  grep "^serve:" "$W/img.out"
else
  echo "qemu-io/qemu-img: not installed (Debian qemu-utils), skipped"
fi

if have fio && fio --enghelp 2>/dev/null | grep -qw nbd; then
  echo "== fio --ioengine=nbd with dedupe_percentage=50 (4 KiB random writes)"
  start fio --size 256MiB --json "$W/fio.json"
  fio --name=dd --ioengine=nbd --uri="$URI" --rw=randwrite --bs=4k --size=128M --dedupe_percentage=50 \
    --iodepth=16 --randseed=7 --output-format=terse > /dev/null
  stop fio
  rate=$(json "$W/fio.json" "j[0]['summary']['dedup_rate_achieved']")
  echo "fio dedupe_percentage=50: dedupsim's dedup rate $rate"
  python3 -c "import sys; r=$rate; sys.exit(0 if 0.45 <= r <= 0.56 else 1)" \
    || { echo "dedup rate $rate is not within a few points of 50%"; exit 1; }
  echo "== fio verify=crc32c (unique blocks)"
  start fiov --size 256MiB
  fio --name=vv --ioengine=nbd --uri="$URI" --rw=randwrite --bs=4k --size=64M --verify=crc32c --do_verify=1 \
    --iodepth=8 --output-format=terse > "$W/fiov.terse"
  stop fiov
  errs=$(tail -1 "$W/fiov.terse" | cut -d';' -f5)
  [ "$errs" = "0" ] || { echo "fio verify reported error $errs"; exit 1; }
  echo "fio verify=crc32c: no error"
  if [ "$BENCH" = 1 ]; then
    echo "== fio speed (--clock virtual, no --record): 4 KiB random writes then reads, QD 1 and 32"
    for qd in 1 32; do
      start bench --size 1GiB
      for rw in randwrite randread; do
        fio --name=b --ioengine=nbd --uri="$URI" --rw=$rw --bs=4k --size=512M --iodepth=$qd --randseed=3 \
          --output-format=json --output="$W/b.json" > /dev/null
        iops=$(json "$W/b.json" "round(j['jobs'][0]['${rw#rand}']['iops'])")
        mbs=$(json "$W/b.json" "round(j['jobs'][0]['${rw#rand}']['bw']/1024, 1)")
        echo "fio $rw 4k QD$qd: $iops IOPS, $mbs MiB/s"
      done
      stop bench
    done
  fi
else
  echo "fio with the nbd engine: not installed (Debian fio), skipped"
fi

if have_ext4; then
  echo "== a real ext4: nbdfuse + mkfs.ext4 + fuse2fs, copy a tree, remount, checksums, replay the recording"
  start ext4 --size 1GiB --record "$W/ext4.trace" --json "$W/ext4.json"
  ext4_attach
  mkfs.ext4 -q -F -b 4096 "$W/nbd/nbd"
  TREE=${SERVE_TREE:-src}
  ext4_mount
  cp -r "$TREE" "$W/mnt/tree"
  cp -r "$TREE" "$W/mnt/tree-copy"  # a second copy: duplicates the file system writes
  ext4_umount
  ext4_mount
  (cd "$TREE" && find . -type f -exec sha256sum {} +) > "$W/sums"
  (cd "$W/mnt/tree" && sha256sum -c --quiet "$W/sums")
  (cd "$W/mnt/tree-copy" && sha256sum -c --quiet "$W/sums")
  files=$(wc -l < "$W/sums")
  echo "ext4: $files files copied twice, every checksum matches after a remount"
  ext4_umount
  ext4_detach
  stop ext4
  grep "^serve:" "$W/ext4.out"
  "$BIN" run --quiet --trace "$W/ext4.trace" -p native,dedup,fad --set 'precondition.rule="none"' \
    --queue-depth 1 --json "$W/replay.json" | tail -4
  python3 - "$W/ext4.json" "$W/replay.json" <<'EOF'
import json, sys
served = json.load(open(sys.argv[1]))[0]["summary"]
replay = {r["policy"]: r["summary"] for r in json.load(open(sys.argv[2]))}["dedup"]
for k in ["write_volume_pages", "dedup_rate_achieved"]:
    if served[k] != replay[k]:
        sys.exit(f"replay differs from serve: {k} {served[k]} vs {replay[k]}")
print(f"replay of the recording (dedup): {replay['write_volume_pages']} pages programmed, "
      f"dedup {100 * replay['dedup_rate_achieved']:.1f}%, identical to serve's")
EOF
else
  echo "nbdfuse/fuse2fs/mkfs.ext4 or /dev/fuse: missing (Debian libnbd-bin, fuse2fs, e2fsprogs), skipped"
fi
echo "serve-clients: OK"
