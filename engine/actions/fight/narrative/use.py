"""Items used in a narrative fight (docs/rules/items.md#14-items-in-narrative-fights, ITM-CLS-1..19;
docs/design.md#narrative-combat): ``[inventory: action="use" item= who= target=]`` (and the host's
Use) while a narrative fight is on. engine/actions/use.py sends a use here while one is.

No model is asked what an item does (the middleware's reading of ITM-CLS-1/3): a ruleset item
with ``use`` does what its ``use`` says with the engine's numbers (ITM-CLS-2/19) — a heal or an
attack moves ``clamp(average / 32, 1/20, 1)`` of the target's maximum health (ITM-CLS-4,
OQ-35), the first condition it applies becomes a status for its rounds (default 2, ITM-CLS-6),
a buff or debuff is that status alone (ITM-CLS-7); an attack roll, a save, an area, temporary
points and a restored pool have no place here (ITM-CLS-10). An item that is no ruleset item (a
plain one, or one the GM invented without ``like=``) has no effect in the fight, and the answer
says so. Using an item is the hero's action of the round, as a strike is."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Protocol

from tagparse import Tag

from ....dice import parse_dice
from ....rules import reasons
from ....rules.bags import find_thing, item_of, stack_matches
from ....rules.context import TurnContext
from ....rules.fakes import reveal_on_use
from ....rules.fight.conditions import fight_over
from ....rules.fight.formula import hero_health, standing
from ....rules.fight.narrative import half_up
from ....rules.game import Game
from ....rules.items import charges_left, item_is_worn, stat_number
from ....rules.sheet import SheetView
from ....rules.state import Character, Encounter, FightCondition, JournalEntry, Stack, State
from ....rules.tracks import health_pool
from ....ruleset import Item
from ....ruleset.combat import Amount, Use
from ...answers import Answer, accepted, fraction, refused
from ...checks import skill_check
from ...checks.pipeline import value_check
from . import combat as narrative
from . import spoils
from .bleed import died

SHARE_LOW, SHARE_HIGH = Fraction(1, 20), Fraction(1)
STATUS_ROUNDS = 2  # ITM-CLS-6: an applied status lasts 2 rounds unless the use says


FIGHT_RECORD = {
    "round": "a narrative fight: the round", "slot": "its place in the reply's tags",
    "share": "the share of the target's maximum health it moved (ITM-CLS-4), a fraction "
             "{num, den}",
    "moved": "the hit points it moved", "healed": "hit points given back",
    "status": "the status it applied: name, rounds (ITM-CLS-6)",
    "element": "its damageType (ITM-CLS-5)", "ignored": "what has no place in the fight "
    "(ITM-CLS-10)", "events": "damage, felled, end:victory", "damage": "damage dealt",
    "hp": "the target's hit points after", "hpMax": "its most", **narrative.XP_RECORD}
"""What an item used in a narrative fight adds to the use's record (ITM-CLS-1..19)."""
FIGHT_REASONS = (reasons.UNKNOWN_COMBATANT, reasons.DOWNED, reasons.NO_TIME,
                 reasons.MISSING_ATTRIBUTE, reasons.UNSUPPORTED, reasons.TARGET_DOWN,
                 reasons.NO_RESOLUTION, reasons.MISSING_DIFFICULTY)
"""Why a use in a narrative fight is refused besides the use's own reasons."""


class Using(Protocol):
    """What a use reads (engine/actions/use.py's ``UseItem``)."""

    @property
    def tag(self) -> Tag: ...
    @property
    def item(self) -> str: ...
    @property
    def who(self) -> int: ...
    @property
    def target(self) -> str: ...


def average(amount: Amount) -> Fraction:
    """ITM-CLS-4: the average of an ``amount``: its dice's mean plus its flat part."""
    total = Fraction(amount.flat or 0)
    if amount.dice is not None:
        expr = parse_dice(amount.dice)
        if not isinstance(expr, str):
            total += Fraction(expr.count * (expr.sides + 1), 2) + expr.modifier
    return total


def share(amount: Amount) -> Fraction:
    """ITM-CLS-4, docs/design.md#narrative-combat (settles OQ-35): the share of the target's maximum
    health a heal or an attack moves — ``clamp(average / 32, 1/20, 1)``; an average of 7 is 7/32 ≈
    0.22."""
    return min(max(average(amount) / 32, SHARE_LOW), SHARE_HIGH)


