"""The Ray engine: parse log files with Ray Data on a Ray cluster (``--engine ray``).

``sessiongraph ingest PATHS --engine ray [--ray-address ADDR] --out-parquet DIR`` runs the same
pipeline as the local engine; only the parse step moves:

- **driver** (the machine running the command): discover (lists the files and skips those the
  store already holds unchanged), the store writes, the inference passes, the Parquet writer.
- **cluster**: ``ray.data.from_items(files).map_batches(parse_batch)``: each task runs its files
  through ``pipeline.parse_path`` (read the head to pick the adapter, then parse), the very
  function of the local engine, and returns one Arrow
  block holding a row per file and one ``large_list<struct>`` column per frame. The driver
  streams the blocks back in listing order and commits them to the store batch by batch, so the
  store holds the same rows and the dataset the same bytes as with the local engine
  (``tests/test_ray.py``).

What scales and what does not:

- Parsing (reading and decoding every log line) spreads over every CPU of the cluster; the
  workers must see the log files at the same paths (a shared or network file system).
- Inference runs once on the driver over the whole store (``inference.infer``): spawn, launch
  and continuation edges could be found per workspace, but artifact flows join reads and writes
  of the same absolute path across all workspaces, and runs follow edges across them, so the
  passes take every frame at once. The driver's memory, not the cluster, bounds the archive
  size until the passes are partitioned by workspace (figures: benchmarks/README.md).
- The store (DuckDB) and the Parquet writer run on the driver; the dataset may go to any pyarrow
  file system (``s3://...``) that the driver can write.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import cast

import polars as pl
import pyarrow as pa

from sessiongraph.errors import SessiongraphError
from sessiongraph.ingest.discover import Found
from sessiongraph.ingest.frames import SCHEMAS, Frames

# Files per Ray task: enough to amortise task overhead, few enough to balance a skewed archive
# (one 50 MB transcript next to many small ones).
FILES_PER_TASK = 64
_COMPAT = pl.CompatLevel.oldest()  # large_string / large_list: no view types in the blocks


def _ray():
    try:
        import ray
        import ray.data  # noqa: F401 - the Data library is the part we need
    except ImportError:
        raise SessiongraphError(
            "the ray engine needs Ray: pip install 'sessiongraph[ray]' (or drop --engine ray)"
        ) from None
    return ray


def parse_all(jobs: list, *, workers: int | None = None, address: str | None = None) -> Iterator[tuple]:
    """``(job, parsed)`` for every job, in listing order, parsed by Ray tasks.

    Connects to ``address`` (else ``$RAY_ADDRESS``, else a new local Ray) unless Ray is already
    initialised in this process; a Ray it started is shut down at the end. ``workers`` caps the
    number of concurrent parse tasks (default: Ray's choice, one per free CPU).
    """
    if not jobs:
        return
    from sessiongraph.pipeline import Parsed

    ray = _ray()
    started = False
    if not ray.is_initialized():
        try:
            ray.init(address=address, include_dashboard=False, logging_level="WARNING")
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise SessiongraphError(f"cannot start or reach Ray at {address or 'a new local cluster'}: {exc}") from None
        started = True
    ctx = ray.data.DataContext.get_current()
    saved = (ctx.execution_options.preserve_order, ctx.enable_progress_bars)
    ctx.execution_options.preserve_order = True  # the store gets files in listing order
    ctx.enable_progress_bars = False
    log = logging.getLogger("ray.data")
    level = log.level
    log.setLevel(logging.ERROR)  # Ray Data's per-run INFO lines would drown the ingest summary
    try:
        items = []
        for i, job in enumerate(jobs):
            problem = job.item if isinstance(job.item, Found) else None  # a folder discovery could not walk
            items.append(
                {
                    "i": i,
                    "path": problem.path if problem else job.item,
                    "skip_reason": problem.skip_reason if problem else None,
                    "privacy": job.privacy,
                    "max_text_chars": job.max_text_chars,
                }
            )
        ds = ray.data.from_items(items).map_batches(
            parse_batch,
            batch_format="pyarrow",
            batch_size=FILES_PER_TASK,
            concurrency=workers,
        )
        for block in ds.iter_batches(batch_format="pyarrow", batch_size=None):
            for i, found, frames in unpack(block):
                yield jobs[i], Parsed(found, frames)  # no checkpoints: a grown file is read whole
    finally:
        ctx.execution_options.preserve_order, ctx.enable_progress_bars = saved
        log.setLevel(level)
        if started:
            ray.shutdown()


def parse_batch(batch: pa.Table) -> pa.Table:
    """Ray task: classify and parse each file of ``batch`` (columns i, path, skip_reason, privacy) into one
    Arrow block: ``i``, ``harness``, ``skip_reason`` plus a ``large_list<struct>`` column per
    frame, one list per file."""
    from sessiongraph.pipeline import parse_path

    rows = batch.to_pylist()
    done = [
        parse_path(
            Found(r["path"], None, r["skip_reason"]) if r["skip_reason"] else r["path"],
            privacy=r["privacy"],
            max_text_chars=r["max_text_chars"],
        )[:2]
        for r in rows
    ]
    parsed = [frames.tables() for _found, frames in done]
    columns = {
        "i": pa.array([r["i"] for r in rows], pa.int64()),
        "path": pa.array([found.path for found, _ in done], pa.large_string()),
        "harness": pa.array([found.harness for found, _ in done], pa.large_string()),
        "skip_reason": pa.array([found.skip_reason for found, _ in done], pa.large_string()),
    }
    for name, schema in SCHEMAS.items():
        frames = [p[name] for p in parsed]
        values = pl.concat(frames, how="vertical") if frames else pl.DataFrame(schema=schema)
        offsets = [0]
        for f in frames:
            offsets.append(offsets[-1] + f.height)
        struct = values.to_arrow(compat_level=_COMPAT).to_struct_array().combine_chunks()
        columns[name] = pa.LargeListArray.from_arrays(pa.array(offsets, pa.int64()), struct)
    return pa.table(columns)


def unpack(block: pa.Table) -> Iterator[tuple[int, Found, Frames]]:
    """The ``(i, found, frames)`` of every file in a block that ``parse_batch`` made."""
    from sessiongraph.inference.edges import conform

    index = block.column("i").to_pylist()
    found = [
        Found(*f) for f in zip(*(block.column(c).to_pylist() for c in ("path", "harness", "skip_reason")), strict=True)
    ]
    per_frame = {}
    for name, schema in SCHEMAS.items():
        lists = block.column(name).combine_chunks()
        offsets = lists.offsets.to_pylist()
        # from_arrow(Table) is a DataFrame (pyarrow is untyped, so mypy also sees the Series overload)
        flat = conform(cast(pl.DataFrame, pl.from_arrow(pa.Table.from_struct_array(lists.flatten()))), schema)
        per_frame[name] = [flat.slice(a - offsets[0], b - a) for a, b in zip(offsets[:-1], offsets[1:], strict=True)]
    for k, i in enumerate(index):
        yield i, found[k], Frames(**{name: parts[k] for name, parts in per_frame.items()})


def check() -> None:
    """Ray must be importable on the driver (and installed on every node of the cluster)."""
    _ray()
