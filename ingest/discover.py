"""Finding log files: default roots, explicit paths, and which adapter each file belongs to."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import NamedTuple

from sessiongraph.ingest import registry
from sessiongraph.ingest.errors import SessiongraphError

HEAD_BYTES = 64 * 1024
# When nobody claims the head, classification reads on up to this many bytes and asks again: a
# transcript may open with many bookkeeping lines (Claude's file-history snapshots) before its
# first conversation record. Bounded, so a big file of something else costs one read of it.
PROBE_BYTES = 1024 * 1024
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
    # not_transcript | not_a_log | no_session | unknown_format | unreadable_file | empty_file |
    # symlink_loop
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
    roots.append(home / ".qwen" / "projects")
    roots.append(home / ".cursor" / "projects")
    roots.append(home / ".kimi-code" / "sessions")
    data_home = Path(env["XDG_DATA_HOME"]).expanduser() if env.get("XDG_DATA_HOME") else home / ".local" / "share"
    roots.append(data_home / "opencode")
    seen: list[Path] = []
    for r in roots:
        if r not in seen:
            seen.append(r)
    return seen


def _walk(root: Path, problems: list[Found]) -> Iterator[tuple[str, int, int]]:
    """Log-suffixed files under ``root``, sorted, with the size and mtime (ns) of each (-1 when
    it cannot be stat'ed). One ``scandir`` per folder and one ``stat`` per log file, nothing
    else per file: a warm ingest of 100k unchanged files is this walk and a comparison.
    Symlinked folders are followed once each (a link back up the tree is a loop: reported, not
    walked); a folder that cannot be listed is reported too, so nothing is skipped silently."""
    if root.is_file():
        yield (str(root), *size_mtime(str(root)))
        return
    try:
        top = os.stat(root)
    except OSError as err:
        problems.append(Found(err.filename or str(root), None, "unreadable_file"))
        return
    seen: set[tuple[int, int]] = set()
    name = attrgetter("name")
    # os.walk's order without its recursion: a folder's files, then its subfolders, in name order.
    stack: list[tuple[str, os.stat_result | _Id]] = [(str(root), top)]
    while stack:
        folder, st = stack.pop()
        if (st.st_dev, st.st_ino) in seen:
            problems.append(Found(folder, None, "symlink_loop"))
            continue
        seen.add((st.st_dev, st.st_ino))
        try:
            with os.scandir(folder) as it:
                entries = list(it)
            if len(entries) > 1:
                entries.sort(key=name)
        except OSError as err:
            problems.append(Found(err.filename or folder, None, "unreadable_file"))
            continue
        dirs = []
        for e in entries:
            try:
                is_dir = e.is_dir()
            except OSError:
                continue
            if is_dir:
                if e.name not in SKIP_DIRS:
                    dirs.append(e)
            elif e.name.endswith(LOG_SUFFIXES):
                try:
                    fst = e.stat()
                    yield e.path, fst.st_size, fst.st_mtime_ns
                except OSError:
                    yield e.path, -1, -1
        for d in reversed(dirs):
            try:
                # Only a symlink can lead back to a folder already walked: a plain subfolder's
                # identity is its parent's device and its own inode, with no stat.
                stack.append((d.path, d.stat() if d.is_symlink() else _Id(st.st_dev, d.inode())))
            except OSError:
                continue  # a dangling link to a folder: nothing to walk


class _Id(NamedTuple):
    st_dev: int
    st_ino: int


def size_mtime(path: str) -> tuple[int, int]:
    """(size, mtime in ns) of ``path``; (-1, -1) when it cannot be stat'ed."""
    try:
        st = os.stat(path)
        return st.st_size, st.st_mtime_ns
    except OSError:
        return -1, -1


def classify(path: str) -> Found:
    """Decide by content (and layout hints inside each adapter) which harness wrote ``path``."""
    if os.path.basename(path) in NOT_TRANSCRIPTS:
        return Found(path, None, "not_transcript")
    try:
        with open(path, "rb") as fh:
            head = fh.read(HEAD_BYTES)
            if not head.strip():
                return Found(path, None, "empty_file" if path.endswith(REPORTED_SUFFIXES) else "not_a_log")
            more = len(head) == HEAD_BYTES
            found = _claim(path, head, final=not more)
            if found is None and more:  # inconclusive: look further, bounded
                found = _claim(path, head + fh.read(PROBE_BYTES - HEAD_BYTES), final=True)
    except OSError:
        return Found(path, None, "unreadable_file")
    if found is not None:
        return found
    return Found(path, None, "unknown_format" if path.endswith(REPORTED_SUFFIXES) else "not_a_log")


def _claim(path: str, head: bytes, final: bool) -> Found | None:
    """The first adapter that claims ``head``; or, once ``final`` (no more will be read), a known
    non-session (an adapter's optional ``not_a_session(head)``, e.g. a Claude file of
    file-history snapshots only)."""
    names = registry.names()
    for name in names:
        try:
            claimed = registry.get(name).detect(path, head)
        except Exception:  # a detector bug must not hide the file from the others
            claimed = False
        if claimed:
            return Found(path, name)
    for name in names if final else ():
        probe = getattr(registry.get(name), "not_a_session", None)
        try:
            if probe is not None and probe(head):
                return Found(path, None, "no_session")
        except Exception:  # as above
            pass
    return None


def candidates(paths: Sequence[str | os.PathLike] = ()) -> Iterator[str | Found]:
    """Every log-suffixed file under ``paths`` (default: the harnesses' own roots), unclassified,
    plus a :class:`Found` with its reason for each folder that could not be walked.

    A path the user named that does not exist is an error; a default root that does not
    exist is simply not there.
    """
    for item, _size, _mtime in listing(paths):
        yield item


def listing(paths: Sequence[str | os.PathLike] = ()) -> Iterator[tuple[str | Found, int, int]]:
    """:func:`candidates` with the size and mtime (ns) discovery saw for each file (-1, -1 for a
    file it could not stat and for the folders it could not walk)."""
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
        for path, size, mtime in _walk(root, problems):
            for problem in problems:
                yield problem, -1, -1
            problems.clear()
            if path not in seen:
                seen.add(path)
                yield path, size, mtime
        for problem in problems:
            yield problem, -1, -1


def discover(paths: Sequence[str | os.PathLike] = ()) -> Iterator[Found]:
    """Every log file under ``paths``, classified (see :func:`candidates`)."""
    for item in candidates(paths):
        yield item if isinstance(item, Found) else classify(item)
