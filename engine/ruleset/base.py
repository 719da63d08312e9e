"""The base of every ruleset model: camelCase on the wire, snake_case in Python, frozen, strict."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints
from pydantic.alias_generators import to_camel

from ..dice import parse_dice


class RulesetModel(BaseModel):
    """A part of a ruleset file: unknown keys are errors, values never change after load."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        use_attribute_docstrings=True,
        allow_inf_nan=False,  # JSON's 1e400, Infinity and NaN are not numbers a rule can use
    )


def _dice(text: str) -> str:
    reason = parse_dice(text)
    if isinstance(reason, str):
        raise ValueError(reason)
    return text


def _no_braces(text: str) -> str:
    if "{{" in text:
        raise ValueError('a name has no "{{"')
    return text


Id = Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_\-]+$")]
Label = Annotated[str, StringConstraints(min_length=1, max_length=120)]
Text = Annotated[str, StringConstraints(max_length=4000)]
# docs/design.md#sheet-model: a catalog entry is referenced as "<catalog id>/<entry id>".
ItemRef = Annotated[str, StringConstraints(
    max_length=129, pattern=r"^[A-Za-z0-9_\-]+/[A-Za-z0-9_\-]+$")]
# Dice notation gmtags rolls (engine/dice.py): "2d6", "1d8+1", "3".
Dice = Annotated[str, StringConstraints(min_length=1, max_length=64), AfterValidator(_dice)]
# A count written out or as dice (ITM-LOOT-6/9, ITM-DAY-6).
CountOrDice = Annotated[int, Field(ge=0, le=999_999)] | Dice
# A name the model and player see: no brackets, no "{{", no line breaks (ITM-GEAR-7).
PlainName = Annotated[str, StringConstraints(min_length=1, max_length=120,
                                             pattern=r"^[^\[\]\r\n]+$"),
                      AfterValidator(_no_braces)]


class Labelled(RulesetModel):
    """Anything with an ``id`` and a ``label``: categories, rarities, tags, tiers, ..."""

    id: Id
    label: Label
