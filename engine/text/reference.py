"""The tag reference users read (``docs/tags.md``) and the JSON Schema of requests, both written
from the action declarations (docs/design.md#actions-one-declaration-each), never by hand."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..actions.answers import RESULTS
from ..actions.declare import Action, Request
from ..actions.events import EVENTS
from ..actions.reply import (
    ACTION_ATTRIBUTE,
    ACTIONS,
    ENGINE_ONLY,
    MAX_TAGS_PER_REPLY,
    SELECTED_BY,
)
from ..rules import reasons
from ..rules.names import SHORTEST_CUT

SCHEMA_ID = "https://gmtags.invalid/schema/requests.json"
# What any tag can be refused with, whatever its action.
EVERY_TAG = (reasons.MALFORMED, reasons.UNKNOWN_ACTION, reasons.UNSUPPORTED,
             reasons.TOO_MANY_TAGS)
EVERY_EVENT = (reasons.MALFORMED, reasons.UNSUPPORTED)


# How names and numbers are read, by the reader kind the tables' "reads" column names.
READING = [
    "Names and numbers are read as people write them. Each reading below is named "
    'in the answer\'s notes, e.g. `read who="Bram" as Bram the Quiet`, `read dc="DC 10" as '
    "10`.",
    "",
    "- **A name** (`character`, `combatant`, `item held`): a name any case, or else the first "
    "word or the leading words of exactly one name, the last of them perhaps cut short to "
    f"{SHORTEST_CUT} letters or more (never a number): `who=\"Bram\"`, `who=\"bram the\"` and "
    "`who=\"Bram the Qui\"` are Bram the Quiet; `\"Bram the Q\"` and `\"Quiet\"` are nobody. "
    "An exact name wins, then whole words over a cut one; one that fits two is refused "
    "(`unknown-character`, `unknown-combatant`, `not-held`) and the answer names both.",
    "- `character` is a party member; `combatant` is a party member or one in the fight on "
    "now (`Goblin 2`; `Goblin` is refused while Goblin 1 and Goblin 2 both fight); "
    "`combatants` is a comma list of them. `item held` is a stack in `who=`'s bag; a name of "
    "the ruleset (an item, an invented item, a coin), or of a stack anyone in the party "
    "holds, means that and is never read as another. What an `add` or a `buy` names may be "
    "new, so it is never read as a stack "
    "(adding `Rope ladder` to a bag holding Rope adds a Rope ladder).",
    "- **A number** (`count`, `total`, `number`): a value holding exactly one whole number, "
    "wherever its label sits, is that number: `dc=\"DC 10\"`, `dc=\"10 (hard)\"`, "
    "`dc=\"difficulty: 12\"`, `count=\"3 torches\"`, `count=\"x2\"`. None, several "
    "(`\"2 or 3\"`, `\"1.5\"`) or dice (`\"d20\"`) make no number, refused or ignored as the "
    "attribute says; the number still keeps to the attribute's limits.",
    "",
]


def title(declared: Action) -> str:
    """How the reference names an action: ``[inventory: action="add"]``, ``[loot:]``, or an
    event's ``{"action": "use"}``."""
    if declared.kind == "event":
        return f'{{"action": "{declared.name}"}}'
    attribute = ACTION_ATTRIBUTE.get(declared.kind)
    if attribute is None and declared.name is not None \
            and SELECTED_BY.get(declared.kind) == declared.name:
        return f'[{declared.kind}: {declared.name}="…"]'
    if attribute is None or declared.name is None:
        return f"[{declared.kind}:]"
    return f'[{declared.kind}: {attribute}="{declared.name}"]'


