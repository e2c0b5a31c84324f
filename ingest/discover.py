"""Finding log files: default roots, explicit paths, and which adapter each file belongs to."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import NamedTuple

from sessiongraph.ingest import registry
from sessiongraph.ingest.errors import SessiongraphError
from sessiongraph.ingest.files import MAX_LINE_BYTES, NotRegularFile, open_regular

HEAD_BYTES = 64 * 1024
# When nobody claims the head, classification reads on up to this many bytes and asks again: a
# transcript may open with many bookkeeping lines (Claude's file-history snapshots) before its
# first conversation record. Bounded, so a big file of something else costs one read of it.
PROBE_BYTES = 1024 * 1024
# Transcripts are JSON Lines; Gemini chats, opencode objects, Prickle tasks and OCP documents are
# JSON; opencode >= 1.2 keeps a SQLite file; a Copilot CLI session's workspace.yaml is a side file
# (listed so that a change to it reads its log again). A .jsonl nobody claims is reported; a .json,
# .db or .yaml nobody claims (settings, sidecars, caches) is simply not a log.
LOG_SUFFIXES = (".jsonl", ".json", ".db", ".yaml")
REPORTED_SUFFIXES = (".jsonl", ".ocp.json")
# Files that sit in the log roots but hold no session: prompt history (Claude, Codex), and a
# journal.jsonl anywhere but in a Claude workflow run's folder (that one is the run's log, read by
# the claude-code adapter). They are counted as skipped, never parsed.
NOT_TRANSCRIPTS = frozenset({"history.jsonl", "journal.jsonl"})
# Folders under the roots that hold no transcripts but can be large (tool output, caches).
SKIP_DIRS = frozenset({"tool-results", "node_modules", ".git", "plugins", "cache", "shell-snapshots"})


@dataclass(frozen=True, slots=True)
class Found:
    """One candidate file: its adapter name, or None with the reason it is not parsed."""

    path: str
    harness: str | None
    # not_transcript | not_a_log | no_session | unknown_format | unreadable_file | empty_file |
    # symlink_loop | special_file
    skip_reason: str | None = None


def default_roots(env: Mapping[str, str] | None = None) -> list[Path]:
    """Where harnesses keep logs on this machine, honouring their own override variables."""
    env = os.environ if env is None else env
    home = Path(env.get("HOME") or Path.home())
    claude = [Path(p.strip()).expanduser() for p in env.get("CLAUDE_CONFIG_DIR", "").split(",") if p.strip()]
    roots = [home / ".claude", *claude]
    # (oh-my-opencode's transcripts, <claude config dir>/transcripts, are walked with these.)
    roots.append(Path(env["CODEX_HOME"]).expanduser() if env.get("CODEX_HOME") else home / ".codex")
    # pi honours PI_CODING_AGENT_DIR (default ~/.pi/agent); oh-my-pi keeps ~/.omp/agent.
    roots.append(Path(env["PI_CODING_AGENT_DIR"]).expanduser() if env.get("PI_CODING_AGENT_DIR") else home / ".pi")
    roots.append(home / ".omp")
    roots.append(home / ".gemini" / "tmp")
    roots.append(home / ".qwen" / "projects")
    roots.append(home / ".cursor" / "projects")
    roots.append(home / ".kimi-code" / "sessions")
    kimi = Path(env["KIMI_SHARE_DIR"]).expanduser() if env.get("KIMI_SHARE_DIR") else home / ".kimi"
    roots.append(kimi / "sessions")
    copilot = Path(env["COPILOT_HOME"]).expanduser() if env.get("COPILOT_HOME") else home / ".copilot"
    roots += [copilot / "session-state", copilot / "history-session-state"]
    data_home = Path(env["XDG_DATA_HOME"]).expanduser() if env.get("XDG_DATA_HOME") else home / ".local" / "share"
    roots.append(data_home / "opencode")
    roots.append(home / ".crush")  # a project's own .crush/ is found by walking that project
    roots.append(
        Path(env["FACTORY_DIR"]).expanduser() / "sessions" if env.get("FACTORY_DIR") else home / ".factory" / "sessions"
    )
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
    walked); a folder that cannot be listed is reported too, so nothing is skipped silently.
    Only regular files are listed: a FIFO, socket or device (or a link to one) is a
    ``special_file`` problem, never opened (reading a FIFO would wait for a writer forever)."""
    try:
        top = os.stat(root)
    except OSError as err:
        problems.append(Found(err.filename or str(root), None, "unreadable_file"))
        return
    if stat.S_ISREG(top.st_mode):
        yield str(root), top.st_size, top.st_mtime_ns
        return
    if not stat.S_ISDIR(top.st_mode):
        problems.append(Found(str(root), None, "special_file"))
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
                except OSError:
                    yield e.path, -1, -1
                    continue
                if stat.S_ISREG(fst.st_mode):
                    yield e.path, fst.st_size, fst.st_mtime_ns
                else:
                    problems.append(Found(e.path, None, "special_file"))
        for d in reversed(dirs):
            try:
                # Only a symlink can lead back to a folder already walked: a plain subfolder's
                # identity is its parent's device and its own inode, with no stat. A linked
                # folder's files are named by its real path, the one identity of each file.
                if d.is_symlink():
                    stack.append((os.path.realpath(d.path), d.stat()))
                else:
                    stack.append((d.path, _Id(st.st_dev, d.inode())))
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
    if not_transcript(path):
        return Found(path, None, "not_transcript")
    try:
        with open_regular(path) as fh:
            head = fh.read(HEAD_BYTES)
            if not head.strip():
                return Found(path, None, "empty_file" if path.endswith(REPORTED_SUFFIXES) else "not_a_log")
            more = len(head) == HEAD_BYTES
            found = _claim(path, head, final=not more)
            if found is None and more:  # inconclusive: look further, bounded
                probe = head + fh.read(PROBE_BYTES - HEAD_BYTES)
                found = _claim(path, probe, final=len(probe) < PROBE_BYTES or b"\n" in probe)
                if found is None and b"\n" not in probe:
                    # One record larger than the probe (a big paste first): judge by the records
                    # after it, reading past it in chunks (at most a line's cap).
                    found = _claim(path, _after_first_line(fh, len(probe)), final=True)
    except NotRegularFile:  # swapped for a FIFO or device since the listing
        return Found(path, None, "special_file")
    except OSError:
        return Found(path, None, "unreadable_file")
    if found is not None:
        return found
    return Found(path, None, "unknown_format" if path.endswith(REPORTED_SUFFIXES) else "not_a_log")


