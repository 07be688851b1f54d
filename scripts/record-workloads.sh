#!/usr/bin/env bash
# Real-content workloads recorded from real programs through `dedupsim serve
# --record` (docs/recorded.md, issue 24 item 3). Three workloads:
#
#   srctree   a home directory: successive released versions of a real PyPI
#             package (sdists, `pip download`) synced in turn onto a real
#             ext4 (nbdfuse + fuse2fs), changed files rewritten whole, and
#             the tree read back after each version (as a build reads it)
#   mail      a mail server: Debian changelog entries from /usr/share/doc
#             delivered as mail to 16 users' maildirs on ext4 (each message
#             to 1-6 recipients, own Delivered-To header) and appended to
#             monthly list archives, with reading sessions between rounds
#   vmimages  an image store: one ext4 disk image per package version
#             (mkfs.ext4 -d), each written to its own slot of the device with
#             `qemu-img convert`, the newest compared back (`qemu-img compare`)
#
#   scripts/record-workloads.sh [--small] [--out DIR] [--profiles DIR]
#
# --small: the CI size (two versions of `requests`, 300 messages; about a
# minute); default: six versions of Django 4.2, 4,000 messages (about ten
# minutes). --out: where the traces and their profiles go (default
# target/recorded). --profiles DIR: also copy each profile to
# DIR/recorded-NAME[-small].toml (the committed ones live in profiles/).
# Downloads are cached in ${DEDUPSIM_CACHE:-~/.cache/dedupsim}. Each workload
# is skipped with its reason when a tool or the package index is missing.
# Needs a release build (cargo build --release).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${DEDUPSIM:-target/release/dedupsim}
SMALL=0
OUT=target/recorded
PROFILES=
while [ $# -gt 0 ]; do
  case "$1" in
    --small) SMALL=1 ;;
    --out) OUT=$2; shift ;;
    --profiles) PROFILES=$2; shift ;;
    *) echo "record-workloads: unknown argument $1 (see the header of $0)" >&2; exit 2 ;;
  esac
  shift
done
. scripts/lib-serve.sh
HELP="python3 scripts/record-helpers.py"
CACHE=${DEDUPSIM_CACHE:-$HOME/.cache/dedupsim}
mkdir -p "$OUT" "$CACHE/pypi"
# Fixed file-system identity and clock: mkfs.ext4 then writes the same bytes
# on every run (fuse2fs's inode times still follow the wall clock).
export E2FSPROGS_FAKE_TIME=1700000000
FSID=6c1f0a4e-0d3b-4c52-9a57-5e1d0c0ffee0
# Lazy inode-table and journal init: a device with discard is not zeroed by
# mkfs, so the recording holds the file system's writes, not 32 MiB of zeros.
MKFS=(mkfs.ext4 -q -F -b 4096 -U "$FSID" -E "hash_seed=$FSID,root_owner=0:0,lazy_itable_init=1,lazy_journal_init=1")

if [ "$SMALL" = 1 ]; then
  PKG=requests; VERSIONS=(2.30.0 2.31.0); IMG=16; MESSAGES=300; ROUNDS=3; SUFFIX=-small
else
  PKG=Django; VERSIONS=(4.2 4.2.1 4.2.2 4.2.3 4.2.4 4.2.5); IMG=128; MESSAGES=4000; ROUNDS=8; SUFFIX=
fi

for n in srctree mail vmimages; do
  if [ -e "$OUT/$n$SUFFIX.trace" ]; then
    echo "record-workloads: $OUT/$n$SUFFIX.trace exists; recordings are never replaced: remove it or choose another --out" >&2
    exit 2
  fi
done