def _attribute_schema(request: type[Request]) -> tuple[dict[str, Any], list[str], list[Any]]:
    """The attributes' schemas, the attributes required, and the choices of a required
    attribute that has aliases (any one of them will do)."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    either: list[Any] = []
    for _, meta in request.declared:
        one: dict[str, Any] = dict(meta.reader.schema)
        one["description"] = meta.help
        if meta.default is not None:
            one["default"] = meta.default
        properties[meta.name] = one
        for alias in meta.aliases:
            properties[alias] = {**one, "description": f"the same as {meta.name}="}
        if meta.missing is not None and meta.aliases:
            either.append({"anyOf": [{"required": [name]}
                                     for name in (meta.name, *meta.aliases)]})
        elif meta.missing is not None:
            required.append(meta.name)
    return properties, required, either


def _kinds(names: tuple[str, ...]) -> str:
    """The kinds of combat (:attr:`engine.actions.declare.ByRuleset.requests`' names) that
    read one of an action's requests."""
    *some, last = names
    return f"{', '.join(some)} or {last}" if some else last


def _action_schema(declared: Action) -> dict[str, Any]:
    """The schema of the action's request; of an action whose rulesets read different
    requests, a choice of each (``[attack:]``: one for each kind of combat)."""
    made = [_request_schema(declared, request) for _, request in declared.requests()]
    if declared.by_ruleset is None:
        return made[0]
    choices = []
    for (names, _), one in zip(declared.requests(), made, strict=True):
        one.pop("not", None)  # said once, for every choice
        choices.append({**one, "title": f"{title(declared)} (combat.kind {_kinds(names)})"})
    schema: dict[str, Any] = {"title": title(declared), "description": declared.summary,
                              "anyOf": choices}
    if declared.kind in SELECTED_BY and declared.name is None:
        schema["not"] = {"required": [SELECTED_BY[declared.kind]]}
    return schema


def _request_schema(declared: Action, request: type[Request]) -> dict[str, Any]:
    properties, required, either = _attribute_schema(request)
    if declared.kind == "event":
        head: dict[str, Any] = {"action": {"const": declared.name}}
        needed = ["action"]
    else:
        head = {"kind": {"const": declared.kind}}
        needed = ["kind"]
        attribute = ACTION_ATTRIBUTE.get(declared.kind)
        if attribute is not None and declared.name is not None:
            head[attribute] = {"const": declared.name}
            needed.append(attribute)
        elif declared.name is not None and SELECTED_BY.get(declared.kind) == declared.name:
            needed.append(declared.name)  # [attack: use=]: written, it selects the action
    schema: dict[str, Any] = {
        "title": title(declared), "description": declared.summary, "type": "object",
        "properties": {**head, **properties}, "required": needed + required,
        # Unknown attributes are ignored (and said so in the answer's notes), never refused.
        "additionalProperties": {"type": "string"} if declared.kind != "event" else True,
    }
    if either:
        schema["allOf"] = either
    if declared.kind == "event":
        schema["not"] = {"required": ["kind"]}  # a tag is never a host event
    elif declared.name is None and declared.kind in SELECTED_BY:
        # the kind's other action is told apart by its own attribute ([attack: use=])
        schema["not"] = {"required": [SELECTED_BY[declared.kind]]}
    return schema


def _key(declared: Action) -> str:
    return f"{declared.kind}.{declared.name}" if declared.name else declared.kind


def request_schema() -> dict[str, Any]:
    """The JSON Schema (2020-12) of every request: a tag as ``{"kind": ..., <attribute>:
    <text>}``, a host event as its JSON payload."""
    defined = {_key(d): _action_schema(d) for d in (*ACTIONS.values(), *EVENTS.values())}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID,
        "title": "gmtags requests",
        "description": "Every tag action and host event gmtags answers, with the attributes "
                       "each reads. Tag attribute values are text, as written in the tag.",
        "oneOf": [{"$ref": f"#/$defs/{key}"} for key in defined], "$defs": defined,
    }


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _reasons(codes: Iterable[str]) -> list[str]:
    return [f"- `{code}`: {_cell(reasons.MEANINGS.get(code, ''))}" for code in codes]


def _attributes(declared: Action, request: type[Request]) -> list[str]:
    """The table of the attributes ``request`` reads."""
    if not request.declared:
        return []
    lines = ["| attribute | reads | default | meaning |", "|---|---|---|---|"]
    for _, meta in request.declared:
        name = f"`{meta.name}=`" if declared.kind != "event" else f'`"{meta.name}"`'
        if meta.aliases:
            name += " (or " + ", ".join(f"`{a}=`" for a in meta.aliases) + ")"
        default = "required" if meta.missing is not None else (meta.default or "—")
        lines.append(f"| {name} | {meta.reader.kind} | {_cell(default)} | "
                     f"{_cell(meta.help)} |")
    return [*lines, ""]


def _section(declared: Action) -> list[str]:
    lines = [f"### `{title(declared)}`", "", declared.summary, ""]
    if declared.by_ruleset is None:
        lines += _attributes(declared, declared.request)
    else:
        lines += ["Each ruleset reads the attributes below for its kind; an attribute its kind "
                  "does not read is ignored, and the answer's notes say so.", ""]
        for names, request in declared.requests():
            summary = (request.__doc__ or "").strip()
            lines += [f"#### `{title(declared)}` under `combat.kind` {_kinds(names)}", "",
                      summary, "", *_attributes(declared, request)]
    if declared.needs is not None:
        lines += [f"Needs a ruleset that has it: without, `{declared.needs.reason}` "
                  f"(\"{declared.needs.text}\").", ""]
    lines += ["Refused with:", "", *_reasons(declared.every_reason()), ""]
    if declared.record:
        lines += ["The answer's record:", "", "| field | meaning |", "|---|---|"]
        lines += [f"| `{field}` | {_cell(meaning)} |" for field, meaning in
                  declared.record.items()]
        lines.append("")
    return lines


def tag_reference() -> str:
    """``docs/tags.md``: every tag and host event, each attribute with its default, every
    reason code and the answer's record fields."""
    results = ", ".join(f"`{key}=`" for keys in RESULTS.values() for key in keys)
    lines = [
        "# Tag reference",
        "",
        "<!-- Written by `gmtags schema --tags-doc` from the action declarations in "
        "engine/actions/. Do not edit: a test fails when this file is stale. -->",
        "",
        "A tag is `[` kind `:` attributes `]`, each attribute `name=\"value\"`. gmtags answers "
        "it in place: the request, then `|`, then the answer: `ok=`, `reason=` (when refused), "
        f"`text=`, and for a check {results}. The whole answer, with its record, is in the "
        "replay JSON (`gmtags replay`).",
        "",
        "Attributes nobody reads are ignored, and the answer's notes say so. Attributes only "
        "the engine writes are ignored when a model writes them: "
        + ", ".join(f"`{name}=`" for name in sorted(ENGINE_ONLY)) + ".",
        "",
        *READING,
        f"Any tag can also be refused with these (a reply answers at most {MAX_TAGS_PER_REPLY}"
        " tags):",
        "",
        *_reasons(EVERY_TAG),
        "",
        "## Tags",
        "",
    ]
    for declared in ACTIONS.values():
        lines += _section(declared)
    lines += [
        "## Host events",
        "",
        "What the player does with the host's buttons is an `event` message in the transcript: "
        "a JSON object whose `action` names the event; `who` defaults to the message's name. "
        "An event is answered like a tag and can also be refused with:",
        "",
        *_reasons(EVERY_EVENT),
        "",
    ]
    for declared in EVENTS.values():
        lines += _section(declared)
    return "\n".join(lines).rstrip("\n") + "\n"
