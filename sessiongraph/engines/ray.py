"""The Ray engine: parse log files and run the inference passes on a Ray cluster (``--engine ray``).

``sessiongraph ingest PATHS --engine ray [--ray-address ADDR] --out-parquet DIR`` runs the same
pipeline as the local engine; the parse step and the passes move to the cluster:

- **driver** (the machine running the command): discovery (lists the files and skips those the
  store already holds unchanged), the store (DuckDB: every write, and reading each partition
  group's frames back), the plan of what to re-infer (``Store.inference_plan``), the Parquet
  writer.
- **cluster, parsing**: ``ray.data.from_items(files).map_batches(parse_batch)``: each task runs
  its files through ``pipeline.parse_path`` (read the head to pick the adapter, then parse), the
  very function of the local engine, and returns one Arrow block holding a row per file and one
  ``large_list<struct>`` column per frame. The driver streams the blocks back in listing order
  and commits them to the store batch by batch.
- **cluster, inference**: one Ray task per group of partitions (``inference.partitions``): the
  driver reads the group's frames from the store and hands them to a task, which runs
  ``partitions.infer_safely`` (the local engine's function) and returns the group's inference
  tables; at most ``2 x`` the cluster's CPUs groups are in flight, so the driver holds that many
  groups' frames at a time. The store then replaces the rows of those partitions.

So the store holds the same rows and the dataset the same bytes as with the local engine
(``tests/test_ray.py``).

On a cluster of several machines: start Ray on each (``ray start --head`` on one,
``ray start --address HEAD:6379`` on the others), install sessiongraph (``pip install
'sessiongraph[ray]'``) in the same Python everywhere, put the logs on storage every node mounts
at the same path (NFS, a shared volume: parse tasks open files by path), and run
``sessiongraph ingest /shared/logs --engine ray --ray-address HEAD:6379 --db store.duckdb
--out-parquet s3://bucket/dataset`` on the head (or any machine that can reach it). The store is
a local DuckDB file on the driver; the dataset may go to any pyarrow file system (``s3://...``)
the driver can write.

What bounds size: parsing spreads over every CPU of the cluster; the passes over the largest
partition run in one task, so one worker's memory must hold that partition's frames (a team
archive where everyone works in one repository makes that repository one partition).
"""

from __future__ import annotations

import atexit
import logging
from collections import deque
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


def _connect(address: str | None):
    """Ray, initialised: connects to ``address`` (else ``$RAY_ADDRESS``, else a new local Ray)
    unless Ray is already initialised in this process; a Ray started here is shut down when the
    process exits (parsing and inference share it)."""
    ray = _ray()
    if not ray.is_initialized():
        try:
            ray.init(address=address, include_dashboard=False, logging_level="WARNING")
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise SessiongraphError(f"cannot start or reach Ray at {address or 'a new local cluster'}: {exc}") from None
        atexit.register(ray.shutdown)
    return ray


def parse_all(jobs: list, *, workers: int | None = None, address: str | None = None) -> Iterator[tuple]:
    """``(job, parsed)`` for every job, in listing order, parsed by Ray tasks.

    ``address``: see :func:`_connect`. ``workers`` caps the number of concurrent parse tasks
    (default: Ray's choice, one per free CPU).
    """
    if not jobs:
        return
    from sessiongraph.pipeline import Parsed

    ray = _connect(address)
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
                    "launchers": [f"{name}={harness}" for name, harness in job.launchers],
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


# Where the last infer_all's tasks ran (worker process ids and node ids): the driver never
# runs a pass itself, and tests/test_ray.py checks these are other processes.
LAST_INFER_WORKERS: set[tuple[str, int]] = set()


def infer_all(groups, *, workers: int | None = None, address: str | None = None) -> Iterator[dict]:
    """The inference tables of each ``(files, frames)`` group, each computed by a Ray task; at
    most ``workers`` (default: twice the cluster's CPUs) groups in flight."""
    ray = _connect(address)
    task = ray.remote(_infer_task)
    limit = workers or max(2, 2 * int(ray.cluster_resources().get("CPU", 1)))
    LAST_INFER_WORKERS.clear()
    pending: deque = deque()
    for files, frames in groups:
        pending.append(task.remote(files, frames.tables()))
        while len(pending) >= limit:
            yield _result(ray, pending.popleft())
    while pending:
        yield _result(ray, pending.popleft())


def _result(ray, ref) -> dict:
    where, tables = ray.get(ref)
    LAST_INFER_WORKERS.add(where)
    return tables


def _infer_task(files: pl.DataFrame, tables: dict[str, pl.DataFrame]) -> tuple[tuple[str, int], dict]:
    """Ray task: the passes over one group of partitions."""
    import os

    import ray

    from sessiongraph.inference.partitions import infer_safely

    where = (ray.get_runtime_context().get_node_id(), os.getpid())
    return where, infer_safely(Frames(**tables), files)


def parse_batch(batch: pa.Table) -> pa.Table:
    """Ray task: classify and parse each file of ``batch`` (columns i, path, skip_reason, privacy, launchers) into one
    Arrow block: ``i``, ``harness``, ``skip_reason`` plus a ``large_list<struct>`` column per
    frame, one list per file."""
    from sessiongraph.pipeline import parse_path

    rows = batch.to_pylist()
    done = [
        parse_path(
            Found(r["path"], None, r["skip_reason"]) if r["skip_reason"] else r["path"],
            privacy=r["privacy"],
            launchers=tuple(tuple(x.split("=", 1)) for x in r["launchers"] or ()),
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
