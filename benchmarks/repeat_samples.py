"""Make a large log archive by repeating sample_logs/ with fresh ids (for benchmarks).

    python benchmarks/repeat_samples.py OUT --size-mb 200     # as many copies as reach 200 MB
    python benchmarks/repeat_samples.py OUT --copies 10

Copy ``k`` lands in ``OUT/copy-<k>/`` with the layout of sample_logs/. In every copy, each id is
replaced by a fresh one, the same way in file contents and file names so that the copy stays
self-consistent (a subagent still names its parent, a rollout its thread):

- UUIDs (sessions, threads, messages), version and variant digits kept;
- hex ids in file and folder names and in agent-id fields (Claude ``agent-<id>``, workflow
  ``wf_<id>``, Gemini project hashes, short session suffixes): every run of 6+ hex characters
  holding a digit and a letter, so words (``acompact``) and dates (``2026``) stay;
- OCP run ids (``run.id``), Claude session slugs and Prickle task ids (``tsk_...``) get a
  ``-c<k>``/``_c<k>`` suffix;
- home folders (``/home/dev`` -> ``/home/dev<k>``, and Claude's ``-home-dev-`` project folders), so
  each copy is another developer's machine: launch and artifact joins stay within a copy, as in
  a real team archive.

Output is deterministic: the same arguments give the same bytes. Only log files are copied
(``.jsonl``, ``.json``), never the samples' own scripts, expectations or docs; SQLite logs
(``.db``) are left out because their ids cannot be rewritten as text.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
from pathlib import Path

SAMPLES = Path(__file__).resolve().parents[1] / "sample_logs"
LOG_SUFFIXES = (".jsonl", ".json")
SKIP_NAMES = frozenset({"expected.json", "ids.json"})  # the samples' test expectations
SKIP_DIRS = frozenset({"_scripts"})

UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
HEX_RUN = re.compile(r"[0-9a-f]{6,}")
AGENT_FIELD = re.compile(rb'"(?:agentId|parentAgentId|agent_id|agent_path)"\s*:\s*"([^"]+)"')
TASK_ID = re.compile(r"\btsk_[A-Za-z0-9_]+")  # Prickle task ids are words, not hex
SLUG = re.compile(r'("slug"\s*:\s*")([^"]+)(")')
HOME = re.compile(r"(/home/|/Users/|-home-|-Users-)([a-z]+)(?=[/\-\"\\]|$)")


def _digest(copy: int, token: str, n: int) -> str:
    out, i = "", 0
    while len(out) < n:
        out += hashlib.sha256(f"{copy}\x1f{i}\x1f{token}".encode()).hexdigest()
        i += 1
    return out[:n]


def fresh_uuid(copy: int, old: str) -> str:
    new = list(_digest(copy, old.lower(), 36))
    # A version 7 UUID keeps its millisecond time (the first 48 bits): Codex tells a forked
    # child's own turns from its parent's replayed ones by comparing them (ingest/codex/replay.py).
    kept = 13 if old[14:15] == "7" else 0
    for i, ch in enumerate(old):
        if ch == "-" or i in (14, 19) or i < kept:  # dashes, version and variant digits, v7 time
            new[i] = ch.lower()
    text = "".join(new)
    return text.upper() if old.isupper() else text


def fresh_hex(copy: int, old: str) -> str:
    return _digest(copy, old, len(old))


def id_tokens(names: list[str], contents: list[bytes]) -> set[str]:
    """Hex runs (with a digit) in file names and agent-id fields: the ids that are not UUIDs."""
    found: set[str] = set()
    texts = [UUID.sub("", n) for n in names]
    for data in contents:
        texts += [m.decode("utf-8", "replace") for m in AGENT_FIELD.findall(data)]
    for text in texts:
        for run in HEX_RUN.findall(text):
            if any(c.isdigit() for c in run) and any(c.isalpha() for c in run):  # not a date or a word
                found.add(run)
    return found


class Rewriter:
    def __init__(self, copy: int, tokens: set[str]):
        self.copy = copy
        # longest first, so an id never matches inside a longer one
        self.tokens = {t: fresh_hex(copy, t) for t in sorted(tokens, key=len, reverse=True)}
        self.token_re = (
            re.compile(r"(?<![0-9a-f])(" + "|".join(map(re.escape, self.tokens)) + r")(?![0-9a-f])") if tokens else None
        )

    def text(self, s: str) -> str:
        s = UUID.sub(lambda m: fresh_uuid(self.copy, m.group()), s)
        if self.token_re is not None:
            s = self.token_re.sub(lambda m: self.tokens[m.group(1)], s)
        s = TASK_ID.sub(lambda m: f"{m.group()}_c{self.copy}", s)
        s = SLUG.sub(lambda m: f"{m.group(1)}{m.group(2)}-c{self.copy}{m.group(3)}", s)
        return HOME.sub(lambda m: f"{m.group(1)}{m.group(2)}{self.copy}", s)

    def content(self, name: str, data: bytes) -> bytes:
        text = self.text(data.decode("utf-8", "surrogateescape"))
        if name.endswith(".ocp.json"):
            try:
                doc = json.loads(text)
                doc["run"]["id"] = f"{doc['run']['id']}-c{self.copy}"
                text = json.dumps(doc, ensure_ascii=False)
            except (ValueError, KeyError, TypeError):
                pass  # a deliberately broken document stays broken
        return text.encode("utf-8", "surrogateescape")


def log_files(root: Path) -> list[Path]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            if name.endswith(LOG_SUFFIXES) and name not in SKIP_NAMES:
                out.append(Path(dirpath) / name)
    return out


def repeat(src: Path, out: Path, copies: int) -> int:
    """Write ``copies`` rewritten copies of ``src`` under ``out``; returns the bytes written."""
    files = log_files(src)
    rel = [f.relative_to(src).as_posix() for f in files]
    data = [f.read_bytes() for f in files]
    tokens = id_tokens(rel, data)
    total = 0
    for k in range(copies):
        rw = Rewriter(k, tokens)
        for name, blob in zip(rel, data, strict=True):
            target = out / f"copy-{k:04d}" / rw.text(name)
            target.parent.mkdir(parents=True, exist_ok=True)
            new = rw.content(name, blob)
            target.write_bytes(new)
            total += len(new)
    return total


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--src", type=Path, default=SAMPLES, help="folder to repeat (default: sample_logs/)")
    group = ap.add_mutually_exclusive_group(required=True)
    group.add_argument("--copies", type=int)
    group.add_argument("--size-mb", type=float, help="make enough copies to reach this many MB (10^6 bytes)")
    args = ap.parse_args(argv)
    if args.out.exists() and any(args.out.iterdir()):
        ap.error(f"{args.out} is not empty")
    per_copy = sum(len(Rewriter(0, set()).content(f.name, f.read_bytes())) for f in log_files(args.src))
    copies = args.copies or max(1, -(-int(args.size_mb * 1e6) // per_copy))
    total = repeat(args.src, args.out, copies)
    print(f"{copies} copies of {args.src} ({len(log_files(args.src))} files each): {total / 1e6:.1f} MB in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
