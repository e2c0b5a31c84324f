"""Opening log files safely: only regular files, lines and whole-file reads bounded.

A log tree copied from someone else may hold a FIFO (``open`` would wait forever for a writer),
a socket, a device, or a link to one (``st_size`` 0, endless bytes). Discovery lists only
regular files; every adapter opens through :func:`open_regular` too, since a side file (a
Claude ``agent-*.meta.json``, an opencode message) or a file swapped after the listing is never
listed itself.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from typing import BinaryIO

# The longest line a transcript may have (a record with a large paste or tool output is a few
# MB; a 100 MB tool result is still read); a longer one is skipped unread (``line_too_long``),
# so a junk line costs this much memory at most, never its own size.
MAX_LINE_BYTES = 128 * 1024 * 1024
_SKIP_CHUNK = 1 << 20


class _TooLong(bytes):
    pass


# Yielded by :func:`lines` in place of a line longer than MAX_LINE_BYTES (compared by identity).
TOO_LONG = _TooLong(b"\x00")


class NotRegularFile(OSError):
    """The path is (or links to) a FIFO, socket, device or folder: it is never read."""


def open_regular(path: str | os.PathLike, buffering: int = -1) -> BinaryIO:
    """``open(path, "rb")`` that refuses anything but a regular file, without blocking on a FIFO."""
    # O_NONBLOCK: opening a FIFO for reading returns at once instead of waiting for a writer; it
    # changes nothing for a regular file, and fstat of the open descriptor sees the link's target.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(f"not a regular file: {kind(mode)}")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb", buffering=buffering)
    except BaseException:
        os.close(fd)
        raise


def read_bounded(path: str | os.PathLike, max_bytes: int) -> bytes | None:
    """The bytes of a regular file, or None when it holds more than ``max_bytes`` (its size
    says so, or the bytes read do: a file may grow after the stat)."""
    with open_regular(path) as fh:
        if os.fstat(fh.fileno()).st_size > max_bytes:
            return None
        raw = fh.read(max_bytes + 1)
    return None if len(raw) > max_bytes else raw


def lines(fh: BinaryIO, length: int | None = None) -> Iterator[bytes]:
    """The lines of the next ``length`` bytes (default: to the end; the last line may lack its
    newline), each at most MAX_LINE_BYTES: a longer line is read past in small chunks and
    yielded as :data:`TOO_LONG`, so it is counted as a line but never held whole."""
    left = -1 if length is None else length
    while left:
        raw = fh.readline(MAX_LINE_BYTES + 1 if left < 0 else min(left, MAX_LINE_BYTES + 1))
        if not raw:
            return
        if left > 0:
            left -= len(raw)
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            del raw
            while left:
                chunk = fh.readline(_SKIP_CHUNK if left < 0 else min(left, _SKIP_CHUNK))
                if left > 0:
                    left -= len(chunk)
                if not chunk or chunk.endswith(b"\n"):
                    break
            yield TOO_LONG
            continue
        yield raw


def kind(mode: int) -> str:
    """What a non-regular file is, for a skip reason's detail."""
    for test, name in (
        (stat.S_ISFIFO, "fifo"),
        (stat.S_ISSOCK, "socket"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
        (stat.S_ISDIR, "folder"),
    ):
        if test(mode):
            return name
    return "special file"
