"""docs/tags.md and the JSON Schema of requests are written from the action declarations: the
file in the repository is never stale, the schema is a valid one, and every tag the corpus
answers ok is a request the schema accepts."""

from __future__ import annotations

import json

import jsonschema
from click.testing import CliRunner
from helpers import FIXTURES, ROOT

import tagparse
from engine import ACTIONS, EVENTS
from engine.actions.reply import ACTION_ATTRIBUTE
from engine.text.reference import request_schema, tag_reference, title
from replay.cli import main
from replay.cli_io import load_chat
from replay.fold import replay

DOC = ROOT / "docs" / "tags.md"


def test_docs_tags_md_is_written_from_the_declarations() -> None:
    assert DOC.read_text(encoding="utf-8") == tag_reference(), (
        "docs/tags.md is stale: write it again with `gmtags schema --tags-doc > docs/tags.md`")


def test_the_reference_names_every_action_attribute_and_reason() -> None:
    text = tag_reference()
    for declared in (*ACTIONS.values(), *EVENTS.values()):
        assert f"### `{title(declared)}`" in text
        for code in declared.every_reason():
            assert f"- `{code}`:" in text
    assert "| `amount=` | amount | required |" not in text  # amount has no missing= sentence
    assert '`[inventory: action="pay"]`' in text and '`{"action": "starting-gear"}`' in text


def test_the_cli_prints_the_reference_and_the_schema() -> None:
    runner = CliRunner()
    doc = runner.invoke(main, ["schema", "--tags-doc"])
    assert doc.exit_code == 0 and doc.output == tag_reference()
    printed = runner.invoke(main, ["schema", "--requests"])
    assert printed.exit_code == 0 and json.loads(printed.output) == request_schema()
    both = runner.invoke(main, ["schema", "--requests", "--tags-doc"])
    assert both.exit_code == 2 and "pick one" in both.output


def test_the_request_schema_is_a_valid_json_schema() -> None:
    schema = request_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert len(schema["oneOf"]) == len(ACTIONS) + len(EVENTS)
    pay = schema["$defs"]["inventory.pay"]
    assert pay["required"] == ["kind", "action"] and set(pay["properties"]) == {
        "kind", "action", "amount", "who"}
    add = schema["$defs"]["inventory.add"]
    assert add["required"] == ["kind", "action"]
    assert add["allOf"] == [{"anyOf": [{"required": ["item"]}, {"required": ["items"]}]}]
    assert add["properties"]["count"]["default"] == "1"


def _as_request(tag: tagparse.Tag) -> dict[str, str]:
    return {"kind": tag.kind, **dict(tag.attrs)}


def test_every_tag_the_corpus_answers_ok_is_a_request_the_schema_accepts() -> None:
    validator = jsonschema.Draft202012Validator(request_schema())
    corpus = FIXTURES / "chats" / "corpus"
    index = json.loads((corpus / "index.json").read_text(encoding="utf-8"))["chats"]
    checked = 0
    for name, entry in sorted(index.items()):
        game, transcript, state = load_chat(corpus / name, corpus / entry["ruleset"],
                                            corpus / entry["party"])
        for item in replay(game, transcript, state).answers:
            if not item.answer.ok or item.answer.tag.kind == "event":
                continue
            tag = tagparse.scan(item.answer.tag.raw).tags[0]
            document = _as_request(tag)
            attribute = ACTION_ATTRIBUTE.get(tag.kind)
            if attribute is not None and attribute not in document:
                continue  # a bare action word or items= alone, read as the action it means
            assert validator.is_valid(document), (name, tag.raw)
            checked += 1
    assert checked > 800


def test_a_request_missing_a_required_attribute_is_refused_by_the_schema() -> None:
    validator = jsonschema.Draft202012Validator(request_schema())
    assert not validator.is_valid({"kind": "inventory", "action": "remove", "count": "2"})
    assert validator.is_valid({"kind": "inventory", "action": "remove", "item": "Rope"})
    assert not validator.is_valid({"kind": "inventory", "action": "fly", "item": "Rope"})
