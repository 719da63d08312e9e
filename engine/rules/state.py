"""Game state as immutable values with canonical JSON (docs/design.md#state-snapshots-and-scale).

State is never mutated: every change builds a new value with ``model_copy(update=...)`` or a
constructor, so a cached snapshot stays valid and a refused operation can return the very
object it was given (all-or-nothing).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from functools import cache
from typing import Any, ClassVar, Literal, Self, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)
from pydantic.alias_generators import to_camel

from ..ruleset import Item
from .memo import IdentityMemo, remembered, reuse_ends
from .trusted import set_fields

STATE_FORMAT: Literal["gmtags-state/2"] = "gmtags-state/2"
# The formats an exported state may be written in. Format 1 spelled its keys snake_case and
# wrote every field; it loads as it is, because a state value reads its fields by their Python
# names as well as by their camelCase keys.
STATE_FORMATS = ("gmtags-state/1", STATE_FORMAT)


class StateModel(BaseModel):
    """A part of the state. Its JSON follows one rule (README.md "The JSON gmtags writes"):
    every key is the field's name in camelCase, the ruleset's spelling, and a field that holds
    its default is left out — except the fields a :class:`WritesAlways` model names, which a
    reader keys on (the state's ``format`` and ``encounter``, null out of a fight; a stack's
    ``item`` and ``coin``)."""

    model_config = ConfigDict(frozen=True, extra="forbid", alias_generator=to_camel,
                              validate_by_name=True, validate_by_alias=True,
                              serialize_by_alias=True)

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy with ``update`` applied, unvalidated: exactly pydantic's ``model_copy`` for a
        model without extra or private attributes, in one step (the fold makes a new stack,
        character and state this way for every change; pydantic's general copy took twice as
        long)."""
        if deep or not update:
            return super().model_copy(update=update, deep=deep)
        return set_fields(self.__class__.__new__(self.__class__), {**self.__dict__, **update},
                      self.__pydantic_fields_set__ | update.keys())

    def model_dump(self, *, by_alias: bool | None = True, exclude_defaults: bool = True,
                   **options: Any) -> dict[str, Any]:
        """The value as a dict by the state's one rule (camelCase keys, defaults left out)
        unless the caller asks otherwise."""
        return super().model_dump(by_alias=by_alias, exclude_defaults=exclude_defaults,
                                  **options)



