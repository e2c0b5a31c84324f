"""Inference passes: pure functions of the frames that add spawn, launch, artifact and
continuation edges with evidence tiers, then group sessions into runs.

``infer(frames)`` runs the passes of ``_passes()`` in order; each pass sees the edges of the
ones before it (the artifact pass attributes ``codex exec -o FILE`` to the launched session, runs
need spawns and launches). A pass that fails is reported as a diagnostic and the others still run.
"""

from __future__ import annotations

import traceback

import polars as pl

from sessiongraph.inference.edges import Inferred, PassResult
from sessiongraph.ingest.frames import Frames


def _passes():
    from sessiongraph.inference.artifacts import artifacts
    from sessiongraph.inference.continuation import continuation
    from sessiongraph.inference.launch import launch
    from sessiongraph.inference.runs import runs
    from sessiongraph.inference.spawn import spawn

    return (spawn, launch, continuation, artifacts, runs)


def infer(frames: Frames) -> Inferred:
    done = Inferred()
    for pass_fn in _passes():
        try:
            result = pass_fn(frames, done)
        except Exception as exc:  # noqa: BLE001 - one failing pass must not lose the others
            where = traceback.extract_tb(exc.__traceback__)[-1]
            result = PassResult.empty()
            done.diagnostics = pl.concat(
                [
                    done.diagnostics,
                    pl.DataFrame(
                        [
                            {
                                "pass": pass_fn.__name__,
                                "code": "pass_failed",
                                "session_id": None,
                                "call_id": None,
                                "detail": f"{type(exc).__name__} at {where.name}:{where.lineno}",
                                "count": 1,
                            }
                        ],
                        schema=done.diagnostics.schema,
                    ),
                ]
            )
        if result is not None:
            done.add(result)
    return done
