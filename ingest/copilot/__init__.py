"""GitHub Copilot CLI sessions (``~/.copilot``, ``$COPILOT_HOME``) -> frames.

Three storage generations (more-harness-formats.md section 1), all read:
- ``session-state/<uuid>/events.jsonl`` (1.0.x) with a ``workspace.yaml`` beside it (read with
  the log, :func:`log_of`: ``cwd``, ``repository``, ``branch`` when the events lack them);
- ``session-state/<uuid>.jsonl`` (0.0.3xx-0.0.420): the same events, no side file (layout ``flat``);
- ``history-session-state/session_<uuid>_<epoch ms>.json`` (<= 0.0.33x): one JSON object
  ``{sessionId, startTime, chatMessages[], timeline[]}``, OpenAI-style messages with no times per
  message and no token counts (layout ``history``).

Decisions, from the format facts:
- **Events** are ``{type, data, id, timestamp, parentId}``. ``user.message`` is a prompt,
  ``assistant.message`` text (its ``toolRequests`` the calls), ``assistant.reasoning`` thinking,
  ``tool.execution_start``/``_complete`` a call and its result (``success: false`` an error),
  ``system.message`` context, ``session.compaction_complete`` a compaction, ``abort`` an interrupt.
- **Runs.** ``copilot --resume`` goes on writing the same file: each ``session.resume`` starts a
  new run of the same session, numbered as ``attempt`` 2, 3, ... (1 is the run that started it);
  a file of one run leaves ``attempt`` null.
- **Tokens** are ``session.shutdown.data.modelMetrics`` (per model ``usage{inputTokens,
  outputTokens, cacheReadTokens, cacheWriteTokens, reasoningTokens}``, with ``requests{count}``),
  written when a run ends: the run's totals over its requests, so one usage row per model and run
  of scope ``session`` (tokens and dollars once, no request of its own). ``inputTokens`` includes the cache reads and writes, so uncached
  input is what is left of it. Whether a resumed run's shutdown repeats the earlier runs' figures
  is reported both ways (counters reset per run: PanAchy/copilot-arewecooked #45 and
  github/copilot-cli #524; cumulative: ccusage/ccusage #1721), so each shutdown is compared with the
  one before: when every count of every model is at least what it was, the figure is cumulative and
  the run's own use is the difference; any count lower than before means the counter started again
  and the figure is the run's own. (A reset run that used more of everything than the one before it
  reads as cumulative: its first run's figures are not counted twice, but its own are undercounted.)
  A run with no shutdown metrics (cut off, or left with ``/new``, github/copilot-cli #3994) counts the
  only tokens its messages carry, ``assistant.message.outputTokens``.
- **Subagents** (third-party parsers only; no real file shows them): ``subagent.started``
  (``data.toolCallId`` the ``task`` call, ``agentName``, and the agent's ``agentId``) starts a
  ``subagent`` session ``copilot-cli:<uuid>/<agentId>`` (layout ``inline``), and events carrying that
  ``agentId`` are its own. The ``task`` call's ``result_agent_id`` names it (verified by the call
  id). Its tokens are in its parent's shutdown metrics, so it has no usage rows of its own.
- **Calls.** ``view`` reads, ``create`` writes, ``edit``/``str_replace`` edit (``path``; the older
  ``str_replace_editor`` by its ``command``), ``bash``/``powershell`` are shell calls, ``task`` a
  spawn (``agent_type``, a hash of its ``prompt``).
"""

from __future__ import annotations

import os
import re

from sessiongraph.ingest.copilot.events import EVENTS, NAME, WORKSPACE, Events
from sessiongraph.ingest.copilot.history import History
from sessiongraph.ingest.frames import Frames
from sessiongraph.ingest.jsonl import head_records

__all__ = ["NAME", "detect", "log_of", "parse"]

# Event type families of copilot-agent event logs (0.0.3xx-1.0.x).
FAMILIES = frozenset({"session", "user", "assistant", "tool", "subagent", "hook", "permission", "system", "skill"})
_HISTORY_HEAD = re.compile(rb'^\s*\{\s*"sessionId"\s*:\s*"[^"]*"\s*,')


def detect(path: str, head: bytes) -> bool:
    """A copilot-agent event log (its first record an event of a known family), or a legacy
    history object (``{"sessionId": ..., ..., "chatMessages": [``)."""
    try:
        if _HISTORY_HEAD.match(head):
            return b'"chatMessages"' in head
        first = next(head_records(head, 1), None)  # the first record decides
        return first is not None and _event_shaped(first)
    except Exception:  # noqa: BLE001 - detection must never break a scan
        return False


def _event_shaped(rec: object) -> bool:
    if not isinstance(rec, dict) or not isinstance(rec.get("data"), dict) or "id" not in rec:
        return False
    rtype = rec.get("type")
    return isinstance(rtype, str) and (rtype == "abort" or ("." in rtype and rtype.split(".", 1)[0] in FAMILIES))


def log_of(side_path: str) -> str | None:
    """The event log a session folder's ``workspace.yaml`` is read with."""
    if os.path.basename(side_path) == WORKSPACE:
        return os.path.join(os.path.dirname(side_path), EVENTS)
    return None


def parse(path: str) -> Frames:
    """Parse one session log; bad input becomes diagnostics rows, never an exception."""
    if path.endswith(".json"):
        return History(path).run()
    return Events(path).run()