def _matching(game: Game, state: State, character: Character, name: str) -> list[int]:
    """The stacks ``item=`` names: the ruleset item by label or invented name, else a plain
    stack by its name — the worn ones first (ITM-CLS-12: a used-up item is the worn one)."""
    thing = find_thing(game, name, state)
    wanted = name.strip().casefold()
    found = []
    if thing is not None and thing.item is not None:
        found = [i for i, s in enumerate(character.bag) if stack_matches(s, thing, name)]
    if not found:
        found = [i for i, s in enumerate(character.bag)
                 if s.coin is None and s.name.casefold() == wanted]
    item = item_of(game, state, character.bag[found[0]].item) if found else None
    if item is not None:
        found.sort(key=lambda i: not item_is_worn(item, character.bag[i]))
    return found


def _ready(game: Game, state: State, who: int, found: list[int]) -> bool:
    """Whether one of hero ``who``'s stacks ``found`` is a ruleset item it can use now."""
    bag = state.characters[who].bag
    item = item_of(game, state, bag[found[0]].item) if found else None
    if item is None or item.use is None:
        return bool(found)  # not a ruleset item: its own answer says so (ITM-CLS-1/3)
    return any(_unusable(item, bag[i]) is None for i in found)


def _companion_stack(game: Game, state: State, encounter: Encounter, who: int,
                     name: str) -> tuple[int, list[int]] | None:
    """ITM-CLS-14: where the user has no stack of ``item=`` it can use now, the first
    companion in the fight (in the party's order) with one that is ready — the companion and
    its stacks. An item that works only while worn or bound is its wearer's alone
    (ITM-CLS-11), so never drawn on."""
    for combatant in encounter.combatants:
        other = state.character_index(combatant.name) if combatant.side == "party" else None
        if other is None or other == who:
            continue
        bag = state.characters[other].bag
        found = _matching(game, state, state.characters[other], name)
        item = item_of(game, state, bag[found[0]].item) if found else None
        if item is None or item.use is None or item.slots or item.binds is not None:
            continue
        ready = [i for i in found if _unusable(item, bag[i]) is None]
        if ready:
            return other, ready
    return None


def _unusable(item: Item, stack: Stack) -> tuple[str, str] | None:
    """ITM-CLS-11/13, ITM-GATE-4: why this stack cannot be used now, or None."""
    use = item.use
    assert use is not None
    if (item.slots or item.binds is not None) and not item_is_worn(item, stack):
        how = "worn and bound" if item.slots and item.binds is not None else (
            "worn" if item.slots else "bound")
        return reasons.NOT_WORN, f"{stack.name} works only while {how}"
    if use.charges is not None:
        left = charges_left(item, stack)
        if left is None or left < use.charges:
            return reasons.NO_USE_LEFT, f"{stack.name} has no charges left"
    if use.gate is not None and stat_number(item, use.gate.difficulty) is None:
        return (reasons.NO_DIFFICULTY,
                f"{stack.name}'s gate reads its difficulty from a stat the item does not give")
    return None


def _label(game: Game, stack: Stack) -> str:
    found = game.items.get(stack.item) if stack.item is not None else None
    return found.label if found is not None else stack.name


