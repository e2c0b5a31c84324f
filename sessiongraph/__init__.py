"""sessiongraph: coding-agent session logs into runs with evidence-tiered lineage.

The library has one function per command, named as the command (a subcommand joined with ``_``):
``sessiongraph.show(run)`` is ``sessiongraph show RUN``, ``sessiongraph.export_ocp(out)`` is
``sessiongraph export ocp --out OUT``. One name differs: ``sessiongraph ingest`` is
``sessiongraph.ingest_logs``, because ``sessiongraph.ingest`` is the package of log adapters
(``sessiongraph.ingest.codex`` ...). ``sessiongraph/cli.py`` is a click layer over these.

They are imported on first use (``COMMANDS`` says from where): ``import sessiongraph``, and so
``sessiongraph --help``, loads none of polars, pyarrow or DuckDB.
"""

from __future__ import annotations

from sessiongraph.version import __version__

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing at startup
if TYPE_CHECKING:  # what the type checker sees of COMMANDS
    from typing import Any

    from sessiongraph.costs import reprice_db as reprice
    from sessiongraph.dataset.parquet import export_parquet as export_parquet
    from sessiongraph.dataset.parquet import load as load
    from sessiongraph.dataset.trajectories import export_trajectories as export_trajectories
    from sessiongraph.ocp.files import export_ocp as export_ocp
    from sessiongraph.otlp.export import export_otlp as export_otlp
    from sessiongraph.pipeline import ingest as ingest_logs
    from sessiongraph.views.queries import query as query
    from sessiongraph.views.queries import report as report
    from sessiongraph.views.queries import runs as runs
    from sessiongraph.views.queries import sessions as sessions
    from sessiongraph.views.queries import show as show
    from sessiongraph.watcher import watch as watch

# command function -> the module that defines it (the layer test reads this table as imports).
COMMANDS: dict[str, str] = {
    "ingest_logs": "sessiongraph.pipeline:ingest",
    "query": "sessiongraph.views.queries:query",
    "sessions": "sessiongraph.views.queries:sessions",
    "runs": "sessiongraph.views.queries:runs",
    "show": "sessiongraph.views.queries:show",
    "report": "sessiongraph.views.queries:report",
    "export_ocp": "sessiongraph.ocp.files:export_ocp",
    "export_otlp": "sessiongraph.otlp.export:export_otlp",
    "export_parquet": "sessiongraph.dataset.parquet:export_parquet",
    "export_trajectories": "sessiongraph.dataset.trajectories:export_trajectories",
    "load": "sessiongraph.dataset.parquet:load",
    "reprice": "sessiongraph.costs:reprice_db",
    "watch": "sessiongraph.watcher:watch",
}

__all__ = [
    "__version__",
    "export_ocp",
    "export_otlp",
    "export_parquet",
    "export_trajectories",
    "ingest_logs",
    "load",
    "query",
    "report",
    "reprice",
    "runs",
    "sessions",
    "show",
    "watch",
]


def __getattr__(name: str) -> Any:
    if name not in COMMANDS:
        raise AttributeError(f"module 'sessiongraph' has no attribute {name!r}")
    import importlib

    module, _, attr = COMMANDS[name].partition(":")
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *COMMANDS})
