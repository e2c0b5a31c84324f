"""Normalising the paths tools name, so the same file has one spelling across sessions."""

from __future__ import annotations

import ntpath
import posixpath
import re

_WINDOWS_ABS = re.compile(r"^[A-Za-z]:[\\/]")


def normalise(path: str, cwd: str | None) -> str | None:
    """Absolute, normalised form of ``path`` as seen from ``cwd``; None when it cannot be placed.

    Windows paths keep their drive and use ``/``; ``~`` is left as is (we do not know the home
    of the machine that wrote the log).
    """
    if not path or "\x00" in path:
        return None
    if _WINDOWS_ABS.match(path) or (cwd and _WINDOWS_ABS.match(cwd)):
        joined = ntpath.join(cwd or "", path) if not _WINDOWS_ABS.match(path) else path
        return ntpath.normpath(joined).replace("\\", "/")
    if not path.startswith("/"):
        if not cwd or not cwd.startswith("/"):
            return None
        path = posixpath.join(cwd, path)
    out = posixpath.normpath(path)
    # POSIX keeps a leading "//"; it means nothing to the tools that wrote these logs.
    return "/" + out.lstrip("/")
