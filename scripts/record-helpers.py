#!/usr/bin/env python3
"""The file-level actions of scripts/record-workloads.sh (docs/recorded.md).

Each subcommand is what a user or a server program does to a mounted file
system; every choice is deterministic (sorted directory walks, a seeded
generator), so the same inputs issue the same file operations.

  sync SRC DST             make DST a copy of SRC: write new and changed files
                           (whole, as an editor or `git checkout` does), delete
                           removed ones; unchanged files are not touched
  read-tree DIR [GLOB]     read every file under DIR (matching GLOB) in path
                           order, as a build or a `grep -r` does
  mail-messages OUT N      cut Debian changelog entries (/usr/share/doc) into
                           at most N mail messages, written to OUT (one file)
  mail-deliver MSGS MNT ROUND ROUNDS USERS
                           deliver round ROUND's share of the messages to the
                           users' maildirs (each to 1-6 recipients, with its
                           own Delivered-To header) and append it to the
                           list's monthly mbox archive
  mail-read MNT ROUND USERS
                           a reading session: some users read their new mail
                           and move it to cur/; one searches the archive
"""
import gzip
import hashlib
import os
import random
import re
import sys


def walk(root):
    """Files under root, relative, in sorted path order."""
    out = []
    for d, dirs, files in os.walk(root):
        dirs.sort()
        for f in sorted(files):
            p = os.path.join(d, f)
            if os.path.isfile(p) and not os.path.islink(p):
                out.append(os.path.relpath(p, root))
    return out


def sync(src, dst):
    new = walk(src)
    old = set(walk(dst)) if os.path.isdir(dst) else set()
    written = 0
    for rel in new:
        s = os.path.join(src, rel)
        d = os.path.join(dst, rel)
        with open(s, "rb") as f:
            data = f.read()
        if rel in old:
            with open(d, "rb") as f:
                if f.read() == data:
                    continue
        os.makedirs(os.path.dirname(d), exist_ok=True)
        with open(d, "wb") as f:
            f.write(data)
        written += 1
    gone = sorted(old - set(new))
    for rel in gone:
        os.remove(os.path.join(dst, rel))
    for d, dirs, files in sorted(os.walk(dst, topdown=False)):
        if d != dst and not os.listdir(d):
            os.rmdir(d)
    print(f"sync: {written} files written, {len(gone)} removed, {len(new) - written} unchanged")


def read_tree(root, suffix=""):
    n = b = 0
    for rel in walk(root):
        if rel.endswith(suffix):
            with open(os.path.join(root, rel), "rb") as f:
                b += len(f.read())
            n += 1
    print(f"read-tree: {n} files, {b} bytes")


ENTRY = re.compile(rb"^(\S+) \(([^)]*)\) ([^;]*);", re.M)
TRAILER = re.compile(rb"^ -- (.*?) <([^>]*)>  (.*)$", re.M)


def mail_messages(out, limit):
    """Changelog entries as mail: one message per entry, headers from it."""
    doc = "/usr/share/doc"
    msgs = []
    for pkg in sorted(os.listdir(doc)):
        p = os.path.join(doc, pkg, "changelog.Debian.gz")
        if not os.path.isfile(p) or os.path.islink(p):
            continue
        text = gzip.open(p).read()
        starts = [m.start() for m in ENTRY.finditer(text)] + [len(text)]
        for a, b in zip(starts, starts[1:]):
            entry = text[a:b].rstrip() + b"\n"
            head = ENTRY.match(entry)
            tail = TRAILER.search(entry)
            if not head or not tail:
                continue
            name, email, date = tail.groups()
            msgs.append(
                b"From: " + name + b" <" + email + b">\n"
                b"Date: " + date + b"\n"
                b"Subject: Accepted " + head.group(1) + b" " + head.group(2) + b" (" + head.group(3) + b")\n"
                b"Message-ID: <" + hashlib.sha1(entry).hexdigest().encode() + b"@changes.example.org>\n"
                b"List-Id: <changes.example.org>\n\n" + entry
            )
    # Entries of one package come newest first; deliver oldest first.
    msgs.reverse()
    msgs = msgs[:limit]
    with open(out, "wb") as f:
        for m in msgs:
            f.write(len(m).to_bytes(4, "little") + m)
    print(f"mail-messages: {len(msgs)} messages, {sum(map(len, msgs))} bytes")


def load_messages(path):
    data = open(path, "rb").read()
    out, i = [], 0
    while i < len(data):
        n = int.from_bytes(data[i:i + 4], "little")
        out.append(data[i + 4:i + 4 + n])
        i += 4 + n
    return out


def mail_deliver(msgs_path, mnt, rnd, rounds, users):
    msgs = load_messages(msgs_path)
    per = (len(msgs) + rounds - 1) // rounds
    rng = random.Random(1000 + rnd)
    archive = os.path.join(mnt, "lists", "changes")
    os.makedirs(archive, exist_ok=True)
    deliveries = 0
    for i in range(rnd * per, min(len(msgs), (rnd + 1) * per)):
        m = msgs[i]
        for u in sorted(rng.sample(range(users), 1 + rng.randrange(6))):
            box = os.path.join(mnt, "home", f"user{u:02}", "Maildir")
            for sub in ("new", "cur", "tmp"):
                os.makedirs(os.path.join(box, sub), exist_ok=True)
            name = f"{1700000000 + i}.M{i}P{u}.mail"
            with open(os.path.join(box, "tmp", name), "wb") as f:
                f.write(b"Delivered-To: user%02d@example.org\n" % u + m)
            os.rename(os.path.join(box, "tmp", name), os.path.join(box, "new", name))
            deliveries += 1
        month = re.search(rb"^Date: \S+, \d+ (\w+) (\d+)", m, re.M)
        mbox = (month.group(2) + b"-" + month.group(1)).decode() if month else "undated"
        with open(os.path.join(archive, mbox + ".mbox"), "ab") as f:
            f.write(b"From changes@example.org\n" + m + b"\n")
    print(f"mail-deliver: round {rnd}, {deliveries} deliveries")


def mail_read(mnt, rnd, users):
    rng = random.Random(2000 + rnd)
    read = 0
    for u in sorted(rng.sample(range(users), max(1, users // 2))):
        box = os.path.join(mnt, "home", f"user{u:02}", "Maildir")
        new = os.path.join(box, "new")
        if not os.path.isdir(new):
            continue
        for name in sorted(os.listdir(new)):
            with open(os.path.join(new, name), "rb") as f:
                f.read()
            os.rename(os.path.join(new, name), os.path.join(box, "cur", name + ":2,S"))
            read += 1
    # One user searches the list archive: every mbox read whole.
    read_tree(os.path.join(mnt, "lists"))
    print(f"mail-read: round {rnd}, {read} messages read and filed")


def main(argv):
    cmd, args = argv[1], argv[2:]
    if cmd == "sync":
        sync(*args)
    elif cmd == "read-tree":
        read_tree(*args)
    elif cmd == "mail-messages":
        mail_messages(args[0], int(args[1]))
    elif cmd == "mail-deliver":
        mail_deliver(args[0], args[1], int(args[2]), int(args[3]), int(args[4]))
    elif cmd == "mail-read":
        mail_read(args[0], int(args[1]), int(args[2]))
    else:
        sys.exit(f"record-helpers: unknown command {cmd}")


if __name__ == "__main__":
    main(sys.argv)
