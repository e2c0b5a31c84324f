"""The local engine: a process pool on this machine (``--workers N``, default all cores) parses;
the passes run here, one group of partitions after the other (memory: one group's frames)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor

from sessiongraph.work import BATCH_FILES, Batch, parse_batch

# Files are sent to the pool in tasks of consecutive files up to this many bytes or files: a
# task per tiny file would cost more in pickling and round trips than parsing it, one task of
# too many bytes would leave the other workers idle at the end. A task's frames are built once
# (about 5 ms a task however small), so tasks are large: 4 MB tasks made a 200 MB ingest 10%
# slower than building once per store batch.
TASK_BYTES = 32 << 20
TASK_FILES = 512


def parse_all(jobs: list, *, workers: int | None = None, address: str | None = None) -> Iterator[Batch]:
    """A ``work.Batch`` per task of consecutive jobs, in listing order; in-process for one
    worker or one file. ``address`` is for cluster engines and ignored here."""
    n = workers or os.cpu_count() or 1
    runs = tasks(jobs, n)
    if n <= 1 or len(jobs) < 2:
        for run in runs:
            yield _with_jobs(run, parse_batch(run))
        return
    _preload()
    with ProcessPoolExecutor(max_workers=min(n, len(jobs))) as pool:
        for run, batch in zip(runs, pool.map(parse_batch, runs), strict=True):
            yield _with_jobs(run, batch)


def _with_jobs(jobs: list, batch: Batch) -> Batch:
    """The batch with each file's job set (workers send none back: a job may hold a checkpoint)."""
    return batch._replace(files=[f._replace(job=job) for job, f in zip(jobs, batch.files, strict=True)])


def tasks(jobs: list, workers: int) -> list[list]:
    """``jobs`` cut into runs of consecutive jobs (order kept) of at most TASK_BYTES bytes and
    TASK_FILES files (nor more than a store batch, ``work.BATCH_FILES``), and small enough
    that every worker gets several."""
    limit = max(1, min(TASK_BYTES, sum(max(j.size, 0) for j in jobs) // (workers * 4)))
    most = max(1, min(TASK_FILES, BATCH_FILES))
    out: list[list] = []
    task: list = []
    size = 0
    for job in jobs:
        if task and (size + max(job.size, 0) > limit or len(task) >= most):
            out.append(task)
            task, size = [], 0
        task.append(job)
        size += max(job.size, 0)
    if task:
        out.append(task)
    return out


def _preload() -> None:
    """Import every adapter before the pool forks, so no worker imports them again."""
    from sessiongraph.ingest import registry

    for name in registry.names():
        registry.get(name)


def infer_all(groups, *, workers: int | None = None, address: str | None = None) -> Iterator[dict]:
    """The inference tables of each ``(files, frames)`` group, in this process, one after the
    other (memory: one group's frames)."""
    from sessiongraph.inference.partitions import infer_safely

    for files, frames in groups:
        yield infer_safely(frames, files)
        del frames
