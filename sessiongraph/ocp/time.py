"""When things happen in an OCP document: one timestamp form, the attempt a time falls in, and
the order of events.

A document's times are text, and text does not sort as time (``03:04:05.5Z`` sorts before
``03:04:05Z``), so events are ordered by the times themselves. A write, read or call that the
store dates but does not tie to an attempt finds its attempt by time, under one rule for ties.
"""

from __future__ import annotations

from datetime import UTC, datetime


def timestamp(value: datetime | None) -> str | None:
    """Every OCP time of a document, in one form: UTC with ``Z`` (seconds, plus microseconds when
    there are any). A naive time is UTC: the frames hold UTC only."""
    if value is None:
        return None
    utc = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    return utc.isoformat().replace("+00:00", "Z")


def instant(text: str) -> datetime:
    """An OCP timestamp back as a time, for ordering: its text does not sort (``05.1Z`` < ``05Z``)."""
    return datetime.fromisoformat(text)


def attempt_until(tries: list[dict], ts: datetime | None) -> str:
    """The attempt (of one node's ``tries``, in order, with ``_start``/``_end``) that was running up
    to ``ts``: what a session did at ``ts`` (a write, a read, a spawn or launch call) is that
    attempt's work. When one attempt ends at ``ts`` and the next starts then (a Prickle revision
    returned, the next begun), the earlier one did it."""
    if ts is None:
        return tries[0]["id"]
    running = [
        a for a in tries if a["_start"] is not None and a["_start"] < ts and (a["_end"] is None or ts <= a["_end"])
    ]
    return running[-1]["id"] if running else _started_by(tries, ts)


def attempt_from(tries: list[dict], ts: datetime | None) -> str:
    """The attempt that a spawn or launch at ``ts`` started: the first not over by ``ts``. When one
    attempt ends at ``ts`` and the next starts then, the one starting was started."""
    if ts is None:
        return tries[0]["id"]
    open_ = [a for a in tries if a["_end"] is None or a["_end"] > ts]
    return open_[0]["id"] if open_ else _started_by(tries, ts)


def _started_by(tries: list[dict], ts: datetime) -> str:
    """The latest attempt started by ``ts`` (a time between or after logged attempts), else the first."""
    started = [a for a in tries if a["_start"] is not None and a["_start"] <= ts]
    return started[-1]["id"] if started else tries[0]["id"]


# Events of one instant: an attempt starts before anything it does, and settles after it.
EVENT_ORDER = {"attempt_started": 0, "note": 1, "artifact_written": 2, "signal_observed": 3, "attempt_settled": 4}


def event_order(e: dict) -> tuple:
    """By time (not by the text of ``at``), then a fixed order, so the same run gives the same list."""
    return (instant(e["at"]), EVENT_ORDER[e["type"]], e.get("attempt", ""), e.get("node", ""), e.get("detail", ""))
