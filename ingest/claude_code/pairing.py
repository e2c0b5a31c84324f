"""Claude Code transcripts: tool results paired with their calls, and inline sidechains placed
under the spawn call that started them.
"""

from __future__ import annotations

import re

from sessiongraph.ingest.claude_code.decoding import _FILE, _SIDECAR, _block_text, _paths, _val
from sessiongraph.ingest.claude_code.session import _Session
from sessiongraph.ingest.jsonl import as_str, find_uuids, text_hash

# The Task/Agent result text ends "agentId: <id> (for resuming ...)"; nested results have only this.
AGENT_ID_TAIL = re.compile(r"agentId:\s*([A-Za-z0-9_-]+)")
MAX_OUTPUT_IDS = 20


class _Pairing:
    """Results read by :class:`records._Parser` (a mixin: the parser's state is its own)."""

    open_spawns: list[str]
    prompts: dict[str, str]

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
            sidecar = _val(sidecar, _SIDECAR)
            agent = as_str(sidecar.get("agentId")) if isinstance(sidecar, dict) else None
            if agent is None:
                m = AGENT_ID_TAIL.search(_block_text(block))
                agent = m.group(1) if m else None
            call["result_agent_id"] = agent
        elif call["kind"] == "shell":
            sidecar = _val(sidecar, _SIDECAR)
            texts = [_block_text(block)]
            if isinstance(sidecar, dict):
                # stdout is often the result text again: a copy adds no id, so it is not scanned
                for s in (sidecar.get("stdout"), sidecar.get("stderr")):
                    if isinstance(s, str) and s not in texts:
                        texts.append(s)
            call["output_ids"] = _output_ids(texts)
        elif call["tool"] == "Read" and not call.get("paths"):
            sidecar = _val(sidecar, _SIDECAR)
            file = _val(sidecar.get("file"), _FILE) if isinstance(sidecar, dict) else None
            if isinstance(file, dict):
                call["paths"] = _paths(file.get("filePath"), call["cwd"])


def _output_ids(texts: list[str]) -> list[str]:
    """The first MAX_OUTPUT_IDS distinct UUIDs (lower case) printed in ``texts``."""
    ids: dict[str, None] = {}
    for text in texts:
        for found in find_uuids(text):
            ids[found.lower()] = None
            if len(ids) == MAX_OUTPUT_IDS:
                return list(ids)
    return list(ids)
