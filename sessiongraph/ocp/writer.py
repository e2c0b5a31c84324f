"""OCP 0.3 documents, one per run (``sessiongraph export ocp``).

Mapping (OCP digest sections 4-5):
- run: our run id, its span, the root's workspace (the cwd's last folder: an opaque name), a task
  whose type and features are inferred from what the run wrote (heuristic), provenance ``logged``.
- node: one per session; attempt: one per file the session was logged in (a Codex thread resumed
  into a second rollout is a second attempt). Node state, attempt status and outcome come from
  the log when it records them (a Prickle task: ``sessions.state``/``status``/``outcome_tier``,
  evidence under the outcome's ``ext``, verdicts as run signals, state history as ``note``
  events; see ``sessiongraph.ocp.outcome``). Otherwise ``settled_unverified``: a log ends, but
  no log says whether the work was accepted. An attempt after a rejected one was ``sent_back``.
  A write, read or call is the work of the attempt that ran up to its time, the earlier one on a
  tie; a spawn or launch starts the callee's attempt not over by then (``sessiongraph.ocp.time``).
- edges: spawn, launch and artifact edges inside the run, each with its tier and evidence; the
  continuation edges (no OCP kind) go under ``ext``. Artifacts: one per written version.
Nothing textual from the logs is written under ``metadata_only``: titles and evidence are our
own words; paths, model labels and declared agent types are locators and labels.
"""

from __future__ import annotations

import posixpath
from collections import Counter
from datetime import datetime
from typing import Any

import polars as pl

from sessiongraph.inference.edges import short_hash
from sessiongraph.inference.task import CODE_LANG, DOC_EXT, MAX_SHORT, is_test, task
from sessiongraph.ingest.frames import USAGE_TOKENS
from sessiongraph.ingest.ocp import capabilities
from sessiongraph.ingest.secrets import mask
from sessiongraph.ocp import outcome as ocp_outcome
from sessiongraph.ocp.bundle import RunBundle
from sessiongraph.ocp.limits import fit
from sessiongraph.ocp.time import attempt_from, attempt_until, event_order, timestamp
from sessiongraph.pricing import FREE
from sessiongraph.version import __version__

EXT = "dev.sessiongraph"
MAX_ID = 190  # OCP ids are 1-200 chars; attempt ids add "#n"
# file name -> artifact kind (heuristic, by name only), with inference.task's DOC_EXT and CODE_LANG
CONFIG_EXT = {".json", ".yaml", ".yml", ".toml", ".ini", ".cfg", ".env", ".lock"}
# role -> OCP node kind (recommended vocabulary)
NODE_KINDS = {"planner": "plan", "reviewer": "review", "subagent": "task", "worker": "ops"}
ROLE_EVIDENCE = {
    "lead": "root session that started others",
    "solo": "root session that started no other",
    "cli": "launched from another session's shell",
    "reviewer": "declared reviewer type or launched to review",
    "planner": "declared planner type",
    "implementer": "subagent that wrote files",
    "subagent": "spawned by another session",
    "worker": "compaction run or warm-up of its session",
}
LAUNCH_HOW = {
    "codex": "codex exec",
    "claude-code": "claude -p",
    "gemini-cli": "gemini -p",
    "opencode": "opencode run",
    "pi": "pi -p",
    "omp": "omp -p",
}


def _short(text: str | None) -> str | None:
    return None if text is None else text[:MAX_SHORT]


def ocp_id(raw: str) -> str:
    """An OCP id for one of ours: unchanged when short and non-empty, else cut with a hash."""
    return raw if 0 < len(raw) <= MAX_ID else f"{raw[: MAX_ID - 18]}~{short_hash(raw)}"


def _artifact_kind(path: str) -> str:
    name = posixpath.basename(path).lower()
    ext = posixpath.splitext(name)[1]
    if is_test(path):
        return "test"
    if "plan" in name and ext in DOC_EXT:
        return "plan"
    if "review" in name and ext in DOC_EXT:
        return "review"
    if ext in DOC_EXT:
        return "doc"
    if ext in CONFIG_EXT:
        return "config"
    if ext == ".log":
        return "log"
    if ext in CODE_LANG:
        return "code"
    return "other"