def narrative_use(game: Game, state: State, request: Using, ctx: TurnContext,
                  kind: str) -> tuple[State, Answer, str | None]:
    """ITM-CLS-1..19: ``item=`` used by ``who=`` in the narrative fight on now, at
    ``target=`` (without it a heal or buff goes to the user, an attack or
    debuff to the only foe standing, ITM-CLS-8). The new state, the answer, and the player's
    words for the Use button."""
    tag, who = request.tag, request.who
    character = state.characters[who]
    encounter = state.encounter
    assert encounter is not None
    spoken = None
    me = encounter.find(character.name)
    if me is None:
        return state, refused(tag, reasons.UNKNOWN_COMBATANT, f"{character.name} is not in the "
                              f'fight: [combat: op="join" foe="{character.name}"] first; '
                              "nothing was used."), spoken
    if not standing(game, state, encounter.combatants[me]):
        return state, refused(tag, reasons.DOWNED, f"{character.name} is down and does not "
                              "act; nothing was used."), spoken
    found = _matching(game, state, character, request.item)
    owner = who
    if not _ready(game, state, who, found):  # ITM-CLS-14: the user's own first
        drawn = _companion_stack(game, state, encounter, who, request.item)
        if drawn is not None:
            owner, found = drawn
    if not found:
        return state, refused(tag, reasons.NOT_HELD, f"{character.name} has no "
                              f"{request.item[:80]}; nothing was used."), spoken
    first = state.characters[owner].bag[found[0]]
    spoken = f"I use my {first.name}."
    item = item_of(game, state, first.item)
    if item is None or item.use is None or (item.use.kind == "heal" and item.use.amount is None):
        why = ("is not a ruleset item, so it does nothing in this fight: no model is asked what "
               "it does (ITM-CLS-1/3); the GM may invent it like= a ruleset item"
               if item is None else "has no use in a fight (ITM-CLS-18)")
        named = {"name": first.name, "who": character.name, "used": False}
        return state, accepted(tag, f"{character.name}'s {first.name} {why}.", named), spoken
    usable = [(i, _unusable(item, state.characters[owner].bag[i])) for i in found]
    ready = [i for i, why in usable if why is None]
    if not ready:
        code, words = next(why for _, why in usable if why is not None)
        return state, refused(tag, code, f"{words}; nothing was used."), spoken
    index = ready[0]
    use = item.use
    encounter = narrative.begin_round(encounter, ctx)
    if encounter.combatants[me].spent:
        return state, refused(tag, reasons.NO_TIME, f"NO TIME: {character.name} has acted "
                              "this round already; nothing was used."), spoken
    at = _target(game, state, encounter, me, use, request.target)
    if isinstance(at, tuple):
        return state, refused(tag, *at), spoken
    before = state
    state = reveal_on_use(game, state, owner, index, ctx.turn_label)  # ITM-FAKE-13
    character = state.characters[who]
    stack = state.characters[owner].bag[index]
    label = _label(game, stack)
    record: dict[str, Any] = {"who": character.name, "item": stack.item, "name": label,
                              "round": encounter.round, "slot": ctx.ordinal + 1}
    drawn_from = ""
    if owner != who:  # ITM-CLS-14: drawn on a companion's stack
        record["from"] = state.characters[owner].name
        drawn_from = f" from {record['from']}'s stack"
    combatants = list(encounter.combatants)
    combatants[me] = combatants[me].model_copy(update={"spent": (narrative.STRIKE,)})
    encounter = encounter.model_copy(update={"combatants": tuple(combatants)})
    state = state.model_copy(update={"encounter": encounter})
    gate = _gate(game, state, who, item, label, ctx, kind)
    if isinstance(gate, Answer):
        return before, refused(tag, gate.reason or reasons.NO_RESOLUTION,
                              f"{gate.text.rstrip('.')}; {label} was not used."), spoken
    passed, failure, gate_record = gate
    record.update(gate_record)
    if passed:
        state, words, events = _effect(game, state, me, at, use, record, ctx)
        line = (f"{character.name} uses {label}{drawn_from} on {encounter.combatants[at].name}: "
                f"{words}.")
    else:  # ITM-CLS-17
        line = f"{character.name} rolls {failure}, and it is used up for nothing."
        events = []
    state, left = _spend(state, owner, item, index, label, ctx, kind, record)
    if left:
        line += f" {left}"
    if events:
        record["events"] = events
    record["used"] = True
    if events and events[-1] == "end:victory":
        line += " The fight is won."
        encounter_now = state.encounter
        assert encounter_now is not None
        state, extra, words = spoils.won(game, state, encounter_now, ctx)
        record.update(extra)
        state = fight_over(state)
        line += words
    return state, accepted(tag, line, record), spoken


def _target(game: Game, state: State, encounter: Encounter, me: int, use: Use,
            named: str) -> int | tuple[str, str]:
    """ITM-CLS-8: whom the use aims at — ``targets`` says which side (``self``: the user;
    ``ally``: a hero; ``enemy``: a foe; ``any``: either); without it a heal or buff goes to a
    friend, an attack or debuff to a foe. A friend may be down (a heal brings a downed ally
    back, D100-PARTY-7); a foe must stand."""
    user = encounter.combatants[me]
    hostile = use.kind in ("attack", "debuff")
    side = {"self": "party", "ally": "party", "enemy": "foes"}.get(
        use.targets or "", "foes" if hostile else "party")
    if use.targets == "self" or (not named.strip() and side == "party"):
        return me
    if not named.strip():
        up = [i for i, c in enumerate(encounter.combatants)
              if c.side == "foes" and standing(game, state, c)]
        if len(up) == 1:
            return up[0]
        names = ", ".join(encounter.combatants[i].name for i in up)
        return reasons.MISSING_ATTRIBUTE, f'Name the target: target="<name>" ({names}).'
    index = encounter.find(named)
    if index is None:
        names = ", ".join(c.name for c in encounter.combatants)
        return (reasons.UNKNOWN_COMBATANT, f'Nobody called "{named[:60]}" is in the fight '
                f"({names}); nothing was used.")
    found = encounter.combatants[index]
    if use.targets != "any" and found.side != side:
        whom = "a foe" if side == "foes" else f"{user.name} or an ally"
        return (reasons.UNSUPPORTED, f"{found.name} is no target for it: it aims at {whom} "
                "(ITM-CLS-8); nothing was used.")
    if found.side == "foes" and not found.hp:
        return reasons.TARGET_DOWN, f"{found.name} is already down; nothing was used."
    if found.side == "party" and died(encounter, found.name):  # D100-PARTY-7
        return (reasons.TARGET_DOWN, f"{found.name} bled out and died: no heal brings it back; "
                "nothing was used.")
    return index


