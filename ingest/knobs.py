"""Tuning knobs read from the environment (``SESSIONGRAPH_*``: batch sizes, bounds, timeouts that
benchmarks and tests set). A value that is not a number is said on stderr and the default used:
a knob is read when its module is imported, before any command could report an error cleanly."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T", int, float)


def number(name: str, default: T, kind: Callable[[str], T]) -> T:
    """``$name`` read by ``kind`` (``int`` or ``float``), or ``default`` when unset or not a number."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        return kind(raw)
    except ValueError:
        print(f"sessiongraph: ignoring {name}={raw!r} (not a number); using {default}", file=sys.stderr)
        return default
