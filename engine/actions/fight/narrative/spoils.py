"""A won narrative fight (docs/rules/combat.md#b10-party-fights, D100-PARTY-10): every hero standing
at the victory gets the **full** experience of the felled foes (each template's ``xp`` formula at
the foe's tier, added to the sheet field ``combat.narrative.xp``); the spoils are what the GM's
``[loot:]`` and ``earn`` tags in the victory reply give (ITM-LOOT-13: the foes drop nothing by
themselves) — coins without ``who=`` are split among the standing heroes, named items go to a loot
record (``state.spoils``) the players settle with the host events ``want`` and ``pass``: once every
victor has chosen, the engine draws among those who want it (keyed dice), and with nobody wanting it
the item goes to the shared view (ITM-CARRY-5)."""

from __future__ import annotations

from typing import Any

from ....rules import reasons
from ....rules.bags import Thing
from ....rules.carry import distribute
from ....rules.context import TurnContext
from ....rules.fight.formula import standing, template_for
from ....rules.formula import evaluate, foe_reader
from ....rules.game import Game
from ....rules.loot import roll_table
from ....rules.state import Encounter, JournalEntry, Spoil, Spoils, State
from ....ruleset.loot import LootTable
from ...answers import Answer, accepted, refused
from ...declare import Request, action, attr, request
from ...host import PAYLOAD_TEXT

PARTY = "party"


def victors(game: Game, state: State, encounter: Encounter) -> tuple[str, ...]:
    """D100-PARTY-10: the heroes standing when the fight is won, in the fight's order."""
    return tuple(c.name for c in encounter.combatants
                 if c.side == PARTY and standing(game, state, c))


def won(game: Game, state: State, encounter: Encounter,
        ctx: TurnContext) -> tuple[State, dict[str, Any], str]:
    """A narrative fight won (its last foe felled, or ``op="end" outcome="victory"``): each
    standing hero gets the full experience of every felled foe (D100-PARTY-10) and the reply's
    coins and loot are theirs to share (:func:`sharers`). The new state, the record's ``xp``
    and the words the answer adds."""
    heroes = victors(game, state, encounter)
    state = state.model_copy(update={"spoils": Spoils(turn=ctx.turn_key, heroes=heroes)})
    combat = game.ruleset.combat
    field = combat.narrative.xp if combat is not None and combat.narrative else None
    if field is None or not heroes or combat is None or not combat.templates:
        return state, {}, ""
    total = 0
    for foe in encounter.combatants:
        if foe.side == PARTY or foe.hp:
            continue
        template, _ = template_for(game, foe.role or "")
        if template.xp is None:
            continue
        stream = ctx.for_tag(0).stream("combat", f"xp/{foe.name.casefold()}")
        total += max(int(evaluate(template.xp, foe_reader(game.ruleset, foe.tier or 1, 0),
                                  stream).value), 0)
    for name in heroes:
        who = state.character_index(name)
        if who is None:
            continue
        character = state.characters[who]
        now = character.fields.get(field, 0)
        now = now if isinstance(now, int | float) and not isinstance(now, bool) else 0
        state = state.with_character(who, character.model_copy(update={
            "fields": {**character.fields, field: now + total}}))
    record = {"field": field, "each": total, "heroes": list(heroes)}
    return state, {"xp": record}, f" Each of {', '.join(heroes)} gains {total} {field}."


def sharers(game: Game, state: State, ctx: TurnContext) -> tuple[int, ...]:
    """D100-PARTY-10: who an ``earn`` or ``[loot:]`` without ``who=`` is for — in the reply
    that won a narrative fight, the heroes standing at the victory; in a narrative fight still
    on (the reply's ``op="end" outcome="victory"`` comes last), the heroes standing now; else
    nobody (the ordinary add)."""
    names: tuple[str, ...] = ()
    if state.spoils is not None and state.spoils.turn == ctx.turn_key:
        names = state.spoils.heroes
    elif state.encounter is not None:
        names = victors(game, state, state.encounter)
    found = (state.character_index(n) for n in names)
    return tuple(i for i in found if i is not None)