class _Doc:
    """Builds one document; attempt lookups by time are shared by edges, artifacts and events.

    A row the store keys by (session, file, attempt in the file) names its attempt outright (usage,
    outcomes); the rest (writes, reads, spawn and launch calls) only have a time, and find theirs
    with :func:`attempt_until` or :func:`attempt_from`.
    """

    def __init__(self, b: RunBundle, privacy: str):
        self.b, self.privacy = b, privacy
        self.unpriced: Counter[str] = Counter()
        self.attempts_of: dict[str, list[dict]] = {}
        self.node_of = {sid: ocp_id(sid) for sid in b.members["session_id"]}
        # (session, file, attempt in the file) -> OCP attempt id, for outcome rows
        self.attempt_id: dict[tuple, str] = {}
        self.states: list[dict] = []
        self.verdicts: list[dict] = []
        self.evidence_of: dict[tuple, list[dict]] = {}
        for r in b.outcomes.iter_rows(named=True):  # by session, then time
            if r["kind"] == "evidence":
                self.evidence_of.setdefault((r["session_id"], r["source_path"], r["attempt"]), []).append(r)
            else:
                (self.states if r["kind"] == "state" else self.verdicts).append(r)
        # the harness's own name for each session's current state, which OCP's vocabulary folds
        self.native_state = {r["session_id"]: r["native_state"] for r in self.states}

    def acting(self, sid: str, ts: datetime | None) -> str:
        """The attempt of ``sid`` that did what it did at ``ts``."""
        return attempt_until(self.attempts_of[sid], ts)

    def started(self, sid: str, ts: datetime | None) -> str:
        """The attempt of ``sid`` that a spawn or launch at ``ts`` started."""
        return attempt_from(self.attempts_of[sid], ts)

    def build(self) -> dict:
        b = self.b
        members = {m["session_id"]: m for m in b.members.iter_rows(named=True)}
        attempts = self._attempts(members)
        edges, other_edges = self._edges()
        edges += self._placeholder_edges(members)
        artifacts, art_edges = self._artifacts()
        edges += art_edges
        nodes = [self._node(m) for m in members.values()]
        groups = sorted({n["group"] for n in nodes})
        sigs = ocp_outcome.signals(self.verdicts, self._attempt_of)
        for sig in sigs:
            sig["id"] = ocp_id(sig["id"])
        doc: dict[str, Any] = {
            "ocp": "0.3",
            "producer": {"name": "sessiongraph", "version": __version__, "framework": "sessiongraph"},
            "privacy": {"profile": self.privacy},
            "run": self._run(members, sigs),
            "groups": [{"id": g, "title": f"session tree {g.split(':', 2)[-1][:40]}"} for g in groups],
            "nodes": nodes,
            "attempts": [{k: v for k, v in a.items() if not k.startswith("_")} for a in attempts],
            "edges": edges,
            "artifacts": artifacts,
            "events": self._events(attempts, artifacts, sigs),
        }
        if other_edges:
            doc["ext"] = {f"{EXT}.edges": other_edges}
        for key in ("groups", "edges", "artifacts", "events"):
            if not doc[key]:
                del doc[key]
        doc["producer"]["capabilities"] = capabilities(doc)
        return doc

    def _run(self, members: dict[str, dict], signals: list[dict]) -> dict:
        r = self.b.run
        root = members.get(r["root_session_id"], {})
        paths = self.b.writes["path"].to_list()
        harnesses = ", ".join(r["harnesses"] or [])
        run = {
            "id": ocp_id(r["run_id"]),
            "title": f"{root.get('harness') or 'unknown'} run: {r['n_sessions']} session"
            f"{'s' if r['n_sessions'] != 1 else ''} ({harnesses})",
            "started_at": timestamp(r["started_at"]),
            "ended_at": timestamp(r["ended_at"]),
            "workspace": posixpath.basename((root.get("cwd") or "").rstrip("/")) or None,
            "task": task(r["run_id"], paths, root.get("git_repo") or root.get("pr_repo"), root.get("git_commit")),
            "provenance": {"kind": "logged"},
            "signals": signals or None,
            "ext": {
                f"{EXT}.run": {
                    "run_id": r["run_id"],
                    "root_session_id": r["root_session_id"],
                    "n_spawns": r["n_spawns"],
                    "n_launches": r["n_launches"],
                    "n_artifact_edges": r["n_artifact_edges"],
                    "max_depth": r["max_depth"],
                }
            },
        }
        return {k: v for k, v in run.items() if v is not None}

    def _node(self, m: dict) -> dict:
        role = m["role"] or "subagent"
        node: dict[str, Any] = {
            "id": self.node_of[m["session_id"]],
            "kind": NODE_KINDS.get(role, "impl"),
            "title": f"{m['harness']} {role}" + (f" ({m['agent_type']})" if m["agent_type"] else ""),
            "group": f"grp:{m['harness']}:{m['native_id']}",
            "state": ocp_outcome.node_state(m["state"]),
            "ext": {
                f"{EXT}.session": {
                    "session_id": m["session_id"],
                    "session_kind": m["session_kind"],
                    "depth": m["depth"],
                    "agent_type": m["agent_type"],
                    "entrypoint": m["entrypoint"],
                }
            },
        }
        if not m["on_disk"]:  # a missing parent's placeholder (inference/runs.py): a node with no attempts
            node["title"] = f"{m['harness']} {role} (transcript not on disk)"
            node["ext"][f"{EXT}.session"]["on_disk"] = False
            del node["state"]  # nothing says how it stands
        if m["waiting_on"]:  # OCP's node has no field for it: a label any reader can see
            node["labels"] = {"waiting_on": m["waiting_on"]}
        if m["session_id"] in self.native_state:
            node["ext"][f"{EXT}.session"]["native_state"] = self.native_state[m["session_id"]]
        return node

    def _attempt_of(self, row: dict) -> str:
        return self.attempt_id[(row["session_id"], row["source_path"], row["attempt"])]

    def _attempts(self, members: dict[str, dict]) -> list[dict]:
        usage: dict[tuple, list[dict]] = {}
        for row in self.b.usage.iter_rows(named=True):
            usage.setdefault((row["session_id"], row["source_path"], row["attempt"]), []).append(row)
        out = []
        for seg in self.b.attempts.iter_rows(named=True):
            sid = seg["session_id"]
            m = members[sid]
            tries = self.attempts_of.setdefault(sid, [])
            n = len(tries) + 1
            key = (sid, seg["source_path"], seg["attempt"])
            evidence = self.evidence_of.get(key, [])
            status, outcome = ocp_outcome.attempt_outcome(seg["status"], seg["outcome_tier"], evidence)
            cause = (
                {"type": "initial"}
                if n == 1
                else {"type": "sent_back" if tries[-1]["status"] == "rejected" else "followup", "ref": tries[-1]["id"]}
            )
            a = {
                "id": f"{self.node_of[sid]}#{n}",
                "node": self.node_of[sid],
                "n": n,
                "harness": m["harness"],
                "model": {"raw": seg["model"] or m["model"]} if (seg["model"] or m["model"]) else None,
                "cause": cause,
                "status": status,
                "started_at": timestamp(seg["started_at"]),
                "ended_at": timestamp(seg["ended_at"]),
                "outcome": outcome,
                "cost": self._cost(usage.get(key, [])),
                "ext": self._reported(usage.get(key, [])),
                "role": {
                    "value": m["role"],
                    "tier": m["role_tier"] or "heuristic",
                    "evidence": ROLE_EVIDENCE.get(m["role"]),
                },
                "phase": {
                    "value": m["phase"],
                    "tier": "heuristic",
                    "evidence": "started after the run's last write"
                    if m["phase"] == "post"
                    else "started before the run's last write",
                },
                "session": _short(m["native_id"]),
                "cwd": (seg["cwd"] or m["cwd"] or "")[:1000] or None,
                "_start": seg["started_at"],
                "_end": seg["ended_at"],
            }
            self.attempt_id[key] = a["id"]
            tries.append(a)
            out.append(a)
        self._origins(out, members)
        return [{k: v for k, v in a.items() if v is not None} for a in out]

    def _origins(self, attempts: list[dict], members: dict[str, dict]) -> None:
        """A launched session's attempt that the launch started names the launcher's attempt."""
        by_id = {a["id"]: a for a in attempts}
        for sid, m in members.items():
            if m["via"] != "launch":
                continue
            e = self.b.edges.filter((pl.col("kind") == "launch") & (pl.col("dst") == sid)).row(0, named=True)
            a = by_id[self.started(sid, e["ts"])]
            a["origin"] = {
                "launched_by": self.acting(e["src"], e["ts"]),
                "workspace": a["cwd"],
                "external": False,
                "how": LAUNCH_HOW.get(m["harness"]),
                "tier": e["tier"],
                "evidence": _short(e["evidence"]),
            }

    def _cost(self, rows: list[dict]) -> dict | None:
        if not rows:
            return None
        cost: dict[str, Any] = {}
        counted = [r for r in rows if any(r[t] is not None for t in USAGE_TOKENS)]
        if counted:  # token fields only from rows that record tokens (Crush records none)
            tot = {t: sum(int(r[t] or 0) for r in counted) for t in USAGE_TOKENS}
            cost |= {
                "input_tokens": tot["input_tokens"],
                "cached_input_tokens": tot["cache_read_tokens"],
                "cache_creation_tokens": tot["cache_creation_tokens"],
                "cache_creation_5m_tokens": tot["cache_creation_5m_tokens"],
                "cache_creation_1h_tokens": tot["cache_creation_1h_tokens"],
                "output_tokens": tot["output_tokens"],
                "reasoning_tokens": tot["reasoning_tokens"],
            }
        # A session's totals (Crush, Droid, a Copilot CLI shutdown) say how much, not in how many
        # requests: the count is left out rather than understated.
        if not any(r["session_rows"] for r in rows):
            cost["requests"] = sum(int(r["requests"] or 0) for r in rows)
        # Dollars: the attempt's, summed in the store (ocp_bundle._USAGE, the views' one rule).
        if rows[0]["attempt_usd"] is None:  # an unknown model leaves usd out rather than claiming 0
            for r in counted:
                if r["usd"] is None:  # counted once per attempt and model
                    self.unpriced[r["model"] or "(none)"] += 1
        else:
            cost["usd"] = rows[0]["attempt_usd"]
            sources = sorted({s for r in rows for s in r["sources"]} - {FREE}) or [FREE]
            days = [r["day"] for r in rows if r["day"] is not None]
            cost["tariff"] = {"id": "+".join(sources), "source": "list prices at each request's date"}
            if days:  # the latest request's date: the newest prices used
                cost["tariff"]["date"] = max(days).isoformat()
        if not cost:  # nothing counted nor priced: the harness's own dollars only (ext, _reported)
            return None
        return {**cost, "basis": "measured"}

    @staticmethod
    def _reported(rows: list[dict]) -> dict | None:
        """The attempt's ``ext``: the harness's own dollars (Crush's cost), which OCP's cost has no
        field for and which are never added to ``cost.usd``."""
        reported = [r["reported_usd"] for r in rows if r["reported_usd"] is not None]
        if not reported:
            return None
        return {f"{EXT}.cost": {"reported_usd": round(sum(reported), 6), "source": "the harness's own figure"}}

    def _edges(self) -> tuple[list[dict], list[dict]]:
        edges: list[dict] = []
        other: list[dict] = []
        for e in self.b.edges.filter(pl.col("kind") != "artifact").iter_rows(named=True):
            if e["src"] not in self.node_of or e["dst"] not in self.node_of:
                continue
            record = {
                "from": self.node_of[e["src"]],
                "to": self.node_of[e["dst"]],
                "kind": e["kind"],
                "tier": e["tier"],
                "evidence": _short(e["evidence"]),
                "from_attempt": self.acting(e["src"], e["ts"]),
                "to_attempt": self.started(e["dst"], e["ts"]),
                "ext": {f"{EXT}.edge": {"id": e["edge_id"], "lag_s": e["lag_s"], "call_id": e["src_call_id"]}},
            }
            text = {k: mask(e[k]) for k in ("command", "description") if e.get(k)}
            if self.privacy == "full" and text:  # log text lives under ext only, and only under full
                record["ext"][f"{EXT}.text"] = text
            (edges if e["kind"] in ("spawn", "launch") else other).append(record)
        return edges, other

    def _placeholder_edges(self, members: dict[str, dict]) -> list[dict]:
        """Spawn edges from a missing parent's placeholder (no attempts) to the subagents that
        name it: ``reported``, only the children say so (inference/runs.py)."""
        out = []
        for sid, m in members.items():
            parent = members.get(m["parent_session_id"] or "")
            if parent is None or parent["on_disk"] or m["via"] != "spawn":
                continue
            out.append(
                {
                    "from": self.node_of[parent["session_id"]],
                    "to": self.node_of[sid],
                    "kind": "spawn",
                    "tier": "reported",
                    "evidence": "parent transcript not on disk; the child's folder or records name it",
                    "to_attempt": self.started(sid, m["started_at"]),
                }
            )
        return out

    def _artifacts(self) -> tuple[list[dict], list[dict]]:
        arts, edges, ids = [], [], {}
        reads: dict[tuple, list[dict]] = {}  # (path, version) -> its artifact edges, grouped once
        for e in self.b.edges.filter(pl.col("kind") == "artifact").iter_rows(named=True):
            reads.setdefault((e["path"], e["version"]), []).append(e)
        for v in self.b.versions.iter_rows(named=True):
            if len(v["path"]) > 1000:
                continue
            aid = f"art:{posixpath.basename(v['path'])[:60]}@v{v['version']}:{short_hash(v['path'], v['version'])[:8]}"
            ids[(v["path"], v["version"])] = aid
            producer = self.acting(v["producer"], v["ts"])
            consumers = []
            for e in reads.get((v["path"], v["version"]), []):
                reader = self.acting(e["dst"], e["ts"])
                if reader not in consumers:
                    consumers.append(reader)
                edges.append(
                    {
                        "from": self.node_of[e["src"]],
                        "to": self.node_of[e["dst"]],
                        "kind": "artifact",
                        "tier": e["tier"],
                        "evidence": _short(e["evidence"]),
                        "artifact": aid,
                        "from_attempt": producer,
                        "to_attempt": reader,
                        "ext": {
                            f"{EXT}.edge": {
                                "id": e["edge_id"],
                                "lag_s": e["lag_s"],
                                "src_tier": e["src_tier"],
                                "dst_tier": e["dst_tier"],
                            }
                        },
                    }
                )
            art = {
                "id": aid,
                "path": v["path"],
                "kind": {"value": _artifact_kind(v["path"]), "tier": "heuristic", "evidence": "file name"},
                "producer": producer,
                "writers": [producer],
                "consumers": consumers,
                "first_write_at": timestamp(v["ts"]),
                "n_writes": 1,
                "n_reads": max(int(v["n_reads"] or 0), len(consumers)),
                "version": v["version"],
                "ext": {f"{EXT}.write": {"how": v["how"], "tier": v["tier"], "versions_of_path": v["n_writes"]}},
            }
            if (v["path"], v["version"] - 1) in ids:
                art["supersedes"] = ids[(v["path"], v["version"] - 1)]
            arts.append(art)
        return arts, edges

    def _events(self, attempts: list[dict], artifacts: list[dict], signals: list[dict]) -> list[dict]:
        ev = []
        for a in attempts:
            if a.get("started_at"):
                ev.append({"at": a["started_at"], "type": "attempt_started", "attempt": a["id"], "node": a["node"]})
            # an open attempt (queued, working) has not settled, whenever its log was last written
            if a.get("ended_at") and "outcome" in a:
                ev.append({"at": a["ended_at"], "type": "attempt_settled", "attempt": a["id"], "node": a["node"]})
        for art in artifacts:
            if art["first_write_at"]:
                ev.append(
                    {
                        "at": art["first_write_at"],
                        "type": "artifact_written",
                        "attempt": art["producer"],
                        "detail": art["id"],
                    }
                )
        ev += ocp_outcome.state_events(self.states, self.node_of)
        node_of_attempt = {a["id"]: a["node"] for a in attempts}
        ev += ocp_outcome.signal_events(signals, node_of_attempt.__getitem__)
        ev.sort(key=event_order)
        return ev


def document(bundle: RunBundle, *, privacy: str = "metadata_only") -> tuple[dict, Counter]:
    """The OCP document of one run (values over OCP's length limits cut: ``ocp.limits``), and
    the models it could not price."""
    d = _Doc(bundle, privacy)
    return fit(d.build(), EXT), d.unpriced