def not_transcript(path: str) -> bool:
    """A file of NOT_TRANSCRIPTS (by name), never parsed."""
    name = os.path.basename(path)
    if name not in NOT_TRANSCRIPTS:
        return False
    return not (name == "journal.jsonl" and registry.get("claude-code").is_workflow_journal(path))


def _after_first_line(fh, read: int) -> bytes:
    """PROBE_BYTES from just past the first newline (empty if it lies past MAX_LINE_BYTES)."""
    while read <= MAX_LINE_BYTES:
        chunk = fh.read(1 << 20)
        if not chunk:
            return b""
        k = chunk.find(b"\n")
        if k >= 0:
            return (chunk[k + 1 :] + fh.read(PROBE_BYTES))[:PROBE_BYTES]
        read += len(chunk)
    return b""


def _claim(path: str, head: bytes, final: bool) -> Found | None:
    """The first adapter that claims ``head``; or, once ``final`` (no more will be read), a known
    non-session (an adapter's optional ``not_a_session(head)``, e.g. a Claude file of
    file-history snapshots only)."""
    names = registry.names()
    for name in names:
        try:
            claimed = registry.get(name).detect(path, head)
        except Exception:  # noqa: BLE001 - a detector bug must not hide the file from the others
            claimed = False
        if claimed:
            return Found(path, name)
    for name in names if final else ():
        probe = getattr(registry.get(name), "not_a_session", None)
        try:
            if probe is not None and probe(head):
                return Found(path, None, "no_session")
        except Exception:  # noqa: BLE001 - as above
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


def real(path: str | os.PathLike) -> Path:
    """The one spelling of a log root or file: absolute, ``..`` and symlinked folders resolved
    (``os.path.realpath`` of its folder), so ``logs/proj``, ``/abs/logs/proj``, a symlinked or
    bind-mounted root and ``proj/../proj`` name the same files. A file that is itself a link keeps
    its own name in its real folder: harness layouts (a subagent's sidecar beside it, its
    session's folder) are read from where the file lies."""
    p = Path(os.path.abspath(path))
    if p.is_symlink() and not p.is_dir():
        return Path(os.path.realpath(p.parent)) / p.name
    return Path(os.path.realpath(p))


def roots(paths: Sequence[str | os.PathLike] = ()) -> list[Path]:
    """The roots :func:`listing` walks, in their one spelling (:func:`real`): the paths named,
    else the harnesses' own roots."""
    return [real(p) for p in paths] if paths else [real(p) for p in default_roots()]


def pruned_under(roots: Sequence[str], listed: Sequence[str]) -> list[str]:
    """Where ``--prune`` may drop stored files that are gone: the roots, and each folder outside
    them that holds a listed file (a linked folder's real path). A linked folder that is gone
    altogether is not walked, so its files are kept, as those of an unreadable folder are."""
    tops = [r.rstrip("/") + "/" for r in roots]
    outside = {os.path.dirname(p) for p in listed if not any(p.startswith(t) or p == t[:-1] for t in tops)}
    return [*roots, *sorted(outside)]


def listing(paths: Sequence[str | os.PathLike] = ()) -> Iterator[tuple[str | Found, int, int]]:
    """:func:`candidates` with the size and mtime (ns) discovery saw for each file (-1, -1 for a
    file it could not stat and for the folders it could not walk). Every path is in its one
    spelling (:func:`real`), whichever spelling of the root was named."""
    explicit = bool(paths)
    named = [Path(p) for p in paths] if explicit else default_roots()
    missing = [r for r in named if not r.exists()]
    if explicit and missing:
        raise SessiongraphError(f"no such file or folder: {missing[0]}", path=str(missing[0]))
    seen: set[str] = set()
    for root in [real(r) for r in named if r not in missing]:
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
