"""Writes the oh-my-pi sample sessions in this folder (deterministic: run it again, get the same bytes).

Every id, path, prompt and token count is invented. The shapes follow section 4 of
shared/specs/harness-log-formats.md, oh-my-pi docs/session.md and the task-tool seed
(shared/seeds/oh-my-pi-task-tool.md). See README.md for what each file exercises.
Run: python sample_logs/omp/_generate.py
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
BUCKET = HERE / "agent" / "sessions" / "-projects-harbor"  # cwd /home/dev/projects/harbor under $HOME
HOME_BUCKET = "/home/dev/.omp/agent/sessions/-projects-harbor"
CWD = "/home/dev/projects/harbor"

ROOT, ROOT_STEM = "7a3f9c2e51d04b68", "2026-03-02T09-15-00-000Z_7a3f9c2e51d04b68"
LEGACY, LEGACY_STEM = "3e8b1f60c2a94d17", "2026-01-20T15-40-00-000Z_3e8b1f60c2a94d17"
GONE_STEM = "2026-02-27T16-40-00-000Z_9d0c5b7e3a1f4c28"  # artifacts folder whose main file is gone
IDS = {"Scout": "c41d7e0a9b3f2865", "Scout-2": "5e92b3d7a0c14f68", "Scout.Deep": "a07f4c19e2d86b35",
       "Patcher": "f3b6280d9e1a7c54", "Checker": "6d1e9f04b7a3c825", "Drifter": "b85a2e7c0f3d9164"}

SONNET = (3.0, 15.0, 0.3, 3.75)
HAIKU = (1.0, 5.0, 0.1, 1.25)
CODEX = (1.25, 10.0, 0.125, 0.0)
TITLE_SLOT_BYTES = 256  # the fixed-width first line, newline included


def ms(ts: str) -> int:
    return int(datetime.fromisoformat(ts).astimezone(UTC).timestamp() * 1000)


def plus(ts: str, millis: int) -> str:
    t = datetime.fromisoformat(ts).astimezone(UTC).timestamp() + millis / 1000
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def dumps(obj: dict) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def title_slot(title: str, updated: str) -> str:
    slot = {"type": "title", "v": 1, "title": title, "source": "auto", "updatedAt": updated, "pad": ""}
    slot["pad"] = " " * (TITLE_SLOT_BYTES - 1 - len(dumps(slot).encode()))
    line = dumps(slot)
    assert len(line.encode()) == TITLE_SLOT_BYTES - 1
    return line


def usage(inp: int, out: int, cr: int, cw: int, price: tuple, reasoning: int | None = None) -> dict:
    cost = {"input": inp * price[0] / 1e6, "output": out * price[1] / 1e6, "cacheRead": cr * price[2] / 1e6,
            "cacheWrite": cw * price[3] / 1e6}
    cost = {k: round(v, 6) for k, v in cost.items()}
    cost["total"] = round(sum(cost.values()), 6)
    u = {"input": inp, "output": out, "cacheRead": cr, "cacheWrite": cw, "totalTokens": inp + out + cr + cw}
    if reasoning is not None:
        u["reasoningTokens"] = reasoning
    u["cost"] = cost
    return u


class Tree:
    def __init__(self, seed: str):
        self.seed, self.lines, self.last = seed, [], None

    def add(self, kind: str, ts: str, **fields) -> str:
        i = hashlib.sha256(f"{self.seed}:{len(self.lines)}:{kind}:{ts}".encode()).hexdigest()[:8]
        self.lines.append({"type": kind, "id": i, "parentId": self.last, "timestamp": ts, **fields})
        self.last = i
        return i

    def msg(self, ts: str, **message) -> str:
        message["timestamp"] = ms(ts)
        return self.add("message", ts, message=message)

    def user(self, ts: str, text: str) -> str:
        return self.msg(ts, role="user", content=[{"type": "text", "text": text}])

    def reply(self, ts: str, content: list, model: str, u: dict, stop: str = "toolUse") -> str:
        provider = "openai" if model.startswith("gpt") else "anthropic"
        api = "openai-responses" if provider == "openai" else "anthropic-messages"
        return self.msg(ts, role="assistant", content=content, api=api, provider=provider, model=model, usage=u,
                        stopReason=stop)

    def result(self, ts: str, cid: str, name: str, text: str, error: bool = False, details: dict | None = None):
        out = {"role": "toolResult", "toolCallId": cid, "toolName": name, "content": [{"type": "text", "text": text}]}
        if details is not None:
            out["details"] = details
        out["isError"] = error
        return self.msg(ts, **out)

    def delivery(self, ts: str, agent: str, label: str, duration: int) -> str:
        """The async-result follow-up a finished task job injects into its owner."""
        return self.add("custom_message", ts, customType="async-result",
                        content=f"<system-notice>Background job {agent} completed.\n<task-result>…</task-result>\n"
                                f"{agent} is now idle — task(resume:\"{agent}\") to continue it, transcript at "
                                f"history://{agent}</system-notice>",
                        display=True, attribution="agent",
                        details={"meta": {"source": {"type": "report", "value": "background job delivery"}},
                                 "jobs": [{"jobId": agent, "type": "task", "status": "completed", "agentId": agent,
                                           "label": label, "durationMs": duration}]})


def call(cid: str, name: str, intent: str | None = None, **args) -> dict:
    block = {"type": "toolCall", "id": cid, "name": name, "arguments": args}
    if intent:
        block["intent"] = intent
    return block


def spawned(agent: str, job: str, verb: str = "Spawned") -> tuple[str, dict]:
    text = (f"{verb} agent `{agent}` (job `{job}`). The result will be delivered when it yields. "
            f"Message it with irc op:\"send\" to:\"{agent}\".")
    details = {"projectAgentsDir": None, "results": [], "totalDurationMs": 0,
               "progress": [{"index": 0, "id": agent, "agent": "scout", "status": "running"}],
               "async": {"state": "running", "jobId": job, "type": "task"}}
    return text, details


def root_session() -> tuple[dict, list[dict]]:
    t = Tree(ROOT)
    header = {"type": "session", "version": 3, "id": ROOT, "timestamp": "2026-03-02T09:15:00.000Z", "cwd": CWD,
              "title": "Fix token refresh", "titleSource": "auto"}
    t.add("model_change", "2026-03-02T09:15:00.050Z", model="anthropic/claude-sonnet-4-5", role="default")
    t.add("thinking_level_change", "2026-03-02T09:15:00.060Z", thinkingLevel="medium")
    t.add("credential_pin", "2026-03-02T09:15:00.070Z", provider="anthropic",
          accountHash="3b1f0c9e8d7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c")
    t.user("2026-03-02T09:15:02.000Z", "Map the auth module and fix the token refresh race.")
    t.reply("2026-03-02T09:15:05.000Z", [
        call("call_R1_ctx", "write", "Share context", path="local://ctx.md",
             content="Repo: harbor. Auth lives in src/auth. Refresh tokens rotate on every use.\n"),
    ], "claude-sonnet-4-5", usage(2400, 120, 0, 6100, SONNET))
    t.result("2026-03-02T09:15:05.200Z", "call_R1_ctx", "write", "Wrote local://ctx.md")
    # Two parallel task calls asking for the same id: the tool names the second one Scout-2.
    t.reply("2026-03-02T09:15:08.000Z", [
        call("call_R2_scout", "task", "Map auth", agent="scout", id="Scout", description="map auth",
             assignment="Read local://ctx.md, then map how src/auth issues and refreshes tokens."),
        call("call_R3_scout", "task", "Map tests", agent="scout", id="Scout", description="map auth tests",
             assignment="Read local://ctx.md, then list the tests that cover token refresh."),
    ], "claude-sonnet-4-5", usage(300, 260, 8500, 0, SONNET))
    text, details = spawned("Scout", "Scout")
    t.result("2026-03-02T09:15:08.300Z", "call_R2_scout", "task", text, details=details)
    text, details = spawned("Scout-2", "Scout-2")
    t.result("2026-03-02T09:15:08.350Z", "call_R3_scout", "task", text, details=details)
    t.reply("2026-03-02T09:15:10.000Z", [{"type": "text", "text": "Both scouts are running; waiting."}],
            "claude-sonnet-4-5", usage(180, 40, 8800, 0, SONNET), "stop")
    t.delivery("2026-03-02T09:15:51.000Z", "Scout-2", "map auth tests", 42600)
    t.delivery("2026-03-02T09:16:21.000Z", "Scout", "map auth", 72700)
    t.reply("2026-03-02T09:16:25.000Z", [
        call("call_R4_read", "read", "Read Scout's report", path="agent://Scout"),
        call("call_R5_read", "read", "Read the test list", path="agent://Scout-2/findings"),
    ], "claude-sonnet-4-5", usage(420, 90, 9000, 1200, SONNET))
    t.result("2026-03-02T09:16:25.300Z", "call_R4_read", "read", "## Auth map\nsession.ts issues and rotates tokens.")
    t.result("2026-03-02T09:16:25.350Z", "call_R5_read", "read", '["test/auth/refresh.test.ts"]')
    t.reply("2026-03-02T09:16:40.000Z", [{"type": "text", "text": "Scout mapped the flow."}],
            "claude-sonnet-4-5", usage(260, 70, 10200, 0, SONNET), "stop")
    t.user("2026-03-02T09:30:55.000Z", "Ask Scout to check the refresh race in session.ts.")
    t.reply("2026-03-02T09:31:00.000Z", [
        call("call_R6_resume", "task", "Follow up with Scout", resume="Scout", description="check race",
             assignment="Check whether refreshSession in src/auth/session.ts can race with logout."),
    ], "claude-sonnet-4-5", usage(150, 80, 10500, 300, SONNET))
    text, details = spawned("Scout", "Scout", "Resumed")
    t.result("2026-03-02T09:31:00.200Z", "call_R6_resume", "task", text, details=details)
    t.delivery("2026-03-02T09:32:11.000Z", "Scout", "check race", 70800)
    t.reply("2026-03-02T09:32:15.000Z", [
        call("call_R7_read", "read", "Read Scout's answer", path="agent://Scout"),
        call("call_R8_read", "read", "Read the storage trace", path="agent://Scout/Deep:raw"),
    ], "claude-sonnet-4-5", usage(300, 95, 11000, 900, SONNET))
    t.result("2026-03-02T09:32:15.300Z", "call_R7_read", "read", "Yes: logout can clear the session mid-refresh.")
    t.result("2026-03-02T09:32:15.350Z", "call_R8_read", "read", "Refresh tokens persist in src/auth/store.ts.")
    # The worker agent is `blocking: true`: the call runs inline and settles with its result.
    t.reply("2026-03-02T09:32:20.000Z", [
        call("call_R9_patch", "task", "Apply the fix", agent="worker", id="Patcher", isolated=True,
             description="apply fix",
             assignment="Serialise refreshSession and logout in src/auth/session.ts with a per-session lock."),
    ], "claude-sonnet-4-5", usage(340, 150, 12200, 0, SONNET))
    t.result("2026-03-02T09:34:00.000Z", "call_R9_patch", "task",
             "[worker] ok Patcher (99.8s)\nPatch merged. Full output: agent://Patcher",
             details={"projectAgentsDir": None, "totalDurationMs": 99800, "results": [{
                 "index": 0, "id": "Patcher", "agent": "worker", "agentSource": "bundled",
                 "description": "apply fix", "exitCode": 0, "durationMs": 99800, "tokens": 31400, "requests": 4,
                 "outputPath": f"{HOME_BUCKET}/{ROOT_STEM}/Patcher.md",
                 "patchPath": f"{HOME_BUCKET}/{ROOT_STEM}/Patcher.patch", "resultUri": "agent://Patcher"}]})
    t.reply("2026-03-02T09:34:05.000Z", [call("call_R10_diff", "bash", "Check the merge", command="git diff --stat")],
            "claude-sonnet-4-5", usage(200, 45, 12600, 0, SONNET))
    t.result("2026-03-02T09:34:05.400Z", "call_R10_diff", "bash",
             " src/auth/session.ts | 14 ++++++++------\n 1 file changed, 8 insertions(+), 6 deletions(-)")
    t.reply("2026-03-02T09:34:10.000Z", [{"type": "text", "text": "Merged the patch."}],
            "claude-sonnet-4-5", usage(180, 60, 12800, 0, SONNET), "stop")
    t.add("title_change", "2026-03-02T09:34:12.000Z", title="Fix token refresh race", source="auto",
          previousTitle="Fix token refresh")
    t.add("custom", "2026-03-02T09:34:13.000Z", customType="session_exit",
          data={"reason": "user quit", "kind": "normal", "recordedAt": "2026-03-02T09:34:13.000Z"})
    return header, t.lines


def child(task: str, started: str, parent_file: str, model: str, assignment: str,
          cwd: str = CWD) -> tuple[dict, Tree]:
    t = Tree(task)
    header = {"type": "session", "version": 3, "id": IDS[task], "timestamp": started, "cwd": cwd,
              "parentSession": parent_file}
    t.add("model_change", plus(started, 10), model=model, role="default")
    t.add("session_init", plus(started, 20),
          systemPrompt="You are a subagent of oh-my-pi. Finish by calling yield.", task=assignment,
          tools=["read", "grep", "find", "bash", "task", "irc", "yield"], spawns="explore", readSummarize=True)
    t.user(plus(started, 30), assignment)
    return header, t


ROOT_FILE = f"{HOME_BUCKET}/{ROOT_STEM}.jsonl"


def scout() -> tuple[dict, list[dict]]:
    """Spawned by call_R2; spawns Scout.Deep; parked after its first yield, resumed by call_R6."""
    header, t = child("Scout", "2026-03-02T09:15:08.400Z", ROOT_FILE, "anthropic/claude-haiku-4-5",
                      "Read local://ctx.md, then map how src/auth issues and refreshes tokens.")
    m = "claude-haiku-4-5"
    t.reply("2026-03-02T09:15:12.000Z", [
        call("call_S1_read", "read", path="src/auth/session.ts"),
        call("call_S2_grep", "grep", pattern="refresh", path="src/auth"),
    ], m, usage(3100, 140, 0, 5400, HAIKU))
    t.result("2026-03-02T09:15:12.200Z", "call_S1_read", "read", "export async function refreshSession() {}")
    t.result("2026-03-02T09:15:12.300Z", "call_S2_grep", "grep", "src/auth/session.ts:3:refreshSession")
    t.reply("2026-03-02T09:15:30.000Z", [
        call("call_S3_deep", "task", agent="explore", id="Deep", description="trace storage",
             assignment="Trace where refresh tokens are persisted."),
    ], m, usage(400, 110, 8500, 0, HAIKU))
    # Subagents run their own task calls synchronously: the result carries the settled result.
    t.result("2026-03-02T09:15:56.000Z", "call_S3_deep", "task", "[explore] ok Scout.Deep (25.7s)",
             details={"projectAgentsDir": None, "totalDurationMs": 25700, "results": [{
                 "index": 0, "id": "Scout.Deep", "agent": "explore", "exitCode": 0, "durationMs": 25700,
                 "tokens": 9800, "resultUri": "agent://Scout.Deep"}]})
    t.reply("2026-03-02T09:15:58.000Z", [call("call_S4_read", "read", path="agent://Scout.Deep")],
            m, usage(520, 60, 8900, 0, HAIKU))
    t.result("2026-03-02T09:15:58.200Z", "call_S4_read", "read", "Refresh tokens persist in src/auth/store.ts.")
    t.reply("2026-03-02T09:16:19.000Z", [
        call("call_S5_yield", "yield", result={"summary": "session.ts issues and rotates tokens; store.ts keeps them"}),
    ], m, usage(700, 380, 9400, 0, HAIKU))
    t.result("2026-03-02T09:16:20.000Z", "call_S5_yield", "yield", "Result submitted.")
    # Idle for agentIdleTtlMs (7 min): parked, its session disposed.
    t.add("custom", "2026-03-02T09:23:20.000Z", customType="session_exit",
          data={"reason": "parked (idle)", "kind": "normal", "recordedAt": "2026-03-02T09:23:20.000Z"})
    # task(resume:"Scout"): revived from this file, the follow-up goes through the normal prompt path.
    t.user("2026-03-02T09:31:01.000Z", "Check whether refreshSession in src/auth/session.ts can race with logout.")
    t.reply("2026-03-02T09:31:10.000Z", [call("call_S6_read", "read", path="src/auth/session.ts", offset=40,
                                              limit=60)], m, usage(900, 90, 0, 12600, HAIKU))
    t.result("2026-03-02T09:31:10.150Z", "call_S6_read", "read", "logout() { this.store.clear(); }")
    t.reply("2026-03-02T09:32:09.000Z", [
        call("call_S7_yield", "yield", result={"race": True, "where": "refreshSession vs logout"}),
    ], m, usage(600, 310, 12600, 0, HAIKU))
    t.result("2026-03-02T09:32:10.000Z", "call_S7_yield", "yield", "Result submitted.")
    return header, t.lines


def scout_2() -> tuple[dict, list[dict]]:
    """Spawned by call_R3 (asked for id Scout, allocated Scout-2); reads local://ctx.md."""
    header, t = child("Scout-2", "2026-03-02T09:15:08.450Z", ROOT_FILE, "anthropic/claude-haiku-4-5",
                      "Read local://ctx.md, then list the tests that cover token refresh.")
    m = "claude-haiku-4-5"
    t.reply("2026-03-02T09:15:09.000Z", [call("call_T1_ctx", "read", path="local://ctx.md")],
            m, usage(2900, 60, 0, 5300, HAIKU))
    t.result("2026-03-02T09:15:09.500Z", "call_T1_ctx", "read", "Repo: harbor. Auth lives in src/auth.")
    t.reply("2026-03-02T09:15:20.000Z", [call("call_T2_find", "find", pattern="*refresh*.test.ts", path="test")],
            m, usage(300, 70, 8200, 0, HAIKU))
    t.result("2026-03-02T09:15:20.300Z", "call_T2_find", "find", "test/auth/refresh.test.ts")
    t.reply("2026-03-02T09:15:48.000Z", [
        call("call_T3_yield", "yield", result={"findings": ["test/auth/refresh.test.ts"]}),
    ], m, usage(350, 150, 8500, 0, HAIKU))
    t.result("2026-03-02T09:15:50.000Z", "call_T3_yield", "yield", "Result submitted.")
    return header, t.lines


