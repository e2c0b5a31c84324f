"""Write the Kimi Code sample session (run: python sample_logs/kimi-code/_generate.py).

Synthetic, in the shape of the real captures in shared/corpus/kimi-code/ (a main agent's wire,
a sub-agent's wire, the session's state.json). Every id, path, prompt and count is made up."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

HERE = Path(__file__).parent
WORKDIR = "/home/dev/projects/ferry"
SESSION = "4d2c8e1a-9b3f-4a7e-8c6d-1f0e2a3b4c5d"
FOLDER = HERE / "sessions" / f"wd_ferry_{hashlib.sha256(WORKDIR.encode()).hexdigest()[:12]}" / f"session_{SESSION}"
T0 = 1785612800000
BRIEF = "Count the Python files under /home/dev/projects/ferry/src and name the largest."


def op(t, rtype, **kw):
    return {"type": rtype, **kw, "time": T0 + t}


def ev(t, **event):
    return op(t, "context.append_loop_event", event=event)


def usage(t, inp, out, read, write=0, scope="turn", agent="main"):
    u = {"inputOther": inp, "output": out, "inputCacheRead": read, "inputCacheCreation": write}
    return op(t, "usage.record", model="moonshot-ai/kimi-k2.7-code", usage=u, usageScope=scope, agentId=agent)


def message(t, text, origin):
    msg = {"role": "user", "content": [{"type": "text", "text": text}], "toolCalls": [], "origin": {"kind": origin}}
    return op(t, "context.append_message", message=msg)


def step_end(t, uuid, inp, out, read, write=0):
    u = {"inputOther": inp, "output": out, "inputCacheRead": read, "inputCacheCreation": write}
    return ev(t, type="step.end", uuid=uuid, turnId="0", step=1, usage=u, finishReason="end_turn")


def main_wire():
    prompt = "Add a --strict flag to the manifest loader."
    return [
        {"type": "metadata", "protocol_version": "1.4", "created_at": T0},
        op(0, "config.update", profileName="agent", systemPrompt="You are Kimi Code CLI. [sample]"),
        op(1, "config.update", modelAlias="moonshot-ai/kimi-k2.7-code", thinkingEffort="on"),
        op(900, "turn.prompt", input=[{"type": "text", "text": prompt}], origin={"kind": "user"}, agentId="main"),
        message(901, prompt, "user"),
        ev(905, type="step.begin", uuid="s-1", turnId="0", step=1),
        op(
            906,
            "llm.request",
            kind="loop",
            provider="kimi",
            model="kimi-k2.7-code",
            modelAlias="moonshot-ai/kimi-k2.7-code",
        ),
        ev(
            2100,
            type="content.part",
            uuid="p-1",
            turnId="0",
            step=1,
            stepUuid="s-1",
            part={"type": "think", "think": "Read the loader first."},
        ),
        ev(
            2200,
            type="tool.call",
            uuid="Read_0",
            turnId="0",
            step=1,
            stepUuid="s-1",
            toolCallId="Read_0",
            name="Read",
            args={"path": "src/ferry/manifest.py"},
        ),
        step_end(2300, "s-1", 4200, 60, 0, 1800),
        usage(2300, 4200, 60, 0, 1800),
        ev(
            2350,
            type="tool.result",
            parentUuid="Read_0",
            toolCallId="Read_0",
            result={"output": "def parse_manifest(path): ..."},
        ),
        ev(
            2400,
            type="tool.call",
            uuid="Agent_1",
            turnId="0",
            step=2,
            stepUuid="s-2",
            toolCallId="Agent_1",
            name="Agent",
            args={"description": "count files", "subagent_type": "explore", "prompt": BRIEF},
        ),
        usage(3000, 600, 90, 6000),
        ev(
            9000,
            type="tool.result",
            parentUuid="Agent_1",
            toolCallId="Agent_1",
            result={
                "output": "agent_id: agent-0\nactual_subagent_type: explore\nstatus: completed\n\n[summary]\n14 files."
            },
        ),
        ev(
            9100,
            type="tool.call",
            uuid="Edit_2",
            turnId="0",
            step=3,
            stepUuid="s-3",
            toolCallId="Edit_2",
            name="Edit",
            args={
                "path": f"{WORKDIR}/src/ferry/manifest.py",
                "old": "def parse_manifest(path):",
                "new": "def parse_manifest(path, strict=False):",
            },
        ),
        usage(9600, 700, 140, 6400),
        ev(9700, type="tool.result", parentUuid="Edit_2", toolCallId="Edit_2", result={"output": "edited"}),
        ev(
            9800,
            type="tool.call",
            uuid="Bash_3",
            turnId="0",
            step=4,
            stepUuid="s-4",
            toolCallId="Bash_3",
            name="Bash",
            args={"command": "pytest -q", "cwd": WORKDIR},
        ),
        usage(10200, 500, 40, 7000),
        ev(
            14000,
            type="tool.result",
            parentUuid="Bash_3",
            toolCallId="Bash_3",
            result={"output": "1 failed", "isError": True},
        ),
        ev(
            14500,
            type="content.part",
            uuid="p-2",
            turnId="0",
            step=5,
            stepUuid="s-5",
            part={"type": "text", "text": "One test fails; see above."},
        ),
        usage(15000, 300, 30, 7400),
        op(15001, "turn.ended"),
        op(20000, "full_compaction.begin", source="manual"),
        usage(24000, 900, 400, 5000, scope="session"),
        op(24001, "context.apply_compaction", summary="Added strict flag; one test fails.", compactedCount=12),
        op(24002, "full_compaction.complete"),
    ]


def child_wire():
    return [
        {"type": "metadata", "protocol_version": "1.4", "created_at": T0 + 2500},
        op(2500, "config.update", cwd=WORKDIR, modelAlias="moonshot-ai/kimi-k2.7-code", thinkingEffort="on"),
        op(2501, "config.update", profileName="explore", systemPrompt="You are Kimi Code CLI. [sample]"),
        op(
            2600,
            "turn.prompt",
            input=[{"type": "text", "text": BRIEF}],
            origin={"kind": "system_trigger", "name": "subagent"},
        ),
        message(2601, BRIEF, "system_trigger"),
        ev(
            3500,
            type="tool.call",
            uuid="Glob_0",
            turnId="0",
            step=1,
            stepUuid="c-1",
            toolCallId="Glob_0",
            name="Glob",
            args={"pattern": "**/*.py", "path": f"{WORKDIR}/src"},
        ),
        usage(3500, 2100, 50, 0, agent="agent-0"),
        ev(3600, type="tool.result", parentUuid="Glob_0", toolCallId="Glob_0", result={"output": "14 matches"}),
        ev(
            8000,
            type="content.part",
            uuid="c-p1",
            turnId="0",
            step=2,
            stepUuid="c-2",
            part={"type": "text", "text": "14 files; cli.py is the largest."},
        ),
        usage(8000, 200, 40, 2000, agent="agent-0"),
    ]


def state():
    home = f"/home/dev/.kimi-code/sessions/{FOLDER.parent.name}/{FOLDER.name}/agents"
    return {
        "createdAt": "2026-08-01T19:33:20.000Z",
        "updatedAt": "2026-08-01T19:33:44.002Z",
        "title": "strict flag",
        "isCustomTitle": False,
        "agents": {
            "main": {"homedir": f"{home}/main", "type": "main", "parentAgentId": None},
            "agent-0": {"homedir": f"{home}/agent-0", "type": "sub", "parentAgentId": "main"},
        },
        "custom": {},
        "workDir": WORKDIR,
        "lastPrompt": "Add a --strict flag to the manifest loader.",
    }


def write(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records))


if __name__ == "__main__":
    write(FOLDER / "agents" / "main" / "wire.jsonl", main_wire())
    write(FOLDER / "agents" / "agent-0" / "wire.jsonl", child_wire())
    (FOLDER / "state.json").write_text(json.dumps(state(), indent=2) + "\n")
