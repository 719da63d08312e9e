"""Reading rulesets and parties from disk (the engine itself never touches files)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from engine import Game, State, start_state
from engine import load_ruleset as build_game
from engine.ruleset import Problem, RulesetError

PathLike = str | os.PathLike[str]
MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_JSON_DEPTH = 200


class InputError(Exception):
    """A file that cannot be read at all (missing, not JSON, too deep): the CLI's exit 2."""


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")


def _depth_ok(text: str) -> bool:
    """Reject JSON nested deeper than :data:`MAX_JSON_DEPTH` before ``json`` recurses into it.

    Strings are blanked first (a regex, in C), so only the brackets are walked in Python.
    """
    depth = 0
    for bracket in _BRACKET.finditer(_STRING.sub('""', text)):
        if bracket.group() in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                return False
        else:
            depth -= 1
    return True


def parse_json(text: str, name: str) -> Any:
    """Parse a JSON document with a depth limit; :class:`InputError` says what is wrong."""
    if not _depth_ok(text):
        raise InputError(f"{name}: JSON nested deeper than {MAX_JSON_DEPTH} levels")
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"{name}: not JSON ({error.msg} at line {error.lineno}, "
                         f"column {error.colno})") from None


def read_json(path: PathLike) -> Any:
    source = Path(path)
    try:
        if source.stat().st_size > MAX_FILE_BYTES:
            raise InputError(f"{source}: larger than {MAX_FILE_BYTES // 2**20} MiB")
        text = source.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"{source}: cannot be read ({error})") from None
    return parse_json(text, str(source))


def ruleset_document(path: PathLike) -> dict[str, Any]:
    """A ruleset file with the catalogs of its ``catalogFiles`` (relative to it) appended."""
    return _merged(path)[0]


# Where each merged catalog came from: (file name as written, position in that file or None
# when the file holds one catalog object).
Origins = dict[int, tuple[str, int | None]]


def _merged(path: PathLike) -> tuple[dict[str, Any], Origins]:
    document = read_json(path)
    if not isinstance(document, dict):
        raise RulesetError([Problem("", "a ruleset is a JSON object")])
    files = document.get("catalogFiles", [])
    if not isinstance(files, list):
        return document, {}
    catalogs = list(document.get("catalogs", []) or [])
    origins: Origins = {}
    problems = []
    for index, name in enumerate(files):
        if not isinstance(name, str):
            continue
        try:
            extra = read_json(Path(path).parent / name)
        except InputError as error:
            problems.append(Problem(f"/catalogFiles/{index}", str(error)))
            continue
        found = extra if isinstance(extra, list) else [extra]
        for position in range(len(found)):
            origins[len(catalogs) + position] = (name, position if isinstance(extra, list)
                                                 else None)
        catalogs.extend(found)
    if problems:
        raise RulesetError(problems)
    return {**document, "catalogs": catalogs}, origins


_CATALOG_POINTER = re.compile(r"^/catalogs/(\d+)(/.*)?$")


def _in_its_file(problem: Problem, origins: Origins) -> Problem:
    """A problem inside a catalog from ``catalogFiles`` points into that file:
    ``srd5/gear.json#/entries/3/item/category`` rather than the merged ``/catalogs/7/...``."""
    match = _CATALOG_POINTER.match(problem.pointer)
    if match is None or int(match.group(1)) not in origins:
        return problem
    name, position = origins[int(match.group(1))]
    inner = (f"/{position}" if position is not None else "") + (match.group(2) or "")
    return Problem(f"{name}#{inner}", problem.message)


def load_ruleset(source: PathLike | Mapping[str, Any]) -> Game:
    """``replay.load_ruleset(path_or_dict)``: read, validate and build a ruleset.

    Raises :class:`engine.RulesetError` (every problem with its pointer) or :class:`InputError`.
    """
    if isinstance(source, Mapping):
        return build_game(source)
    document, origins = _merged(source)
    try:
        return build_game(document)
    except RulesetError as error:
        raise RulesetError([_in_its_file(p, origins) for p in error.problems]) from None


def load_party(game: Game, source: PathLike | Mapping[str, Any] | None,
               player: str | None = None) -> State:
    """The start state: a party file, an exported state, or one default character.

    Without a party the game has one character (``player``, else "Player") and the ruleset's
    id as its seed, so a replay without a party file is still deterministic.
    """
    if source is None:
        document: Mapping[str, Any] = {
            "seed": game.ruleset.id,
            "characters": [{"name": (player or "Player").strip()[:80] or "Player"}],
        }
    elif isinstance(source, Mapping):
        document = source
    else:
        loaded = read_json(source)
        if not isinstance(loaded, dict):
            raise InputError(f"{source}: a party file is a JSON object")
        document = loaded
    return start_state(game, document)


def bundled(relative: str) -> Path:
    """A file shipped in the wheel under ``fixtures/`` (e.g. ``rulesets/harrow.json``)."""
    root = resources.files("gmtags_fixtures")
    return Path(str(root.joinpath(relative)))