def scout_deep() -> tuple[dict, list[dict]]:
    """Nested: spawned by Scout's call_S3 (id Deep under prefix Scout -> Scout.Deep)."""
    header, t = child("Scout.Deep", "2026-03-02T09:15:30.300Z", f"{HOME_BUCKET}/{ROOT_STEM}/Scout.jsonl",
                      "anthropic/claude-haiku-4-5", "Trace where refresh tokens are persisted.")
    m = "claude-haiku-4-5"
    t.reply("2026-03-02T09:15:33.000Z", [call("call_D1_rg", "bash", command="rg -n refresh_token src")],
            m, usage(2600, 50, 0, 4800, HAIKU))
    t.result("2026-03-02T09:15:33.400Z", "call_D1_rg", "bash", "src/auth/store.ts:12:  refresh_token TEXT NOT NULL")
    t.reply("2026-03-02T09:15:54.000Z", [
        call("call_D2_yield", "yield", result={"store": "src/auth/store.ts"}),
    ], m, usage(380, 160, 7400, 0, HAIKU))
    t.result("2026-03-02T09:15:55.000Z", "call_D2_yield", "yield", "Result submitted.")
    return header, t.lines


def patcher() -> tuple[dict, list[dict]]:
    """Isolated: runs in a throw-away worktree; its Patcher.patch is merged by the root."""
    header, t = child("Patcher", "2026-03-02T09:32:21.000Z", ROOT_FILE, "openai/gpt-5.1-codex",
                      "Serialise refreshSession and logout in src/auth/session.ts with a per-session lock.",
                      cwd="/tmp/omp-task-Patcher/harbor")
    m = "gpt-5.1-codex"
    t.reply("2026-03-02T09:32:30.000Z", [call("call_P1_read", "read", path="src/auth/session.ts")],
            m, usage(4100, 220, 0, 0, CODEX, reasoning=128))
    t.result("2026-03-02T09:32:30.200Z", "call_P1_read", "read", "export async function refreshSession() {}")
    t.reply("2026-03-02T09:32:58.000Z", [
        call("call_P2_edit", "edit", path="src/auth/session.ts", oldText="export async function refreshSession() {",
             newText="export async function refreshSession() {\n  await using _ = await lock(session.id);"),
    ], m, usage(900, 640, 3800, 0, CODEX, reasoning=384))
    t.result("2026-03-02T09:32:58.300Z", "call_P2_edit", "edit", "Edited src/auth/session.ts")
    t.reply("2026-03-02T09:33:20.000Z", [call("call_P3_test", "bash", command="npm test -- auth")],
            m, usage(300, 60, 4700, 0, CODEX, reasoning=0))
    t.result("2026-03-02T09:33:41.000Z", "call_P3_test", "bash", " ✓ test/auth/refresh.test.ts (6 tests)\n")
    t.reply("2026-03-02T09:33:48.000Z", [
        call("call_P4_yield", "yield", result={"summary": "refreshSession and logout share a per-session lock"}),
    ], m, usage(250, 120, 5000, 0, CODEX, reasoning=64))
    t.result("2026-03-02T09:33:50.000Z", "call_P4_yield", "yield", "Result submitted.")
    return header, t.lines


