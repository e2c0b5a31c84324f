"""The Ray engine: parse log files and run the inference passes on a Ray cluster (``--engine ray``).

``sessiongraph ingest PATHS --engine ray [--ray-address ADDR] --out-parquet DIR`` runs the same
pipeline as the local engine; the parse step and the passes move to the cluster:

- **driver** (the machine running the command): discovery (lists the files and skips those the
  store already holds unchanged), the store (DuckDB: every write, and reading each partition
  group's frames back), the plan of what to re-infer (``Store.inference_plan``), the Parquet
  writer.
- **cluster, parsing**: ``ray.data.from_items(files).map_batches(parse_batch)``: each task runs
  its files through ``work.parse_batch`` (for each file: read the head to pick the adapter,
  then parse; then build the frames of them all), the very function of the local engine, and
  returns one Arrow block of one row: the files' facts as lists and one ``large_list<struct>``
  column per frame. The driver streams the blocks back in listing order as ``work.Batch``es
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
from datetime import datetime
from typing import TYPE_CHECKING, cast

import polars as pl
import pyarrow as pa

from sessiongraph.errors import SessiongraphError
from sessiongraph.ingest.discover import Found
from sessiongraph.ingest.frames import SCHEMAS, Frames

if TYPE_CHECKING:
    from sessiongraph.work import Batch

# Files per Ray task: enough to amortise task overhead, few enough to balance a skewed archive
# (one 50 MB transcript next to many small ones).
FILES_PER_TASK = 64
_COMPAT = pl.CompatLevel.oldest()  # large_string / large_list: no view types in the blocks


def _ray():
    try:
        import ray
        import ray.data
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


def parse_all(jobs: list, *, workers: int | None = None, address: str | None = None) -> Iterator[Batch]:
    """A ``work.Batch`` per Ray task of consecutive jobs, in listing order.

    ``address``: see :func:`_connect`. ``workers`` caps the number of concurrent parse tasks
    (default: Ray's choice, one per free CPU).
    """
    if not jobs:
        return
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
                    "since": job.since.isoformat() if job.since else None,
                    "until": job.until.isoformat() if job.until else None,
                }
            )
        ds = ray.data.from_items(items).map_batches(
            parse_batch,
            batch_format="pyarrow",
            batch_size=FILES_PER_TASK,
            concurrency=workers,
        )
        for block in ds.iter_batches(batch_format="pyarrow", batch_size=None):
            for index, batch in unpack(block):
                # no checkpoints: a grown file is read whole
                yield batch._replace(files=[f._replace(job=jobs[i]) for i, f in zip(index, batch.files, strict=True)])
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
    """Ray task: ``work.parse_batch`` over the files of ``batch`` (columns i, path,
    skip_reason, privacy, launchers, max_text_chars, since, until) into a block of one row: the
    files' ``i`` and facts as lists, and a ``large_list<struct>`` column per frame holding the
    batch's rows of it."""
    from sessiongraph.work import Job, parse_batch

    rows = batch.to_pylist()
    jobs = [
        Job(
            Found(r["path"], None, r["skip_reason"]) if r["skip_reason"] else r["path"],
            -1,
            -1,
            r["privacy"],
            None,
            r["max_text_chars"],
            tuple(tuple(x.split("=", 1)) for x in r["launchers"] or ()),
            datetime.fromisoformat(r["since"]) if r["since"] else None,
            datetime.fromisoformat(r["until"]) if r["until"] else None,
        )
        for r in rows
    ]
    done = parse_batch(jobs)
    files = done.files
    columns = {
        "i": [[r["i"] for r in rows]],
        "path": [[f.path for f in files]],
        "harness": [[f.harness for f in files]],
        "skip_reason": [[f.skip_reason for f in files]],
        "harnesses": [[list(f.harnesses) for f in files]],
        "codes": [[list(f.codes) for f in files]],
        "counts": [[list(f.counts) for f in files]],
        "in_window": [[f.in_window for f in files]],
    }
    types = {
        "i": pa.large_list(pa.int64()),
        "path": pa.large_list(pa.large_string()),
        "harness": pa.large_list(pa.large_string()),
        "skip_reason": pa.large_list(pa.large_string()),
        "harnesses": pa.large_list(pa.large_list(pa.large_string())),
        "codes": pa.large_list(pa.large_list(pa.large_string())),
        "counts": pa.large_list(pa.large_list(pa.int64())),
        "in_window": pa.large_list(pa.bool_()),
    }
    out = {name: pa.array(values, types[name]) for name, values in columns.items()}
    for name, df in done.frames.tables().items():
        struct = df.to_arrow(compat_level=_COMPAT).to_struct_array().combine_chunks()
        out[name] = pa.LargeListArray.from_arrays(pa.array([0, len(struct)], pa.int64()), struct)
    return pa.table(out)


def unpack(block: pa.Table) -> Iterator[tuple[list[int], Batch]]:
    """The job indices and ``work.Batch`` (jobs not set) of every row of a block that
    ``parse_batch`` made (Ray may have joined several tasks' rows into one block)."""
    from sessiongraph.inference.edges import conform
    from sessiongraph.work import Batch, ParsedFile

    facts = {
        c: block.column(c).to_pylist() for c in ("i", "path", "harness", "skip_reason", "harnesses", "codes", "counts")
    }
    windows = block.column("in_window").to_pylist()
    lists = {name: block.column(name).combine_chunks() for name in SCHEMAS}
    for row in range(block.num_rows):
        files = [
            ParsedFile(None, path, harness, skip, None, tuple(hs), tuple(cs), tuple(ns), ok)
            for path, harness, skip, hs, cs, ns, ok in zip(
                facts["path"][row],
                facts["harness"][row],
                facts["skip_reason"][row],
                facts["harnesses"][row],
                facts["codes"][row],
                facts["counts"][row],
                windows[row],
                strict=True,
            )
        ]
        tables = {}
        for name, schema in SCHEMAS.items():
            rows = lists[name][row].values  # this row's struct array
            # from_arrow(Table) is a DataFrame (pyarrow is untyped, so mypy also sees the Series overload)
            tables[name] = conform(cast(pl.DataFrame, pl.from_arrow(pa.Table.from_struct_array(rows))), schema)
        yield facts["i"][row], Batch(files, Frames(**tables))


def check() -> None:
    """Ray must be importable on the driver (and installed on every node of the cluster)."""
    _ray()