def _effect(game: Game, state: State, me: int, at: int, use: Use, record: dict[str, Any],
            ctx: TurnContext) -> tuple[State, str, list[str]]:
    """ITM-CLS-2/4..7/10: what the use does to fighter ``at`` with the engine's numbers."""
    encounter = state.encounter
    assert encounter is not None
    target = encounter.combatants[at]
    words: list[str] = []
    events: list[str] = []
    if use.kind in ("heal", "attack") and use.amount is not None:  # ITM-CLS-4
        part = share(use.amount)
        most = narrative.hp_max(game, state, target)
        moved = max(half_up(most * part), 1) if most else 0
        record.update({"share": fraction(part), "moved": moved})
        if use.kind == "attack":
            state, encounter, after, events = narrative.struck(game, state, encounter, at,
                                                               moved)
            state = state.model_copy(update={"encounter": encounter})
            record.update({"damage": moved, "hp": after, "hpMax": most})
            element = f" {use.damage_type}" if use.damage_type else ""
            if use.damage_type:  # ITM-CLS-5
                record["element"] = use.damage_type
            words.append(f"{moved}{element} damage ({part} of {most}) · {target.name} "
                         f"{after}/{most}")
            if any(e.startswith("felled:") for e in events):
                words.append(f"{target.name} is felled")
        else:
            state, healed, after = _heal(game, state, target.name, moved)
            record.update({"healed": healed, "hp": after, "hpMax": most})
            words.append(f"heals {healed} ({part} of {most}) · {target.name} {after}/{most}")
    if use.applies:  # ITM-CLS-6/7: the first condition, as a status for its rounds
        applied = use.applies[0]
        rounds = applied.duration.rounds if applied.duration is not None else STATUS_ROUNDS
        state = _status(state, at, applied.condition, rounds)
        record["status"] = {"name": applied.condition, "rounds": rounds}
        labels = {c.id: c.label for c in game.ruleset.conditions}
        words.append(f"{target.name} is {labels.get(applied.condition, applied.condition)} "
                     f"for {rounds} round(s)")
    ignored = [name for name, there in (
        ("attack roll", use.attack_roll or use.to_hit is not None), ("save", use.save),
        ("area", use.area), ("temporary points", use.temporary), ("restored pool", use.restore))
        if there]
    if ignored:  # ITM-CLS-10
        record["ignored"] = ignored
        words.append(f"(its {', '.join(ignored)} has no place in this fight)")
    if not words:
        words.append("nothing the fight counts")
    return state, ", ".join(words), events


def _heal(game: Game, state: State, name: str, moved: int) -> tuple[State, int, int]:
    """A hero's hit points back by ``moved``, never above its maximum (a downed hero stands
    again, D100-PARTY-7). Returns the state, the points healed and the hit points after."""
    who = state.character_index(name)
    health = hero_health(game, state, who) if who is not None else None
    if who is None or health is None:
        return state, 0, 0
    after = min(health.hp + moved, max(health.hp_max, health.hp))
    character = state.characters[who]
    pool = health_pool(game)
    if pool is not None:
        character = character.model_copy(update={"pools": {**character.pools,
                                                           pool.id: after}})
    else:
        track = next(t for t in game.ruleset.live.tracks if t.kind == "health")
        character = character.model_copy(update={"tracks": {**character.tracks,
                                                            track.id: after}})
    return state.with_character(who, character), after - health.hp, after


def _status(state: State, at: int, condition: str, rounds: int) -> State:
    """ITM-CLS-6: the status on the fighter for ``rounds`` (a hero's on its sheet too)."""
    encounter = state.encounter
    assert encounter is not None
    target = encounter.combatants[at]
    kept = tuple(c for c in target.conditions if c.name != condition)
    combatants = list(encounter.combatants)
    combatants[at] = target.model_copy(update={"conditions": (
        *kept, FightCondition(name=condition, rounds=rounds))})
    state = state.model_copy(update={"encounter": encounter.model_copy(update={
        "combatants": tuple(combatants)})})
    who = state.character_index(target.name) if target.side == "party" else None
    if who is not None and condition not in state.characters[who].conditions:
        character = state.characters[who]
        state = state.with_character(who, character.model_copy(update={
            "conditions": (*character.conditions, condition)}))
    return state