class WritesAlways(StateModel):
    """A state value with fields written even when they hold their default (:attr:`ALWAYS`).
    Only the two models that have such fields serialise through Python code: every other
    state value is dumped by pydantic alone (a state dumps four times faster so)."""

    ALWAYS: ClassVar[tuple[str, ...]] = ()

    @model_serializer(mode="wrap")
    def _always_written(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The fields of :attr:`ALWAYS` put back where leaving out defaults took them out
        (not where a caller excluded them), in the order of the fields."""
        dumped: dict[str, Any] = handler(self)
        if not self.ALWAYS:
            return dumped
        back = {key: default for name, key, default in _always(type(self))
                if key not in dumped and getattr(self, name) == default}
        if not back:
            return dumped
        return {key: dumped[key] if key in dumped else back[key]
                for key in _keys(type(self)) if key in dumped or key in back}


@cache
def _always(model: type[WritesAlways]) -> tuple[tuple[str, str, Any], ...]:
    """(field name, JSON key, default) of each field a model always writes."""
    fields = model.model_fields
    return tuple((name, fields[name].alias or name, fields[name].default)
                 for name in model.ALWAYS)


@cache
def _keys(model: type[StateModel]) -> tuple[str, ...]:
    """A model's JSON keys in the order of its fields."""
    return tuple(field.alias or name for name, field in model.model_fields.items())


class Stack(WritesAlways):
    """One inventory line: a catalog item, a coin or a plain item, with per-stack state."""

    ALWAYS = ("item", "coin")  # what the stack is: a catalog item, a coin, or neither (null)

    name: str
    item: str | None = None  # catalog reference <catalog>/<entry>; identity, whatever the name
    coin: str | None = None  # coin id
    count: int = Field(ge=1)
    equipped: bool = False
    bound: bool = False
    charges: int | None = None
    toggled: bool = False
    # ITM-FAKE-9: a fake not yet found out shows as the item it passes for (its reference);
    # ``item`` keeps what it really is (ITM-FAKE-17). None: shown as what it is.
    shows_as: str | None = None
    suspected_by: tuple[str, ...] = ()  # ITM-INSP-4: who thinks it is a fake
    inspected_by: tuple[str, ...] = ()  # ITM-INSP-7: who has had their one look at it
    # ITM-CLIP-6/7: what a weapon with a clip holds loaded; None: never fired, so full
    loaded: int | None = Field(default=None, ge=0)

    @property
    def plain(self) -> bool:
        return self.item is None and self.coin is None

    def same_kind(self, other: Stack) -> bool:
        """Whether two stacks hold the same thing (they could merge, stack limits aside)."""
        if self.item is not None or other.item is not None:
            # ITM-FAKE-9: a fake passing for something never merges with one found out
            return self.item == other.item and self.shows_as == other.shows_as
        if self.coin is not None or other.coin is not None:
            return self.coin == other.coin
        return self.name.casefold() == other.name.casefold()

    @property
    def loose(self) -> bool:
        """A stack more of the same may merge into: not equipped, bound, switched on or charged."""
        return not (self.equipped or self.bound or self.toggled or self.charges is not None)


class StandingOrder(StateModel):
    """CMB-REACT-3/4: a hero's standing reaction — on the trigger ``on`` (``hit``, ``spell``,
    ``leave``) the engine uses the chosen entry ``use`` (its reference) by itself."""

    on: Literal["hit", "spell", "leave"]
    use: str  # the catalog entry's reference, <catalog>/<entry>


class Character(StateModel):
    name: str
    abilities: dict[str, int] = Field(default_factory=dict)
    skills: dict[str, Any] = Field(default_factory=dict)
    saves: dict[str, Any] = Field(default_factory=dict)
    fields: dict[str, Any] = Field(default_factory=dict)
    pools: dict[str, int] = Field(default_factory=dict)
    tracks: dict[str, int] = Field(default_factory=dict)  # points (health) or marks (wounds)
    conditions: tuple[str, ...] = ()
    bag: tuple[Stack, ...] = ()
    gear_taken: tuple[str, ...] = ()  # ITM-GEAR-11: starting-gear groups already taken
    entries: tuple[str, ...] = ()  # CHK-TAL-1, CHK-PAY-5: catalog entries the character chose
    reactions: tuple[StandingOrder, ...] = ()  # CMB-REACT-3: standing orders
    # D100-OVER-1: the points each pool's maximum has lost for good by pushing
    lost: dict[str, int] = Field(default_factory=dict)

    def most(self, pool: str, most: float) -> int:
        """D100-OVER-1: a pool's maximum ``most`` (as the sheet reads it) less what pushing
        past the limit has taken from it for good, never below 0."""
        return max(math.floor(most) - self.lost.get(pool, 0), 0)


class Taken(StateModel):
    """What the party bought today of a limited item (``seller`` None: the place's shelves) or
    of one seller's stock (ITM-DAY-9, ITM-DAY-11)."""

    item: str  # catalog reference
    seller: str | None = None
    count: int = Field(ge=1)


class Looked(StateModel):
    """ITM-INSP-7: one character's look at a seller's ware on this market day."""

    seller: str
    item: str  # the reference of the item the ware is offered as
    who: str


class Held(StateModel):
    """ITM-NOTICE-3/6: a buy a companion held on this market day; asked again, it goes
    through."""

    seller: str
    item: str  # the reference of the item the buy named
    who: str  # the buyer


class Place(StateModel):
    """Where the party is (ITM-PLACE-4) and the market day there (ITM-DAY-2..5).

    ``began`` is the position of the ``[place:]`` answer that began the day — (session,
    GM-reply, place tag of the reply), never the swipe — so every roll of the day is a pure
    function of the visible transcript (ITM-DAY-5, OQ-50). ``taken`` and ``paid_out`` are the
    day's ledger, rebuilt from the day's visible replies by the fold.
    """

    name: str
    size: str | None = None  # place size id; None: a place without a market (ITM-PLACE-2)
    day: int = 1
    began: tuple[int, ...] = ()
    taken: tuple[Taken, ...] = ()
    paid_out: int = Field(default=0, ge=0)  # ITM-DAY-17: in the purse family's smallest coin
    looked: tuple[Looked, ...] = ()  # ITM-INSP-7: wares inspected today
    held: tuple[Held, ...] = ()  # ITM-NOTICE-6: buys held today


class JournalEntry(StateModel):
    turn: str
    text: str


class InventedItem(StateModel):
    """An item the GM invented in the ruleset's terms (ITM-PROP-20): its name is that item for
    the rest of the game; ``ref`` is what stacks of it carry in ``Stack.item``."""

    name: str
    ref: str  # "invented/<n>": never a catalog reference (catalog ids have no such catalog)
    item: Item
    summary: str | None = None
    changes: tuple[str, ...] = ()  # ITM-PROP-19: what was inferred and changed, for the player


class FightCondition(StateModel):
    """A condition a combatant bears in the fight, with how it ends (CMB-COND-3..6): ``rounds`` left
    (None: until removed or saved), and the ``save`` (a save or ability id) it makes at the end of
    each of its turns against ``dc``, fixed when it was applied (CMB-COND-4). The state shows only
    what is set: ``{"name": "prone", "rounds": 2}``."""

    name: str  # the ruleset condition's id
    rounds: int | None = Field(default=None, ge=1)
    save: str | None = None
    dc: int | None = None
    by: str | None = None  # CMB-SUS-2/7: the sustainer whose sustained ability applied it


class FoeUse(StateModel):
    """CMB-ABIL-4/5, CMB-TPL-8: one of a foe's own abilities, its numbers worked out when it
    joined: ``toHit`` (an attack) or ``save`` and ``dc`` (a save ability, ``onSuccess``),
    ``damage`` as worked, ``left`` uses this fight (None: no limit)."""

    id: str
    label: str
    to_hit: int | None = None
    save: str | None = None
    dc: int | None = None
    on_success: str | None = None
    damage: str | None = None
    damage_type: str | None = None
    targets: int = 1
    left: int | None = None
    spell: bool | None = None  # CMB-REACT-4: a spell (None: not one)


class Combatant(StateModel):
    """One combatant of an encounter (docs/design.md#combat-state). A foe's numbers are fixed when
    it joins (CMB-TPL-8); a hero's hit points stay in its own health pool or track."""

    name: str
    side: Literal["party", "foes"]
    initiative: int
    joined: int = Field(ge=0)  # join order: CMB-TURN-A1, OQ-CMB-7 a breaks other ties
    hp: int | None = Field(default=None, ge=0)
    hp_max: int | None = Field(default=None, ge=0)
    defence: int | None = None
    attack: int | None = None
    damage: str | None = None  # the template's damage formula as written
    role: str | None = None
    tier: int | None = None
    modifier: int | None = None  # a foe's ability modifier (its template's defaults.attribute)
    attacks: int | None = Field(default=None, ge=0)  # a foe's attacks a round; None: one
    loot: str | None = None  # the loot table a felled foe drops (ITM-LOOT-11, CMB-TPL-8)
    damage_type: str | None = None  # a foe's strikes' damage type (CMB-TYPE-1, CMB-TPL-8)
    types: tuple[str, ...] = ()  # ITM-PLUS-4: a foe's creature types, from its template
    tags: tuple[str, ...] = ()  # ITM-PLUS-4: a foe's tags, from its template
    # what op="condition" applied in this fight; a hero's names are on its sheet too
    conditions: tuple[FightCondition, ...] = ()
    spent: tuple[str, ...] = ()  # the budget each of its attacks this round spent (CMB-TURN-9)
    # ITM-OFF-3: the weapon (its stack's name) each of a hero's strikes this round was made with
    wielded: tuple[str, ...] = ()
    # what a hero sustains (CMB-SUS-2: the entry's reference), the round of its last reaction
    # (CMB-REACT-2: one a round) and the defence that reaction added for the rest of that round
    # (CMB-REACT-7), and the turn actions granted it this round (CMB-TURN-17), one entry per extra
    # use
    sustains: str | None = None
    reacted: int | None = None
    guard: int = 0
    granted: tuple[str, ...] = ()
    # pool fights (engine/rules/fight/pool.py): the hardness read as it joined (ITM-HARD-1) and a
    # foe's damage reduction (its template's ``reduction``)
    hardness: int = 0
    reduction: int = 0
    # the spending style's number (engine/rules/fight/pool.py): the initiative it joined with, which
    # its number falls back to after a spending strike, and what the number rises by each round
    # (``combat.pool.gain``, fixed as it joins); None/0 outside it
    base: int | None = None
    gain: int = Field(default=0, ge=0)
    # narrative fights only (left out of the state elsewhere): the rank letter (D100-RANK-1) and the
    # risk graded on its latest attack (D100-DMG-3)
    rank: str | None = None
    risk: str | None = None
    # a foe's own abilities and its regeneration (CMB-ABIL-4/7, CMB-TPL-8)
    abilities: tuple[FoeUse, ...] = ()
    regenerate: int | None = None
    stopped_by: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _hero_without_foe_fields(self) -> Self:
        """A hero carries none of a foe's numbers: its hit points stay in its own health pool
        or track (so its JSON never has a foe-only key, not even as null)."""
        if self.side == "party":
            given = [name for name in FOE_ONLY
                     if getattr(self, name) != type(self).model_fields[name].default]
            if given:
                raise ValueError(f"a hero has no {', '.join(given)} (foe-only fields)")
        return self


# The fields of a Combatant that only a foe has: its numbers fixed as it joins (CMB-TPL-8).
FOE_ONLY = ("hp", "hp_max", "defence", "attack", "damage", "role", "tier", "modifier",
            "attacks", "loot", "damage_type", "types", "tags", "reduction", "abilities",
            "regenerate", "stopped_by")


class Announced(StateModel):
    """D100-DEF-1, D100-PARTY-3: a foe's strike announced in ``round``, landing in the next
    round after every hero has acted unless the foe is down by then; the grades the GM gave
    it, kept until it lands."""

    foe: str
    target: str
    round: int = Field(ge=0)
    tactics: str = "standard"
    risk: str = "moderate"
    aim: str = "standard"
    purpose: str = "kill"
    undodgeable: bool = False
    technique: str | None = None  # D100-DEF-8: the foe's own technique, by id


class Bleeding(StateModel):
    """D100-PARTY-7, D100-OVER-1: a hero downed in a narrative fight, bleeding out since ``since``
    (the round it was first seen down); ``stanched`` once bare hands stopped the bleeding, ``died``
    once its clock ran out."""

    who: str
    since: int = Field(ge=0)
    stanched: bool = False
    died: bool = False


class Defence(StateModel):
    """D100-DEF-2/3/6: how a combatant meets the strikes of ``round`` — its one d100 of the
    round (``roll``), how many strikes it has met, and for a step-in the ally it shields
    (D100-PARTY-6)."""

    who: str
    how: str
    round: int = Field(ge=0)
    roll: int = Field(ge=1, le=100)
    met: int = Field(default=0, ge=0)
    shields: str | None = None


class Shot(StateModel):
    """ITM-AMMO-5/6: what one hero shot in this fight from one stack of ammunition, kept so a
    won fight gives back exactly ``recover`` of it, rounded down once per stack. The stack is
    the ``stack``-th of its kind in the bag since the fight began (stacks used up count, they
    were the first ones); ``emptied``: it was used up and left the bag (OQ-29)."""

    who: str
    item: str | None  # the stack's catalog reference (None: a plain item)
    name: str
    stack: int = Field(ge=0)
    count: int = Field(ge=1)
    recover: float = Field(ge=0, le=1)
    emptied: bool = False


class Encounter(StateModel):
    """The fight on now (docs/design.md#combat-state): its round, and its combatants in initiative
    order. ``turn`` is the turn key of the reply that was the latest round, so a reply's attacks
    count one round however many there are."""

    round: int = Field(default=0, ge=0)
    kind: Literal["formula", "narrative", "outcome"] = "formula"
    combatants: tuple[Combatant, ...] = ()
    turn: tuple[int, ...] = ()
    shots: tuple[Shot, ...] = ()  # ITM-AMMO-5/6: what the heroes shot, per stack
    # narrative fights (D100-MOM-1, D100-DEF-1..3): each side's momentum, the foes' announced
    # strikes, and the defences declared this round
    momentum: dict[str, int] | None = None
    announced: tuple[Announced, ...] = ()
    defences: tuple[Defence, ...] = ()
    struck: tuple[str, ...] = ()  # D100-PARTY-8: whom the heroes struck this round, in order
    bleeding: tuple[Bleeding, ...] = ()  # D100-PARTY-7: the downed heroes' bleeding-out clocks

    def find(self, name: str | None) -> int | None:
        """The combatant a name names (any case), or None."""
        wanted = (name or "").strip().casefold()
        for index, combatant in enumerate(self.combatants):
            if combatant.name.casefold() == wanted:
                return index
        return None


class Spoil(StateModel):
    """D100-PARTY-10: one named item of a won narrative fight's loot record, and who of the victors
    wants it or passes on it so far."""

    name: str
    item: str | None = None  # catalog reference (None: a plain item)
    stack_limit: int = Field(default=1, ge=1)
    count: int = Field(ge=1)
    want: tuple[str, ...] = ()
    passed: tuple[str, ...] = ()


class Spoils(StateModel):
    """D100-PARTY-10: the latest won narrative fight — the reply that won it (``turn``), the heroes
    standing then (who share its coins and settle its loot record) and the named items waiting for
    their ``want``/``pass``."""

    turn: tuple[int, ...]
    heroes: tuple[str, ...]
    items: tuple[Spoil, ...] = ()


class State(WritesAlways):
    """Everything a game has built up: the party, where it is, and the journal."""

    # a reader tells an exported state by its format, and whether a fight is on by encounter
    ALWAYS = ("format", "encounter")

    format: Literal["gmtags-state/2"] = STATE_FORMAT
    seed: str
    player: str
    dice: Literal["per-turn", "per-swipe"] = "per-turn"
    layers: tuple[str, ...] = ()  # the ruleset layers this game plays with
    characters: tuple[Character, ...]
    place: Place | None = None
    journal: tuple[JournalEntry, ...] = ()
    invented: tuple[InventedItem, ...] = ()  # ITM-PROP-20/21, by name
    encounter: Encounter | None = None  # the fight on now; None out of a fight
    spoils: Spoils | None = None  # D100-PARTY-10: a won narrative fight's loot record

    @model_validator(mode="before")
    @classmethod
    def _read_older_format(cls, document: Any) -> Any:
        """An exported state of an earlier format loads as this one: its keys are the fields'
        Python names, which a state value also reads, so only ``format`` changes."""
        if isinstance(document, dict) and document.get("format") in STATE_FORMATS:
            return {**document, "format": STATE_FORMAT}
        return document

    def character_index(self, name: str | None) -> int | None:
        """The character a ``who=`` names (any case), or the player's without a name."""
        wanted = (name or self.player).strip().casefold()
        for index, character in enumerate(self.characters):
            if character.name.casefold() == wanted:
                return index
        return None

    def with_character(self, index: int, character: Character) -> State:
        characters = list(self.characters)
        characters[index] = character
        return self.model_copy(update={"characters": tuple(characters)})

    def with_bag(self, index: int, bag: tuple[Stack, ...]) -> State:
        """The state with character ``index`` holding ``bag`` instead of their own."""
        return self.with_character(index, self.characters[index].model_copy(update={"bag": bag}))

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    def canonical(self) -> str:
        """Canonical JSON: sorted keys, no whitespace, UTF-8 kept (hashable for snapshots).

        Exactly :func:`plain_canonical` of this state, built from the remembered JSON of the
        parts it shares with states serialised before (see :func:`canonical_fragment`)."""
        return canonical_fragment(self)


# What json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False) builds for
# every call, built once.
_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _dumps(value: object) -> str:
    """One JSON value the canonical way: sorted keys, no whitespace, UTF-8 kept."""
    return _ENCODER.encode(value)


@cache
def _key(key: str) -> str:
    """A field's JSON key as written in an object (the models' own keys: a few dozen)."""
    return _dumps(key) + ":"


def plain_canonical(state: State) -> str:
    """The canonical JSON of a state serialised whole (what :meth:`State.canonical` equals)."""
    return _dumps(state.to_json())


# A new state shares almost all of its stacks, characters and journal entries with the state before
# it, so the canonical JSON of each small state value (a stack, a journal entry) is remembered by
# identity and a new state serialises only what changed (a state of 500 stacks took ~3.6 ms whole).
# Texts longer than MAX_REMEMBERED_TEXT (a character with its bag, a whole state) are joined again
# from the remembered ones each time, so what is kept stays small: at most canonical_fragment's
# bound of short texts, each with the value it belongs to, and at most FRAGMENT_BYTES of them (a
# character's text grows with its bag, so a bound by number alone let a long-running stage's memory
# grow with its chats).
MAX_REMEMBERED_TEXT = 4096
FRAGMENT_BYTES = 2 << 20
FRAGMENT_OVERHEAD = 256  # bytes an entry costs besides its text: the str, tuples, dict slot


def _fragment_cost(text: str) -> int:
    """What remembering a fragment costs; a text longer than MAX_REMEMBERED_TEXT costs more
    than all of them may, so it is never remembered."""
    if len(text) > MAX_REMEMBERED_TEXT:
        return FRAGMENT_BYTES + 1
    return len(text) + FRAGMENT_OVERHEAD


# The last tuple serialised that began with a given value, with its values' texts (all short
# ones): a bag or the journal changes a few values in place or at the end, so a new tuple
# reuses the texts of the values it shares at both ends with the last one (found by
# identity, in C loops).
_LAST: IdentityMemo[tuple[tuple[StateModel, ...], list[str]]] = IdentityMemo(1 << 8)


@remembered(1 << 14, weigh=_fragment_cost, most=FRAGMENT_BYTES)
def canonical_fragment(model: StateModel) -> str:
    """A state value's canonical JSON: its own fields dumped, its state-value fields (and
    tuples of them) joined from their remembered fragments. Keys sort as ``json.dumps`` sorts
    them, and a nested value dumps to the same text on its own as inside its parent, so the
    text is exactly the whole value's ``json.dumps``."""
    parts: dict[str, str] = {}  # by JSON key
    nested: set[str] = set()  # by field name
    for name, key in _nesting_fields(type(model)):
        value = getattr(model, name)
        if isinstance(value, StateModel):
            parts[key] = canonical_fragment(value)
        elif isinstance(value, tuple) and value:
            parts[key] = _tuple_fragment(value)
        else:
            continue
        nested.add(name)
    if not parts:  # nothing nested (a stack, a journal entry, a character without a bag)
        text = _dumps(model.model_dump(mode="json"))
    else:
        own = model.model_dump(mode="json", exclude=nested)
        # what the model always writes (State's ``encounter``) may stand in ``own`` as well
        parts.update((key, _dumps(value)) for key, value in own.items() if key not in parts)
        text = "{" + ",".join(_key(key) + parts[key] for key in sorted(parts)) + "}"
    return text


@cache
def _nesting_fields(model: type[StateModel]) -> tuple[tuple[str, str], ...]:
    """The fields of a state model that hold a state value or a tuple of them, by their
    declared types (``place: Place | None``, ``bag: tuple[Stack, ...]``): (name, JSON key)."""
    return tuple((name, field.alias or name) for name, field in model.model_fields.items()
                 if _holds_state_values(field.annotation))


def _holds_state_values(annotation: object) -> bool:
    if isinstance(annotation, type) and issubclass(annotation, StateModel):
        return True
    return any(_holds_state_values(arg) for arg in get_args(annotation))


def _tuple_fragment(values: tuple[StateModel, ...]) -> str:
    """The canonical JSON array of a non-empty tuple of state values (see
    :func:`canonical_fragment`)."""
    last = _LAST.get((values[0],))
    if last is None:
        texts = [canonical_fragment(v) for v in values]
    else:
        texts = reuse_ends(*last, values, canonical_fragment)
    if max(map(len, texts)) <= MAX_REMEMBERED_TEXT:  # only texts remembered anyway are kept
        _LAST.put((values[0],), (values, texts))
    return "[" + ",".join(texts) + "]"
