"""The one canonical form of every path a log names, so the same folder or file has one spelling
across sessions, harnesses and machines (ingest/FORMATS.md, "Paths", says it for users).

:func:`canonical` is the only implementation; :func:`canonical_frames` applies it to every path
column of one file's frames (``ingest.shell_facts`` calls it before it reads any command, so every
adapter's rows get it and no adapter has to remember). The form:

- separators are ``/``; ``.`` and ``..`` segments are resolved lexically (``..`` stops at the
  root); no trailing separator except on a root (``/``, ``C:/``); POSIX's leading ``//`` is ``/``;
- a Windows drive path is ``C:/x``: ``C:\\x``, ``C:/x``, ``c:\\x`` and ``c:/x`` are one path (only the
  drive letter's case is folded: tools write the rest as the user typed it);
- the other spellings of a drive are that drive: the long-path prefix ``\\\\?\\C:\\x``, WSL's
  ``/mnt/c/x``, Cygwin's ``/cygdrive/c/x``, and Git Bash / MSYS ``/c/x``. ``/c/x`` is also a
  genuine POSIX path, so it is rewritten only in a Windows context: the cwd it is read against,
  or some session or call cwd of the same file, names a drive (:func:`is_windows`,
  :func:`windows_file`); a file whose only cwds are ``/c/x`` keeps ``/c/x``. ``/mnt/c/x`` is
  rewritten everywhere (WSL's mount of drive C; a POSIX ``/mnt/c`` is rare);
- a UNC share is ``//server/share/x`` (``\\\\server\\share\\x``, ``\\\\?\\UNC\\server\\share\\x``);
- a rooted path with no drive in a Windows context (``/tmp``, ``/dev/null`` from Git Bash) stays
  rooted: which drive or MSYS folder it meant is not in the log;
- ``~`` is a home we do not know: the log does not say whose machine, and the ingesting machine's
  home is another one. ``~`` and ``~/x`` stay as written (normalised), never joined to a cwd and
  never expanded, so two logs that both say ``~/x`` agree, but not with ``/home/me/x``;
- a relative path is joined to the cwd it was used in; without one it cannot be placed (None).

Applying it twice in the same context gives the same path: the frames boundary may see rows an
adapter already normalised.
"""

from __future__ import annotations

import os
import posixpath
import re
from functools import lru_cache

from sessiongraph.ingest.frames import Frames

_CACHED_CHARS = 4096  # longer paths are worked out each time, so the cache stays small
_DRIVE = re.compile(r"^([A-Za-z]):(.*)$", re.S)
_WINDOWS = re.compile(r"^(?:[A-Za-z]:(?:[\\/]|$)|\\\\|//\?/)")  # drive, UNC or long-path prefix
_LONG_UNC = re.compile(r"^[\\/]{2}[?.][\\/]UNC[\\/]", re.I)
_LONG = re.compile(r"^[\\/]{2}[?.][\\/](?=[A-Za-z]:)")
_WSL = re.compile(r"^/mnt/([A-Za-z])(?=/|$)")
_CYGWIN = re.compile(r"^/cygdrive/([A-Za-z])(?=/|$)")
_MSYS = re.compile(r"^/([A-Za-z])(?=/|$)")


def is_windows(path: object) -> bool:
    """Whether ``path`` names a Windows folder: a drive in any spelling but Git Bash's (``C:\\``,
    ``c:/``, ``/mnt/c``, ``/cygdrive/c``), a UNC share or a long-path prefix. A cwd like that makes
    its file a Windows context, where ``/c/x`` is drive C."""
    return isinstance(path, str) and any(rx.match(path) for rx in (_WINDOWS, _WSL, _CYGWIN))


def canonical(path: object, cwd: object = None, *, windows: bool = False) -> str | None:
    """The canonical form of ``path`` as used from ``cwd`` (see the module docstring); None when
    it cannot be placed (relative with no usable cwd, empty, not a string, a NUL in it).
    ``windows``: the path comes from a Windows context (:func:`windows_file`) even if neither
    it nor ``cwd`` says so."""
    if not isinstance(path, str) or not path or "\x00" in path:
        return None
    base = cwd if isinstance(cwd, str) and cwd else None
    if len(path) + len(base or "") > _CACHED_CHARS:  # a pasted blob: not worth keeping in the cache
        return _canonical.__wrapped__(path, base, windows)
    return _canonical(path, base, windows)


