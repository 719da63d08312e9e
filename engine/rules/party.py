"""The start state of a game: a party file, or a state exported at the end of a session."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..ruleset.abilities import ability_of
from ..ruleset.pointers import did_you_mean
from ..ruleset.problems import Problem, RulesetError, from_validation_error, pointer
from ..ruleset.sheet import Skill
from .abilities import entry_of
from .bags import Thing, add_to_bag, find_thing
from .game import DEFAULT_STACK, Game
from .session import start_session
from .sheet import SheetView
from .state import STATE_FORMATS, Character, Stack, StandingOrder, State
from .tracks import track_max


class PartyError(RulesetError):
    """A party (or exported state) that does not fit the ruleset; lists every problem."""


class _PartyModel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class PartyStack(_PartyModel):
    item: str | None = None
    coin: str | None = None
    name: str | None = Field(default=None, min_length=1, max_length=200)
    count: int = Field(default=1, ge=1, le=1_000_000)
    equipped: bool = False
    bound: bool = False


class PartyReaction(_PartyModel):
    """CMB-REACT-3: a standing order: on ``on``, use the chosen entry ``use``."""

    on: Literal["hit", "spell", "leave"]
    use: str = Field(min_length=1, max_length=200)


class PartyCharacter(_PartyModel):
    name: str = Field(min_length=1, max_length=80)
    abilities: dict[str, int] = Field(default_factory=dict)
    skills: dict[str, Any] = Field(default_factory=dict)
    saves: dict[str, Any] = Field(default_factory=dict)
    fields: dict[str, Any] = Field(default_factory=dict)
    pools: dict[str, int] = Field(default_factory=dict)
    tracks: dict[str, int] = Field(default_factory=dict)  # health points or wound marks
    conditions: list[str] = Field(default_factory=list)
    bag: list[PartyStack] = Field(default_factory=list, max_length=500)
    entries: list[str] = Field(default_factory=list, max_length=200)  # CHK-TAL-1: chosen refs
    reactions: list[PartyReaction] = Field(default_factory=list, max_length=3)  # CMB-REACT-3


class Party(_PartyModel):
    seed: str = Field(min_length=1, max_length=200)
    player: str | None = None
    dice: Literal["per-turn", "per-swipe"] = "per-turn"
    layers: list[str] = Field(default_factory=list, max_length=24)
    characters: list[PartyCharacter] = Field(min_length=1, max_length=24)


def _bag(game: Game, character: PartyCharacter, index: int) -> tuple[tuple[Stack, ...],
                                                                      list[Problem]]:
    problems: list[Problem] = []
    bag: tuple[Stack, ...] = ()
    for s_index, entry in enumerate(character.bag):
        where = ("characters", index, "bag", s_index)
        given = [k for k in ("item", "coin", "name") if getattr(entry, k) is not None]
        if len(given) != 1:
            problems.append(Problem(pointer(*where), "a bag line names one of item, coin, name"))
            continue
        if entry.item is not None:
            found = game.items.get(entry.item) or game.find_item(entry.item)
            if found is None:
                problems.append(Problem(pointer(*where, "item"),
                                        _missing("item", entry.item, game.items)))
                continue
            if found.item.service:
                problems.append(Problem(pointer(*where, "item"),
                                        f'"{found.label}" is a service and never in a bag'))
                continue
            thing = Thing(found.label, found.ref, None, found.stack_limit)
        elif entry.coin is not None:
            info = game.coins.get(entry.coin)
            if info is None:
                problems.append(Problem(pointer(*where, "coin"),
                                        _missing("coin", entry.coin, game.coins)))
                continue
            thing = Thing(info.coin.label, None, entry.coin, DEFAULT_STACK)
        else:
            # ITM-NAME-1: a plain name that is a catalog label is that item.
            thing = find_thing(game, entry.name or "") or Thing(entry.name or "", None, None,
                                                                DEFAULT_STACK)
        if entry.equipped or entry.bound:
            # An equipped or bound line is one item in a stack of its own (ITM-STACK-2).
            one = thing.stack(1).model_copy(update={"equipped": entry.equipped,
                                                    "bound": entry.bound})
            bag = bag + (one,) * entry.count
            continue
        grown = add_to_bag(bag, thing, entry.count)
        if grown is None:
            problems.append(Problem(pointer(*where, "count"), "more stacks than a bag takes"))
            continue
        bag = grown
    return bag, problems


def _entry_problems(game: Game, entries: Sequence[str], index: int) -> list[Problem]:
    """CHK-TAL-1, CHK-PAY-5: a chosen entry is a ``<catalog>/<entry>`` the ruleset lists."""
    known = {f"{c.id}/{e.id}" for c in game.ruleset.catalogs for e in c.entries}
    return [Problem(pointer("characters", index, "entries", e_index),
                    _missing("catalog entry", ref, known))
            for e_index, ref in enumerate(entries) if ref not in known]


def _entry_ref(game: Game, named: str) -> str:
    """A standing order's ``use``: an entry's reference, or its label or id (any case) read as
    the reference of the first entry of that name; as written when nothing has it."""
    wanted = named.strip().casefold()
    for catalog in game.ruleset.catalogs:
        for entry in catalog.entries:
            ref = f"{catalog.id}/{entry.id}"
            if wanted in (ref.casefold(), entry.id.casefold(), entry.label.casefold()):
                return ref
    return named


def _reaction_problems(game: Game, character: Character, index: int) -> list[Problem]:
    """CMB-REACT-3/4: a standing order names an entry the character chose that is a reaction
    to that trigger."""
    problems = []
    for r_index, order in enumerate(character.reactions):
        where = pointer("characters", index, "reactions", r_index, "use")
        found = entry_of(game, order.use)
        ability = ability_of(found.mechanics) if found is not None else None
        if order.use not in character.entries:
            problems.append(Problem(where, f'"{order.use}" is no entry {character.name} chose'))
        elif ability is None or ability.react is None or ability.react.on != order.on:
            problems.append(Problem(where, f'"{order.use}" is no reaction to "{order.on}" '
                                    "(its mechanics give no react.on of that trigger)"))
    return problems


def _track_problems(game: Game, character: Character, index: int) -> list[Problem]:
    """A character's tracks name the ruleset's tracks and sit within ``0..max`` (a health
    track's points, a wound track's marks): refused, not clamped, so a typo in a party file
    is found at load rather than healed or wounded away in play."""
    tracks = {t.id: t for t in game.ruleset.live.tracks}
    problems = []
    for ident, value in character.tracks.items():
        where = pointer("characters", index, "tracks", ident)
        track = tracks.get(ident)
        if track is None:
            problems.append(Problem(where, _missing("track", ident, tracks)))
            continue
        most = track_max(game, character, None, track)
        if not 0 <= value <= most:
            what = "points" if track.kind == "health" else "marks"
            problems.append(Problem(where, f"{value} {what} is outside {track.label}'s 0..{most}"))
    return problems


def _missing(kind: str, name: str, known: Iterable[str]) -> str:
    """``no skill "sneek" in the ruleset (did you mean "sneak"?)``."""
    return f'no {kind} "{name}" in the ruleset{did_you_mean(name, known)}'


def _sheet_problems(game: Game, character: Character, index: int) -> list[Problem]:
    """A character's sheet names only what the ruleset's sheet declares, with values it allows
    (docs/design.md#sheet-model): a typo or a number out of range is found at load, never rolled
    with (an unknown tier would quietly count as the first, an ability over its max would be added
    to every check as it is)."""
    sheet = game.ruleset.sheet
    at = ("characters", index)
    problems: list[Problem] = []
    problems += _named(at, "abilities", "ability", character.abilities,
                       {row.id: row for row in sheet.abilities},
                       lambda row, score: None if row.min <= score <= row.max else
                       f"{score} is outside {row.label}'s {row.min}..{row.max}")
    tiers = [t.id for t in game.ruleset.resolution.proficiency_tiers] \
        if game.ruleset.resolution is not None else None
    for key, kind, rows in (("skills", "skill", sheet.skills), ("saves", "save", sheet.saves)):
        declared = {row.id: row for row in rows}
        for ident, entry in getattr(character, key).items():
            where = (*at, key, ident)
            row = declared.get(ident)
            if row is None:
                problems.append(Problem(pointer(*where), _missing(kind, ident, declared)))
            else:
                problems += _entry_value_problems(row, entry, tiers, where)
    problems += _named(at, "fields", "field", character.fields,
                       {row.id: row for row in sheet.fields},
                       lambda row, value: None if _FIELD_TYPES[row.type](value) else
                       f"{row.label} is {_FIELD_WORDS[row.type]}")
    pools = {row.id: row for row in game.ruleset.live.pools}
    # ITM-OUT-4: temporary points are kept beside the health pool as "<health>:temporary".
    temporary = {f"{row.id}:temporary" for row in game.ruleset.live.pools if row.health}
    view = SheetView(game, character, None, items_apply=False)  # ITM-ABIL-6
    for ident, value in character.pools.items():
        pool = pools.get(ident)
        pool_at = pointer(*at, "pools", ident)
        if ident in temporary:
            if value < 0:
                problems.append(Problem(pool_at, "temporary points are never below 0"))
        elif pool is None:
            problems.append(Problem(pool_at, _missing("pool", ident, pools)))
        elif not 0 <= value <= math.floor(view.value(pool.max)):
            problems.append(Problem(pool_at, f"{value} is outside {pool.label}'s "
                                             f"0..{math.floor(view.value(pool.max))}"))
    conditions = {row.id for row in game.ruleset.conditions}
    problems += [Problem(pointer(*at, "conditions", c_index),
                         _missing("condition", ident, conditions))
                 for c_index, ident in enumerate(character.conditions)
                 if ident not in conditions]
    return problems


Row = TypeVar("Row")


def _named(at: tuple[str | int, ...], key: str, kind: str, values: Mapping[str, Any],
           declared: Mapping[str, Row], check: Callable[[Row, Any], str | None]
           ) -> list[Problem]:
    """Each of a character's ``values`` (by id) names a ``declared`` row and passes its
    ``check`` (a message when it does not)."""
    problems = []
    for ident, value in values.items():
        row = declared.get(ident)
        message = _missing(kind, ident, declared) if row is None else check(row, value)
        if message is not None:
            problems.append(Problem(pointer(*at, key, ident), message))
    return problems


_FIELD_TYPES = {
    "number": lambda value: isinstance(value, int | float) and not isinstance(value, bool),
    "text": lambda value: isinstance(value, str),
    "boolean": lambda value: isinstance(value, bool),
}
_FIELD_WORDS = {"number": "a number", "text": "a text", "boolean": "true or false"}


def _entry_value_problems(row: Skill, entry: Any, tiers: list[str] | None,
                          where: tuple[str | int, ...]) -> list[Problem]:
    """A skill's or save's value: a tier id, or ``{"tier": ..., "bonus": ...}`` with a bonus only
    where the ruleset gives the skill a ``bonusRange`` (docs/design.md#sheet-model)."""
    tier: Any
    if isinstance(entry, str):
        tier, bonus, rest = entry, None, {}
        tier_at = where
    elif isinstance(entry, dict):
        tier, bonus = entry.get("tier"), entry.get("bonus")
        rest = {k: v for k, v in entry.items() if k not in ("tier", "bonus")}
        tier_at = (*where, "tier")
    else:
        return [Problem(pointer(*where), f'{row.label} is a tier id or '
                                         '{"tier": ..., "bonus": ...}')]
    problems = [Problem(pointer(*where, key), f'unknown key "{key}"'
                        f'{did_you_mean(key, ("tier", "bonus"))}') for key in rest]
    if tier is not None and not isinstance(tier, str):
        problems.append(Problem(pointer(*tier_at), "a tier is a tier id"))
    elif tier is not None and tiers is not None and tier not in tiers:
        problems.append(Problem(pointer(*tier_at), _missing("tier", tier, tiers)))
    if bonus is None:
        return problems
    bonus_at = pointer(*where, "bonus")
    if not isinstance(bonus, int | float) or isinstance(bonus, bool):
        problems.append(Problem(bonus_at, "a bonus is a number"))
    elif row.bonus_range is None:
        problems.append(Problem(bonus_at, f"{row.label} takes no bonus (the ruleset gives it "
                                          "no bonusRange)"))
    elif not row.bonus_range[0] <= bonus <= row.bonus_range[1]:
        low, high = row.bonus_range
        problems.append(Problem(bonus_at, f"{bonus:g} is outside {row.label}'s bonus "
                                          f"{low}..{high}"))
    return problems


def start_state(game: Game, document: Mapping[str, Any]) -> State:
    """Build the start state from a party file or an exported state (docs/design.md#party-file).

    Raises :class:`PartyError` listing every problem with its JSON pointer.
    """
    if document.get("format") in STATE_FORMATS:
        try:
            state = State.model_validate(document)
        except ValidationError as error:
            raise PartyError(from_validation_error(error, document, State)) from None
        invented = {item.ref for item in state.invented}  # ITM-PROP-20: GM inventions held
        problems = [
            Problem(pointer("characters", c, "bag", s, "item"),
                    _missing("item", stack.item, game.items))
            for c, character in enumerate(state.characters)
            for s, stack in enumerate(character.bag)
            if stack.item is not None and stack.item not in game.items
            and stack.item not in invented
        ]
        for c, character in enumerate(state.characters):
            problems += _sheet_problems(game, character, c)
            problems += _entry_problems(game, character.entries, c)
            problems += _track_problems(game, character, c)
            problems += _reaction_problems(game, character, c)
        if problems:
            raise PartyError(problems)
        # An exported state starts the next session (docs/design.md#state-snapshots-and-scale).
        return start_session(state)
    try:
        party = Party.model_validate(document)
    except ValidationError as error:
        raise PartyError(from_validation_error(error, document, Party)) from None
    problems = []
    characters = []
    for index, entry in enumerate(party.characters):
        bag, bag_problems = _bag(game, entry, index)
        problems += bag_problems
        character = Character(
            name=entry.name, abilities=entry.abilities, skills=entry.skills, saves=entry.saves,
            fields=entry.fields, pools=entry.pools, tracks=entry.tracks,
            conditions=tuple(entry.conditions), bag=bag, entries=tuple(entry.entries),
            reactions=tuple(StandingOrder(on=r.on, use=_entry_ref(game, r.use))
                            for r in entry.reactions),
        )
        characters.append(character)
        problems += _sheet_problems(game, character, index)
        problems += _entry_problems(game, entry.entries, index)
        problems += _track_problems(game, character, index)
        problems += _reaction_problems(game, character, index)
    names = [c.name.casefold() for c in party.characters]
    player = party.player or party.characters[0].name
    if player.casefold() not in names:
        problems.append(Problem(pointer("player"), f'"{player}" is not one of the characters'
                                f'{did_you_mean(player, (c.name for c in party.characters))}'))
    for index, name in enumerate(names):
        if name in names[:index]:
            problems.append(Problem(pointer("characters", index, "name"),
                                    f'two characters are named "{party.characters[index].name}"'
                                    " (names are told apart without case)"))
    layer_ids = {layer.id for layer in game.ruleset.layers}
    problems += [Problem(pointer("layers", i), _missing("layer", layer, layer_ids))
                 for i, layer in enumerate(party.layers) if layer not in layer_ids]
    if problems:
        raise PartyError(problems)
    return State(seed=party.seed, player=player, dice=party.dice, layers=tuple(party.layers),
                 characters=tuple(characters))
