"""Compute the manifest of the Claude Code sample logs from the files themselves.

Writes sample_logs/claude-code/expected.json + EXPECTED.md and sample_logs/broken/expected.json +
README.md. Every number comes from parsing the files on disk (not from the generator), with these rules:

- a file's own session: the file stem for top-level transcripts, the records' ``sessionId`` for
  ``agent-*.jsonl`` files (children keep the parent's sessionId);
- records whose ``sessionId`` differs from the file's own session are *foreign* (the copied tail at
  the top of a plan hand-off file) and count for nothing in that file: no tools, tokens or times;
- inline sidechains (``isSidechain:true`` records inside a main file, no agentId) are split into one
  stream per root (the sidechain record with ``parentUuid:null``), keyed by that root uuid;
- tokens: assistant records only (never usage nested in ``progress`` data or in ``toolUseResult``),
  de-duplicated per stream by ``message.id`` keeping the LAST line's usage; missing keys count 0;
- first/last timestamp: min/max of the top-level ``timestamp`` of the stream's own records.
Run: ``python sample_logs/claude-code/_scripts/compute_expected.py`` (also asserts every line of
every non-broken file parses with json.loads and ends with a newline).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter, defaultdict
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
CC = HERE.parent
BROKEN = CC.parent / "broken"
SAMPLE = CC.parent

TOKEN_KEYS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "ephemeral_5m", "ephemeral_1h")
SPAWN_TOOLS = {"Task", "Agent", "Workflow"}  # a Workflow call spawns its run (the journal's session)
READ_TOOLS = {"Read"}
WRITE_TOOLS = {"Write", "Edit", "MultiEdit"}
SEARCH_TOOLS = {"Glob", "Grep"}
THREADED = {"user", "assistant", "system", "attachment", "progress"}
KNOWN_TYPES = THREADED | {
    "summary", "file-history-snapshot", "queue-operation", "ai-title", "last-prompt", "bridge-session",
    "custom-title", "agent-name", "mode", "permission-mode",
}
TAIL_RE = re.compile(r"agentId: ([A-Za-z0-9-]+)")
TEAMMATE_TAIL_RE = re.compile(r"^agent_id: (\S+@\S+)$", re.M)
RUN_TAIL_RE = re.compile(r"^Run ID: (wf_\S+)$", re.M)
TEAMMATE_PROMPT = '<teammate-message teammate_id="team-lead"'
UUID_RE = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
OUTPUT_ID_RES = [re.compile(r"session id: (" + UUID_RE + ")"), re.compile(r'"session_id":"(' + UUID_RE + ')"')]
LAUNCH_RES = {"codex": re.compile(r"\bcodex\s+(exec|e)\b"), "claude-code": re.compile(r"\bclaude\b.*(\s-p\b|--print\b)")}


def sha256(s: str) -> str:
    return hashlib.sha256(s.encode("utf-8")).hexdigest()


def parse_ts(v):
    if not isinstance(v, str):
        return None
    try:
        dt = datetime.fromisoformat(v)
    except ValueError:
        return None
    return dt if dt.tzinfo else None


def rel(p: Path) -> str:
    return p.relative_to(CC).as_posix()


def load_strict(path: Path) -> list[tuple[int, dict]]:
    data = path.read_bytes()
    assert data.endswith(b"\n"), f"{path}: last line has no newline"
    out = []
    for n, raw in enumerate(data.split(b"\n")[:-1], start=1):
        obj = json.loads(raw.decode("utf-8"))
        assert isinstance(obj, dict), f"{path}:{n} is not an object"
        out.append((n, obj))
    return out


def zero_tokens():
    return {k: 0 for k in TOKEN_KEYS}


def add_usage(acc, u):
    def i(v):
        return v if isinstance(v, int) and not isinstance(v, bool) else 0

    acc["input_tokens"] += i(u.get("input_tokens"))
    acc["output_tokens"] += i(u.get("output_tokens"))
    acc["cache_read_input_tokens"] += i(u.get("cache_read_input_tokens"))
    acc["cache_creation_input_tokens"] += i(u.get("cache_creation_input_tokens"))
    cc = u.get("cache_creation") if isinstance(u.get("cache_creation"), dict) else {}
    acc["ephemeral_5m"] += i(cc.get("ephemeral_5m_input_tokens"))
    acc["ephemeral_1h"] += i(cc.get("ephemeral_1h_input_tokens"))


def text_of(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def iso(dt):
    return None if dt is None else dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


class StreamStats:
    def __init__(self, label, file, session_id, agent_id, kind, layout):
        self.label, self.file, self.session_id, self.agent_id, self.kind, self.layout = label, file, session_id, agent_id, kind, layout
        self.recs: list[tuple[int, dict]] = []

    def compute(self):
        recs = self.recs
        threaded = [r for _, r in recs if r.get("type") in THREADED]

        def one(field):
            vals = sorted({r[field] for r in threaded if field in r and r[field] is not None})
            return None if not vals else vals[0] if len(vals) == 1 else vals

        times = [parse_ts(r.get("timestamp")) for _, r in recs if "timestamp" in r]
        times = [t for t in times if t]
        tools: list[dict] = []
        results: dict[str, tuple[int, dict, dict]] = {}
        for n, r in recs:
            msg = r.get("message") if isinstance(r.get("message"), dict) else {}
            content = msg.get("content")
            if r.get("type") == "assistant" and isinstance(content, list):
                for b in content:
                    if isinstance(b, dict) and b.get("type") == "tool_use":
                        tools.append({"id": b["id"], "name": b["name"], "input": b.get("input") or {}, "line": n, "ts": r.get("timestamp"), "uuid": r.get("uuid")})
            if r.get("type") == "user" and isinstance(content, list):
                for b in content:
                    if isinstance(b, dict) and b.get("type") == "tool_result":
                        results[b["tool_use_id"]] = (n, r, b)
        self.tools, self.results = tools, results
        # tokens
        last_usage: dict[str, dict] = {}
        lines = 0
        for _, r in recs:
            if r.get("type") != "assistant":
                continue
            msg = r.get("message")
            if not isinstance(msg, dict) or not isinstance(msg.get("usage"), dict):
                continue
            lines += 1
            last_usage[msg.get("id") or f"__noid_{id(r)}"] = msg["usage"]
        tok = zero_tokens()
        for u in last_usage.values():
            add_usage(tok, u)
        # first prompt
        first_prompt = None
        for _, r in recs:
            if r.get("type") == "user" and isinstance(r.get("message"), dict) and isinstance(r["message"].get("content"), str):
                first_prompt = r["message"]["content"]
                break
        file_ops = []
        for t in tools:
            inp = t["input"]
            path = None
            if t["name"] in READ_TOOLS | WRITE_TOOLS:
                path = inp.get("file_path")
            elif t["name"] in SEARCH_TOOLS:
                path = inp.get("path")
            if path is None:
                continue
            res = results.get(t["id"])
            is_error = bool(res and res[2].get("is_error"))
            op = "read" if t["name"] in READ_TOOLS else "write" if t["name"] in WRITE_TOOLS else "search"
            file_ops.append({"tool": t["name"], "path": path, "op": op, "tool_use_id": t["id"], "line": t["line"], "timestamp": t["ts"], "is_error": is_error})
        attachments = []
        for n, r in recs:
            a = r.get("attachment")
            if r.get("type") == "attachment" and isinstance(a, dict) and a.get("type") == "file":
                attachments.append({"attachment_type": "file", "path": a.get("filename"), "line": n, "timestamp": r.get("timestamp")})
        errors = []
        for tid, (n, r, b) in results.items():
            if b.get("is_error"):
                tname = next((t["name"] for t in tools if t["id"] == tid), None)
                errors.append({"tool_use_id": tid, "tool": tname, "line": n, "toolUseResult": r.get("toolUseResult")})
        unanswered = [{"tool_use_id": t["id"], "tool": t["name"], "line": t["line"]} for t in tools if t["id"] not in results]
        spawn_calls = []
        for t in tools:
            if t["name"] not in SPAWN_TOOLS:
                continue
            inp = t["input"]
            res = results.get(t["id"])
            entry = {
                "tool_use_id": t["id"], "tool": t["name"], "line": t["line"], "started_at": t["ts"],
                "description": inp.get("description"), "subagent_type": inp.get("subagent_type"),
                "run_in_background": bool(inp.get("run_in_background", False)),
                "prompt_sha256": sha256(inp["prompt"]) if isinstance(inp.get("prompt"), str) else None,
                "name": inp.get("name"), "team_name": inp.get("team_name"),
            }
            if res:
                n, r, b = res
                tur = r.get("toolUseResult")
                tail = RUN_TAIL_RE if t["name"] == "Workflow" else TEAMMATE_TAIL_RE if inp.get("team_name") else TAIL_RE
                m = tail.findall(text_of(b.get("content")))
                entry.update({
                    "result_line": n, "ended_at": r.get("timestamp"),
                    "has_toolUseResult": "toolUseResult" in r,
                    "toolUseResult_status": tur.get("status") if isinstance(tur, dict) else None,
                    "toolUseResult_agentId": (tur.get("runId") if t["name"] == "Workflow" else tur.get("agent_id") if tur.get("status") == "teammate_spawned" else tur.get("agentId")) if isinstance(tur, dict) else None,
                    "text_tail_agentId": m[-1] if m else None,
                    "toolUseResult_isAsync": tur.get("isAsync") if isinstance(tur, dict) else None,
                })
                entry["result_agentId"] = entry["toolUseResult_agentId"] or entry["text_tail_agentId"]
            spawn_calls.append(entry)
        shell_calls = []
        for t in tools:
            if t["name"] != "Bash":
                continue
            cmd = t["input"].get("command", "")
            res = results.get(t["id"])
            stdout = stderr = ""
            if res and isinstance(res[1].get("toolUseResult"), dict):
                stdout = res[1]["toolUseResult"].get("stdout", "")
                stderr = res[1]["toolUseResult"].get("stderr", "")
            ids = sorted({m for rx in OUTPUT_ID_RES for m in rx.findall(stdout + "\n" + stderr)})
            launches = [h for h, rx in LAUNCH_RES.items() if rx.search(cmd)]
            shell_calls.append({
                "tool_use_id": t["id"], "command": cmd, "line": t["line"], "started_at": t["ts"],
                "ended_at": res[1].get("timestamp") if res else None,
                "launches_harness": launches[0] if launches else None, "output_session_ids": ids,
            })
        progress = defaultdict(lambda: {"count": 0})
        for n, r in recs:
            d = r.get("data")
            if r.get("type") == "progress" and isinstance(d, dict) and d.get("type") == "agent_progress":
                k = (d.get("agentId"), r.get("parentToolUseID"), r.get("toolUseID"))
                progress[k]["count"] += 1
        workflow_calls = []
        for t in tools:
            if t["name"] == "Workflow":
                res = results.get(t["id"])
                tur = res[1].get("toolUseResult") if res else None
                workflow_calls.append({"tool_use_id": t["id"], "line": t["line"], "started_at": t["ts"], "ended_at": res[1].get("timestamp") if res else None,
                                       "runId": tur.get("runId") if isinstance(tur, dict) else None, "status": tur.get("status") if isinstance(tur, dict) else None})
        types = Counter(r.get("type") for _, r in recs)
        self.out = {
            "stream": self.label,
            "kind": self.kind,
            "layout": self.layout,
            "sessionId": self.session_id,
            "agentId": self.agent_id,
            "version": one("version"),
            "cwd": one("cwd"),
            "gitBranch": one("gitBranch"),
            "entrypoint": one("entrypoint"),
            "slug": one("slug"),
            "team_name": next((r["teamName"] for r in threaded if isinstance(r.get("teamName"), str)), None),
            "models": sorted({r["message"]["model"] for _, r in recs if r.get("type") == "assistant" and isinstance(r.get("message"), dict) and r["message"].get("model")}),
            "n_lines": len(recs),
            "record_types": dict(sorted(types.items(), key=lambda kv: str(kv[0]))),
            "first_timestamp": iso(min(times)) if times else None,
            "last_timestamp": iso(max(times)) if times else None,
            "first_prompt_sha256": sha256(first_prompt) if first_prompt is not None else None,
            "first_prompt_preview": first_prompt[:80] if first_prompt is not None else None,
            "tool_use_counts": dict(sorted(Counter(t["name"] for t in tools).items())),
            "n_tool_uses": len(tools),
            "file_paths": file_ops,
            "attachment_file_paths": attachments,
            "tool_errors": errors,
            "unanswered_tool_uses": unanswered,
            "spawn_calls": spawn_calls,
            "shell_calls": shell_calls,
            "workflow_calls": workflow_calls,
            "agent_progress": [{"agentId": k[0], "parentToolUseID": k[1], "toolUseID": k[2], "count": v["count"]} for k, v in progress.items()],
            "tokens": {**tok, "unique_messages": len(last_usage), "assistant_lines_with_usage": lines},
        }
        return self.out


def analyse_journal(path: Path):
    """A workflow run's journal: <sessionId>/subagents/workflows/wf_<runId>/journal.jsonl."""
    recs = load_strict(path)
    parts = path.relative_to(CC).parts
    started = [{"line": n, "agentId": r["agentId"], "key": r.get("key"), "label": r.get("label")} for n, r in recs if r.get("type") == "started"]
    results = [{"line": n, "agentId": r["agentId"]} for n, r in recs if r.get("type") == "result"]
    return {"file": rel(path), "sessionId": parts[-5], "runId": parts[-2], "n_lines": len(recs), "started": started, "results": results,
            "agent_files": sorted(rel(p) for p in path.parent.glob("agent-*.jsonl"))}