def split(game: Game, state: State, thing: Thing, count: int,
          heroes: tuple[int, ...]) -> tuple[State, list[tuple[int, int]], int]:
    """D100-PARTY-10, OQ-D100-11: ``count`` coins split evenly among ``heroes``, the remainder
    one each to the first of them in the party's order; each share goes into that hero's bag
    as an earn with ``who=`` would (ITM-CARRY-8). Returns the state, the placements, and what
    nobody could carry."""
    share, rest = divmod(count, len(heroes))
    placements: list[tuple[int, int]] = []
    left = 0
    for place, who in enumerate(sorted(heroes)):
        wanted = share + (1 if place < rest else 0)
        if not wanted:
            continue
        state, placed, over = distribute(game, state, thing, wanted, who)
        placements += placed
        left += over
    return state, placements, left


def loot(game: Game, state: State, table: LootTable, ctx: TurnContext,
         heroes: tuple[int, ...]) -> tuple[State, dict[str, object], list[str]]:
    """D100-PARTY-10: a ``[loot:]`` without ``who=`` in a narrative victory: its coins are
    split among the victors, its named items go to the loot record for want/pass."""
    drops, record = roll_table(game, state, table, ctx.stream("loot", "draws"))
    parts: list[str] = []
    dropped: list[dict[str, object]] = []
    spoils = state.spoils or Spoils(turn=ctx.turn_key, heroes=tuple(
        state.characters[i].name for i in heroes))
    for drop in drops:
        thing = drop.thing
        if thing.coin is not None:
            state, placements, left = split(game, state, thing, drop.count, heroes)
            placed = [{"who": state.characters[i].name, "count": n} for i, n in placements]
            dropped.append({"name": thing.name, "item": None, "coin": thing.coin,
                            "count": drop.count, "to": placed, "left": left})
            parts.append(f"{thing.name} split: " + ", ".join(
                f"×{n} to {state.characters[i].name}" for i, n in placements))
            continue
        spoils = spoils.model_copy(update={"items": (*spoils.items, Spoil(
            name=thing.name, item=thing.item, stack_limit=max(thing.stack_limit, 1),
            count=drop.count))})
        dropped.append({"name": thing.name, "item": thing.item, "coin": None,
                        "count": drop.count, "to": "loot record"})
        parts.append(f"{thing.name} ×{drop.count} to the loot record")
    record["drops"] = dropped
    state = state.model_copy(update={"spoils": spoils})
    if spoils.items:
        parts.append('each of ' + ", ".join(spoils.heroes) + ' chooses Want or Pass')
    return state, record, parts


def after_reply(state: State, ctx: TurnContext) -> State:
    """The victory reply is over: a loot record with nothing to settle is gone."""
    spoils = state.spoils
    if spoils is not None and spoils.turn == ctx.turn_key and not spoils.items:
        return state.model_copy(update={"spoils": None})
    return state


# --- want and pass --------------------------------------------------------------------------


@request
class Choice(Request):
    """A victor's choice on one named item of the loot record (D100-PARTY-10)."""

    item: str = attr(PAYLOAD_TEXT, "the item of the loot record, by name",
                     missing='Say which item: {"action": "want", "item": "<name>"}.')
    who: str = attr(PAYLOAD_TEXT, "who chooses: a hero standing at the victory",
                    shown="the player")


CHOICE_RECORD = {"who": "who chose", "item": "the item", "choice": "want or pass",
                 "waiting": "the victors who have not chosen yet",
                 "to": "once settled: who got it (none: the shared view)",
                 "draw": "once settled among several: the die that chose"}


