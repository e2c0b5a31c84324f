"""Writes the pi sample sessions in this folder (deterministic: run it again, get the same bytes).

Every id, path, prompt and token count is invented. The shapes follow section 3 of
shared/specs/harness-log-formats.md (pi-mono docs/session.md): JSON.stringify-style compact lines,
v3 tree entries with 8-hex ids, v1 linear entries without ids. See README.md for what each file
exercises. Run: python sample_logs/pi/_generate.py
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
SESSIONS = HERE / "agent" / "sessions"

A = "4b1e9d2c-7f3a-4c8e-9a06-5d2b8e1f7c34"
B = "8c5f2a71-0d4e-4b9f-8e13-a6c7d9e2f051"
C = "e2a7c4f9-3b18-4d6e-b5a0-9f1c8d3e7a26"
GONE = "71d3b0e5-9c2a-4f8d-a614-2e5b7c9d0f83"  # the session C was branched from (not in the samples)
CODEX_CHILD = "019b047e-7e64-7d61-b3c2-6f0e1d2a8b57"  # sample_logs/codex .../rollout-2025-12-09T14-02-37-...


def ms(ts: str) -> int:
    return int(datetime.fromisoformat(ts).astimezone(UTC).timestamp() * 1000)


def eid(seed: str) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()[:8]


def dumps(obj: dict) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def usage(inp: int, out: int, cr: int, cw: int, price: tuple[float, float, float, float]) -> dict:
    cost = {"input": inp * price[0] / 1e6, "output": out * price[1] / 1e6, "cacheRead": cr * price[2] / 1e6,
            "cacheWrite": cw * price[3] / 1e6}
    cost = {k: round(v, 6) for k, v in cost.items()}
    cost["total"] = round(sum(cost.values()), 6)
    return {"input": inp, "output": out, "cacheRead": cr, "cacheWrite": cw, "totalTokens": inp + out + cr + cw,
            "cost": cost}


SONNET = (3.0, 15.0, 0.3, 3.75)
OPUS = (5.0, 25.0, 0.5, 6.25)
CODEX = (1.25, 10.0, 0.125, 0.0)


class Tree:
    """v3 entries: each new entry hangs from the previous one unless a parent is given."""

    def __init__(self, seed: str):
        self.seed, self.lines, self.last = seed, [], None

    def add(self, kind: str, ts: str, parent: str | None = "", **fields) -> str:
        i = eid(f"{self.seed}:{len(self.lines)}:{kind}:{ts}")
        rec = {"type": kind, "id": i, "parentId": self.last if parent == "" else parent, "timestamp": ts, **fields}
        self.lines.append(rec)
        self.last = i
        return i

    def msg(self, ts: str, parent: str | None = "", **message) -> str:
        message["timestamp"] = ms(ts)
        return self.add("message", ts, parent, message=message)


def user(text: str) -> dict:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def assistant(content: list, model: str, u: dict, stop: str, provider: str = "anthropic",
              api: str = "anthropic-messages") -> dict:
    return {"role": "assistant", "content": content, "api": api, "provider": provider, "model": model,
            "usage": u, "stopReason": stop}


def call(cid: str, name: str, **args) -> dict:
    return {"type": "toolCall", "id": cid, "name": name, "arguments": args}


def result(cid: str, name: str, text: str, error: bool = False, details: dict | None = None) -> dict:
    out = {"role": "toolResult", "toolCallId": cid, "toolName": name, "content": [{"type": "text", "text": text}]}
    if details is not None:
        out["details"] = details
    out["isError"] = error
    return out


def session_a() -> tuple[dict, list[dict]]:
    """v3 session at /srv/app: read, grep, edit, a user !cmd, write, a `codex exec` launch, a failing
    test run, an in-place branch with a branch_summary, label, session_info, custom."""
    t = Tree(A)
    header = {"type": "session", "version": 3, "id": A, "timestamp": "2025-12-09T19:00:58.000Z", "cwd": "/srv/app"}
    t.add("model_change", "2025-12-09T19:00:58.010Z", None, provider="anthropic", modelId="claude-sonnet-4-5")
    t.add("thinking_level_change", "2025-12-09T19:00:58.020Z", thinkingLevel="low")
    t.msg("2025-12-09T19:01:00.000Z", **user(
        "Tidy the invoice service: fix the PORT parsing in src/server.ts, write docs/index.md, then ask codex for a"
        " summary."))
    t.msg("2025-12-09T19:01:04.000Z", **assistant([
        {"type": "text", "text": "Reading the server first."},
        call("toolu_01PiA1readServer00000001", "read", path="src/server.ts"),
        call("toolu_01PiA2grepPort000000002", "grep", pattern="PORT", path="src"),
    ], "claude-sonnet-4-5", usage(1200, 96, 0, 3400, SONNET), "toolUse"))
    source = "import http from 'node:http';\nconst port = parseInt(process.env.PORT);\n"
    t.msg("2025-12-09T19:01:04.150Z", **result("toolu_01PiA1readServer00000001", "read", source))
    t.msg("2025-12-09T19:01:04.180Z", **result("toolu_01PiA2grepPort000000002", "grep",
                                               "src/server.ts:2:const port = parseInt(process.env.PORT);"))
    t.msg("2025-12-09T19:01:12.000Z", **assistant([
        call("toolu_01PiA3editServer0000003", "edit", path="src/server.ts", oldText="parseInt(process.env.PORT)",
             newText="Number(process.env.PORT ?? 8080)"),
    ], "claude-sonnet-4-5", usage(310, 140, 4600, 0, SONNET), "toolUse"))
    t.msg("2025-12-09T19:01:12.200Z", **result(
        "toolu_01PiA3editServer0000003", "edit", "Successfully replaced text in src/server.ts.",
        details={"diff": "-2 const port = parseInt(process.env.PORT);\n"
                         "+2 const port = Number(process.env.PORT ?? 8080);"}))
    t.msg("2025-12-09T19:01:30.000Z", role="bashExecution", command="git status --short", output=" M src/server.ts\n",
          exitCode=0, cancelled=False, truncated=False)
    t.msg("2025-12-09T19:02:18.000Z", **assistant([
        call("toolu_01PiA4writeDocs00000004", "write", path="docs/index.md",
             content="# App\nA small HTTP service that stores invoices.\n"),
    ], "claude-sonnet-4-5", usage(420, 88, 4900, 610, SONNET), "toolUse"))
    t.msg("2025-12-09T19:02:18.300Z", **result("toolu_01PiA4writeDocs00000004", "write",
                                               "Successfully wrote 48 bytes to docs/index.md"))
    t.msg("2025-12-09T19:02:36.900Z", **assistant([
        call("toolu_01PiA5codexExec00000005", "bash", command='codex exec "summarise what this service does"'),
    ], "claude-sonnet-4-5", usage(150, 52, 5500, 0, SONNET), "toolUse"))
    launched = t.msg("2025-12-09T19:02:49.400Z", **result(
        "toolu_01PiA5codexExec00000005", "bash",
        "OpenAI Codex v0.61.0 (research preview)\n--------\nworkdir: /srv/app\nmodel: gpt-5.1-codex-max\n"
        f"provider: openai\napproval: never\nsandbox: read-only\nsession id: {CODEX_CHILD}\n--------\nuser\n"
        "summarise what this service does\n\ncodex\nA small HTTP service that stores invoices.\ntokens used\n42,000\n"))
    t.msg("2025-12-09T19:02:55.000Z", **assistant([
        call("toolu_01PiA6npmTest0000000006", "bash", command="npm test"),
    ], "claude-sonnet-4-5", usage(200, 40, 5800, 0, SONNET), "toolUse"))
    failed = t.msg("2025-12-09T19:03:09.000Z", **result(
        "toolu_01PiA6npmTest0000000006", "bash",
        "> app@1.0.0 test\n> vitest run\n\n FAIL  test/server.test.ts > reads PORT\n\n\nCommand exited with code 1",
        error=True))
    # /tree back to the codex result: the failed test run stays in the file as an abandoned branch.
    t.add("branch_summary", "2025-12-09T19:03:20.000Z", launched, fromId=failed,
          summary="Ran npm test; the server test failed on PORT.")
    t.msg("2025-12-09T19:03:25.000Z", **user("Leave the tests for now."))
    done = t.msg("2025-12-09T19:03:31.000Z", **assistant([
        {"type": "text", "text": "Done: PORT parsing fixed, docs/index.md written, codex summary captured."},
    ], "claude-sonnet-4-5", usage(260, 60, 6100, 0, SONNET), "stop"))
    t.add("label", "2025-12-09T19:03:32.000Z", targetId=done, label="docs-done")
    t.add("session_info", "2025-12-09T19:03:33.000Z", name="invoice tidy")
    t.add("custom", "2025-12-09T19:03:34.000Z", customType="com.example.timer", data={"elapsedMs": 156000})
    return header, t.lines


def session_b(a_lines: list[dict]) -> tuple[dict, list[dict]]:
    """v3 fork of A (``/fork`` at its `!git status`): the header's parentSession is A's file and the
    file starts with copies of A's first eight entries, ids and timestamps unchanged."""
    header = {"type": "session", "version": 3, "id": B, "timestamp": "2025-12-10T08:30:00.000Z", "cwd": "/srv/app",
              "parentSession": f"/home/dev/.pi/agent/sessions/--srv-app--/2025-12-09T19-00-58-000Z_{A}.jsonl"}
    copies = a_lines[:8]
    t = Tree(B)
    t.last = copies[-1]["id"]
    t.add("model_change", "2025-12-10T08:30:01.000Z", provider="anthropic", modelId="claude-opus-4-5")
    t.msg("2025-12-10T08:30:05.000Z", **user("Now document the PORT setting in docs/index.md."))
    t.msg("2025-12-10T08:30:09.000Z", **assistant([
        call("toolu_01PiB1readDocs000000001", "read", path="docs/index.md"),
    ], "claude-opus-4-5", usage(2100, 70, 0, 5200, OPUS), "toolUse"))
    t.msg("2025-12-10T08:30:09.120Z", **result("toolu_01PiB1readDocs000000001", "read",
                                               "# App\nA small HTTP service that stores invoices.\n"))
    t.msg("2025-12-10T08:30:15.000Z", **assistant([
        call("toolu_01PiB2editDocs000000002", "edit", path="docs/index.md", oldText="stores invoices.",
             newText="stores invoices.\n\nSet PORT to change the listening port (default 8080)."),
    ], "claude-opus-4-5", usage(180, 150, 7300, 0, OPUS), "toolUse"))
    t.msg("2025-12-10T08:30:15.200Z", **result("toolu_01PiB2editDocs000000002", "edit",
                                               "Successfully replaced text in docs/index.md.",
                                               details={"diff": "+3 Set PORT to change the listening port."}))
    t.msg("2025-12-10T08:30:20.000Z", **assistant([
        call("toolu_01PiB3readMissing000003", "read", path="src/config.ts"),
    ], "claude-opus-4-5", usage(90, 40, 7500, 0, OPUS), "toolUse"))
    t.msg("2025-12-10T08:30:20.050Z", **result("toolu_01PiB3readMissing000003", "read",
                                               "ENOENT: no such file or directory, open '/srv/app/src/config.ts'",
                                               error=True))
    t.msg("2025-12-10T08:30:24.000Z", **assistant([
        {"type": "text", "text": "Documented PORT in docs/index.md."},
    ], "claude-opus-4-5", usage(120, 45, 7600, 0, OPUS), "stop"))
    return header, copies + t.lines