def analyse_file(path: Path):
    recs = load_strict(path)
    name = path.name
    parts = path.relative_to(CC).parts
    meta = None
    if name.startswith("agent-"):
        agent_id = name[len("agent-"):-len(".jsonl")]
        sids = {r.get("sessionId") for _, r in recs if r.get("sessionId")}
        assert len(sids) == 1, (path, sids)
        own = sids.pop()
        layout = "workflow" if "workflows" in parts else "nested" if "subagents" in parts else "flat"
        first_user = next((r for _, r in recs if r.get("type") == "user"), None)
        if agent_id.startswith("acompact-"):
            kind = "compaction"
        elif layout == "workflow":
            kind = "workflow"
        elif first_user and first_user["message"].get("content") == "Warmup":
            kind = "warmup"
        else:
            kind = "subagent"
        mp = path.with_name(f"agent-{agent_id}.meta.json")
        if mp.exists():
            meta = json.loads(mp.read_text(encoding="utf-8"))
        for _, r in recs:
            if r.get("type") in THREADED:
                assert r.get("agentId") == agent_id and r.get("isSidechain") is True, (path, r.get("uuid"))
        s = StreamStats("file", rel(path), own, agent_id, kind, layout)
        s.recs = recs
        s.meta = meta
        # a teammate (agent teams) opens with its lead's message; its name is meta.json name or agentType
        first_text = first_user["message"].get("content") if first_user else None
        teammate = (isinstance(first_text, str) and first_text.startswith(TEAMMATE_PROMPT)) or bool(meta and (meta.get("teamName") or meta.get("taskKind") == "in_process_teammate"))
        s.agent_name = ((meta or {}).get("name") or (meta or {}).get("agentType")) if teammate else None
        s.run_folder = parts[-2] if layout == "workflow" else None
        return {"file": rel(path), "own_session": own, "streams": [s], "foreign": [], "meta": meta, "meta_file": rel(mp) if meta is not None else None, "file_lines": len(recs)}
    own = path.stem
    foreign = [(n, r) for n, r in recs if r.get("sessionId") and r.get("sessionId") != own]
    mine = [(n, r) for n, r in recs if not (r.get("sessionId") and r.get("sessionId") != own)]
    side = [(n, r) for n, r in mine if r.get("isSidechain") is True]
    main = StreamStats("main", rel(path), own, None, "main", "main")
    main.recs = [(n, r) for n, r in mine if r.get("isSidechain") is not True]
    parent = {r["uuid"]: r.get("parentUuid") for _, r in side}
    groups: dict[str, list] = defaultdict(list)
    for n, r in side:
        u = r["uuid"]
        while parent.get(u):
            u = parent[u]
        groups[u].append((n, r))
    streams = [main]
    for root, grecs in groups.items():
        first = grecs[0][1]
        kind = "warmup" if first["message"].get("content") == "Warmup" else "subagent"
        s = StreamStats(f"sidechain:{root}", rel(path), own, None, kind, "inline")
        s.recs = grecs
        s.root_uuid = root
        streams.append(s)
    return {
        "file": rel(path), "own_session": own, "streams": streams, "meta": None, "meta_file": None, "file_lines": len(recs),
        "foreign": [{"line": n, "sessionId": r.get("sessionId"), "type": r.get("type"), "uuid": r.get("uuid"),
                     "has_usage": isinstance((r.get("message") or {}).get("usage"), dict)} for n, r in foreign],
    }


