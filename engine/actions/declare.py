"""An action declared once: its typed request, its handler, its reason codes, the GM line that
teaches it, and the record fields its answer carries (docs/design.md#actions-one-declaration-each).

Everything else is derived from the declarations: the dispatch table and the ignored-attribute
notes (:mod:`engine.actions.reply`), the standard refusals (missing attribute, bad count, unknown
character: one reader each, here), the GM instructions, the JSON Schema of requests and
``docs/tags.md`` (:mod:`engine.text.reference`).

A request is a frozen dataclass whose fields name the attributes it reads; each field's
:class:`Attr` says how the attribute is read (its :class:`Reader`), its default, its aliases and
what it means. Reading a tag into a request either gives the request or the refusal of the first
attribute that cannot be read, in the order the fields are declared.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeAlias, TypeVar

from tagparse import Tag

from ..rules import reasons
from ..rules.context import TurnContext
from ..rules.game import Game
from ..rules.state import State
from .answers import Answer, refused
from .examples import Party

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)
R = TypeVar("R", bound="Request")


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why an attribute cannot be read: a reason code and the sentence the GM is told;
    ``notes``, what the attributes read before it were read as (:class:`Read`)."""

    reason: str
    text: str
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Read(Generic[T_co]):
    """A value a reader read as a person reads what was written, not as it stands (
    ``who="Bram"`` is Bram the Quiet, ``dc="DC 10"`` is 10). The request holds ``value``; the
    answer's notes say ``read who="Bram" as Bram the Quiet`` — ``shown`` is how the value is
    named there, ``written`` what was read so when not the attribute as written."""

    value: T_co
    shown: str
    written: str | None = None

    def note(self, name: str, raw: Any) -> str:
        """The note on the answer: what attribute ``name`` held, and what it was read as."""
        written = self.written if self.written is not None else str(raw).strip()
        return f'read {name}="{_cut(written)}" as {_cut(self.shown, 80)}'


def _cut(text: str, most: int = 40) -> str:
    """Written text cut short for a note."""
    return text if len(text) <= most else text[:most - 1] + "…"


Reading: TypeAlias = T | Refusal | Read[T]
"""What a reader gives: the value, the refusal of the attribute, or the value read as meant."""


@dataclass(frozen=True, slots=True)
class Reader(Generic[T]):
    """How one kind of attribute value is read: ``read(raw, game, state)`` gives the value, a
    :class:`Refusal`, or a :class:`Read` (the value as a person reads it, noted on the
    answer); ``raw`` is the attribute as written (None when absent). ``schema`` is the JSON
    Schema of the attribute's text and ``kind`` names it in ``docs/tags.md``. A ``json``
    reader reads a host event's payload value as it is, which a tag never has.

    ``settle(value, values, game, state)``, when set, reads the value a second time once every
    attribute of the request is read (``values``, by field name): what an item name means
    depends on whose bag ``who=`` names. It gives what ``read`` gives."""

    kind: str
    read: Callable[[Any, Game, State], Reading[T]]
    schema: Mapping[str, Any]
    reasons: tuple[str, ...] = ()
    json: bool = False  # a host event's JSON value (a number, a list), not a tag's text
    absent: Any = None  # what ``read`` gives for an absent attribute, when that is fixed
    fixed_absent: bool = False  # whether ``absent`` is that value (else ``read`` is asked)
    settle: Callable[[T, Mapping[str, Any], Game, State], Reading[T]] | None = None


@dataclass(frozen=True, slots=True)
class Attr:
    """One attribute a request reads."""

    reader: Reader[Any]
    help: str
    aliases: tuple[str, ...] = ()
    name: str = ""  # the attribute's name in a tag (the field's, unless a Python word)
    missing: str | None = None  # when set, the attribute is required: this sentence refuses
    default: str | None = None  # the default as docs/tags.md shows it


def attr(reader: Reader[T], help: str, *, default: T | None = None,
         aliases: tuple[str, ...] = (), missing: str | None = None,
         shown: str | None = None, name: str = "") -> T:
    """Declare a request field: read with ``reader``; ``missing`` makes it required (refused
    ``missing-attribute`` with that sentence when absent or empty); ``shown`` is the default
    as the reference shows it (the field's default when not given); ``name`` is the tag's
    attribute name where the field's cannot be it (``with``)."""
    meta = Attr(reader, help, aliases=aliases, missing=missing, name=name,
                default=shown if shown is not None else (None if default is None
                                                         else str(default)))
    return typing.cast(T, field(default=default, metadata={"attr": meta}))


@dataclass(frozen=True, slots=True)
class Request:
    """A tag (or host event) read into typed values. ``tag`` is the tag answered: answers name
    it; handlers read the request's fields, never the tag's attributes. ``notes`` say which
    attributes were read as a person reads them (:class:`Read`); the answer carries them."""

    tag: Tag
    notes: tuple[str, ...] = field(default=(), kw_only=True)
    declared: ClassVar[tuple[tuple[str, Attr], ...]] = ()  # (field name, how it is read)
    settled: ClassVar[tuple[tuple[str, Attr], ...]] = ()  # those read again (Reader.settle)