PATCH = """diff --git a/src/auth/session.ts b/src/auth/session.ts
--- a/src/auth/session.ts
+++ b/src/auth/session.ts
@@ -1,2 +1,3 @@
 export async function refreshSession() {
+  await using _ = await lock(session.id);
"""


def legacy_root() -> tuple[dict, list[dict]]:
    """A Jan-2026 build: no title slot, one task call with tasks[] (Checker present, Linter missing)."""
    t = Tree(LEGACY)
    header = {"type": "session", "version": 3, "id": LEGACY, "timestamp": "2026-01-20T15:40:00.000Z", "cwd": CWD}
    t.add("model_change", "2026-01-20T15:40:00.020Z", model="anthropic/claude-sonnet-4-5")
    t.user("2026-01-20T15:40:02.000Z", "Review my auth diff and lint it.")
    t.reply("2026-01-20T15:40:06.000Z", [
        call("call_L1_batch", "task", agent="reviewer", context="The diff touches src/auth/session.ts only.",
             tasks=[{"id": "Checker", "task": "Review the diff in src/auth for token handling bugs.",
                     "description": "review"},
                    {"id": "Linter", "task": "Run the linters on src/auth and report.", "description": "lint"}]),
    ], "claude-sonnet-4-5", usage(2000, 210, 0, 5000, SONNET))
    t.result("2026-01-20T15:41:30.000Z", "call_L1_batch", "task",
             "[reviewer] ok Checker (83.0s)\n[reviewer] failed Linter (3.0s)",
             details={"results": [
                 {"index": 0, "id": "Checker", "agent": "reviewer", "exitCode": 0, "durationMs": 83000,
                  "resultUri": "agent://Checker"},
                 {"index": 1, "id": "Linter", "agent": "reviewer", "exitCode": 1, "durationMs": 3000,
                  "error": "linter crashed", "resultUri": "agent://Linter"}]})
    t.reply("2026-01-20T15:41:40.000Z", [call("call_L2_read", "read", path="agent://Checker")],
            "claude-sonnet-4-5", usage(400, 50, 7000, 0, SONNET))
    t.result("2026-01-20T15:41:40.200Z", "call_L2_read", "read", "No token handling bugs found.")
    t.reply("2026-01-20T15:41:50.000Z", [{"type": "text", "text": "Checker found nothing; the linter crashed."}],
            "claude-sonnet-4-5", usage(300, 120, 7400, 0, SONNET), "stop")
    return header, t.lines


