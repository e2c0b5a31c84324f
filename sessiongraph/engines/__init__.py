"""Where ``sessiongraph ingest`` parses files and runs the passes: ``local`` (a process pool, the
default) or ``ray`` (tasks on a Ray cluster). An engine is a module with

- ``parse_all(jobs, *, workers=None, address=None)`` yielding ``work.Batch``es: each covers
  a run of consecutive jobs, the runs in the order of ``jobs`` and every job in exactly one. A
  batch holds one ``work.ParsedFile`` per job (its ``job`` set, the file as classified, its
  checkpoint, its sessions' harnesses and diagnostics' codes, whether it is in the ingest's
  ``--since/--until`` window) and one built ``Frames`` with the rows of the files in the window,
  in file order. Every engine makes a batch with the same ``work.parse_batch`` (each file
  through ``work.parse_path``: classify, then parse, from the job's checkpoint if it has
  one; then the frames built once), in its workers: the head reads of discovery and the building
  of frames run in parallel, and what crosses back to the driver is columnar (cheap to unpickle)
  plus a few small facts per file;
- ``infer_all(groups, *, workers=None, address=None)`` taking ``(files, frames)`` per group of
  partitions (``inference.partitions``) and yielding the tables ``partitions.infer_safely``
  gives for each, every engine through that same function.

Engines are imported lazily, so the local one never needs Ray installed.
"""

from __future__ import annotations

from types import ModuleType

from sessiongraph.ingest.registry import load

ENGINES: dict[str, str] = {
    "local": "sessiongraph.engines.local",
    "ray": "sessiongraph.engines.ray",
}


def get(name: str) -> ModuleType:
    return load(ENGINES, name, "engine")


def parse_all(engine: str, jobs: list, *, workers: int | None = None, address: str | None = None):
    """The ``work.Batch``es of ``jobs``, in order, parsed by ``engine``."""
    return get(engine).parse_all(jobs, workers=workers, address=address)


def infer_all(engine: str, groups, *, workers: int | None = None, address: str | None = None):
    """The inference tables of every ``(files, frames)`` group, by ``engine``."""
    return get(engine).infer_all(groups, workers=workers, address=address)


def check(engine: str) -> None:
    """Raise ``SessiongraphError`` now if ``engine`` is unknown or cannot run here (Ray missing)."""
    module = get(engine)
    if hasattr(module, "check"):
        module.check()
