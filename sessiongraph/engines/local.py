"""The local engine: a process pool on this machine (``--workers N``, default all cores) parses;
the passes run here, one group of partitions after the other (memory: one group's frames)."""

from __future__ import annotations

from collections.abc import Iterator


def parse_all(jobs: list, *, workers: int | None = None, address: str | None = None) -> Iterator[tuple]:
    """``(job, parsed)`` in listing order; ``address`` is for cluster engines and ignored here."""
    from sessiongraph.pipeline import _parse_all

    yield from _parse_all(jobs, workers)


def infer_all(groups, *, workers: int | None = None, address: str | None = None) -> Iterator[dict]:
    """The inference tables of each ``(files, frames)`` group, in this process."""
    from sessiongraph.inference.partitions import infer_safely

    for files, frames in groups:
        yield infer_safely(frames, files)
        del frames