def build_claude_manifest():
    files = sorted(p for p in (CC / "projects").rglob("*.jsonl") if p.name != "journal.jsonl")
    journals = [analyse_journal(p) for p in sorted((CC / "projects").rglob("journal.jsonl"))]
    analysed = [analyse_file(p) for p in files]
    for a in analysed:
        for s in a["streams"]:
            s.compute()
    # index
    streams = [s for a in analysed for s in a["streams"]]
    by_agent = {(s.session_id, s.agent_id): s for s in streams if s.agent_id}
    mains = {s.session_id: s for s in streams if s.kind == "main"}
    # resolve spawns
    spawn_edges = []
    for s in streams:
        for c in s.out["spawn_calls"]:
            child = by_agent.get((s.session_id, c.get("result_agentId"))) if c.get("result_agentId") else None
            via = []
            children = []
            if c["name"] and c["team_name"]:
                # a teammate: every file whose meta.json names it, in the lead's session, of its team
                children = [o for o in streams if getattr(o, "agent_name", None) == c["name"] and o.session_id == s.session_id and o.out["team_name"] in (None, c["team_name"])]
                child = children[0] if children else None
                if c.get("result_agentId") == f"{c['name']}@{c['team_name']}":
                    via.append("teammate_spawned agent_id = name@team_name")
            elif c["tool"] == "Workflow":
                j = next((j for j in journals if j["sessionId"] == s.session_id and j["runId"] == c.get("result_agentId")), None)
                children = [o for o in streams if getattr(o, "run_folder", None) == c.get("result_agentId") and o.session_id == s.session_id]
                child = None
                via.append("toolUseResult.runId = wf_<runId> folder" + (" (journal)" if j else " (no journal)"))
            elif c.get("toolUseResult_agentId"):
                via.append("toolUseResult.agentId")
            if c.get("text_tail_agentId"):
                via.append("result text tail")
            inline_child = None
            if child is None and s.kind == "main":
                # inline (<= 2.0.27): sidechain whose first prompt equals the call's prompt and which sits
                # between the tool_use line and its result line
                for o in streams:
                    if o.layout == "inline" and o.kind == "subagent" and o.file == s.file and o.out["first_prompt_sha256"] == c["prompt_sha256"]:
                        lines = [n for n, _ in o.recs]
                        if c["line"] < min(lines) and max(lines) < c.get("result_line", 10**9):
                            inline_child = o
                            via = ["inline: same prompt, between tool_use and tool_result"]
            target = child or inline_child
            prog = [p for p in s.out["agent_progress"] if p["parentToolUseID"] == c["tool_use_id"]]
            if prog:
                via.append("agent_progress (parentToolUseID)")
            meta = getattr(child, "meta", None) if child else None
            if meta and meta.get("toolUseId") == c["tool_use_id"]:
                via.append("meta.json toolUseId")
            spawn_edges.append({
                "parent_file": s.file, "parent_stream": s.label, "parent_agentId": s.agent_id, "sessionId": s.session_id,
                "tool": c["tool"], "tool_use_id": c["tool_use_id"], "run_in_background": c["run_in_background"],
                "child_agentId": c.get("result_agentId"),
                "child_file": target.file if child else None,
                "child_files": [o.file for o in children] if children else ([target.file] if child else []),
                "journal": next((j["file"] for j in journals if c["tool"] == "Workflow" and j["sessionId"] == s.session_id and j["runId"] == c.get("result_agentId")), None),
                "child_stream": target.out["stream"] if target else None,
                "child_root_uuid": getattr(inline_child, "root_uuid", None),
                "evidence": via,
                "prompt_matches_child_first_prompt": bool(target and target.out["first_prompt_sha256"] == c["prompt_sha256"]),
                "dangling": target is None and not children,
            })
    # workflow link
    workflow_edges = []
    for s in streams:
        for w in s.out["workflow_calls"]:
            kids = [o for o in streams if o.kind == "workflow" and o.session_id == s.session_id and f"/workflows/{w['runId']}/" in o.file]
            workflow_edges.append({"parent_file": s.file, "tool_use_id": w["tool_use_id"], "runId": w["runId"], "child_files": [k.file for k in kids]})
    # launches
    launch_edges = []
    for s in streams:
        for sh in s.out["shell_calls"]:
            if not sh["launches_harness"]:
                continue
            child = None
            for oid in sh["output_session_ids"]:
                if oid in mains:
                    child = mains[oid]
            launch_edges.append({
                "parent_file": s.file, "parent_stream": s.label, "sessionId": s.session_id, "tool_use_id": sh["tool_use_id"],
                "command": sh["command"], "harness": sh["launches_harness"], "window": [sh["started_at"], sh["ended_at"]],
                "output_session_ids": sh["output_session_ids"],
                "child_file_in_sample_logs": child.file if child else None,
                "child_entrypoint": child.out["entrypoint"] if child else None,
                "child_first_timestamp": child.out["first_timestamp"] if child else None,
                "child_starts_inside_window": bool(child and sh["started_at"] <= child.out["first_timestamp"] <= sh["ended_at"]),
                "note": None if child else "child log is not part of sample_logs/claude-code (another harness)",
            })
    # artifact flows: every successful write joined to every later Read/attachment of the same path by another stream
    writes, reads = [], []
    for s in streams:
        for f in s.out["file_paths"]:
            if f["op"] == "write" and not f["is_error"]:
                writes.append((s, f))
            elif f["op"] == "read":
                reads.append((s, f))
        for a in s.out["attachment_file_paths"]:
            reads.append((s, {"tool": "attachment:file", "path": a["path"], "timestamp": a["timestamp"], "line": a["line"], "tool_use_id": None}))
    artifact_edges = []
    for rs, rf in reads:
        cands = [(ws, wf) for ws, wf in writes if wf["path"] == rf["path"] and wf["timestamp"] < rf["timestamp"] and (ws.file, ws.label) != (rs.file, rs.label)]
        if not cands:
            continue
        ws, wf = max(cands, key=lambda c: c[1]["timestamp"])
        artifact_edges.append({
            "path": rf["path"],
            "writer": {"file": ws.file, "stream": ws.label, "sessionId": ws.session_id, "agentId": ws.agent_id, "tool": wf["tool"], "tool_use_id": wf["tool_use_id"], "timestamp": wf["timestamp"]},
            "reader": {"file": rs.file, "stream": rs.label, "sessionId": rs.session_id, "agentId": rs.agent_id, "tool": rf["tool"], "tool_use_id": rf["tool_use_id"], "timestamp": rf["timestamp"]},
            "cross_session": ws.session_id != rs.session_id,
        })
    # continuations (plan hand-off)
    continuation_edges = []
    for a in analysed:
        if not a["foreign"]:
            continue
        main = a["streams"][0]
        prompt = next((r["message"]["content"] for _, r in main.recs if r.get("type") == "user" and isinstance(r["message"].get("content"), str)), "")
        m = re.search(r"read the full transcript at: (\S+\.jsonl)", prompt)
        old = {f["sessionId"] for f in a["foreign"]}
        continuation_edges.append({
            "new_file": a["file"], "new_sessionId": a["own_session"], "old_sessionIds_of_copied_records": sorted(old),
            "cited_transcript": m.group(1) if m else None,
            "has_planContent": any("planContent" in r for _, r in main.recs),
            "slug_shared": main.out["slug"] == next((x.out["slug"] for x in streams if x.kind == "main" and x.session_id in old), None),
        })
    # attach meta to streams
    for a in analysed:
        for s in a["streams"]:
            s.out["meta_json"] = a["meta"]
            s.out["meta_json_file"] = a["meta_file"]
            s.out["agent_name"] = getattr(s, "agent_name", None)
            s.out["run_folder"] = getattr(s, "run_folder", None)
    # sessions
    sessions = {}
    for s in streams:
        e = sessions.setdefault(s.session_id, {"files": [], "streams": [], "tokens_total": zero_tokens(), "first_timestamp": None, "last_timestamp": None})
        if s.file not in e["files"]:
            e["files"].append(s.file)
        e["streams"].append({"file": s.file, "stream": s.label, "kind": s.kind, "layout": s.layout, "agentId": s.agent_id, "tokens": {k: s.out["tokens"][k] for k in TOKEN_KEYS}})
        for k in TOKEN_KEYS:
            e["tokens_total"][k] += s.out["tokens"][k]
        ft, lt = s.out["first_timestamp"], s.out["last_timestamp"]
        if ft and (e["first_timestamp"] is None or ft < e["first_timestamp"]):
            e["first_timestamp"] = ft
        if lt and (e["last_timestamp"] is None or lt > e["last_timestamp"]):
            e["last_timestamp"] = lt
    for sid, e in sessions.items():
        m = mains.get(sid)
        e["main_file"] = m.file if m else None
        e["cwd"] = m.out["cwd"] if m else None
    # files
    files_out = {}
    for a in analysed:
        main_or_file = a["streams"][0]
        entry = {k: v for k, v in main_or_file.out.items()}
        entry["file_lines"] = a["file_lines"]
        entry["foreign_records"] = a["foreign"]
        entry["inline_sidechains"] = [dict(s.out, root_uuid=s.root_uuid) for s in a["streams"][1:]]
        files_out[a["file"]] = entry
    hist = CC / "history.jsonl"
    hist_recs = load_strict(hist)
    projects = {}
    for d in sorted((CC / "projects").iterdir()):
        cwds = sorted({s.out["cwd"] for s in streams if s.file.startswith(f"projects/{d.name}/") and isinstance(s.out["cwd"], str)})
        projects[d.name] = cwds
    return {
        "about": "Expected values for sample_logs/claude-code, computed by _scripts/compute_expected.py from the files themselves. Paths are relative to sample_logs/claude-code/.",
        "rules": {
            "own_session": "file stem for top-level transcripts; the records' sessionId for agent-*.jsonl",
            "foreign_records": "records whose sessionId differs from the file's own session (plan hand-off tail) are excluded from tools, tokens and timestamps of that file",
            "tokens": "assistant records only; per stream de-duplicated by message.id keeping the LAST line's usage; usage inside progress data or toolUseResult is never counted; missing keys count 0",
            "ephemeral_5m/ephemeral_1h": "message.usage.cache_creation.ephemeral_5m_input_tokens / ephemeral_1h_input_tokens",
            "timestamps": "min/max of top-level timestamp over the stream's own records (threaded and flat); rendered ISO UTC with ms",
            "file_paths": "Read/Write/Edit/MultiEdit input.file_path; Glob/Grep input.path when present (op 'search'); failed calls are kept with is_error=true",
            "inline_sidechains": "isSidechain:true records inside a main file, grouped by their root (parentUuid:null) uuid",
            "first_prompt_sha256": "sha256 of the UTF-8 bytes of the first user record whose message.content is a string",
            "artifact_flows": "each Read/attachment of a path joined to the latest earlier successful Write/Edit/MultiEdit of that path by another stream",
        },
        "projects": projects,
        "files": files_out,
        "sessions": dict(sorted(sessions.items(), key=lambda kv: kv[1]["first_timestamp"] or "")),
        "edges": {
            "spawns": spawn_edges,
            "workflows": workflow_edges,
            "launches": launch_edges,
            "artifacts": artifact_edges,
            "continuations": continuation_edges,
        },
        "workflow_journals": {j["file"]: j for j in journals},
        "non_transcripts": {"history.jsonl": {"lines": len(hist_recs), "keys": sorted({k for _, r in hist_recs for k in r}), "note": "prompt history, not a transcript: the ingester must skip it"}},
        "sidecars": sorted(rel(p) for p in (CC / "projects").rglob("*.meta.json")),
    }, streams


