"""Peak memory and time of the launch pass on its worst shape: N print-mode launches and N
sessions in one cwd, all with the same timestamps (as `repeat_samples.py` copies make them).

    python benchmarks/launch_mem.py --n 1000
"""

from __future__ import annotations

import argparse
import resource
import time
from datetime import UTC, datetime, timedelta

from sessiongraph.inference.edges import Inferred
from sessiongraph.inference.launch import launch
from sessiongraph.ingest.frames import Frames

T0 = datetime(2026, 3, 1, 9, 0, 7, tzinfo=UTC)


def frames(n: int) -> Frames:
    sessions, calls, launches = [], [], []
    for k in range(n):
        parent = f"claude-code:parent-{k:06d}"
        sessions.append(
            {"session_id": parent, "harness": "claude-code", "native_id": f"parent-{k:06d}",
             "session_kind": "main", "cwd": "/srv/app", "started_at": T0, "source_path": f"p{k}",
             "entrypoint": "cli"}
        )  # fmt: skip
        sessions.append(
            {"session_id": f"codex:child-{k:06d}", "harness": "codex", "native_id": f"child-{k:06d}",
             "session_kind": "main", "cwd": "/srv/app", "started_at": T0 + timedelta(seconds=2),
             "source_path": f"c{k}", "entrypoint": "exec"}
        )  # fmt: skip
        calls.append(
            {"session_id": parent, "call_id": "k", "tool": "Bash", "kind": "shell", "started_at": T0,
             "ended_at": T0 + timedelta(minutes=1), "cwd": "/srv/app", "source_path": f"p{k}", "line": 1,
             "output_ids": []}
        )  # fmt: skip
        launches.append(
            {"session_id": parent, "call_id": "k", "segment": 0, "ts": T0, "harness": "codex",
             "print_mode": True, "resume": False, "background": False, "looped": False, "cwd": "/srv/app",
             "source_path": f"p{k}", "line": 1, "review": False}
        )  # fmt: skip
    return Frames.from_rows(sessions=sessions, calls=calls, launches=launches)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    n = parser.parse_args().n
    f = frames(n)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    result = launch(f, Inferred())
    took = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        f"n={n} edges={result.edges.height} diagnostics={result.diagnostics['count'].sum()} "
        f"launch pass {took:.2f} s, peak RSS {peak / 1024:.0f} MB (+{(peak - before) / 1024:.0f} MB over the frames)"
    )


if __name__ == "__main__":
    main()
