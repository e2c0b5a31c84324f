"""Writes the Prickle sample task files (see README.md).

Task objects follow the task schema in shared/seeds/prickle-task-states.md (every required key,
the 11 states, ``result.revision``/``artifacts``/``lineage``); every id, agent, text and time is
made up. Artifact hashes are the sha256 of the made-up artifact text below, so a context item
that names the same hash really names the same content. ``python _generate.py`` rewrites them.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


H_PLAN = sha("# Retry plan\n\n1. wrap push() in backoff\n2. three retries\n")
H_IMPL1 = sha("diff --git a/harbor/sync.py b/harbor/sync.py\n+    for attempt in range(3):\n")
H_IMPL2 = sha("diff --git a/harbor/sync.py b/harbor/sync.py\n+    return with_backoff(push, retries=3)\n")
H_REVIEW = sha("# Review: retries\n\nLooks right; jitter would help.\n")
H_DOCS = sha("# Retries\n\nharbor retries a push three times with backoff.\n")
H_NOWHERE = sha("retry policy memory fact, never written by a task in these files\n")
C1 = "4f2d9c1a7b3e5f6081a2b3c4d5e6f708192a3b4c"
C2 = "9a8b7c6d5e4f30211f2e3d4c5b6a798877665544"
DAY = "2026-01-12"


def ts(hms: str) -> str:
    return f"{DAY}T{hms}Z"


def packet(task: str, kind: str, criteria: list[str], depends_on: list[str] | None = None,
           files: list[str] | None = None) -> dict:
    return {"task": task, "deliverable_type": kind, "acceptance_criteria": criteria, "context": "",
            "files": files or [], "depends_on": depends_on or []}


def task(tid: str, state: str, assignee: str, pkt: dict, created: str, updated: str, *, result: dict | None = None,
         parent: str | None = None, waiting_on: str | None = None, requester: str = "acme/lead",
         route: dict | None = None, checkpoint: dict | None = None) -> dict:
    out = {
        "id": tid, "project": "harbor", "state": state, "waiting_on": waiting_on, "requester": requester,
        "assignee": assignee, "packet": pkt, "result": result, "latest_checkpoint": checkpoint,
        "latest_checkpoint_by": {"agent": assignee, "provenance": "agent_generated", "handed_back": False}
        if checkpoint else None,
        "parent_task_id": parent, "created_at": ts(created), "updated_at": ts(updated),
        "requested_by": {"kind": "agent", "agent_id": requester} if requester else {"kind": "person", "handle": "dana"},
        "origin_message_id": None, "route": route or {"via": "handoff"}, "display_title": None, "turn_budget": 40,
    }
    return out


def result(summary: str, by: str, returned: str, revision: int, artifacts: list[dict], *, cause: dict,
           context: list[dict], status: str = "accepted", evidence: list[dict] | None = None,
           verdicts: list[dict] | None = None, decided_by: dict | None = None) -> dict:
    return {
        "summary": summary,
        "evidence": evidence or [{"kind": "note", "summary": "self-checked against the criteria", "verifier": "assignee"}],
        "provenance": "agent_generated", "returned_by": by, "returned_at": ts(returned),
        "submission_id": f"sub_{by.split('/')[1]}_{revision}", "revision": revision, "artifacts": artifacts,
        "status": status, "verdicts": verdicts or [], "verified_by": None, "decided_by": decided_by,
        "decided_by_policy": None, "reason": None,
        "lineage": {"cause": cause, "context": context, "recorded_at": ts(returned)},
        "provenance_status": "claimed",
    }


def art(ref: str, digest: str | None, commit: str | None = None) -> dict:
    return {"ref": ref, "sha256": digest, "commit_sha": commit}


OWNER = {"kind": "owner_message", "message_id": "omsg_retry_77", "author": "dana"}
PLAN_CHECKPOINT = {"kind": "checkpoint", "task_id": "tsk_plan_retry", "checkpoint_id": "cp_plan_final", "sha256": H_PLAN}


def plan() -> dict:
    return task("tsk_plan_retry", "completed", "acme/planner",
                packet("Plan retries for the harbor sync client", "doc", ["names the retry count and where it goes"]),
                "09:00:00.000", "09:21:00.000",
                result=result("Three retries with backoff around push().", "acme/planner", "09:20:00.000", 1,
                              [art("docs/plan-retry.md", H_PLAN)], cause=OWNER, context=[]))


def impl_snapshots() -> list[dict]:
    pkt = packet("Implement the retry plan in harbor/sync.py", "code",
                 ["push() retries three times", "tests pass"], depends_on=["tsk_plan_retry"], files=["harbor/sync.py"])
    rev1 = result("Retry loop around push().", "acme/coder", "10:05:00.000", 1,
                  [art("harbor/sync.py", H_IMPL1, C1)], cause=OWNER, context=[PLAN_CHECKPOINT], status="submitted",
                  evidence=[{"kind": "test_output", "summary": "pytest: 9 passed", "verifier": "ci"}])
    rejected = dict(rev1, status="rejected", decided_by={"kind": "agent", "agent_id": "acme/planner"},
                    verdicts=[{"criterion": 0, "accepted": False, "note": "hand-rolled loop; use with_backoff"}])
    rev2 = result("push() now goes through with_backoff(retries=3).", "acme/coder", "11:10:00.000", 2,
                  [art("harbor/sync.py", H_IMPL2, C2)], cause=OWNER, context=[PLAN_CHECKPOINT],
                  evidence=[{"kind": "test_output", "summary": "pytest: 10 passed", "verifier": "ci"},
                            {"kind": "commit", "summary": "retry commit", "verifier": "assignee", "artifact": 0}],
                  verdicts=[{"criterion": 0, "accepted": True}, {"criterion": 1, "accepted": True}],
                  decided_by={"kind": "person", "handle": "dana"})
    base = dict(parent="tsk_plan_retry", requester="acme/planner")
    accepted = task("tsk_impl_retry", "accepted", "acme/coder", pkt, "09:22:00.000", "09:25:00.000", **base)
    verifying = task("tsk_impl_retry", "verifying", "acme/coder", pkt, "09:22:00.000", "10:05:00.000",
                     result=rev1, **base)
    reworking = task("tsk_impl_retry", "working", "acme/coder", pkt, "09:22:00.000", "10:20:00.000",
                     result=rejected, **base)
    done = task("tsk_impl_retry", "completed", "acme/coder", pkt, "09:22:00.000", "11:15:00.000", result=rev2, **base)
    # File order is not time order: the completed snapshot is not the last line.
    return [accepted, verifying, done, reworking]


def review() -> dict:
    return task("tsk_review_retry", "completed", "acme/reviewer",
                packet("Review the retry change", "reviewed_pr", ["every criterion of the plan checked"]),
                "11:16:00.000", "11:41:00.000", parent="tsk_plan_retry", requester="acme/planner",
                route={"via": "request_capability", "capability": {"kind": "repo", "name": "harbor"}},
                result=result("Approve; suggest jitter later.", "acme/reviewer", "11:40:00.000", 1,
                              [art("reviews/retry.md", H_REVIEW)], cause=OWNER,
                              context=[{"kind": "memory_fact", "key": "impl-diff", "sha256": H_IMPL2}],
                              evidence=[{"kind": "pull_request", "summary": "PR reviewed", "verifier": "requester",
                                         "url": "https://git.example/acme/harbor/pull/12"}]))


def docs() -> dict:
    cause = {"kind": "task", "task_id": "tsk_impl_retry", "basis": "same_owner", "rule_id": None, "approval_id": None}
    return task("tsk_docs_retry", "completed", "acme/writer",
                packet("Document the retry behaviour", "doc", ["docs/retry.md explains the retry count"],
                       depends_on=["tsk_impl_retry", "tsk_ext_perf_9", "after the release freeze"]),
                "11:20:00.000", "12:01:00.000",
                result=result("docs/retry.md written.", "acme/writer", "12:00:00.000", 1,
                              [art("docs/retry.md", H_DOCS)], cause=cause,
                              context=[{"kind": "memory_fact", "key": "retry-policy", "sha256": H_NOWHERE}]))


def bogus() -> dict:
    return task("tsk_bench_retry", "paused", "acme/ops",
                packet("Benchmark push() with retries", "data", ["median latency reported"]),
                "11:30:00.000", "11:45:00.000",
                checkpoint={"progress": "fake server up", "decisions": [], "files_touched": [], "next_steps": [],
                            "open_questions": []})


def ship() -> dict:
    return task("tsk_ship_retry", "waiting", "acme/ops",
                packet("Release harbor 0.9 with retries", "other", ["tagged and published"],
                       depends_on=["tsk_review_retry"]),
                "11:42:00.000", "11:43:00.000", waiting_on="owner_approval")


def gate_snapshots() -> list[dict]:
    """Four more tasks whose histories walk every one of the 11 states (bench's `paused` aside)."""
    flag = packet("Turn retries on in production", "other", ["flag enabled for every region"])
    bump = packet("Bump harbor to 0.9", "code", ["version is 0.9 everywhere"], files=["pyproject.toml"])
    perf = packet("Measure push() latency with retries", "data", ["p50 and p99 reported"])
    lint = packet("Lint the retry module", "code", ["ruff passes on harbor/sync.py"])
    cp = {"progress": "bumped pyproject, changelog next", "decisions": [], "files_touched": ["pyproject.toml"],
          "next_steps": [], "open_questions": []}
    measured = result("p50 41 ms, p99 180 ms under three retries.", "acme/ops", "12:55:00.000", 1, [],
                      cause=OWNER, context=[], status="submitted",
                      evidence=[{"kind": "link", "summary": "latency dashboard", "verifier": "person",
                                 "url": "https://dash.example/harbor/push-latency"}])
    ops = dict(requester="acme/lead")
    return [
        # The owner's permission gate holds the flag change, then the owner denies it.
        task("tsk_flag_retry", "requested", "acme/ops", flag, "12:05:00.000", "12:05:00.000", **ops),
        task("tsk_bump_retry", "cancelled", "acme/coder", bump, "12:10:00.000", "13:00:00.000", checkpoint=cp, **ops),
        task("tsk_flag_retry", "waiting", "acme/ops", flag, "12:05:00.000", "12:06:00.000",
             waiting_on="owner_approval", **ops),
        task("tsk_bump_retry", "requested", "acme/coder", bump, "12:10:00.000", "12:10:00.000", **ops),
        task("tsk_bump_retry", "routed", "acme/coder", bump, "12:10:00.000", "12:11:00.000", **ops),
        task("tsk_perf_retry", "routed", "acme/ops", perf, "12:15:00.000", "12:15:00.000", **ops),
        task("tsk_bump_retry", "accepted", "acme/coder", bump, "12:10:00.000", "12:12:00.000", **ops),
        task("tsk_lint_retry", "accepted", "acme/coder", lint, "12:20:00.000", "12:21:00.000", **ops),
        task("tsk_perf_retry", "accepted", "acme/ops", perf, "12:15:00.000", "12:16:00.000", **ops),
        task("tsk_bump_retry", "working", "acme/coder", bump, "12:10:00.000", "12:20:00.000", checkpoint=cp, **ops),
        # The assignee's owner stops the bump, starts it again, then it is cancelled.
        task("tsk_bump_retry", "waiting", "acme/coder", bump, "12:10:00.000", "12:40:00.000", checkpoint=cp,
             waiting_on="stopped", **ops),
        task("tsk_lint_retry", "working", "acme/coder", lint, "12:20:00.000", "12:25:00.000", **ops),
        task("tsk_flag_retry", "rejected", "acme/ops", flag, "12:05:00.000", "12:30:00.000", **ops),
        task("tsk_perf_retry", "working", "acme/ops", perf, "12:15:00.000", "12:35:00.000", **ops),
        task("tsk_bump_retry", "working", "acme/coder", bump, "12:10:00.000", "12:50:00.000", checkpoint=cp, **ops),
        # The measurement comes back for approval, and is handed back to its requester.
        task("tsk_perf_retry", "approval", "acme/ops", perf, "12:15:00.000", "12:55:00.000", result=measured, **ops),
        task("tsk_perf_retry", "returned", "acme/ops", perf, "12:15:00.000", "13:05:00.000", result=measured, **ops),
    ]


def main() -> None:
    (HERE / "tasks.json").write_text(json.dumps([plan(), docs(), bogus()], indent=2) + "\n", encoding="utf-8")
    (HERE / "impl-events.jsonl").write_text(
        "".join(json.dumps(s, separators=(",", ":")) + "\n" for s in impl_snapshots()), encoding="utf-8")
    (HERE / "gate-events.jsonl").write_text(
        "".join(json.dumps(s, separators=(",", ":")) + "\n" for s in gate_snapshots()), encoding="utf-8")
    (HERE / "tasks").mkdir(exist_ok=True)
    for obj in (review(), ship()):
        (HERE / "tasks" / f"{obj['id']}.json").write_text(json.dumps(obj, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
