#!/bin/sh
# outside the workspace: never read
codex exec "external check"