def _fields(request: type[Request]) -> tuple[tuple[str, Attr], ...]:
    hints = typing.get_type_hints(request)
    found = []
    for one in dataclasses.fields(request):
        meta = one.metadata.get("attr")
        if meta is None:
            if one.name not in ("tag", "notes"):
                raise TypeError(f"{request.__name__}.{one.name} is not declared with attr()")
            continue
        if one.name not in hints:
            raise TypeError(f"{request.__name__}.{one.name} has no type")
        found.append((one.name, dataclasses.replace(meta, name=meta.name or one.name)))
    return tuple(found)


def request(cls: type[R]) -> type[R]:
    """Make ``cls`` a request: a frozen dataclass whose fields are read by their :func:`attr`."""
    made = dataclass(frozen=True, slots=True)(cls)
    made.declared = _fields(made)
    made.settled = tuple((name, meta) for name, meta in made.declared
                         if meta.reader.settle is not None)
    return made


def _written(tag: Tag) -> dict[str, str]:
    """The tag's attributes by name, the first of a repeated name (as ``Tag.get`` reads)."""
    pairs = tag.attrs
    written = dict(pairs)
    if len(written) != len(pairs):  # a built tag may repeat a name; a read one never does
        written = {}
        for name, value in pairs:
            written.setdefault(name, value)
    return written


def _raw(written: Mapping[str, str], meta: Attr) -> str | None:
    """The attribute as written; an alias stands in where the name is absent or empty."""
    value = written.get(meta.name)
    for alias in meta.aliases:
        if value is not None and value.strip():
            break
        value = written.get(alias, value)
    return value


def _refusal(refusal: Refusal, notes: list[str]) -> Refusal:
    """A refusal with the notes of the attributes read before it."""
    return dataclasses.replace(refusal, notes=(*notes, *refusal.notes)) if notes else refusal


def read_request(kind: type[R], tag: Tag, game: Game, state: State,
                 payload: Mapping[str, Any] | None = None) -> R | Refusal:
    """The tag read into ``kind``, or the refusal of its first attribute that cannot be read;
    then each value a reader settles (:attr:`Reader.settle`), in the order declared. Every
    value read as meant (:class:`Read`) is noted on the request, or on the refusal.
    ``payload`` is a host event's JSON, for the request's ``json`` readers."""
    values: dict[str, Any] = {"tag": tag}
    notes: list[str] = []
    written = _written(tag)
    for name, meta in kind.declared:
        reader = meta.reader
        if reader.json:
            raw: Any = payload.get(meta.name) if payload is not None else None
        elif meta.aliases:
            raw = _raw(written, meta)
        else:
            raw = written.get(meta.name)
        if raw is None:
            if meta.missing is not None:
                return _refusal(Refusal(reasons.MISSING_ATTRIBUTE, meta.missing), notes)
            if reader.fixed_absent:  # most attributes of most tags
                values[name] = reader.absent
                continue
        elif meta.missing is not None and not str(raw).strip():
            return _refusal(Refusal(reasons.MISSING_ATTRIBUTE, meta.missing), notes)
        value = reader.read(raw, game, state)
        if isinstance(value, Read):
            notes.append(value.note(meta.name, raw))
            value = value.value
        elif isinstance(value, Refusal):
            return _refusal(value, notes)
        values[name] = value
    for name, meta in kind.settled:
        settle = meta.reader.settle
        assert settle is not None
        value = settle(values[name], values, game, state)
        if isinstance(value, Read):
            notes.append(value.note(meta.name, values[name]))
            value = value.value
        elif isinstance(value, Refusal):
            return _refusal(value, notes)
        values[name] = value
    return kind(**values, notes=tuple(notes)) if notes else kind(**values)


@dataclass(frozen=True, slots=True)
class Needs:
    """What the ruleset must have for an action to exist: without it the action is refused
    with ``reason`` and ``text``, and the GM is not taught it."""

    test: Callable[[Game], bool]
    reason: str
    text: str


Handler = Callable[[Game, State, Any, TurnContext], tuple[State, Answer]]
Teach = Callable[[Game, Party], Sequence[str]]
"""The GM instruction lines of an action: each shows a real tag of this ruleset, filled with the
party's names (:mod:`engine.actions.examples`)."""


@dataclass(frozen=True, slots=True)
class ByRuleset:
    """The requests of an action that reads other attributes under other rulesets
    (``[attack:]`` reads what its kind of combat grades): ``of(game)`` names the request a
    game reads in ``requests``; names sharing one request share it."""

    of: Callable[[Game], str]
    requests: Mapping[str, type[Request]]


FIRST, ROUND, LAST = "first", "round", "last"
PHASES = (FIRST, ROUND, LAST)
"""When in a reply an action is applied (docs/design.md#rounds-and-order): ``first`` before the
round's acts (a fight's start, who joins, a condition, a defence), ``round`` among them in the
round's order (a strike, and what acts in the round like one: a reload, leaving), ``last`` after
every other tag (the fight's end)."""