def checker() -> tuple[dict, list[dict]]:
    """The Jan-2026 child: no title slot, no yield (it ends on a plain reply)."""
    header, t = child("Checker", "2026-01-20T15:40:06.000Z", f"{HOME_BUCKET}/{LEGACY_STEM}.jsonl",
                      "anthropic/claude-haiku-4-5", "Review the diff in src/auth for token handling bugs.")
    t.reply("2026-01-20T15:40:20.000Z", [call("call_C1_read", "read", path="src/auth/session.ts")],
            "claude-haiku-4-5", usage(2700, 80, 0, 5100, HAIKU))
    t.result("2026-01-20T15:40:20.200Z", "call_C1_read", "read", "export async function refreshSession() {}")
    t.reply("2026-01-20T15:41:28.000Z", [{"type": "text", "text": "No token handling bugs found."}],
            "claude-haiku-4-5", usage(500, 240, 7800, 0, HAIKU), "stop")
    return header, t.lines


def drifter() -> tuple[dict, list[dict]]:
    """An agent transcript whose main session file is gone: no task call names it."""
    header, t = child("Drifter", "2026-02-27T16:41:00.000Z", f"{HOME_BUCKET}/{GONE_STEM}.jsonl",
                      "anthropic/claude-haiku-4-5", "Summarise README.md.")
    t.reply("2026-02-27T16:41:05.000Z", [call("call_X1_read", "read", path="README.md")],
            "claude-haiku-4-5", usage(1900, 40, 0, 3000, HAIKU))
    t.result("2026-02-27T16:41:05.100Z", "call_X1_read", "read", "# harbor")
    t.reply("2026-02-27T16:41:09.000Z", [call("call_X2_yield", "yield", result={"summary": "harbor"})],
            "claude-haiku-4-5", usage(200, 50, 4900, 0, HAIKU))
    t.result("2026-02-27T16:41:10.000Z", "call_X2_yield", "yield", "Result submitted.")
    return header, t.lines


