"""The start state of a game: a party file, or a state exported at the end of a session."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .bags import Thing, add_to_bag, find_thing
from .game import DEFAULT_STACK, Game
from .ruleset.problems import Problem, RulesetError, from_validation_error, pointer
from .session import start_session
from .state import STATE_FORMAT, Character, Stack, State
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
                problems.append(Problem(pointer(*where, "item"), f'unknown item "{entry.item}"'))
                continue
            if found.item.service:
                problems.append(Problem(pointer(*where, "item"),
                                        f'"{found.label}" is a service and never in a bag'))
                continue
            thing = Thing(found.label, found.ref, None, found.stack_limit)
        elif entry.coin is not None:
            info = game.coins.get(entry.coin)
            if info is None:
                problems.append(Problem(pointer(*where, "coin"), f'unknown coin "{entry.coin}"'))
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
                    f'unknown catalog entry "{ref}"')
            for e_index, ref in enumerate(entries) if ref not in known]


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
            problems.append(Problem(where, f'unknown track "{ident}"'))
            continue
        most = track_max(game, character, None, track)
        if not 0 <= value <= most:
            what = "points" if track.kind == "health" else "marks"
            problems.append(Problem(where, f"{value} {what} is outside {track.label}'s 0..{most}"))
    return problems


def start_state(game: Game, document: Mapping[str, Any]) -> State:
    """Build the start state from a party file or an exported state (DESIGN.md "Party").

    Raises :class:`PartyError` listing every problem with its JSON pointer.
    """
    if document.get("format") == STATE_FORMAT:
        try:
            state = State.model_validate(document)
        except ValidationError as error:
            raise PartyError(from_validation_error(error, document)) from None
        invented = {item.ref for item in state.invented}  # ITM-PROP-20: GM inventions held
        problems = [
            Problem(pointer("characters", c, "bag", s, "item"), f'unknown item "{stack.item}"')
            for c, character in enumerate(state.characters)
            for s, stack in enumerate(character.bag)
            if stack.item is not None and stack.item not in game.items
            and stack.item not in invented
        ]
        for c, character in enumerate(state.characters):
            problems += _entry_problems(game, character.entries, c)
            problems += _track_problems(game, character, c)
        if problems:
            raise PartyError(problems)
        # An exported state starts the next session (DESIGN.md "State, snapshots and scale").
        return start_session(state)
    try:
        party = Party.model_validate(document)
    except ValidationError as error:
        raise PartyError(from_validation_error(error, document)) from None
    problems = []
    characters = []
    for index, entry in enumerate(party.characters):
        bag, bag_problems = _bag(game, entry, index)
        problems += bag_problems
        character = Character(
            name=entry.name, abilities=entry.abilities, skills=entry.skills, saves=entry.saves,
            fields=entry.fields, pools=entry.pools, tracks=entry.tracks,
            conditions=tuple(entry.conditions), bag=bag, entries=tuple(entry.entries),
        )
        characters.append(character)
        problems += _entry_problems(game, entry.entries, index)
        problems += _track_problems(game, character, index)
    names = [c.name.casefold() for c in party.characters]
    player = party.player or party.characters[0].name
    if player.casefold() not in names:
        problems.append(Problem(pointer("player"), f'"{player}" is not one of the characters'))
    if len(set(names)) != len(names):
        problems.append(Problem(pointer("characters"), "two characters share a name"))
    layer_ids = {layer.id for layer in game.ruleset.layers}
    problems += [Problem(pointer("layers", i), f'unknown layer "{layer}"')
                 for i, layer in enumerate(party.layers) if layer not in layer_ids]
    if problems:
        raise PartyError(problems)
    return State(seed=party.seed, player=player, dice=party.dice, layers=tuple(party.layers),
                 characters=tuple(characters))
