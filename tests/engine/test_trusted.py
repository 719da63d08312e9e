"""engine.rules.trusted builds the very value the model's constructor builds from fields already of
their types (issue 13: the fold's answers, new stacks and read messages skip re-validation)."""

from __future__ import annotations

import pytest

from engine.actions.answers import Answer, TagRef, accepted
from engine.rules.bags import Thing
from engine.rules.state import Stack
from engine.rules.trusted import trusted
from replay.transcript import Message
from tagparse import scan

TAG = TagRef(kind="inventory", attrs={"action": "add", "item": "Torch"}, raw="[inventory: x]")
CASES = [
    (TagRef, {"kind": "loot", "attrs": {"table": "crypt"}, "raw": '[loot: table="crypt"]'}),
    (Answer, {"tag": TAG, "ok": False, "reason": "cannot-afford", "text": "No.",
              "record": {"cost": 3, "who": ["Ada"]}, "notes": ("ignored",)}),
    (Stack, {"name": "Torch", "item": "gear/torch", "coin": None, "count": 3, "equipped": False,
             "bound": True, "charges": None, "toggled": False, "shows_as": None,
             "suspected_by": ("Bram",), "inspected_by": (), "loaded": None}),
    (Message, {"role": "gm", "name": "GM", "text": "Rain.", "swipes": None, "swipe": 0,
               "hidden": False, "new_session": True, "event": None, "source_line": 7}),
]


@pytest.mark.parametrize(("model", "fields"), CASES, ids=lambda case: getattr(case, "__name__", ""))
def test_trusted_builds_what_the_constructor_builds(model, fields):
    built, checked = trusted(model, dict(fields)), model(**fields)
    assert type(built) is model
    assert built == checked
    assert built.model_dump() == checked.model_dump()
    assert built.model_dump_json() == checked.model_dump_json()
    assert built.model_fields_set == checked.model_fields_set == set(fields)
    assert model.model_validate(built.model_dump()) == built
    copied = built.model_copy(update={next(iter(fields)): checked.__dict__[next(iter(fields))]})
    assert copied == built


def test_trusted_values_stay_frozen():
    stack = trusted(Stack, dict(CASES[2][1]))
    with pytest.raises(ValueError, match="frozen"):
        stack.count = 4
    assert hash(stack) == hash(Stack(**CASES[2][1]))


def test_a_new_stack_is_the_constructors_stack():
    thing = Thing("Torch", "gear/torch", None, 10)
    assert thing.stack(4) == Stack(name="Torch", item="gear/torch", count=4)
    assert thing.stack(4).model_dump() == Stack(name="Torch", item="gear/torch",
                                                 count=4).model_dump()


def test_an_answer_keeps_its_own_record():
    """The record is copied as validation copied it: the caller's dict changing later does not
    change the answer."""
    record = {"who": "Ada"}
    answer = accepted(scan('[inventory: action="add" item="Torch"]').tags[0], "Added.", record)
    record["who"] = "Bram"
    assert answer.record == {"who": "Ada"}
    assert answer.tag == TagRef(kind="inventory", attrs={"action": "add", "item": "Torch"},
                                raw='[inventory: action="add" item="Torch"]')