# fetch: download and extract every version into $W/src/V (its top directory).
fetch() {
  for v in "${VERSIONS[@]}"; do
    local d="$CACHE/pypi/$PKG-$v"
    if ! ls "$d"/*.tar.gz > /dev/null 2>&1; then
      mkdir -p "$d"
      pip download -q --no-deps --no-binary :all: "$PKG==$v" -d "$d" > "$W/pip.log" 2>&1 || {
        echo "pip download $PKG==$v failed (no package index?): $(tail -1 "$W/pip.log")"; return 1; }
    fi
    mkdir -p "$W/src/$v"
    tar -xzf "$d"/*.tar.gz -C "$W/src/$v"
  done
}

# finish NAME: the trace's statistics, its profile, and a replay on three policies.
finish() {
  local name=$1 t="$OUT/$1$SUFFIX.trace"
  grep "^serve:" "$W/$name.out"
  "$BIN" trace stats "$t" --profile "$OUT/$name$SUFFIX.toml" > "$OUT/$name$SUFFIX.stats"
  grep -E "^(requests|read ratio|pages written|dedup rate|dup run length|dup reuse distance|contents shared)" \
    "$OUT/$name$SUFFIX.stats" | sed "s/^/$name: /"
  "$BIN" run --quiet --trace "$t" -p native,dedup,fad --set 'precondition.rule="none"' | tail -4
  [ -n "$PROFILES" ] && cp "$OUT/$name$SUFFIX.toml" "$PROFILES/recorded-$name$SUFFIX.toml"
  echo "$name: recorded $t, profile $OUT/$name$SUFFIX.toml"
}

srctree() {
  echo "== srctree: ${VERSIONS[*]} of $PKG synced onto ext4, read back after each"
  start srctree --size 1GiB --record "$OUT/srctree$SUFFIX.trace"
  ext4_attach
  "${MKFS[@]}" "$W/nbd/nbd"
  for v in "${VERSIONS[@]}"; do
    ext4_mount
    $HELP sync "$(ls -d "$W/src/$v"/*/)" "$W/mnt/home/user/$PKG"
    ext4_umount
    ext4_mount
    $HELP read-tree "$W/mnt/home/user/$PKG" .py
    ext4_umount
  done
  ext4_detach
  stop srctree
  finish srctree
}

mail() {
  echo "== mail: $MESSAGES changelog entries delivered to 16 maildirs and list archives in $ROUNDS rounds"
  $HELP mail-messages "$W/messages" "$MESSAGES"
  start mail --size 1GiB --record "$OUT/mail$SUFFIX.trace"
  ext4_attach
  "${MKFS[@]}" "$W/nbd/nbd"
  for r in $(seq 0 $((ROUNDS - 1))); do
    ext4_mount
    $HELP mail-deliver "$W/messages" "$W/mnt" "$r" "$ROUNDS" 16
    ext4_umount
    ext4_mount
    $HELP mail-read "$W/mnt" "$r" 16
    ext4_umount
  done
  ext4_detach
  stop mail
  finish mail
}

vmimages() {
  local n=${#VERSIONS[@]} i=0 opts
  echo "== vmimages: $n ext4 images of ${IMG} MiB (mkfs.ext4 -d) written with qemu-img convert"
  start vmimages --size "$((n * IMG))MiB" --record "$OUT/vmimages$SUFFIX.trace"
  for v in "${VERSIONS[@]}"; do
    "${MKFS[@]}" -d "$(ls -d "$W/src/$v"/*/)" "$W/img$i.raw" "${IMG}M"
    opts="driver=raw,offset=$((i * IMG * 1048576)),size=$((IMG * 1048576)),file.driver=nbd,file.path=$SOCK"
    qemu-img convert -n --target-is-zero -f raw --target-image-opts "$W/img$i.raw" "$opts"
    i=$((i + 1))
  done
  qemu-img compare --image-opts "driver=raw,file.filename=$W/img$((n - 1)).raw" "$opts"
  stop vmimages
  finish vmimages
}

if ! have pip && ! have pip3; then
  echo "pip: not installed, srctree and vmimages skipped (they need PyPI sdists)"
  FETCHED=0
elif fetch; then
  FETCHED=1
else
  echo "srctree and vmimages skipped: the $PKG sdists could not be downloaded"
  FETCHED=0
fi
if ! have_ext4; then
  echo "nbdfuse/fuse2fs/mkfs.ext4 or /dev/fuse: missing (Debian libnbd-bin, fuse2fs, e2fsprogs), srctree and mail skipped"
else
  [ "$FETCHED" = 1 ] && srctree
  if ls /usr/share/doc/*/changelog.Debian.gz > /dev/null 2>&1; then
    mail
  else
    echo "mail skipped: no Debian changelogs in /usr/share/doc"
  fi
fi
if [ "$FETCHED" = 1 ] && have qemu-img && have mkfs.ext4; then
  vmimages
elif [ "$FETCHED" = 1 ]; then
  echo "qemu-img/mkfs.ext4: missing (Debian qemu-utils, e2fsprogs), vmimages skipped"
fi
echo "record-workloads: OK"
