"""Where ``sessiongraph ingest`` parses files: ``local`` (a process pool, the default) or ``ray``
(Ray Data tasks on a Ray cluster). An engine is a module with
``parse_all(jobs, *, workers=None, address=None)`` yielding ``(job, frames)`` in the order of
``jobs``; every engine runs each file through the same ``pipeline.parse_file``. Engines are
imported lazily, so the local one never needs Ray installed.
"""

from __future__ import annotations

import difflib
import importlib
from types import ModuleType

from sessiongraph.errors import SessiongraphError

ENGINES: dict[str, str] = {
    "local": "sessiongraph.engines.local",
    "ray": "sessiongraph.engines.ray",
}


def get(name: str) -> ModuleType:
    try:
        module = ENGINES[name]
    except KeyError:
        hint = difflib.get_close_matches(name, ENGINES, n=1)
        suggestion = f"; did you mean {hint[0]!r}?" if hint else ""
        raise SessiongraphError(f"unknown engine {name!r}{suggestion} (known: {', '.join(ENGINES)})") from None
    return importlib.import_module(module)


def parse_all(engine: str, jobs: list, *, workers: int | None = None, address: str | None = None):
    """``(job, frames)`` for every job, in order, parsed by ``engine``."""
    return get(engine).parse_all(jobs, workers=workers, address=address)


def check(engine: str) -> None:
    """Raise ``SessiongraphError`` now if ``engine`` is unknown or cannot run here (Ray missing)."""
    module = get(engine)
    if hasattr(module, "check"):
        module.check()