# ---------------------------------------------------------------------------------------
# broken inputs
# ---------------------------------------------------------------------------------------
def classify_broken(path: Path):
    data = path.read_bytes()
    if not data:
        return {"bytes": 0, "lines": 0, "trailing_newline": False, "problems": [{"line": None, "code": "empty_file", "what": "0 bytes"}], "good_lines": 0, "sessionIds": [],
                "tokens_all_parseable_records": zero_tokens(), "tokens_good_lines_only": zero_tokens()}
    raws = data.split(b"\n")
    trailing_newline = data.endswith(b"\n")
    if trailing_newline:
        raws = raws[:-1]
    problems, good, sids, tokens_last, tokens_good = [], 0, set(), {}, {}
    for n, raw in enumerate(raws, start=1):
        last_no_nl = n == len(raws) and not trailing_newline
        try:
            text = raw.decode("utf-8")
            utf8_ok = True
        except UnicodeDecodeError:
            text = raw.decode("utf-8", errors="replace")
            utf8_ok = False
        try:
            obj = json.loads(text)
        except json.JSONDecodeError:
            code = "truncated_line" if last_no_nl else "invalid_json"
            problems.append({"line": n, "code": code, "what": f"{len(raw)} bytes that are not JSON" + (" (no trailing newline)" if last_no_nl else "")})
            continue
        if not utf8_ok:
            problems.append({"line": n, "code": "invalid_utf8", "what": "raw bytes 0xff 0xfe inside a JSON string; the line parses once decoded with replacement (U+FFFD)", "recoverable": True})
        if not isinstance(obj, dict):
            problems.append({"line": n, "code": "not_object", "what": f"JSON {type(obj).__name__}: {text.strip()}"})
            continue
        if obj.get("sessionId"):
            sids.add(obj["sessionId"])
        t = obj.get("type")
        line_ok = utf8_ok
        if t not in KNOWN_TYPES:
            problems.append({"line": n, "code": "unknown_record_type", "what": f"type {t!r}"})
            line_ok = False
        if t in THREADED:
            if "timestamp" not in obj:
                problems.append({"line": n, "code": "bad_timestamp", "what": f"{t} record without timestamp"})
                line_ok = False
            elif parse_ts(obj["timestamp"]) is None:
                problems.append({"line": n, "code": "bad_timestamp", "what": f"{t} record with timestamp {obj['timestamp']!r}"})
                line_ok = False
        msg = obj.get("message")
        if t == "assistant" and isinstance(msg, dict):
            if "usage" in msg and not isinstance(msg["usage"], dict):
                problems.append({"line": n, "code": "wrong_type", "what": f"message.usage is {type(msg['usage']).__name__} {msg['usage']!r}"})
                line_ok = False
            if "content" in msg and not isinstance(msg["content"], (str, list)):
                problems.append({"line": n, "code": "wrong_type", "what": f"message.content is {type(msg['content']).__name__} {msg['content']!r}"})
                line_ok = False
            if isinstance(msg.get("usage"), dict):
                tokens_last[msg.get("id")] = msg["usage"]
        if line_ok:
            good += 1
            if t == "assistant" and isinstance(msg, dict) and isinstance(msg.get("usage"), dict):
                tokens_good[msg.get("id")] = msg["usage"]
    tok, tok_good = zero_tokens(), zero_tokens()
    for u in tokens_last.values():
        add_usage(tok, u)
    for u in tokens_good.values():
        add_usage(tok_good, u)
    return {"bytes": len(data), "lines": len(raws), "trailing_newline": trailing_newline, "problems": problems, "good_lines": good, "sessionIds": sorted(sids),
            "tokens_all_parseable_records": tok, "tokens_good_lines_only": tok_good}


