"""How a Prickle task stands and how each of its attempts ended: the outcome half of the Prickle
adapter (``ingest.prickle``, whose docstring gives the whole mapping and the reasons for it).

Plain functions of task fields. A field of the wrong shape is a diagnostics row and is left out;
no text (a summary, a note, evidence content) is ever copied into a row: only enum values,
booleans, criterion numbers, times and locators.
"""

from __future__ import annotations

import re
from datetime import datetime

from sessiongraph.ingest.frames import OUTCOME_TIERS, TERMINAL_STATUSES
from sessiongraph.ingest.jsonl import Diagnostics, json_type, parse_ts

# Task state -> OCP node state. The seed (shared/seeds/prickle-task-states.md) documents
# requested, verifying, completed, rejected and the waiting reasons; the others are read from
# their names and their place in the schema's enum.
NODE_STATE: dict[str, str] = {
    "requested": "queued",  # a handoff created it; the owner's permission gate comes next
    "routed": "queued",  # sent to an assignee who has not taken it up
    "accepted": "queued",  # taken up; work (and checkpoints) start with `working`
    "working": "working",
    "waiting": "blocked",  # on `waiting_on`
    "verifying": "review",  # a result came back; its evidence is being checked
    "approval": "review",  # a result awaits its owner's approval
    "returned": "review",  # back with its requester, who decides what comes next; not an end state
    "completed": "done",
    "rejected": "rejected",
    "cancelled": "canceled",  # OCP spells it with one l
}
# The seed's "3 end a task", and the attempt status each settles the current attempt with.
ENDED: dict[str, str] = {"completed": "done", "rejected": "rejected", "cancelled": "canceled"}
NOT_STARTED = frozenset({"requested", "routed", "accepted"})
WAITING_ON = frozenset({"owner_approval", "human", "agent", "stopped"})
# result.status -> the status of the attempt that returned it; `submitted` decides nothing yet.
RESULT_STATUS: dict[str, str] = {
    "accepted": "done",
    "rejected": "rejected",
    "cancelled": "canceled",
    "superseded": "settled_unverified",  # replaced by a later revision before anyone judged it
}
RESULT_STATUSES = frozenset({"submitted", *RESULT_STATUS})
EVIDENCE_KINDS = frozenset({"test_output", "screenshot", "link", "pull_request", "commit", "note"})
# Who vouches for an evidence item -> its outcome tier. CI ran a check: mechanical. The requester
# or a person vouching is another party's report. The assignee's word about its own work is a
# claim, as is an item nobody vouches for (the assignee returned it).
VERIFIER_TIER: dict[str, str] = {
    "ci": "verified",
    "requester": "reported",
    "person": "reported",
    "assignee": "asserted",
}
NO_VERIFIER_TIER = "asserted"
# A verdict is its decider's statement, recorded by the task server: reported, never verified.
VERDICT_TIER = "reported"
# result.decided_by kind -> the OCP signal source kind of its verdicts (digest 4.5): a person is a
# user; an agent judging another's result a judge; the task server applying its policy the orchestrator.
DECIDER_SOURCE: dict[str, str] = {"person": "user", "agent": "judge", "system": "orchestrator"}
# decided_by kind -> its id key and that id's pattern in the task schema (a system has no id)
DECIDER_ID: dict[str, tuple[str, re.Pattern]] = {
    "person": ("handle", re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")),
    "agent": ("agent_id", re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*/[a-z0-9]+(?:-[a-z0-9]+)*$")),
}
MAX_DECIDER_ID = 79  # the schema's longest id (an agent id)
MAX_CRITERION = 19  # the packet allows at most 20 acceptance criteria


def known(value: object, allowed: frozenset[str] | dict[str, str]) -> str | None:
    """``value`` when it is one of ``allowed`` (an unhashable JSON value is simply not)."""
    return value if isinstance(value, str) and value in allowed else None


def result_status(d: Diagnostics, line: int | None, tid: str, result: dict) -> str | None:
    """``result.status`` when it is one of the schema's five; anything else is a diagnostic."""
    value = result.get("status")
    if value is not None and known(value, RESULT_STATUSES) is None:
        shown = f"{value[:30]!r}" if isinstance(value, str) else json_type(value)
        d.add("wrong_type", line, f"task {tid}: result.status {shown} is not a result status")
    return known(value, RESULT_STATUSES)


def attempt_status(
    result: dict | None, status: str | None, current: bool, state: str | None, waiting: str | None
) -> str | None:
    """The OCP status of one attempt: its result's own decision (``status``) first; for the current
    attempt, else the task state; None when the state is unknown (the writer then says what a bare
    log can)."""
    decided = RESULT_STATUS.get(status) if status else None
    if decided:
        return decided
    if not current:
        return "settled_unverified"  # a later revision followed; no verdict on this one is recorded
    if state is None:
        return None
    if state in ENDED:
        return ENDED[state]
    if result is not None:
        return "settled_unverified"  # returned, and no verdict yet
    if state in NOT_STARTED or (state == "waiting" and waiting == "owner_approval"):
        return "queued"  # the permission gate holds a request before anyone is routed to it
    return "working"


def outcome_tier(status: str | None, result: dict | None, evidence_tiers: list[str], n_verdicts: int) -> str | None:
    """How the outcome is known. Evidence grades only a ``done`` outcome: it is what acceptance
    rests on (verdicts add the decider's report). A refusal, a cancellation or a returned result
    still waiting is the task server's record (reported), whatever the evidence says about the
    work; an attempt known only from a later revision number is inferred (heuristic)."""
    if status not in TERMINAL_STATUSES:
        return None
    if status == "done":
        tiers = evidence_tiers + ([VERDICT_TIER] if n_verdicts else [])
        return min(tiers, key=OUTCOME_TIERS.index) if tiers else NO_VERIFIER_TIER
    if result is None and status == "settled_unverified":
        return "heuristic"
    return "reported"


# One snapshot as the state history needs it: state, waiting_on, updated_at, attempt, line.
Snapshot = tuple[object, object, datetime | None, int, int | None]


def state_rows(path: str, sid: str, history: list[Snapshot]) -> list[dict]:
    """One ``state`` row per change of (state, waiting_on), over snapshots in time order. A state
    outside the 11 has its diagnostic already and no row."""
    rows, last = [], None
    for raw_state, raw_waiting, at, attempt, line in history:
        state = known(raw_state, NODE_STATE)
        if state is None:
            continue
        step = (state, known(raw_waiting, WAITING_ON))
        if step == last:
            continue  # a checkpoint or other update in the same state: not a state change
        last = step
        rows.append(_row(path, sid, attempt, at, "state", line, native_state=step[0], waiting_on=step[1]))
    return rows


def evidence_rows(
    d: Diagnostics,
    path: str,
    sid: str,
    attempt: int,
    result: dict,
    line: int | None,
    tid: str,
    returned: datetime | None,
    arts: list[str | None] | None,
) -> list[dict]:
    """One ``evidence`` row per item of ``result.evidence``: its kind, verifier, tier, time and
    locator (``arts``: the locator of each result artifact, by index; None when ``artifacts`` is
    itself broken). The item's summary and content are text and are not read."""
    items = result.get("evidence", [])
    if not isinstance(items, list):
        d.add("wrong_type", line, f"task {tid}: result.evidence: {json_type(items)}")
        return []
    rows = []
    for i, item in enumerate(items):
        where = f"task {tid}: result.evidence[{i}]"
        if not isinstance(item, dict):
            d.add("wrong_type", line, f"{where}: {json_type(item)}")
            continue
        kind = _enum(d, line, where, item, "kind", EVIDENCE_KINDS)
        verifier = _enum(d, line, where, item, "verifier", VERIFIER_TIER)
        observed = parse_ts(item.get("observed_at"))
        if observed is None and item.get("observed_at") is not None:
            d.add("bad_timestamp", line, f"{where}.observed_at unparseable {json_type(item.get('observed_at'))}")
        rows.append(
            _row(
                path,
                sid,
                attempt,
                observed or returned,
                "evidence",
                line,
                evidence_kind=kind,
                verifier=verifier,
                tier=VERIFIER_TIER.get(verifier, NO_VERIFIER_TIER) if verifier else NO_VERIFIER_TIER,
                ref=_evidence_ref(d, line, where, item, arts),
            )
        )
    return rows


def verdict_rows(
    d: Diagnostics, path: str, sid: str, attempt: int, result: dict, line: int | None, tid: str, judged: datetime | None
) -> list[dict]:
    """One ``verdict`` row per item of ``result.verdicts`` (criterion and accepted; the note is text
    and is not read), at ``judged``: when a snapshot first carried this revision's verdicts."""
    items = result.get("verdicts", [])
    if items is None:
        return []
    if not isinstance(items, list):
        d.add("wrong_type", line, f"task {tid}: result.verdicts: {json_type(items)}")
        return []
    rows, source = [], decider(d, line, tid, result) if items else {}
    for i, item in enumerate(items):
        criterion = item.get("criterion") if isinstance(item, dict) else None
        accepted = item.get("accepted") if isinstance(item, dict) else None
        if type(criterion) is not int or not 0 <= criterion <= MAX_CRITERION or type(accepted) is not bool:
            shown = (
                f"criterion {json_type(criterion)}, accepted {json_type(accepted)}"
                if isinstance(item, dict)
                else json_type(item)
            )
            d.add("wrong_type", line, f"task {tid}: result.verdicts[{i}]: {shown}")
            continue
        rows.append(
            _row(
                path,
                sid,
                attempt,
                judged,
                "verdict",
                line,
                criterion=criterion,
                accepted=accepted,
                tier=VERDICT_TIER,
                **source,
            )
        )
    return rows


def decider(d: Diagnostics, line: int | None, tid: str, result: dict) -> dict:
    """``result.decided_by`` as the ``verifier`` (OCP source kind) and ``ref`` (id) of its verdicts;
    empty when nobody is named. Only an id of the schema's shape is kept: never free text."""
    value = result.get("decided_by")
    if value is None:
        return {}
    kind = value.get("kind") if isinstance(value, dict) else None
    if (source := known(kind, DECIDER_SOURCE)) is None:
        shown = f"kind {json_type(kind)}" if isinstance(value, dict) else json_type(value)
        d.add("wrong_type", line, f"task {tid}: result.decided_by: {shown}")
        return {}
    out = {"verifier": DECIDER_SOURCE[source]}
    if kind not in DECIDER_ID or value.get("erased") is True:  # the system has no id; an erased one is gone
        return out
    key, pattern = DECIDER_ID[kind]
    ident = value.get(key)
    if isinstance(ident, str) and len(ident) <= MAX_DECIDER_ID and pattern.match(ident):
        out["ref"] = ident
    else:
        d.add("wrong_type", line, f"task {tid}: result.decided_by.{key}: {json_type(ident)}")
    return out


def _enum(d: Diagnostics, line: int | None, where: str, item: dict, key: str, allowed) -> str | None:
    value = item.get(key)
    if value is not None and known(value, allowed) is None:
        shown = f"{value[:30]!r}" if isinstance(value, str) else json_type(value)
        d.add("wrong_type", line, f"{where}.{key} {shown} is not one of the schema's values")
        return None
    return value


def _evidence_ref(
    d: Diagnostics, line: int | None, where: str, item: dict, arts: list[str | None] | None
) -> str | None:
    """The artifact the item points at (a content hash joins the artifact frames), else its url.
    A ``data:`` url carries content rather than naming a place, so it is never kept."""
    index = item.get("artifact")
    if index is not None and arts is not None:  # broken artifacts were diagnosed where they are read
        if type(index) is int and 0 <= index < len(arts):
            if arts[index]:
                return arts[index]
        else:
            d.add("wrong_type", line, f"{where}.artifact: {json_type(index)} names no artifact of the result")
    url = item.get("url")
    if url is None:
        return None
    if not isinstance(url, str):
        d.add("wrong_type", line, f"{where}.url: {json_type(url)}")
        return None
    return None if url[:5].lower() == "data:" else url


def _row(path: str, sid: str, attempt: int, at: datetime | None, kind: str, line: int | None, **cols) -> dict:
    return {"session_id": sid, "attempt": attempt, "ts": at, "kind": kind, "source_path": path, "line": line, **cols}