def _choose(game: Game, state: State, request: Choice, ctx: TurnContext,
            choice: str) -> tuple[State, Answer]:
    tag = request.tag
    spoils = state.spoils
    hero = state.character_index(request.who or None)
    name = state.characters[hero].name if hero is not None else request.who
    if spoils is None or name not in spoils.heroes:
        return state, refused(tag, reasons.NO_SPOILS, (
            "No won fight's loot record is waiting" if spoils is None else
            f"{name[:60]} did not stand at the victory") + "; nothing was done.")
    wanted = request.item.strip().casefold()
    index = next((i for i, s in enumerate(spoils.items) if s.name.casefold() == wanted), None)
    if index is None:
        names = ", ".join(s.name for s in spoils.items) or "nothing"
        return state, refused(tag, reasons.NO_SPOILS, f'The loot record holds no '
                              f'"{request.item[:60]}" ({names}); nothing was done.')
    spoil = spoils.items[index]
    if name in spoil.want or name in spoil.passed:
        return state, refused(tag, reasons.ALREADY, f"{name} has chosen on {spoil.name} "
                              "already; nothing was done.")
    spoil = spoil.model_copy(update={choice: (*getattr(spoil, choice), name)})
    waiting = [h for h in spoils.heroes if h not in spoil.want and h not in spoil.passed]
    record: dict[str, Any] = {"who": name, "item": spoil.name,
                              "choice": "want" if choice == "want" else "pass",
                              "waiting": waiting}
    text = f"{name} {'wants' if choice == 'want' else 'passes on'} {spoil.name}"
    items = list(spoils.items)
    if waiting:
        items[index] = spoil
        state = state.model_copy(update={"spoils": spoils.model_copy(update={
            "items": tuple(items)})})
        return state, accepted(tag, f"{text}; waiting for {', '.join(waiting)}.", record)
    del items[index]
    state = state.model_copy(update={"spoils": spoils.model_copy(update={
        "items": tuple(items)}) if items else None})
    thing = Thing(spoil.name, spoil.item, None, spoil.stack_limit)
    if spoil.want:
        stream = ctx.stream("spoils", f"draw/{spoil.name.casefold()}")
        draw = stream.die(len(spoil.want)) if len(spoil.want) > 1 else 1
        winner = spoil.want[draw - 1]
        who = state.character_index(winner)
        if len(spoil.want) > 1:
            record["draw"] = draw
        text += f"; {spoil.name} goes to {winner}" + (
            f" (drawn among {', '.join(spoil.want)}: {draw})" if len(spoil.want) > 1 else "")
    else:
        who = None
        text += f"; nobody wants {spoil.name}: it goes to the shared view"
    state, placements, left = distribute(game, state, thing, spoil.count, who)
    record["to"] = [{"who": state.characters[i].name, "count": n} for i, n in placements]
    if left:
        record["left"] = left
        text += f" (×{left} stays behind: nobody can carry more)"
    journal = JournalEntry(turn=ctx.turn_label, text=f"Loot record: {spoil.name} ×{spoil.count} "
                           + ", ".join(f"to {state.characters[i].name}" for i, _ in placements))
    state = state.model_copy(update={"journal": (*state.journal, journal)})
    return state, accepted(tag, text + ".", record)


@action("event", "want", Choice, record=CHOICE_RECORD, reasons=(reasons.NO_SPOILS,
                                                              reasons.ALREADY))
def want(game: Game, state: State, request: Choice, ctx: TurnContext) -> tuple[State, Answer]:
    """``{"action": "want", "item": "<name>"}``: the player wants a named item of the loot
    record (D100-PARTY-10); once every victor has chosen, the engine draws among those who
    want it."""
    return _choose(game, state, request, ctx, "want")


@action("event", "pass", Choice, record=CHOICE_RECORD, reasons=(reasons.NO_SPOILS,
                                                              reasons.ALREADY))
def pass_(game: Game, state: State, request: Choice, ctx: TurnContext) -> tuple[State, Answer]:
    """``{"action": "pass", "item": "<name>"}``: the player passes on a named item of the loot
    record (D100-PARTY-10); with nobody wanting it, it goes to the shared view."""
    return _choose(game, state, request, ctx, "passed")