BROKEN_WHY = {
    "truncated.jsonl": "last line is an assistant record cut mid-object with no trailing newline (a transcript still being written)",
    "not-json.jsonl": "one line is the text `this is not json`",
    "array-line.jsonl": "one line is the JSON array `[1,2,3]`",
    "unknown-type.jsonl": "one record has `type: \"hologram-sync\"`, a type no Claude Code build writes",
    "bad-timestamp.jsonl": "one assistant record has no `timestamp`, another has `\"timestamp\":\"yesterday-ish\"`",
    "invalid-utf8.jsonl": "one user record's text contains the raw bytes 0xff 0xfe (written in binary)",
    "empty.jsonl": "0 bytes",
    "wrong-type.jsonl": "one assistant record has `message.usage` as a string, another has `message.content` as a number",
    "notes.jsonl": "valid JSONL that belongs to no harness (`{\"hello\":...}` lines), outside any projects/ folder",
}


def build_broken_manifest():
    out = {}
    for p in sorted(BROKEN.rglob("*.jsonl")):
        info = classify_broken(p)
        info["what_is_wrong"] = BROKEN_WHY[p.name]
        if p.parent.name == "misc":
            info["problems"] = [{"line": None, "code": "unknown_format", "what": "no record has a Claude Code shape (no type/sessionId)"}]
            info["good_lines"] = 0
        out[p.relative_to(BROKEN).as_posix()] = info
    return out


