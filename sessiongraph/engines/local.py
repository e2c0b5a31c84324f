"""The local engine: a process pool on this machine (``--workers N``, default all cores)."""

from __future__ import annotations

from collections.abc import Iterator


def parse_all(jobs: list, *, workers: int | None = None, address: str | None = None) -> Iterator[tuple]:
    """``(job, parsed)`` in listing order; ``address`` is for cluster engines and ignored here."""
    from sessiongraph.pipeline import _parse_all

    yield from _parse_all(jobs, workers)
