"""Runs as linked trajectories (``export trajectories --by run``): one row per run, its sessions'
conversations in one list, root first, each session once, and links from each spawning or
launching call to the conversation of the session it started.

A forked child's copy of its parent's history is left out at ingest (``ingest.copies``), so a
run's row holds each message once: the child's conversation starts where the child's own work
does, and its link names the parent's call that started it. The row carries the run's OCP
``run.task`` (``inference.task``, heuristic), the root's outcome (``state``, ``status``,
``outcome_tier``) and end state, and whether the run's last test command passed."""

from __future__ import annotations

from typing import Any

import polars as pl

from sessiongraph.dataset.messages import MESSAGES, commit_labels
from sessiongraph.dataset.tables import RUN_WRITES
from sessiongraph.inference.task import task
from sessiongraph.ingest.frames import STRS, TS
from sessiongraph.store import Store

CONVERSATION = pl.Struct(
    {
        "session_id": pl.String,
        "parent_session_id": pl.String,
        "via": pl.String,
        "depth": pl.Int64,
        "role": pl.String,
        "harness": pl.String,
        "model": pl.String,
        "n_steps": pl.Int64,
        "trajectory_sha256": pl.String,
        "messages": MESSAGES,
    }
)
# A call that started a session of the run: indices into the row's ``conversations`` and into the
# parent conversation's ``messages`` (the assistant message holding the call).
LINK = pl.Struct(
    {
        "parent": pl.Int64,
        "message": pl.Int64,
        "call_id": pl.String,
        "child": pl.Int64,
        "child_session_id": pl.String,
        "via": pl.String,
    }
)
TASK = pl.Struct(
    {
        "id": pl.String,
        "type": pl.String,
        "repo": pl.String,
        "base_commit": pl.String,
        "features": pl.Struct(
            {
                "size": pl.String,
                "has_tests": pl.Boolean,
                "touches": pl.String,
                "files_written": pl.Int64,
                "lang": pl.String,
            }
        ),
        "labeled_by": pl.Struct({"how": pl.String, "tier": pl.String}),
    }
)
RUN_TRAJECTORIES = pl.Schema(
    {
        "run_id": pl.String,
        "root_session_id": pl.String,
        "harness": pl.String,
        "harnesses": STRS,
        "models": STRS,
        "started_at": TS,
        "ended_at": TS,
        "n_sessions": pl.Int64,
        "n_conversations": pl.Int64,
        "n_steps": pl.Int64,
        "n_tool_calls": pl.Int64,
        "n_errors": pl.Int64,
        "task": TASK,
        "state": pl.String,
        "status": pl.String,
        "outcome_tier": pl.String,
        "end_state": pl.String,
        "end_state_tier": pl.String,
        "n_test_runs": pl.Int64,
        "tests_passed": pl.Boolean,
        "tests_tier": pl.String,
        "n_commits": pl.Int64,
        "commits_tier": pl.String,
        "commits_in_branch": pl.Boolean,
        "conversations": pl.List(CONVERSATION),
        "links": pl.List(LINK),
    }
)

# With the root session's repository and first commit, as OCP run.task has them (ocp/bundle.py):
# its log's git_repo (Codex session_meta.git) else the repository of a pr-link record it wrote.
_RUNS = """
SELECT r.run_id, r.root_session_id, r.root_harness, r.harnesses, r.models, r.n_sessions,
       coalesce(s.git_repo, pr.pr_repo) AS repo, s.git_commit AS base_commit
FROM runs r
LEFT JOIN (SELECT session_id, max(git_repo) AS git_repo, arg_min(git_commit, started_at) AS git_commit
           FROM sessions GROUP BY session_id) s ON s.session_id = r.root_session_id
LEFT JOIN (SELECT session_id, arg_min(repo, line) AS pr_repo FROM commits
           WHERE evidence = 'pr_link' AND repo IS NOT NULL GROUP BY session_id) pr ON pr.session_id = r.root_session_id
"""
# Every session of a run, with or without text, and the call in its parent that started it: a
# session with no conversation (a workflow journal, a missing parent's placeholder) is bridged,
# its children linked to the nearest ancestor that has one, at the call that started the chain.
_PARENTS = """
SELECT m.session_id, any_value(m.parent_session_id) AS parent_session_id, min(e.src_call_id) AS call_id
FROM run_sessions m
LEFT JOIN all_edges e ON e.dst = m.session_id AND e.src = m.parent_session_id AND e.kind = m.via
GROUP BY m.session_id
"""