# ---------------------------------------------------------------------------------------
# markdown
# ---------------------------------------------------------------------------------------
def md_table(rows, headers):
    s = "| " + " | ".join(headers) + " |\n|" + "|".join("---" for _ in headers) + "|\n"
    for r in rows:
        s += "| " + " | ".join(str(x).replace("|", "\\|").replace("\n", " ") for x in r) + " |\n"
    return s


def fmt_tools(d):
    return ", ".join(f"{k} {v}" for k, v in d.items()) or "-"


def fmt_tok(t):
    return " / ".join(str(t[k]) for k in TOKEN_KEYS)


def render_md(man, ids):
    inv = {v: k for k, v in ids.items() if isinstance(v, str)}
    L = ["# Expected values: sample_logs/claude-code\n\n",
         "Generated by `_scripts/compute_expected.py` from the files themselves (machine-readable twin: `expected.json`). "
         "All content is synthetic. Token columns are `input / output / cache_read / cache_creation / 5m / 1h`, "
         "de-duplicated by `message.id` (last line wins), assistant records only.\n\n",
         "## Scenarios\n\n"]
    scen = [
        ("A", "inline sidechains, 2.0.20", "Task answered by an inline `isSidechain` run (no agentId) + an inline Warmup sidechain"),
        ("B", "flat agent files, 2.0.64", "Task -> `agent-<8hex>.jsonl` (Write + Edit of docs/NOTES.md), a Warmup `agent-<8hex>.jsonl`, Bash `codex exec` launch"),
        ("C", "nested subagents, 2.1.39", "Task -> `<sid>/subagents/agent-a<6hex>.jsonl` + `agent_progress`; failed Edit; auto-compaction `agent-acompact-*`; ends on ExitPlanMode"),
        ("F", "plan hand-off, 2.1.39", "new session whose first line is a copy of C's last record; `planContent` prompt citing C's transcript"),
        ("D", "nested + meta.json, 2.1.240", "`Agent` sync + background, nested spawn (depth 2), workflow agent, `claude -p` launch of E, attachment, ai-title, last-prompt"),
        ("E", "headless claude -p, 2.1.240", "`entrypoint: sdk-cli`, `promptSource: sdk`, one Write (CHANGELOG.md, read back by D)"),
        ("T", "agent team, 2.1.88", "plain `Agent` -> Explore subagent; `TeamCreate`, four `Agent` calls with `name`/`team_name` (`teammate_spawned`), teammates opening with `<teammate-message>`, `tester` in two files that start together, `SendMessage` both ways, `TeamDelete`, compaction run"),
        ("W", "workflow run + journal, 2.1.240", "`Workflow` call (runId); `wf_<runId>/journal.jsonl` (launched, started, result), three workflow agents, one restarted under the same key; `workflows/wf_<runId>.json` state file"),
    ]
    L.append(md_table([(k, ids.get(k), a, b) for k, a, b in scen], ["scenario", "sessionId", "layout/version", "what it exercises"]))
    L.append("\n## Projects\n\n")
    L.append(md_table([(k, ", ".join(v)) for k, v in man["projects"].items()], ["project folder", "cwd"]))
    L.append("\n## Files\n\n")
    rows = []
    for f, e in man["files"].items():
        role = inv.get(e["sessionId"], "?") if e["kind"] == "main" else inv.get(e["agentId"], e["kind"])
        rows.append((f"`{f}`", role, e["kind"], e["layout"], e["sessionId"][:8] + "…", e["agentId"] or "-", e["version"], e["gitBranch"], e["entrypoint"] or "-",
                     e["first_timestamp"], e["last_timestamp"], fmt_tools(e["tool_use_counts"]), fmt_tok(e["tokens"])))
        for sc in e["inline_sidechains"]:
            rows.append((f"  ↳ inline sidechain root `{sc['root_uuid']}`", "", sc["kind"], "inline", sc["sessionId"][:8] + "…", "-", sc["version"], sc["gitBranch"], "-",
                         sc["first_timestamp"], sc["last_timestamp"], fmt_tools(sc["tool_use_counts"]), fmt_tok(sc["tokens"])))
    L.append(md_table(rows, ["file", "role", "kind", "layout", "sessionId", "agentId", "version", "branch", "entrypoint", "first ts", "last ts", "tool uses", "tokens"]))
    L.append("\n## Per-file detail\n\n")
    for f, e in man["files"].items():
        L.append(f"### `{f}`\n\n")
        L.append(f"- kind **{e['kind']}**, layout {e['layout']}, sessionId `{e['sessionId']}`, agentId `{e['agentId']}`, cwd `{e['cwd']}`, slug `{e['slug']}`, {e['file_lines']} lines in the file ({e['n_lines']} in this stream)\n")
        if e["meta_json"] is not None:
            L.append(f"- meta.json: `{json.dumps(e['meta_json'])}`\n")
        if e["foreign_records"]:
            L.append(f"- foreign records (not counted here): {', '.join('line %d (%s, sessionId %s, usage=%s)' % (x['line'], x['type'], x['sessionId'], x['has_usage']) for x in e['foreign_records'])}\n")
        for sc in [e] + e["inline_sidechains"]:
            label = ("main stream" if e["kind"] == "main" else "stream") if sc is e else f"inline sidechain `{sc['root_uuid']}` ({sc['kind']})"
            if sc["file_paths"] or sc["attachment_file_paths"]:
                L.append(f"- {label} file paths:\n")
                for fp in sc["file_paths"]:
                    L.append(f"  - {fp['tool']} `{fp['path']}` ({fp['op']}{', is_error' if fp['is_error'] else ''}) line {fp['line']}\n")
                for fp in sc["attachment_file_paths"]:
                    L.append(f"  - attachment file `{fp['path']}` line {fp['line']}\n")
            for c in sc["spawn_calls"]:
                L.append(f"- {label} spawn: {c['tool']} `{c['tool_use_id']}` ({c['subagent_type']}, background={c['run_in_background']}) -> agentId `{c.get('result_agentId')}` "
                         f"(toolUseResult: {c.get('has_toolUseResult')}, status {c.get('toolUseResult_status')})\n")
            for sh in sc["shell_calls"]:
                L.append(f"- {label} Bash `{sh['command']}` window {sh['started_at']} .. {sh['ended_at']}; ids in output: {sh['output_session_ids'] or '-'}\n")
            for er in sc["tool_errors"]:
                L.append(f"- {label} tool error: {er['tool']} `{er['tool_use_id']}` line {er['line']}\n")
            for un in sc["unanswered_tool_uses"]:
                L.append(f"- {label} unanswered tool_use: {un['tool']} `{un['tool_use_id']}` line {un['line']}\n")
            for p in sc["agent_progress"]:
                L.append(f"- {label} agent_progress x{p['count']}: agentId `{p['agentId']}`, parentToolUseID `{p['parentToolUseID']}`\n")
        L.append("\n")
    L.append("## Sessions (token totals over all streams of the session)\n\n")
    L.append(md_table([(sid, inv.get(sid, ""), e["main_file"], len(e["streams"]), e["first_timestamp"], e["last_timestamp"], fmt_tok(e["tokens_total"])) for sid, e in man["sessions"].items()],
                      ["sessionId", "role", "main file", "streams", "first ts", "last ts", "tokens"]))
    ed = man["edges"]
    L.append("\n## Edges\n\n### Spawns\n\n")
    L.append(md_table([(e["tool"], e["tool_use_id"], e["parent_agentId"] or "main", e["child_agentId"] or e["child_root_uuid"], e["child_file"] or e["child_stream"], "; ".join(e["evidence"])) for e in ed["spawns"]],
                      ["tool", "tool_use_id", "parent", "child", "child file/stream", "evidence"]))
    L.append("\nNot spawns (same layout): warm-up sidechains/agents and `agent-acompact-*` (compaction). A Workflow call's child is its run: the journal in its `wf_<runId>` folder (`toolUseResult.runId`) when there is one (W), else the agents in that folder (D). A teammate call's children are the files whose meta.json `agentType` is its `name` (T's `tester`: two).\n")
    L.append("\n### Workflow journals\n\n")
    L.append(md_table([(f"`{j['file']}`", j["runId"], ", ".join(f"{x['agentId']} (line {x['line']})" for x in j["started"]), ", ".join(x["agentId"] for x in j["results"])) for j in man["workflow_journals"].values()],
                      ["journal", "runId", "started", "result"]))
    L.append("\n### Workflow runs\n\n")
    L.append(md_table([(e["tool_use_id"], e["runId"], ", ".join(e["child_files"])) for e in ed["workflows"]], ["Workflow tool_use_id", "runId", "agent files"]))
    L.append("\n### Launches\n\n")
    L.append(md_table([(e["harness"], f"`{e['command']}`", f"{e['window'][0]} .. {e['window'][1]}", ", ".join(e["output_session_ids"]), e["child_file_in_sample_logs"] or e["note"]) for e in ed["launches"]],
                      ["harness", "command", "window", "ids in output", "child"]))
    L.append("\n### Artifact flows\n\n")
    L.append(md_table([(f"`{e['path']}`", f"{inv.get(e['writer']['sessionId'],'')} {e['writer']['agentId'] or e['writer']['stream']} {e['writer']['tool']}", f"{inv.get(e['reader']['sessionId'],'')} {e['reader']['agentId'] or e['reader']['stream']} {e['reader']['tool']}", e["cross_session"]) for e in ed["artifacts"]],
                      ["path", "writer (session stream tool)", "reader", "cross-session"]))
    L.append("\n### Continuations\n\n")
    L.append(md_table([(e["new_sessionId"], ", ".join(e["old_sessionIds_of_copied_records"]), f"`{e['cited_transcript']}`", e["has_planContent"], e["slug_shared"]) for e in ed["continuations"]],
                      ["new session", "copied from", "cited transcript", "planContent", "slug shared"]))
    L.append("\n## Not transcripts\n\n- `history.jsonl`: prompt history (`display`, `pastedContents`, `timestamp`, `project`); the ingester must skip it. `claude -p` (E) is not listed there.\n"
             "- `*.meta.json`: sidecars of the nested children (read with the child, never parsed as a transcript).\n"
             "- `_scripts/`: the generator and this manifest's calculator.\n")
    return "".join(L)


