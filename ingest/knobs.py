"""Tuning knobs read from the environment (``SESSIONGRAPH_*``: batch sizes, bounds, timeouts that
benchmarks and tests set). A value that is not a number, or out of the knob's range, is said on stderr and the default used:
a knob is read when its module is imported, before any command could report an error cleanly."""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T", int, float)


def number(
    name: str, default: T, kind: Callable[[str], T], *, least: T | None = None, multiple: int | None = None
) -> T:
    """``$name`` read by ``kind`` (``int`` or ``float``), or ``default`` when unset, not a number,
    below ``least`` or not a multiple of ``multiple``."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = kind(raw)
    except ValueError:
        return _ignored(name, raw, "not a number", default)
    if not math.isfinite(value):
        return _ignored(name, raw, "not a finite number", default)
    if least is not None and value < least:
        return _ignored(name, raw, f"less than {least}", default)
    if multiple is not None and value % multiple:
        return _ignored(name, raw, f"not a multiple of {multiple}", default)
    return value


def _ignored(name: str, raw: str, why: str, default: T) -> T:
    print(f"sessiongraph: ignoring {name}={raw!r} ({why}); using {default}", file=sys.stderr)
    return default
