#!/usr/bin/env bash
# Review one task with codex (lineage-wild scenario).
set -euo pipefail
task="$1"
exec tools/agent.sh "review task $task"
