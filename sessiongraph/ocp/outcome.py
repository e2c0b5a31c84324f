"""The outcome parts of an OCP document: node state, attempt status and outcome, run signals and
state events, from the outcome columns of ``sessions`` and the ``outcomes`` frame.

A session whose log records no outcome (every harness but Prickle today) keeps what a bare log can
say: node state and attempt status ``settled_unverified``, outcome evidence ``heuristic``. Only
vocabulary values, criterion numbers, times and locators are written: no text from the logs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from sessiongraph.ingest.frames import TERMINAL_STATUSES
from sessiongraph.ocp.time import timestamp

UNSETTLED = "settled_unverified"  # a log ends, but no log says whether the work was accepted
EVIDENCE_KEY = "dev.sessiongraph.evidence"
STATE_KEY = "dev.sessiongraph.state"


def node_state(state: str | None) -> str:
    return state or UNSETTLED


def attempt_outcome(status: str | None, tier: str | None, evidence: list[dict]) -> tuple[str, dict | None]:
    """The attempt's ``status`` and ``outcome``. An open attempt (queued, working) has no outcome:
    OCP warns about one (W132)."""
    if status is None:
        return UNSETTLED, {"result": UNSETTLED, "evidence": "heuristic", "reason": "the log ends; no verdict is logged"}
    if status not in TERMINAL_STATUSES:
        return status, None
    out: dict = {"result": status}
    if tier:
        out["evidence"] = tier
    if evidence:
        out["ext"] = {EVIDENCE_KEY: [_evidence(r) for r in evidence]}
    return status, out


def _evidence(row: dict) -> dict:
    item = {
        "kind": row["evidence_kind"],
        "verifier": row["verifier"],
        "tier": row["tier"],
        "observed_at": timestamp(row["ts"]),
        "ref": row["ref"],
    }
    return {k: v for k, v in item.items() if v is not None}


def signals(verdicts: list[dict], attempt_of: Callable[[dict], str]) -> list[dict]:
    """One ``verdict`` signal per judged criterion, at the attempt it judged. A verdict with no
    time cannot be a signal (``observed_at`` is required); its ingest counted the bad time."""
    out: list[dict] = []
    seen: Counter[tuple[str, str]] = Counter()
    for row in verdicts:
        if row["ts"] is None:
            continue
        attempt = attempt_of(row)
        name = f"criterion_{row['criterion']}"
        seen[(attempt, name)] += 1
        repeat = seen[(attempt, name)]
        out.append(
            {
                "id": f"sig:{attempt}:{name}" + (f":{repeat}" if repeat > 1 else ""),
                "kind": "verdict",
                "name": name,
                "value": "accept" if row["accepted"] else "reject",
                "observed_at": timestamp(row["ts"]),
                "tier": row["tier"],
                "at_attempt": attempt,
                **_source(row),
            }
        )
    return out


def _source(row: dict) -> dict:
    """Who decided the verdict, when the log names them: an OCP source kind and the decider's id."""
    if row["verifier"] is None:
        return {}
    return {"source": {k: v for k, v in (("kind", row["verifier"]), ("ref", row["ref"])) if v is not None}}


def state_events(states: list[dict], node_of: dict[str, str]) -> list[dict]:
    """A ``note`` per step of a node's state history (OCP has no state-change event type). It names
    the node only: a task's state is about the task, not one try at it."""
    out = []
    for row in states:
        if row["ts"] is None:
            continue
        detail = f"state {row['native_state']}" + (f", waiting on {row['waiting_on']}" if row["waiting_on"] else "")
        out.append(
            {
                "at": timestamp(row["ts"]),
                "type": "note",
                "node": node_of[row["session_id"]],
                "detail": detail,
                "ext": {STATE_KEY: {k: row[k] for k in ("native_state", "waiting_on") if row[k] is not None}},
            }
        )
    return out


def signal_events(sigs: list[dict], node_of_attempt: Callable[[str], str]) -> list[dict]:
    return [
        {
            "at": s["observed_at"],
            "type": "signal_observed",
            "attempt": s["at_attempt"],
            "node": node_of_attempt(s["at_attempt"]),
            "detail": f"{s['kind']} {s['name']}: {s['value']}",
        }
        for s in sigs
    ]