def session_c() -> tuple[dict, list[dict]]:
    """v1 (2025): no entry ids, header with provider/modelId/thinkingLevel and ``branchedFrom`` (a
    file not in the samples); three copied entries from that file first."""
    header = {"type": "session", "id": C, "timestamp": "2025-11-18T14:05:00.000Z", "cwd": "/Users/mara/code/atlas-web",
              "provider": "openai", "modelId": "gpt-5.1-codex", "thinkingLevel": "medium",
              "branchedFrom": f"/Users/mara/.pi/agent/sessions/--Users-mara-code-atlas-web--/"
                              f"2025-11-17T09-12-44-120Z_{GONE}.jsonl"}
    out: list[dict] = []

    def add(kind: str, ts: str, **fields) -> None:
        out.append({"type": kind, "timestamp": ts, **fields})

    def msg(ts: str, **message) -> None:
        message["timestamp"] = ms(ts)
        add("message", ts, message=message)

    def gpt(content: list, model: str, u: dict, stop: str, **extra) -> dict:
        return {**assistant(content, model, u, stop, provider="openai", api="openai-responses"), **extra}

    # copies from the parent file
    msg("2025-11-17T09:12:50.000Z", **user("Why is the Button story blank?"))
    msg("2025-11-17T09:13:02.000Z", **gpt([{"type": "text", "text": "The story imports a default export."}],
                                          "gpt-5.1-codex", usage(900, 120, 0, 0, CODEX), "stop"))
    add("thinking_level_change", "2025-11-17T09:13:05.000Z", thinkingLevel="medium")
    # this session
    msg("2025-11-18T14:05:02.000Z", **user("Fix the Button export and check the story renders."))
    msg("2025-11-18T14:05:08.000Z", **gpt([
        call("call_pi_C1_ls", "bash", command="ls src/components"),
        call("call_pi_C2_read", "read", path="src/components/Button.tsx", offset=1, limit=80),
    ], "gpt-5.1-codex", usage(1500, 130, 800, 0, CODEX), "toolUse"))
    msg("2025-11-18T14:05:08.400Z", **result("call_pi_C1_ls", "bash", "Button.tsx\nButton.stories.tsx\nindex.ts\n"))
    msg("2025-11-18T14:05:08.450Z", **result("call_pi_C2_read", "read", "export function Button() {}\n"))
    msg("2025-11-18T14:05:20.000Z", **gpt([
        call("call_pi_C3_edit", "edit", path="src/components/index.ts", oldText="export { Button }",
             newText="export { Button }\nexport default Button"),
    ], "gpt-5.1-codex", usage(260, 210, 2200, 0, CODEX), "toolUse"))
    msg("2025-11-18T14:05:20.300Z", **result("call_pi_C3_edit", "edit",
                                             "Successfully replaced text in src/components/index.ts."))
    add("compaction", "2025-11-18T14:05:40.000Z", summary="Fixed the Button default export.", firstKeptEntryIndex=4,
        tokensBefore=5100)
    msg("2025-11-18T14:05:41.000Z", role="hookMessage", customType="lint-hook", content="eslint: 0 problems",
        display=True)
    add("model_change", "2025-11-18T14:05:50.000Z", provider="openai", modelId="gpt-5.1-codex-mini")
    msg("2025-11-18T14:05:55.000Z", **gpt([
        call("call_pi_C4_storybook", "bash", command="npx storybook build --quiet"),
    ], "gpt-5.1-codex-mini", usage(300, 60, 2400, 0, CODEX), "toolUse"))
    # Esc while the build ran: the call never got a result, the turn ends aborted.
    msg("2025-11-18T14:06:40.000Z", **gpt([], "gpt-5.1-codex-mini", usage(0, 0, 0, 0, CODEX), "aborted",
                                          errorMessage="Request was aborted"))
    msg("2025-11-18T14:06:45.000Z", **user("stop there"))
    msg("2025-11-18T14:06:48.000Z", **gpt([{"type": "text", "text": "Stopped; the export is fixed."}],
                                          "gpt-5.1-codex-mini", usage(120, 30, 2500, 0, CODEX), "stop"))
    return header, out


def write(folder: str, stamp: str, sid: str, header: dict, entries: list[dict]) -> None:
    path = SESSIONS / folder / f"{stamp}_{sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(dumps(r) + "\n" for r in [header, *entries]))


def main() -> None:
    ha, ea = session_a()
    write("--srv-app--", "2025-12-09T19-00-58-000Z", A, ha, ea)
    hb, eb = session_b(ea)
    write("--srv-app--", "2025-12-10T08-30-00-000Z", B, hb, eb)
    hc, ec = session_c()
    write("--Users-mara-code-atlas-web--", "2025-11-18T14-05-00-000Z", C, hc, ec)


if __name__ == "__main__":
    main()
