# Shared by scripts/serve-clients.sh and scripts/record-workloads.sh:
# a work directory, `dedupsim serve` started and stopped on a Unix socket,
# and an ext4 on the export through nbdfuse + fuse2fs. Source it after
# setting BIN (the dedupsim binary).
W=$(mktemp -d /tmp/dedupsim-serve.XXXXXX)
PIDS=()
cleanup() {
  for m in "$W/mnt" "$W/nbd"; do fusermount3 -u "$m" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$W"
}
trap cleanup EXIT

# start NAME ARGS...: a --persist server on $W/NAME.sock; sets URI, SOCK and SPID.
start() {
  local name=$1; shift
  SOCK="$W/$name.sock"
  rm -f "$SOCK"
  "$BIN" serve --unix "$SOCK" --persist --status-every 0 "$@" \
    > "$W/$name.out" 2> "$W/$name.err" &
  SPID=$!
  PIDS+=("$SPID")
  for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.05; done
  [ -S "$SOCK" ] || { cat "$W/$name.err"; echo "serve did not start"; exit 1; }
  URI="nbd+unix:///?socket=$SOCK"
}

# stop NAME: SIGTERM, wait for the report.
stop() {
  kill -TERM "$SPID"
  wait "$SPID" || { cat "$W/$1.err"; echo "serve $1 failed"; exit 1; }
}

json() { python3 -c "import json,sys; j=json.load(open('$1')); print($2)"; }

have() { command -v "$1" > /dev/null; }

have_ext4() { have nbdfuse && have fuse2fs && have mkfs.ext4 && [ -e /dev/fuse ]; }

# ext4_attach: expose the running server's export as the file $W/nbd/nbd.
ext4_attach() {
  mkdir -p "$W/nbd" "$W/mnt"
  nbdfuse "$W/nbd" --unix "$SOCK" &
  FUSE_PID=$!
  for _ in $(seq 100); do [ -e "$W/nbd/nbd" ] && break; sleep 0.05; done
}

# ext4_mount / ext4_umount: the file system on $W/mnt (fuse2fs in the
# foreground, so that unmounting waits for it to write back and exit: a
# second mount while the first fuse2fs still flushes corrupts the file system).
ext4_mount() {
  fuse2fs "$W/nbd/nbd" "$W/mnt" -o fakeroot -f &
  FS_PID=$!
  for _ in $(seq 200); do mountpoint -q "$W/mnt" && return; sleep 0.05; done
  echo "fuse2fs did not mount $W/mnt"; exit 1
}
ext4_umount() {
  fusermount3 -u "$W/mnt"
  wait "$FS_PID" || { echo "fuse2fs exited with an error"; exit 1; }
}

# ext4_detach: unmount the export file (after ext4_umount).
ext4_detach() {
  for _ in $(seq 50); do fusermount3 -u "$W/nbd" 2>/dev/null && break; sleep 0.1; done
  wait "$FUSE_PID" 2>/dev/null || true
}