@dataclass(frozen=True, slots=True)
class Action:
    """One declared (tag kind, action): read its request, then run its handler."""

    kind: str
    name: str | None
    request: type[Request]
    handler: Handler
    reasons: tuple[str, ...]
    teach: Teach | None
    record: Mapping[str, str]
    needs: Needs | None
    summary: str
    phase: str | None = None
    """When in a reply the action is applied (:data:`PHASES`); None: with every other tag, in
    text order."""
    by_ruleset: ByRuleset | None = None
    """The request each ruleset reads, where they differ; None: :attr:`request` for all."""

    @property
    def key(self) -> tuple[str, str | None]:
        return (self.kind, self.name)

    def request_of(self, game: Game) -> type[Request]:
        """The request ``game``'s ruleset reads the action's tag into."""
        if self.by_ruleset is None:
            return self.request
        return self.by_ruleset.requests[self.by_ruleset.of(game)]

    def requests(self) -> tuple[tuple[tuple[str, ...], type[Request]], ...]:
        """Each request the action reads, with the names (:attr:`ByRuleset.requests`) of the
        rulesets that read it; one request read by all: no names."""
        if self.by_ruleset is None:
            return (((), self.request),)
        named: dict[type[Request], list[str]] = {}
        for name, one in self.by_ruleset.requests.items():
            named.setdefault(one, []).append(name)
        return tuple((tuple(names), one) for one, names in named.items())

    def reads(self, request: type[Request] | None = None) -> frozenset[str]:
        """Every attribute name ``request`` (the action's own when None) reads, aliases
        included."""
        declared = (request or self.request).declared
        names = {meta.name for _, meta in declared}
        names.update(alias for _, meta in declared for alias in meta.aliases)
        return frozenset(names)

    def every_reason(self) -> tuple[str, ...]:
        """The reason codes this action can answer with: its needs, its readers' (under any
        ruleset), its own."""
        found: list[str] = []
        if self.needs is not None:
            found.append(self.needs.reason)
        for _, request in self.requests():
            for _, meta in request.declared:
                if meta.missing is not None:
                    found.append(reasons.MISSING_ATTRIBUTE)
                found.extend(meta.reader.reasons)
        found.extend(self.reasons)
        return tuple(dict.fromkeys(found))

    def answer(self, game: Game, state: State, tag: Tag, ctx: TurnContext,
               payload: Mapping[str, Any] | None = None) -> tuple[State, Answer]:
        """Refuse what the ruleset lacks or an attribute that cannot be read; else handle.
        ``payload``: a host event's JSON (its ``tag`` holds the event's simple values)."""
        if self.needs is not None and not self.needs.test(game):
            return state, refused(tag, self.needs.reason, self.needs.text)
        parsed = read_request(self.request_of(game), tag, game, state, payload)
        if isinstance(parsed, Refusal):
            return state, refused(tag, parsed.reason, parsed.text, notes=parsed.notes)
        new_state, answer = self.handler(game, state, parsed, ctx)
        if parsed.notes:  # what the request's attributes were read as comes first
            answer = answer.model_copy(update={"notes": (*parsed.notes, *answer.notes)})
        return new_state, answer


def action(kind: str, name: str | None, request: type[R], *,
           reasons: tuple[str, ...] = (), teach: Teach | None = None,
           record: Mapping[str, str] | None = None,
           needs: Needs | None = None, phase: str | None = None,
           by_ruleset: ByRuleset | None = None) -> Callable[[Callable[[Game, State, R, TurnContext],
                                                           tuple[State, Answer]]], Action]:
    """Declare ``handler`` as the answer to ``[kind: action=name ...]`` (``name`` None for a
    tag kind without actions, such as ``[loot:]``), applied in the reply's ``phase``; where
    rulesets read other attributes, ``by_ruleset`` gives each its request."""
    if phase is not None and phase not in PHASES:
        raise ValueError(f"phase={phase!r} is none of {', '.join(PHASES)}")
    def declare(handler: Callable[[Game, State, R, TurnContext],
                                  tuple[State, Answer]]) -> Action:
        doc = (request.__doc__ or "").strip()
        return Action(kind, name, request, handler, tuple(reasons), teach,
                      dict(record or {}), needs, doc, phase, by_ruleset)
    return declare


def table(*declared: Action) -> dict[tuple[str, str | None], Action]:
    """The dispatch table of ``declared``; a key declared twice is a mistake."""
    found: dict[tuple[str, str | None], Action] = {}
    for one in declared:
        if one.key in found:
            raise ValueError(f"{one.key} is declared twice")
        found[one.key] = one
    return found


def as_event(declared: Action, handler: Handler | None = None) -> Action:
    """The host event of the same name and attributes as a GM action (the player's Remove,
    Give, Equip...): the same request, reasons and record, ``handler`` where the player's
    differs from the GM's."""
    return Action("event", declared.name, declared.request, handler or declared.handler,
                  declared.reasons, None, declared.record, declared.needs, declared.summary)
