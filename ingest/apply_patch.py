"""The apply_patch envelope (Codex's patch grammar, which opencode's patch tool also takes): the
files a patch text names and what it does to each.

``*** Add File: P`` and ``*** Update File: P`` write ``P``, ``*** Delete File: P`` deletes it and
``*** Move to: Q`` after an ``Update File`` renames that file: its old path is deleted, ``Q``
written. Hunks are not read. Callers differ only in how a header's path becomes theirs
(``place``): the adapters resolve it against the call's cwd and drop a path that does not
resolve; the shell parser keeps the word as written.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeVar

P = TypeVar("P")

HEADER = re.compile(r"^\*\*\* (Add File|Update File|Delete File|Move to): (.+?)\s*$", re.M)
OPS = {"Add File": "write", "Update File": "write", "Delete File": "delete"}
MOVE = "Move to"


def file_ops(text: str, place: Callable[[str], P | None]) -> list[tuple[P, str]]:
    """(placed path, op) per header of ``text``, op "write" or "delete"; a header whose path
    ``place`` turns into nothing (None or empty) is passed over. A move makes the op before it a
    delete (the moved file is the one the preceding Update names) and writes the new path."""
    ops: list[tuple[P, str]] = []
    for m in HEADER.finditer(text):
        path = place(m.group(2))
        if not path:
            continue
        if m.group(1) == MOVE:
            if ops:
                ops[-1] = (ops[-1][0], "delete")
            ops.append((path, "write"))
        else:
            ops.append((path, OPS[m.group(1)]))
    return ops
