"""Claude Code transcripts: tool results paired with their calls, and inline sidechains placed
under the spawn call that started them.
"""

from __future__ import annotations

import re

from sessiongraph.ingest import commits
from sessiongraph.ingest.claude_code.decoding import _FILE, _SIDECAR, _block_text, _paths, _val
from sessiongraph.ingest.claude_code.session import _Session
from sessiongraph.ingest.jsonl import answer_hash, as_str, find_uuids, text_hash

# The Task/Agent result text ends "agentId: <id> (for resuming ...)"; nested results have only this.
AGENT_ID_TAIL = re.compile(r"agentId:\s*([A-Za-z0-9_-]+)")
# A teammate spawn's result ("Spawned successfully.\nagent_id: <name>@<team>\nname: ...") and a
# Workflow run's ("Workflow <name> completed.\nRun ID: wf_<id>\n...") when no sidecar says so.
TEAMMATE_ID_TAIL = re.compile(r"^agent_id:\s*(\S+@\S+)", re.MULTILINE)
RUN_ID_TAIL = re.compile(r"^Run ID:\s*(wf_\S+)", re.MULTILINE)
# A workflow run (2.1.2xx): its result names the runId, the wf_<runId> folder its agents and
# journal are written to; a spawn call whose child is the run (its journal session).
WORKFLOW_TOOL = "Workflow"
TEAMMATE_SPAWNED = "teammate_spawned"  # toolUseResult.status of an Agent call that named a teammate
# The sidecar fields that say which child a spawn started: a sidecar with none of them says nothing
# (its other keys are never decoded on the fast path, so they cannot decide).
SPAWN_FIELDS = ("status", "agentId", "agent_id", "runId")
MAX_OUTPUT_IDS = 20


class _Pairing:
    """Results read by :class:`records._Parser` (a mixin: the parser's state is its own)."""

    open_spawns: list[str]
    prompts: dict[str, str]
    call_session: dict[str, str]
    commits: list[dict]

    def _place_sidechain(self, sess: _Session, prompt: str) -> None:
        # Inline sidechains sit between their Task call and its result; the call whose prompt
        # equals the sidechain's first prompt is its parent, else the latest unanswered one.
        digest = text_hash(prompt)
        for call_id in reversed(self.open_spawns):
            if self.prompts.get(call_id) == digest:
                sess.parent_tool_use_id = call_id
                return

    def _result(self, call: dict, ts, block: dict, sidecar: object) -> None:
        call["ended_at"] = ts
        call["is_error"] = block.get("is_error") is True
        if call["call_id"] in self.open_spawns:
            self.open_spawns.remove(call["call_id"])
        # The result's text and sidecar are decoded only for the calls that read them.
        if call["kind"] == "spawn":
            call["result_agent_id"] = _spawned(call, _val(sidecar, _SIDECAR), block)
        elif call["kind"] == "shell":
            sidecar = _val(sidecar, _SIDECAR)
            texts = [_block_text(block)]
            if isinstance(sidecar, dict):
                # stdout is often the result text again: a copy adds no id, so it is not scanned
                for s in (sidecar.get("stdout"), sidecar.get("stderr")):
                    if isinstance(s, str) and s not in texts:
                        texts.append(s)
            call["output_ids"] = _output_ids(texts)
            made = commits.from_shell(call, texts)
            if made:
                key = self.call_session.get(call["call_id"], "")
                self.commits += [{**row, "_key": key} for row in made]
            # What the command printed: stdout when the sidecar has it (the result text may add
            # stderr), else the result text.
            stdout = sidecar.get("stdout") if isinstance(sidecar, dict) else None
            call["output_hash"] = answer_hash(stdout) or answer_hash(texts[0])
        elif call["tool"] == "Read" and not call.get("paths"):
            sidecar = _val(sidecar, _SIDECAR)
            file = _val(sidecar.get("file"), _FILE) if isinstance(sidecar, dict) else None
            if isinstance(file, dict):
                call["paths"] = _paths(file.get("filePath"), call["cwd"])


def _spawned(call: dict, sidecar: object, block: dict) -> str | None:
    """The child a spawn call's result names: a subagent's agentId, a teammate's
    ``<name>@<team>`` (which names no file: the spawn pass matches it with the teammate's
    meta.json), or a Workflow call's runId (the ``wf_<runId>`` folder)."""
    side = sidecar if isinstance(sidecar, dict) else {}
    silent = all(side.get(k) is None for k in SPAWN_FIELDS)
    if call["tool"] == WORKFLOW_TOOL:
        tail = RUN_ID_TAIL
        agent = as_str(side.get("runId"))
    elif side.get("status") == TEAMMATE_SPAWNED or (silent and call.get("team_name")):
        tail = TEAMMATE_ID_TAIL
        agent = as_str(side.get("agent_id"))
    else:
        tail = AGENT_ID_TAIL
        agent = as_str(side.get("agentId"))
    if agent is None:
        m = tail.search(_block_text(block))
        agent = m.group(1) if m else None
    return agent


def _output_ids(texts: list[str]) -> list[str]:
    """The first MAX_OUTPUT_IDS distinct UUIDs (lower case) printed in ``texts``."""
    ids: dict[str, None] = {}
    for text in texts:
        for found in find_uuids(text):
            ids[found.lower()] = None
            if len(ids) == MAX_OUTPUT_IDS:
                return list(ids)
    return list(ids)
