"""The engine's answer to one tag: ok or refused with a reason code, a sentence, a record."""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tagparse import Tag

from ..rules.trusted import trusted

JsonValue = Any


class TagRef(BaseModel):
    """The tag an answer answers, as the replay JSON shows it."""

    model_config = ConfigDict(frozen=True)
    kind: str
    attrs: dict[str, str]
    raw: str


class Answer(BaseModel):
    """One answered tag. ``record`` holds the answer attributes written back into the tag."""

    model_config = ConfigDict(frozen=True)
    tag: TagRef
    ok: bool
    reason: str | None = None
    text: str
    record: dict[str, JsonValue] = Field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


def fraction(value: Fraction) -> dict[str, int]:
    """A value that is an exact fraction by the rules (a grade's multiplier ×7/5, a share of
    health, a formula's exact value) as a record writes it (README "The JSON gmtags writes"):
    ``{"num": 7, "den": 5}`` in lowest terms, ``{"num": 1, "den": 1}`` when whole — always
    the same shape, and never a rounded decimal."""
    return {"num": value.numerator, "den": value.denominator}


def tag_ref(tag: Tag) -> TagRef:
    """The tag as an answer shows it: each attribute's first value, in text order."""
    pairs = tag.attrs
    attrs = dict(pairs)  # tagparse gives each key once; a built tag may repeat one
    if len(attrs) != len(pairs):
        attrs = {}
        for key, value in pairs:
            attrs.setdefault(key, value)
    return trusted(TagRef, {"kind": tag.kind, "attrs": attrs, "raw": tag.raw})


def _answer(tag: Tag, ok: bool, reason: str | None, text: str,
            record: dict[str, JsonValue] | None, notes: tuple[str, ...]) -> Answer:
    # Every field typed by the caller; the record is copied, as validating it would.
    return trusted(Answer, {"tag": tag_ref(tag), "ok": ok, "reason": reason, "text": text,
                            "record": dict(record) if record else {}, "notes": tuple(notes)})


def accepted(tag: Tag, text: str, record: dict[str, JsonValue] | None = None,
             notes: tuple[str, ...] = ()) -> Answer:
    return _answer(tag, True, None, text, record, notes)


def refused(tag: Tag, reason: str, text: str, record: dict[str, JsonValue] | None = None,
            notes: tuple[str, ...] = ()) -> Answer:
    return _answer(tag, False, reason, text, record, notes)


def _attr_text(value: JsonValue) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list) and all(isinstance(v, int | str) for v in value):
        return ",".join(str(v) for v in value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


# The few record values an answer part carries besides ok, reason and text: the results a GM acts on
# that a program reading the chat wants as values. Every earlier answered tag is sent back to the
# model on each turn, so the answer part says no more than that; the whole record stays in the
# replay JSON.
RESULTS: dict[str, tuple[str, ...]] = {"skill_check": ("success", "outcome")}
# ... and, on every kind, ``answered="mid-reply"``: the tag was answered before the rest of its
# reply was written (engine.actions.reply.MID_REPLY), which the fold reads back.
ANSWERED = "answered"


def _status(answer: Answer) -> list[tuple[str, str]]:
    attrs = [("ok", _attr_text(answer.ok))]
    if answer.reason is not None:
        attrs.append(("reason", answer.reason))
    attrs.append(("text", answer.text))
    return attrs


def answer_attrs(answer: Answer) -> list[tuple[str, str]]:
    """The answer part of an answered tag: ``ok``, ``reason`` (when refused), ``text``, then
    the scalar :data:`RESULTS` of its kind that the record has — never a null, never JSON."""
    attrs = _status(answer)
    for key in (*RESULTS.get(answer.tag.kind, ()), ANSWERED):
        value = answer.record.get(key)
        if isinstance(value, bool | int | float | str):
            attrs.append((key, _attr_text(value)))
    return attrs


def every_answer_attr(answer: Answer) -> list[tuple[str, str]]:
    """Every attribute an answer part may carry: ``ok``, ``reason``, ``text``, then the whole record
    as older answer parts were written (lists of numbers joined by commas, other nested values as
    JSON, none as ``null``), so that ``gmtags regress`` can compare any attribute an old or a new
    recording has.

    Tag attribute names are case-insensitive and written lower case (tags.lark), so a record key
    such as ``darkHighest`` (docs/rules/checks.md#appendix-b-the-fields-of-a-checks-record) is
    written ``darkhighest``.
    """
    attrs = _status(answer)
    attrs.extend((key.lower(), _attr_text(value)) for key, value in answer.record.items())
    return attrs