@lru_cache(maxsize=65536)  # cwds repeat on every row of a file
def _canonical(path: str, cwd: str | None, windows: bool) -> str | None:
    win = windows or is_windows(path) or is_windows(cwd)
    p = _drive_spelling(path.replace("\\", "/") if win else path, win)
    if p.startswith("~"):  # a home (`~`, `~/x`, `~bob/x`): kept, never expanded
        head, _sep, rest = (p.replace("\\", "/") if win else p).partition("/")
        return _clean(head, rest, win)
    m = _DRIVE.match(p)
    if m:
        return _clean(m.group(1).upper() + ":", m.group(2) or "/", True)
    if win and p[:2] in ("\\\\", "//"):  # a UNC share
        rest = _clean("", p[2:].replace("\\", "/"), True).lstrip("/")
        return "//" + rest if rest else None
    if p.startswith("/") or (win and p.startswith("\\")):
        out = _clean("", p, win)
        # resolving `.`/`..` can leave an MSYS drive (`/./c/x` is `/c/x`): spell it as one, once
        return _canonical(out, None, True) if win and _MSYS.match(out) else out
    base = canonical(cwd, None, windows=win) if cwd else None
    if base is None:
        return None
    return canonical(base.rstrip("/") + "/" + (p.replace("\\", "/") if win else p), None, windows=win)


def _drive_spelling(p: str, win: bool) -> str:
    """``p`` with a long-path, UNC-long, WSL, Cygwin or (Windows context) MSYS spelling of a drive
    rewritten as ``X:/...``; anything else as it is."""
    if _LONG_UNC.match(p):
        return "//" + p[8:]
    if _LONG.match(p):
        return p[4:]
    for rx in (_WSL, _CYGWIN, *((_MSYS,) if win else ())):
        m = rx.match(p)
        if m:
            return m.group(1).upper() + ":" + (p[m.end() :] or "/")
    return p


def _clean(prefix: str, rest: str, win: bool) -> str:
    """``prefix`` + ``rest`` normalised: ``/`` separators (backslashes too in a Windows context),
    ``.``/``..`` resolved, no trailing separator."""
    if win:
        rest = rest.replace("\\", "/")
    if prefix.startswith("~"):
        tail = posixpath.normpath("/" + rest).lstrip("/")
        return prefix + "/" + tail if tail else prefix
    rooted = rest.startswith("/")
    out = posixpath.normpath(rest if rooted else "/" + rest)
    # POSIX keeps a leading "//"; it means nothing to the tools that wrote these logs.
    return prefix + "/" + out.lstrip("/")


def normalise(path: str, cwd: str | None) -> str | None:
    """Absolute canonical form of ``path`` as seen from ``cwd``; None when it cannot be placed.
    What the adapters call for the paths their tools name: :func:`canonical`."""
    return canonical(path, cwd)


def windows_file(frames: Frames) -> bool:
    """Whether one file's frames come from Windows: some session or call cwd is a Windows path."""
    return any(is_windows(v) for v in frames.values("sessions", "cwd")) or any(
        is_windows(v) for v in frames.values("calls", "cwd")
    )


def canonical_frames(frames: Frames) -> Frames:
    """One file's frames with every path column in the canonical form: sessions.cwd (the spelling
    the log wrote kept in ``cwd_as_written``), calls.cwd and calls.paths, file_events.path, and
    launches.cwd, .output_file, .script. A value that cannot be placed (a relative cwd) is kept
    as written: dropping it would lose what the log said."""
    win = windows_file(frames)

    def one(value: object) -> object:
        if not isinstance(value, str):
            return value
        # a UNC share an adapter already gave its canonical form (//server/share) stays one
        return canonical(value, None, windows=win or value.startswith("//")) or value

    changes: dict[str, list[dict]] = {}
    sessions = frames.rows("sessions")
    if sessions:
        changes["sessions"] = [
            {**s, "cwd": one(s.get("cwd")), "cwd_as_written": s.get("cwd_as_written") or s.get("cwd")} for s in sessions
        ]
    calls = frames.rows("calls")
    if any(c.get("cwd") or c.get("paths") for c in calls):
        changes["calls"] = [
            {**c, "cwd": one(c.get("cwd")), "paths": [one(p) for p in c["paths"]] if c.get("paths") else c.get("paths")}
            for c in calls
        ]
    events = frames.rows("file_events")
    if events:
        changes["file_events"] = [{**e, "path": one(e.get("path"))} for e in events]
    launches = frames.rows("launches")
    if launches:
        changes["launches"] = [{**r, **{k: one(r.get(k)) for k in ("cwd", "output_file", "script")}} for r in launches]
    return frames.replace(**changes) if changes else frames


def on_this_machine(path: str) -> str:
    """A canonical path as this machine opens it (a workspace script is read at ingest): a drive
    path ``X:/rest`` is WSL's ``/mnt/x/rest`` on a POSIX machine; anything else as it is."""
    m = _DRIVE.match(path)
    if m and os.name != "nt":
        return "/mnt/" + m.group(1).lower() + m.group(2)
    return path
