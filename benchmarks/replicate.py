"""Copy real log trees K times with fresh ids, so benchmarks run on real record shapes.

    python benchmarks/replicate.py OUT --size-mb 150            # the default trees, enough copies
    python benchmarks/replicate.py OUT --copies 12 --src DIR --src DIR2

The default sources are the real transcripts of ``../shared`` (``corpus/claude-code``,
``corpus/codex`` and ``real-families``), which the project may read but must not ship. Copy ``k``
lands in ``OUT/copy-<k>/<source folder name>/`` with each source's own layout. In every copy,
every token that names a session, an agent or a place is replaced the same way in file names and
contents, so lineage stays consistent within a copy and no copy links to another:

- UUIDs (sessions, threads, messages, tool calls) and hex agent ids, as ``repeat_samples.py``
  finds them (version and variant digits of UUIDs kept, same lengths);
- every ``cwd`` a record names gets a ``-c<k>`` suffix wherever it occurs (file paths under it,
  commands, Claude's ``-Users-x-repo`` project keys), and ``/Users/<name>``/``/home/<name>``
  becomes ``<name>c<k>``: the artifact and launch passes join within a copy only;
- Claude session slugs and Prickle task ids get a ``-c<k>``/``_c<k>`` suffix.

Timestamps are kept, so every copy replays the same hours. Each file is cut into literal bytes
and tokens once; a copy only joins them again with its own tokens, so writing runs at disk
speed. The same arguments give the same bytes.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from repeat_samples import fresh_hex, fresh_uuid, id_tokens, log_files  # noqa: E402

SHARED = HERE.parents[1] / "shared" if (HERE.parents[1] / "shared").is_dir() else Path("/work/shared")
DEFAULT_SOURCES = (SHARED / "corpus" / "claude-code", SHARED / "corpus" / "codex", SHARED / "real-families")

UUID = rb"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
CWD = re.compile(rb'"cwd"\s*:\s*"(/[^"\\]+)"')
SLUG = re.compile(rb'"slug"\s*:\s*"([^"\\]+)"')
HOME = rb"(?:/Users/|/home/)[A-Za-z0-9_.-]+"
TASK = rb"tsk_[A-Za-z0-9_]+"


class Source:
    """One tree, cut once into literals and tokens: ``parts[i]`` alternates literal, token,
    literal, ... for file ``names[i]`` (names are cut the same way)."""

    def __init__(self, root: Path):
        self.root = root
        files = log_files(root)
        names = [f.relative_to(root).as_posix() for f in files]
        data = [f.read_bytes() for f in files]
        hexes = id_tokens(names, data)
        cwds = {m for blob in data for m in CWD.findall(blob) if m.count(b"/") >= 2}
        keys = {re.sub(rb"[^A-Za-z0-9]", b"-", c) for c in cwds}  # Claude's project folder names
        self.slugs = {m for blob in data for m in SLUG.findall(blob)}
        self.cwds = cwds | keys
        literals = sorted(self.cwds | self.slugs, key=len, reverse=True)  # the longest wins
        alternatives = [rb"(?<![0-9a-fA-F])" + UUID + rb"(?![0-9a-fA-F])"]
        if literals:
            alternatives.append(b"|".join(map(re.escape, literals)))
        alternatives += [HOME, TASK]
        if hexes:
            words = b"|".join(re.escape(t.encode()) for t in sorted(hexes, key=len, reverse=True))
            alternatives.append(rb"(?<![0-9a-f])(?:" + words + rb")(?![0-9a-f])")
        self.pattern = re.compile(b"|".join(b"(?:" + a + b")" for a in alternatives))
        self.hexes = {t.encode() for t in hexes}
        self.names = [self.cut(n.encode()) for n in names]
        self.parts = [self.cut(blob) for blob in data]
        self.bytes = sum(map(len, data))

    def cut(self, blob: bytes) -> list[bytes]:
        return _split(self.pattern, blob)

    def fresh(self, token: bytes, copy: int) -> bytes:
        """What ``token`` becomes in copy ``copy``."""
        if token in self.cwds or token in self.slugs:
            return token + b"-c%d" % copy
        if token.startswith(b"tsk_"):
            return token + b"_c%d" % copy
        if token.startswith((b"/Users/", b"/home/")):
            return token + b"c%d" % copy
        if token in self.hexes:
            return fresh_hex(copy, token.decode()).encode()
        return fresh_uuid(copy, token.decode()).encode()

    def write(self, out: Path, copy: int) -> int:
        """Write copy ``copy`` under ``out``; returns the bytes written."""
        memo: dict[bytes, bytes] = {}

        def join(parts: list[bytes]) -> bytes:
            buf = []
            for i, part in enumerate(parts):
                if i % 2:
                    new = memo.get(part)
                    if new is None:
                        new = memo[part] = self.fresh(part, copy)
                    buf.append(new)
                else:
                    buf.append(part)
            return b"".join(buf)

        total = 0
        base = out / f"copy-{copy:04d}" / self.root.name
        for name, parts in zip(self.names, self.parts, strict=True):
            target = base / join(name).decode()
            target.parent.mkdir(parents=True, exist_ok=True)
            blob = join(parts)
            target.write_bytes(blob)
            total += len(blob)
        return total


def _split(pattern: re.Pattern, blob: bytes) -> list[bytes]:
    parts, at = [], 0
    for m in pattern.finditer(blob):
        parts += [blob[at : m.start()], m.group()]
        at = m.end()
    parts.append(blob[at:])
    return parts


def replicate(sources: list[Path], out: Path, *, copies: int | None = None, size_mb: float | None = None) -> dict:
    """Write the copies; returns what was written (copies, files, bytes, seconds)."""
    t0 = time.perf_counter()
    trees = [Source(s) for s in sources]
    per_copy = sum(t.bytes for t in trees)
    if copies is None:
        copies = max(1, -(-int((size_mb or 0) * 1e6) // max(per_copy, 1)))
    total = 0
    for k in range(copies):
        for tree in trees:
            total += tree.write(out, k)
    files = copies * sum(len(t.names) for t in trees)
    return {"copies": copies, "files": files, "bytes": total, "seconds": round(time.perf_counter() - t0, 2)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument(
        "--src", type=Path, action="append", help="a tree to copy (repeatable; default: the shared real logs)"
    )
    group = ap.add_mutually_exclusive_group(required=True)
    group.add_argument("--copies", type=int)
    group.add_argument("--size-mb", type=float, help="make enough copies to reach this many MB (10^6 bytes)")
    args = ap.parse_args(argv)
    sources = args.src or [s for s in DEFAULT_SOURCES if s.is_dir()]
    if not sources:
        ap.error(f"no source trees: none of {', '.join(map(str, DEFAULT_SOURCES))} exists; name one with --src")
    if missing := [s for s in sources if not s.is_dir()]:
        ap.error(f"no such folder: {missing[0]}")
    if args.out.exists() and any(args.out.iterdir()):
        ap.error(f"{args.out} is not empty")
    done = replicate(sources, args.out, copies=args.copies, size_mb=args.size_mb)
    print(
        f"{done['copies']} copies of {len(sources)} trees: {done['files']} files, {done['bytes'] / 1e6:.1f} MB "
        f"in {args.out} ({done['seconds']} s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
