#!/bin/sh
# The one place the agent CLI is named. WILD-SCRIPT-BODY-MARKER
exec codex exec --full-auto "$1"