def _gate(game: Game, state: State, who: int, item: Item, label: str, ctx: TurnContext,
          kind: str) -> tuple[bool, str, dict[str, Any]] | Answer:
    """ITM-CLS-15, ITM-GATE-1..8: the gate the user rolls with its own sheet (skipped when
    ``unless`` holds): (passed, ``<check> to use <item>: <total> against <dc>, failed``, the
    record) — or a refusal when it cannot be rolled."""
    use = item.use
    assert use is not None
    gate = use.gate
    if gate is None:
        return True, "", {}
    character = state.characters[who]
    view = SheetView(game, character, state)
    if gate.unless is not None and view.value(gate.unless.value) >= gate.unless.at_least:
        return True, "", {"gate": "skipped"}
    difficulty = stat_number(item, gate.difficulty)
    assert difficulty is not None
    dc = min(max(math.floor(difficulty), 1), 100)
    gate_ctx = TurnContext(f"{ctx.seed}\x1fitem-use/{kind}", ctx.turn_key, ctx.ordinal)
    check = gate.check
    sheet = game.ruleset.sheet
    if check.value is not None:
        named = check.value.derived
        shown = next((d.label for d in sheet.derived if d.id == named), named or "Sheet")
        if game.ruleset.resolution is None:
            return refused(Tag("skill_check", (), 0, 0, "", None), reasons.NO_RESOLUTION,
                           "This ruleset declares no resolution, so it has no checks.")
        rolled = value_check(game, state, character, check.value, shown, dc, gate_ctx)
        if rolled is None:
            return refused(Tag("skill_check", (), 0, 0, "", None), reasons.MISSING_DIFFICULTY,
                           f"The {shown} check has no difficulty; nothing was rolled.")
        success, total = rolled.success, rolled.value
    else:
        which = "skill" if check.skill is not None else "ability"
        ident = check.skill if check.skill is not None else check.ability
        rows = sheet.skills if check.skill is not None else sheet.abilities
        shown = next((r.label for r in rows if r.id == ident), str(ident))
        check_tag = Tag("skill_check", ((which, str(ident)), ("dc", str(dc)),
                                        ("who", character.name)), 0, 0, "", None)
        _, answer = skill_check.answer(game, state, check_tag, gate_ctx)
        if not answer.ok:
            return answer
        success, total = bool(answer.record.get("success")), answer.record.get("total", 0)
    number = f"{total:g}" if isinstance(total, float) else str(total)
    return (bool(success), f"{shown} to use {label}: {number} against {dc}, failed",
            {"gate": "passed" if success else "failed", "gateTotal": total, "gateDc": dc})


def _spend(state: State, who: int, item: Item, index: int, label: str, ctx: TurnContext,
           kind: str, record: dict[str, Any]) -> tuple[State, str]:
    """ITM-CLS-9/12/14, ITM-BRK-1: ``consumes`` takes one from the stack used (the worn one),
    ``charges`` spends from it and its last charge rolls ``breaksOn``; else it stays."""
    use = item.use
    assert use is not None
    character = state.characters[who]
    bag = list(character.bag)
    stack = bag[index]
    words = ""
    if use.consumes:
        record["left"] = stack.count - 1
        if stack.count == 1:
            bag.pop(index)
        else:
            bag[index] = stack.model_copy(update={"count": stack.count - 1})
        words = f"{stack.count - 1} left."
    elif use.charges is not None and item.charges is not None:
        left = (charges_left(item, stack) or 0) - use.charges
        record["left"] = left
        bag[index] = stack.model_copy(update={"charges": left})
        words = f"{left} left."
        breaks = item.charges.breaks_on
        if left == 0 and breaks is not None:
            face = ctx.stream(kind, "use/breaks").die(breaks.die)
            record["breaksRoll"] = face
            if face <= breaks.at_most:
                bag.pop(index)
                record["broke"] = True
                words += " Its last charge spent, it breaks."
    state = state.with_character(who, character.model_copy(update={"bag": tuple(bag)}))
    if record.get("broke"):
        journal = JournalEntry(turn=ctx.turn_label, text=f"{character.name} lost {label}: "
                               "it broke.")
        state = state.model_copy(update={"journal": (*state.journal, journal)})
    return state, words
