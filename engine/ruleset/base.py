"""The base of every ruleset model: camelCase on the wire, snake_case in Python, frozen, strict."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, StringConstraints
from pydantic.alias_generators import to_camel


class RulesetModel(BaseModel):
    """A part of a ruleset file: unknown keys are errors, values never change after load."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
    )


Id = Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_\-]+$")]
Label = Annotated[str, StringConstraints(min_length=1, max_length=120)]
Text = Annotated[str, StringConstraints(max_length=4000)]


class Labelled(RulesetModel):
    """Anything with an ``id`` and a ``label``: categories, rarities, tags, tiers, ..."""

    id: Id
    label: Label
