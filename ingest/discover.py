"""Finding log files: default roots, explicit paths, and which adapter each file belongs to."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from sessiongraph.ingest import registry
from sessiongraph.ingest.errors import SessiongraphError

HEAD_BYTES = 64 * 1024
# Transcripts are JSON Lines; Gemini chats, opencode objects, Prickle tasks and OCP documents are
# JSON; opencode >= 1.2 keeps a SQLite file. A .jsonl nobody claims is reported; a .json or .db
# nobody claims (settings, sidecars, caches) is simply not a log.
LOG_SUFFIXES = (".jsonl", ".json", ".db")
REPORTED_SUFFIXES = (".jsonl", ".ocp.json")
# Files that sit in the log roots but hold no session: prompt history (Claude, Codex) and
# workflow journals (Claude 2.1.x). They are counted as skipped, never parsed.
NOT_TRANSCRIPTS = frozenset({"history.jsonl", "journal.jsonl"})
# Folders under the roots that hold no transcripts but can be large (tool output, caches).
SKIP_DIRS = frozenset({"tool-results", "node_modules", ".git", "plugins", "cache", "shell-snapshots"})


@dataclass(frozen=True, slots=True)
class Found:
    """One candidate file: its adapter name, or None with the reason it is not parsed."""

    path: str
    harness: str | None
    # not_transcript | not_a_log | unknown_format | unreadable_file | empty_file | symlink_loop
    skip_reason: str | None = None


def default_roots(env: Mapping[str, str] | None = None) -> list[Path]:
    """Where harnesses keep logs on this machine, honouring their own override variables."""
    env = os.environ if env is None else env
    home = Path(env.get("HOME") or Path.home())
    claude = [Path(p.strip()).expanduser() for p in env.get("CLAUDE_CONFIG_DIR", "").split(",") if p.strip()]
    roots = [home / ".claude", *claude]
    roots.append(Path(env["CODEX_HOME"]).expanduser() if env.get("CODEX_HOME") else home / ".codex")
    # pi honours PI_CODING_AGENT_DIR (default ~/.pi/agent); oh-my-pi keeps ~/.omp/agent.
    roots.append(Path(env["PI_CODING_AGENT_DIR"]).expanduser() if env.get("PI_CODING_AGENT_DIR") else home / ".pi")
    roots.append(home / ".omp")
    roots.append(home / ".gemini" / "tmp")
    data_home = Path(env["XDG_DATA_HOME"]).expanduser() if env.get("XDG_DATA_HOME") else home / ".local" / "share"
    roots.append(data_home / "opencode")
    seen: list[Path] = []
    for r in roots:
        if r not in seen:
            seen.append(r)
    return seen


def _walk(root: Path, problems: list[Found]) -> Iterator[str]:
    """Log-suffixed files under ``root``, sorted. Symlinked folders are followed once each (a
    link back up the tree is a loop: reported, not walked); a folder that cannot be listed is
    reported too, so nothing is skipped silently."""
    if root.is_file():
        yield str(root)
        return
    seen: set[tuple[int, int]] = set()

    def unreadable(err: OSError) -> None:
        problems.append(Found(err.filename or str(root), None, "unreadable_file"))

    for dirpath, dirnames, filenames in os.walk(root, onerror=unreadable, followlinks=True):
        try:
            st = os.stat(dirpath)
        except OSError:
            continue
        if (st.st_dev, st.st_ino) in seen:
            problems.append(Found(dirpath, None, "symlink_loop"))
            dirnames[:] = []
            continue
        seen.add((st.st_dev, st.st_ino))
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            if name.endswith(LOG_SUFFIXES):
                yield os.path.join(dirpath, name)


def classify(path: str) -> Found:
    """Decide by content (and layout hints inside each adapter) which harness wrote ``path``."""
    if os.path.basename(path) in NOT_TRANSCRIPTS:
        return Found(path, None, "not_transcript")
    try:
        with open(path, "rb") as fh:
            head = fh.read(HEAD_BYTES)
    except OSError:
        return Found(path, None, "unreadable_file")
    if not head.strip():
        return Found(path, None, "empty_file" if path.endswith(REPORTED_SUFFIXES) else "not_a_log")
    for name in registry.names():
        try:
            claimed = registry.get(name).detect(path, head)
        except Exception:  # noqa: BLE001 - a detector bug must not hide the file from the others
            claimed = False
        if claimed:
            return Found(path, name)
    return Found(path, None, "unknown_format" if path.endswith(REPORTED_SUFFIXES) else "not_a_log")


def candidates(paths: Sequence[str | os.PathLike] = ()) -> Iterator[str | Found]:
    """Every log-suffixed file under ``paths`` (default: the harnesses' own roots), unclassified,
    plus a :class:`Found` with its reason for each folder that could not be walked.

    A path the user named that does not exist is an error; a default root that does not
    exist is simply not there.
    """
    explicit = bool(paths)
    roots = [Path(p) for p in paths] if explicit else default_roots()
    missing = [r for r in roots if not r.exists()]
    if explicit and missing:
        raise SessiongraphError(f"no such file or folder: {missing[0]}", path=str(missing[0]))
    seen: set[str] = set()
    for root in roots:
        if root in missing:
            continue
        problems: list[Found] = []
        for path in _walk(root, problems):
            yield from problems
            problems.clear()
            if path not in seen:
                seen.add(path)
                yield path
        yield from problems


def discover(paths: Sequence[str | os.PathLike] = ()) -> Iterator[Found]:
    """Every log file under ``paths``, classified (see :func:`candidates`)."""
    for item in candidates(paths):
        yield item if isinstance(item, Found) else classify(item)