def write(path: Path, header: dict, entries: list[dict], title: str | None, updated: str | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [title_slot(title, updated or header["timestamp"])] if title else []
    lines += [dumps(r) for r in [header, *entries]]
    path.write_text("".join(line + "\n" for line in lines))


def main() -> None:
    root_dir = BUCKET / ROOT_STEM
    write(BUCKET / f"{ROOT_STEM}.jsonl", *root_session(), "Fix token refresh race", "2026-03-02T09:34:12.000Z")
    write(root_dir / "Scout.jsonl", *scout(), "Scout")
    write(root_dir / "Scout-2.jsonl", *scout_2(), "Scout-2")
    write(root_dir / "Scout.Deep.jsonl", *scout_deep(), "Scout.Deep")
    write(root_dir / "Patcher.jsonl", *patcher(), "Patcher")
    (root_dir / "Patcher.patch").write_text(PATCH)
    for agent, text in (("Scout", "## Auth map\nYes: logout can clear the session mid-refresh.\n"),
                        ("Scout-2", '["test/auth/refresh.test.ts"]\n'),
                        ("Scout.Deep", "Refresh tokens persist in src/auth/store.ts.\n"),
                        ("Patcher", "refreshSession and logout share a per-session lock.\n")):
        (root_dir / f"{agent}.md").write_text(text)
    write(BUCKET / f"{LEGACY_STEM}.jsonl", *legacy_root(), None)
    write(BUCKET / LEGACY_STEM / "Checker.jsonl", *checker(), None)
    (BUCKET / LEGACY_STEM / "Checker.md").write_text("No token handling bugs found.\n")
    write(BUCKET / GONE_STEM / "Drifter.jsonl", *drifter(), "Drifter")


if __name__ == "__main__":
    main()
