"""Building a pydantic value from fields the code has just built and typed, without validating
them a second time.

A cold replay makes one transcript message per line and one answer (with its tag) per tag: tens of
thousands of small models whose fields come straight from checked JSON or from the engine's own
typed code. Pydantic's validation of each costs 1 to 3.5 µs, about a tenth of a replay.
:func:`trusted` builds exactly the value ``cls(**fields)`` builds for such fields — equal, dumped
alike, ``model_fields_set`` the given names — without the checks. Only for models without extra or
private attributes, with every field given and already of its type; anything read from outside still
goes through the model's own validation.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)
# The slots every pydantic model instance has, set through their descriptors (the same as
# ``object.__setattr__`` on a frozen model, without looking the descriptor up each time).
_SET_DICT = BaseModel.__dict__["__dict__"].__set__
_SET_FIELDS_SET = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_SET_EXTRA = BaseModel.__dict__["__pydantic_extra__"].__set__
_SET_PRIVATE = BaseModel.__dict__["__pydantic_private__"].__set__


def trusted(cls: type[M], fields: dict[str, Any]) -> M:
    """``cls(**fields)`` for fields already of their types (``fields`` becomes the value's
    own: the caller hands it over and does not change it afterwards)."""
    return set_fields(cls.__new__(cls), fields, set(fields))


def set_fields(made: M, fields: dict[str, Any], fields_set: set[str]) -> M:
    """A model instance just made with ``__new__``, given its fields and the names set."""
    _SET_DICT(made, fields)
    _SET_FIELDS_SET(made, fields_set)
    _SET_EXTRA(made, None)
    _SET_PRIVATE(made, None)
    return made