def render_broken_md(man):
    L = ["# Bad inputs for the ingester\n\n",
         "Each file under `projects/-home-dev-projects-broken/` is otherwise a valid Claude Code 2.1.39 transcript "
         "(cwd `/home/dev/projects/broken`) with a distinct `sessionId` (a uuid: the file names are not uuids, so the "
         "file stem is **not** the sessionId here; take it from the records). `misc/notes.jsonl` belongs to no harness. "
         "Line numbers are 1-based. \"Good lines\" = lines that parse as a JSON object of a known record type with no "
         "problem listed. Suggested codes are those of `ingest/frames.py` `DIAGNOSTIC_CODES`. Machine-readable twin: `expected.json`.\n\n"]
    rows = []
    for f, e in man.items():
        probs = "; ".join(f"line {p['line']}: `{p['code']}` ({p['what']})" if p["line"] else f"`{p['code']}` ({p['what']})" for p in e["problems"])
        rows.append((f"`{f}`", e["what_is_wrong"], probs, e["lines"], e["good_lines"], ", ".join(e["sessionIds"]) or "-"))
    L.append(md_table(rows, ["file", "what is wrong", "bad line(s) and suggested code", "lines", "good lines", "sessionId"]))
    L.append("\nTokens (input / output / cache_read / cache_creation / 5m / 1h, de-duplicated by message.id): all parseable assistant records with an object `usage` vs good lines only:\n\n")
    L.append(md_table([(f"`{f}`", fmt_tok(e["tokens_all_parseable_records"]), fmt_tok(e["tokens_good_lines_only"])) for f, e in man.items()], ["file", "all parseable records", "good lines only"]))
    L.append("\nNotes:\n\n- `invalid-utf8.jsonl` line 3 is still a JSON object once decoded with replacement characters: a reader that repairs it keeps the record (text with U+FFFD) and reports `invalid_utf8`.\n"
             "- `truncated.jsonl` has 5 newline-terminated lines plus a 6th partial line; `wc -l` prints 5.\n"
             "- `unknown-type.jsonl` line 3 is valid JSON with this file's sessionId: keep it out of the frames, count it.\n"
             "- `wrong-type.jsonl`: the record with a string `usage` contributes no tokens; the record with numeric `content` contributes its (valid) usage but no blocks.\n")
    return "".join(L)


