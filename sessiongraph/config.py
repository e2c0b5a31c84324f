"""The user's config file: ``$SESSIONGRAPH_CONFIG``, else ``config.toml`` in the user config dir
(on Linux ``~/.config/sessiongraph/``). Optional; today it holds the launcher table::

    [launchers]
    omx = "codex"          # a wrapper CLI -> the harness whose CLI it runs (its arguments follow it)
    my-review = "claude-code"
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path

import platformdirs

from sessiongraph.errors import SessiongraphError


def config_path(env: Mapping[str, str] | None = None) -> Path:
    given = (os.environ if env is None else env).get("SESSIONGRAPH_CONFIG")
    if given:
        return Path(given).expanduser()
    return Path(platformdirs.user_config_dir("sessiongraph", appauthor=False)) / "config.toml"


def load(env: Mapping[str, str] | None = None) -> dict:
    """The config file's contents ({} when there is none); a broken file is an error naming it."""
    path = config_path(env)
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        return {}
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SessiongraphError(f"cannot read the config file {path}: {exc}") from None


def launchers(given: Sequence[str] = (), env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The launcher table: the config file's ``[launchers]``, then each ``NAME=HARNESS`` given
    (a later one wins)."""
    table = load(env).get("launchers", {})
    if not isinstance(table, dict) or not all(isinstance(v, str) for v in table.values()):
        raise SessiongraphError(f"{config_path(env)}: [launchers] must map names to harness names")
    out = dict(table)
    for item in given:
        name, sep, harness = item.partition("=")
        if not sep:
            raise SessiongraphError(f"--launcher {item!r}: use NAME=HARNESS, e.g. omx=codex")
        out[name.strip()] = harness.strip()
    return out
