#!/usr/bin/env bash
# Review one task with codex (paths scenario).
set -euo pipefail
cd "$(dirname "$0")/.."
exec codex exec --full-auto "review task $1"
