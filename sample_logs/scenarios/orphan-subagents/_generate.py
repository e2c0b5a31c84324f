"""Write the synthetic "orphan-subagents" scenario (issue 26 item 6): the subagent folder of a Claude
Code session whose own transcript is missing (a backup that kept `<sid>/subagents/` only): two
subagents (one an Explore agent with its .meta.json) and a compaction run, all naming the same
parent by their folder and their records' `sessionId`. Output (next to this script):

  claude-code/projects/-home-dev-projects-atlas/<missing sid>/subagents/agent-*.jsonl (+ .meta.json)
  expected.json                                     one run, headed by a placeholder for the parent

Everything is invented; shapes follow shared/specs/harness-log-formats.md section 1.6 and
sample_logs/claude-code. Python stdlib only, deterministic. Run:
python sample_logs/scenarios/orphan-subagents/_generate.py
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent
CWD = "/home/dev/projects/atlas"
PARENT = "6d2f8a41-0b7c-4e95-a3d8-2c1e9f7b5a60"  # no <PARENT>.jsonl anywhere
FOLDER = HERE / "claude-code" / "projects" / "-home-dev-projects-atlas" / PARENT / "subagents"
MODEL = "claude-opus-4-5-20251101"


def uid(label: str) -> str:
    h = bytearray(hashlib.sha256(("orphan-subagents/" + label).encode()).digest()[:16])
    h[6] = (h[6] & 0x0F) | 0x40
    h[8] = (h[8] & 0x3F) | 0x80
    x = h.hex()
    return f"{x[:8]}-{x[8:12]}-{x[12:16]}-{x[16:20]}-{x[20:]}"


def agent(agent_id: str, start: str, prompt: str, answer: str) -> list[dict]:
    base = {"isSidechain": True, "userType": "external", "cwd": CWD, "sessionId": PARENT, "version": "2.1.39"}
    base.update(gitBranch="main", agentId=agent_id)
    u1, u2 = uid(agent_id + "/1"), uid(agent_id + "/2")
    msg = {"model": MODEL, "id": "msg_01" + uid(agent_id + "/msg").replace("-", "")[:22], "type": "message"}
    usage = {"input_tokens": 3, "cache_creation_input_tokens": 1200, "cache_read_input_tokens": 0, "output_tokens": 40}
    msg.update(role="assistant", content=[{"type": "text", "text": answer}], stop_reason="end_turn", usage=usage)
    return [
        {
            **base,
            "parentUuid": None,
            "type": "user",
            "message": {"role": "user", "content": prompt},
            "uuid": u1,
            "timestamp": f"2026-01-20T{start}.000Z",
        },
        {
            **base,
            "parentUuid": u1,
            "message": msg,
            "requestId": "req_011C" + uid(agent_id).replace("-", "")[:20],
            "type": "assistant",
            "uuid": u2,
            "timestamp": f"2026-01-20T{start[:-2]}{int(start[-2:]) + 4:02d}.000Z",
        },
    ]


def main() -> None:
    shutil.rmtree(HERE / "claude-code", ignore_errors=True)
    FOLDER.mkdir(parents=True)
    files = {
        "E": ("a3f1c2d4e5b6a7980", "14:02:10", "Find where the tile cache is invalidated", "In src/cache.py, evict()."),
        "S": ("a7b8c9d0e1f2a3b4c", "14:05:30", "Summarise the open issues in TODO.md", "Three: cache, auth, docs."),
        "C": ("acompact-5e6f7a", "14:20:00", "Summarize this conversation so it can continue.", "Summary: cache fix."),
    }
    for agent_id, start, prompt, answer in files.values():
        path = FOLDER / f"agent-{agent_id}.jsonl"
        path.write_text(
            "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in agent(agent_id, start, prompt, answer))
        )
    (FOLDER / f"agent-{files['E'][0]}.meta.json").write_text(json.dumps({"agentType": "Explore"}) + "\n")
    sid = {name: f"claude-code:{PARENT}/{a[0]}" for name, a in files.items()}
    placeholder = f"claude-code:{PARENT}"
    exp = {
        "about": "Expected runs for sample_logs/scenarios/orphan-subagents (synthetic; written by _generate.py):"
        " one run for the missing parent, headed by its placeholder.",
        "placeholder": placeholder,
        "sessions": sid,
        "members": [
            {"session_id": placeholder, "parent": None, "via": None, "depth": 0, "role": "lead"},
            {"session_id": sid["E"], "parent": placeholder, "via": "spawn", "depth": 1, "role": "subagent"},
            {"session_id": sid["S"], "parent": placeholder, "via": "spawn", "depth": 1, "role": "subagent"},
            {"session_id": sid["C"], "parent": placeholder, "via": "compaction", "depth": 1, "role": "worker"},
        ],
        "run": {"n_sessions": 3, "n_spawns": 2, "root_harness": "claude-code"},  # n_spawns: in OCP
        "spawn_tier": "reported",
    }
    (HERE / "expected.json").write_text(json.dumps(exp, indent=1) + "\n")


if __name__ == "__main__":
    main()