def context(store: Store) -> tuple[dict, dict, dict, dict]:
    """What a run's row needs besides its conversations (runs, each session's parent and the call
    that started it, each run's written paths, the commits and PRs its sessions made): no text,
    read once for every group of runs."""
    runs = {r["run_id"]: r for r in store.query(_RUNS).iter_rows(named=True)}
    made = {r["run_id"]: r for r in commit_labels(store, "run_id").iter_rows(named=True)}
    parents = {sid: (parent, call) for sid, parent, call in store.query(_PARENTS).iter_rows()}
    paths: dict[str, list[str]] = {}
    for rid, path in store.query(RUN_WRITES).iter_rows():
        paths.setdefault(rid, []).append(path)
    return runs, parents, paths, made


def build(store: Store, sessions: pl.DataFrame, ctx: tuple[dict, dict, dict, dict] | None = None) -> pl.DataFrame:
    """One row per run with a conversation, from the per-session rows of ``messages.build`` (of
    whole runs: a group of them, or all)."""
    runs, parents, paths, made = ctx if ctx is not None else context(store)
    key = pl.coalesce("run_id", "session_id").alias("_run")
    ordered = sessions.with_columns(key).sort("_run", "depth", "started_at", "session_id", nulls_last=True)
    rows = [
        _row(rid, part, runs.get(rid), paths.get(rid, []), parents, made.get(rid))
        for (rid,), part in ordered.partition_by("_run", as_dict=True, maintain_order=True).items()
    ]
    return pl.DataFrame(rows, schema=RUN_TRAJECTORIES, orient="row")


def _row(
    run_id: str,
    part: pl.DataFrame,
    run: dict | None,
    paths: list[str],
    parents: dict[str, tuple] | None = None,
    made: dict | None = None,
) -> tuple:
    convs = list(part.iter_rows(named=True))
    index = {c["session_id"]: i for i, c in enumerate(convs)}
    links = []
    for i, c in enumerate(convs):
        up, call_id, seen = c["parent_session_id"], c["spawn_call_id"], {c["session_id"]}
        # a parent with no conversation here: up to the nearest ancestor that has one, at the
        # call in it that started the chain
        while up is not None and up not in index and up not in seen and parents and up in parents:
            seen.add(up)
            up, call_id = parents[up]
        parent = index.get(up)
        if parent is None or parent == i:
            continue
        links.append(
            {
                "parent": parent,
                "message": _message_of(convs[parent]["messages"], call_id),
                "call_id": call_id,
                "child": i,
                "child_session_id": c["session_id"],
                "via": c["via"],
            }
        )
    tested = [c for c in convs if c["_last_test_at"] is not None]
    last_test = max(tested, key=lambda c: c["_last_test_at"]) if tested else None  # the run's last test run
    root_id = run["root_session_id"] if run else convs[0]["session_id"]
    root = convs[index[root_id]] if root_id in index else {}
    t: dict[str, Any] = task(run_id, paths, run["repo"] if run else None, run["base_commit"] if run else None)
    t.pop("source", None)  # always "history" here
    t["features"].setdefault("lang", None)
    t.setdefault("repo", None)
    t.setdefault("base_commit", None)
    conversations = [
        {
            "session_id": c["session_id"],
            "parent_session_id": c["parent_session_id"],
            "via": c["via"],
            "depth": c["depth"],
            "role": c["role"],
            "harness": c["_harness"],
            "model": c["model"],
            "n_steps": c["n_steps"],
            "trajectory_sha256": c["trajectory_sha256"],
            "messages": c["messages"],
        }
        for c in convs
    ]
    return (
        run_id,
        root_id,
        run["root_harness"] if run else convs[0]["_harness"],
        run["harnesses"] if run else [convs[0]["_harness"]],
        run["models"] if run else [],
        part["started_at"].min(),
        part["ended_at"].max(),
        run["n_sessions"] if run else 1,
        len(convs),
        int(part["n_steps"].sum()),
        int(part["n_tool_calls"].sum()),
        int(part["n_errors"].sum()),
        t,
        root.get("state"),
        root.get("status"),
        root.get("outcome_tier"),
        root.get("end_state"),
        root.get("end_state_tier"),
        int(part["n_test_runs"].sum()),
        last_test["tests_passed"] if last_test else None,
        last_test["tests_tier"] if last_test else None,
        made["n_commits"] if made else 0,
        made["commits_tier"] if made else None,
        made["commits_in_branch"] if made else None,
        conversations,
        links,
    )


def _message_of(messages: list[dict], call_id: str | None) -> int | None:
    """Index of the assistant message that made the call."""
    if call_id is None:
        return None
    for i, m in enumerate(messages):
        if any(c["id"] == call_id for c in m["tool_calls"] or []):
            return i
    return None
