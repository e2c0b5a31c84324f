"""Opening log files safely: only regular files, and whole-file reads bounded.

A log tree copied from someone else may hold a FIFO (``open`` would wait forever for a writer),
a socket, a device, or a link to one (``st_size`` 0, endless bytes). Discovery lists only
regular files; every adapter opens through :func:`open_regular` too, since a side file (a
Claude ``agent-*.meta.json``, an opencode message) or a file swapped after the listing is never
listed itself.
"""

from __future__ import annotations

import os
import stat
from typing import BinaryIO


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
    """The bytes of a regular file, or None when it holds more than ``max_bytes`` (counted while
    reading, not trusted from ``st_size``)."""
    with open_regular(path) as fh:
        raw = fh.read(max_bytes + 1)
    return None if len(raw) > max_bytes else raw


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