def main():
    man, streams = build_claude_manifest()
    ids = json.loads((HERE / "ids.json").read_text())
    # cross-checks against the scenarios the generator meant to write
    f = man["files"]
    kinds = Counter(e["kind"] for e in f.values())
    assert kinds == Counter({"main": 8, "subagent": 11, "warmup": 1, "compaction": 2, "workflow": 4}), kinds
    inline = [sc for e in f.values() for sc in e["inline_sidechains"]]
    assert sorted(sc["kind"] for sc in inline) == ["subagent", "warmup"], inline
    assert all(not e["dangling"] for e in man["edges"]["spawns"]), man["edges"]["spawns"]
    assert len(man["edges"]["spawns"]) == 6 + 1 + 5 + 1  # C/D/B/A + D's Workflow + T's five + W's Workflow
    assert sorted(len(e["child_files"]) for e in man["edges"]["spawns"] if e["tool"] == "Agent" and e["child_agentId"] and "@" in e["child_agentId"]) == [1, 1, 1, 2]
    assert any(e["cross_session"] for e in man["edges"]["artifacts"])
    for e in man["edges"]["launches"]:
        if e["harness"] == "claude-code":
            assert e["child_starts_inside_window"] and e["child_entrypoint"] == "sdk-cli"
    (f5, f1) = (sum(s["tokens"]["ephemeral_5m"] for s in streams_out(man)), sum(s["tokens"]["ephemeral_1h"] for s in streams_out(man)))
    assert f5 > 0 and f1 > 0
    man["scenario_ids"] = ids
    (CC / "expected.json").write_text(json.dumps(man, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    (CC / "EXPECTED.md").write_text(render_md(man, ids), encoding="utf-8")
    bman = build_broken_manifest()
    (BROKEN / "expected.json").write_text(json.dumps({"about": "Expected diagnostics for sample_logs/broken, computed by sample_logs/claude-code/_scripts/compute_expected.py", "files": bman}, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    (BROKEN / "README.md").write_text(render_broken_md(bman), encoding="utf-8")
    n_files = len(list((CC / "projects").rglob("*.jsonl"))) + 1
    print(f"ok: {n_files} claude-code jsonl files parse; {len(bman)} broken files described")


def streams_out(man):
    for e in man["files"].values():
        yield e
        yield from e["inline_sidechains"]


if __name__ == "__main__":
    main()
