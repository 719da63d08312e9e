"""Using an item outside a fight (docs/rules/items.md#21-using-items-outside-combat, with the
``use``, ``charges``, ``breaksOn`` and ``gate`` of docs/rules/items.md#13-using-items-in-combat):
the GM's ``[inventory: action="use" item=... who=...]`` and the host's Use event
(``{"action": "use", "item": "Poultice"}``, ITM-OUT-2/14).

One use is all or nothing (ITM-OUT-10): the gate is rolled, the item or its charges are spent,
and the sheet (pools, tracks, conditions) and the bag are written in one new character value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from tagparse import Tag

from ..rules import reasons
from ..rules.bags import find_thing, item_of, meant_stack, stack_matches
from ..rules.checks.read import Rolled
from ..rules.context import TurnContext
from ..rules.fakes import reveal_on_use
from ..rules.game import Game
from ..rules.items import charges_left, item_is_worn, roll_amount, stat_number
from ..rules.sheet import SheetView
from ..rules.state import Character, JournalEntry, Stack, State
from ..rules.tracks import health_bar, health_pool, track_max, track_value
from ..ruleset import Item
from ..ruleset.combat import Gate, StatRead, Use
from ..ruleset.sheet import Track
from .answers import Answer, accepted, refused
from .attrs import FIGHTERS, HELD, WHO, read_character
from .checks import skill_check
from .checks.pipeline import value_check
from .declare import Read, Refusal, Request, action, attr, request
from .fight import KIND_USE_REASONS, KIND_USE_RECORD, kind_of, uses_in_round
from .fight.use import FIGHT_REASONS, FIGHT_RECORD, Outside, aimed, use_in_fight


def pool_max(game: Game, character: Character, state: State, pool: str) -> int:
    """A pool's max, read from the sheet without what items change (ITM-ABIL-6)."""
    row = next(p for p in game.ruleset.live.pools if p.id == pool)
    return character.most(pool, SheetView(game, character, state, items_apply=False).value(
        row.max))


def _matching(game: Game, state: State, character: Character, name: str) -> list[int]:
    """The bag positions of the stacks ``item=`` names: the ruleset item by label or
    invented name (ITM-NAME-1..3), else the stack's own name, ignoring case."""
    thing = find_thing(game, name, state)
    wanted = name.strip().casefold()
    if thing is not None and thing.item is not None:
        found = [i for i, s in enumerate(character.bag) if stack_matches(s, thing, name)]
        if found:
            return found
    return [i for i, s in enumerate(character.bag)
            if s.coin is None and s.name.casefold() == wanted]


@dataclass
class _Outcome:
    """What one use did, gathered while it is worked out, then written at once."""

    pools: dict[str, int]
    conditions: list[str]
    tracks: dict[str, int] = field(default_factory=dict)
    effects: list[str] = field(default_factory=list)
    record: dict[str, Any] = field(default_factory=dict)


def _refusal_for(game: Game, state: State, item: Item, stack: Stack) -> tuple[str, str] | None:
    """ITM-OUT-9: why this stack cannot be used now (reason, words), or None."""
    if (item.slots or item.binds is not None) and not item_is_worn(item, stack):
        how = {(True, True): "worn and bound", (True, False): "worn",
               (False, True): "bound"}[(bool(item.slots), item.binds is not None)]
        return reasons.NOT_WORN, f"{stack.name} works only while {how}"
    use = item.use
    assert use is not None
    if use.charges is not None:
        left = charges_left(item, stack)
        if left is None or left < use.charges:
            return reasons.NO_USE_LEFT, f"{stack.name} has no charges left"
    if use.gate is not None and stat_number(item, use.gate.difficulty) is None:  # ITM-GATE-4
        return (reasons.NO_DIFFICULTY,
                f"{stack.name}'s gate reads its difficulty from a stat the item does not give")
    return None


def _gate_label(game: Game, gate: Gate) -> str:
    """The name of what a gate rolls, as the line shows it (``Ward``)."""
    check = gate.check
    sheet = game.ruleset.sheet
    if check.skill is not None:
        return next((s.label for s in sheet.skills if s.id == check.skill), check.skill)
    if check.ability is not None:
        return next((a.label for a in sheet.abilities if a.id == check.ability), check.ability)
    ref = check.value
    if ref is not None and ref.derived is not None:
        return next((d.label for d in sheet.derived if d.id == ref.derived), ref.derived)
    return "Sheet"


def _gate_ctx(ctx: TurnContext, kind: str) -> TurnContext:
    """The gate's own dice: the check pipeline's stream under a seed kept apart for item uses,
    so a gate never rolls the dice of the reply's own ``[skill_check:]`` tags."""
    return replace(ctx, seed=f"{ctx.seed}\x1fitem-use/{kind}")


def _value_gate(game: Game, state: State, character: Character, gate: Gate, label: str,
                difficulty: int, gate_ctx: TurnContext) -> Rolled | None:
    """ITM-GATE-2: a gate on a sheet value: that number is the check's sheet number, with what
    conditions and items do to every check (ITM-OUT-11)."""
    assert gate.check.value is not None
    return value_check(game, state, character, gate.check.value, label, difficulty, gate_ctx)


def _roll_gate(game: Game, state: State, who: int, item: Item, stack: Stack, ctx: TurnContext,
               kind: str) -> tuple[bool, str, dict[str, Any]] | Answer:
    """ITM-GATE-1..8, ITM-OUT-11: (passed, words for a failure, record) — or a refusal when
    the check cannot be rolled at all."""
    use = item.use
    assert use is not None and use.gate is not None
    gate = use.gate
    character = state.characters[who]
    view = SheetView(game, character, state)
    label = _gate_label(game, gate)
    if gate.unless is not None and view.value(gate.unless.value) >= gate.unless.at_least:
        return True, "", {"gate": "skipped"}  # ITM-GATE-5
    difficulty = stat_number(item, gate.difficulty)
    assert difficulty is not None
    dc = min(max(math.floor(difficulty), 1), 100)
    gate_ctx = _gate_ctx(ctx, kind)
    record: dict[str, Any]
    if gate.check.value is not None:
        if game.ruleset.resolution is None:
            return refused(Tag("skill_check", (), 0, 0, "", None), reasons.NO_RESOLUTION,
                           "This ruleset declares no resolution, so it has no checks.")
        rolled = _value_gate(game, state, character, gate, label, dc, gate_ctx)
        if rolled is None:
            return refused(Tag("skill_check", (), 0, 0, "", None), reasons.MISSING_DIFFICULTY,
                           f"The {label} check has no difficulty; nothing was rolled.")
        success, total, rolls = rolled.success, rolled.value, rolled.rolls
    else:
        which = "skill" if gate.check.skill is not None else "ability"
        ident = gate.check.skill if gate.check.skill is not None else gate.check.ability
        check_tag = Tag("skill_check", ((which, str(ident)), ("dc", str(dc)),
                                        ("who", character.name)), 0, 0, "", None)
        _, answer = skill_check.answer(game, state, check_tag, gate_ctx)
        if not answer.ok:
            return answer
        success = bool(answer.record.get("success"))
        total, rolls = answer.record.get("total", 0), answer.record.get("rolls", [])
    shown = f"{total:g}" if isinstance(total, float) else str(total)
    record = {"gate": "passed" if success else "failed", "gateTotal": total, "gateDc": dc,
              "gateRolls": rolls}
    return success, f"{label} check {shown} against {dc}, failed", record


def _heal(game: Game, state: State, character: Character, use: Use, outcome: _Outcome,
          ctx: TurnContext, kind: str) -> None:
    """ITM-OUT-3: the amount onto the health pool or a plain health track (never above its
    max), or one mark off a wound track; without any of them the amount is only named."""
    bar = health_bar(game)
    if isinstance(bar, Track) and bar.kind == "wounds":
        most = track_max(game, character, state, bar)
        marks = track_value(game, character, state, bar)
        if marks == 0:
            outcome.effects.append(f"no wound to close ({bar.label} 0/{most})")
        else:
            outcome.tracks[bar.id] = marks - 1
            outcome.effects.append(f"one wound closes ({bar.label} {marks - 1}/{most})")
        outcome.record["closed"] = 1 if marks else 0
        return
    if use.amount is None:
        return
    rolled = roll_amount(use.amount, ctx.stream(kind, "use/heal"))
    if bar is None:
        outcome.effects.append(f"heals {rolled}")
        return
    if isinstance(bar, Track):
        most = track_max(game, character, state, bar)
        now = track_value(game, character, state, bar)
        after = min(now + max(rolled, 0), most)
        outcome.tracks[bar.id] = after
    else:
        now, after, most = _refill(game, state, character, outcome, bar.id, rolled)
    outcome.effects.append(f"heals {after - now} ({bar.label} {after}/{most})")
    outcome.record["healed"] = after - now


def _refill(game: Game, state: State, character: Character, outcome: _Outcome, pool: str,
            rolled: int) -> tuple[int, int, int]:
    """A pool given back ``rolled`` (a heal, ITM-OUT-3; a restore, ITM-OUT-5): never above
    its max, and a pool already above it is not lowered. Returns (before, after, max)."""
    most = pool_max(game, character, state, pool)
    now = outcome.pools.get(pool, most)
    after = min(max(now, now + max(rolled, 0)), max(most, now))
    outcome.pools[pool] = after
    return now, after, most


def _effect(game: Game, state: State, character: Character, use: Use, outcome: _Outcome,
            ctx: TurnContext, kind: str) -> None:
    """ITM-OUT-3..7: what the use does to the character who carries it (OQ-64)."""
    if use.kind in ("attack", "debuff") or use.targets == "enemy":  # ITM-OUT-7
        outcome.effects.append("hits nobody, as there is no fight; " + _what_it_does(game, use))
        outcome.record["hits"] = "nobody"
        return
    health = health_pool(game)
    if use.kind == "heal":  # ITM-OUT-3
        _heal(game, state, character, use, outcome, ctx, kind)
    if use.temporary is not None:  # ITM-OUT-4
        rolled = max(roll_amount(use.temporary, ctx.stream(kind, "use/temporary")), 0)
        if health is not None:
            key = f"{health.id}:temporary"
            kept = max(outcome.pools.get(key, 0), rolled)
            outcome.pools[key] = kept
            outcome.effects.append(f"{kept} temporary {health.label}")
            outcome.record["temporary"] = kept
    if use.restore is not None:  # ITM-OUT-5, ITM-USE-13
        pool_id = use.restore.pool
        row = next((p for p in game.ruleset.live.pools if p.id == pool_id), None)
        if row is not None:
            rolled = roll_amount(use.restore.amount, ctx.stream(kind, "use/restore"))
            now, after, most = _refill(game, state, character, outcome, pool_id, rolled)
            outcome.effects.append(f"gets back {after - now} {row.label} "
                                   f"({row.label} {after}/{most})")
            outcome.record["restored"] = after - now
    labels = {c.id: c.label for c in game.ruleset.conditions}
    for applied in use.applies:  # ITM-OUT-6: until something removes it
        if applied.condition not in outcome.conditions:
            outcome.conditions.append(applied.condition)
        outcome.effects.append(f"{labels.get(applied.condition, applied.condition)} "
                               "until removed")
    if outcome.effects:
        return
    outcome.effects.append(_what_it_does(game, use))


def _what_it_does(game: Game, use: Use) -> str:
    """ITM-OUT-7: what a use does, so the GM can narrate it."""
    parts: list[str] = [use.kind]
    if use.amount is not None:
        dice = " + ".join(p for p in (use.amount.dice, None if use.amount.flat is None
                                      else str(use.amount.flat)) if p)
        if dice:
            parts.append(f"{dice}{' ' + use.damage_type if use.damage_type else ''}")
    if use.save is not None:
        saves = {s.id: s.label for s in game.ruleset.sheet.saves}
        difficulty = use.save.difficulty or use.save_difficulty
        shown = "" if difficulty is None or isinstance(difficulty, StatRead) else f" {difficulty}"
        tail = f" {use.save.on_success} it" if use.save.on_success == "negates" else (
            f" for {use.save.on_success}" if use.save.on_success else "")
        parts.append(f"{saves.get(use.save.save, use.save.save)}{shown} save{tail}")
    labels = {c.id: c.label for c in game.ruleset.conditions}
    parts.extend(labels.get(a.condition, a.condition) for a in use.applies)
    return ", ".join(parts)


def _spend(game: Game, state: State, item: Item, bag: list[Stack], index: int,
           ctx: TurnContext, kind: str, outcome: _Outcome) -> str:
    """ITM-OUT-8, ITM-USE-11/12, ITM-CHG-1, ITM-BRK-1: take one or spend the charges; the
    words ``<n> left.`` (OQ-63), and the break when the last charge breaks the item."""
    use = item.use
    assert use is not None
    stack = bag[index]
    if use.consumes:
        outcome.record["left"] = stack.count - 1
        if stack.count == 1:
            bag.pop(index)
        else:
            bag[index] = stack.model_copy(update={"count": stack.count - 1})
        return f"{stack.count - 1} left."
    if use.charges is None or item.charges is None:
        return ""
    left = (charges_left(item, stack) or 0) - use.charges
    outcome.record["left"] = left
    bag[index] = stack.model_copy(update={"charges": left})
    words = f"{left} left."
    breaks = item.charges.breaks_on
    if left == 0 and breaks is not None:  # ITM-BRK-1
        face = ctx.stream(kind, "use/breaks").die(breaks.die)
        outcome.record["breaksRoll"] = face
        if face <= breaks.at_most:
            bag.pop(index)
            outcome.record["broke"] = True
            words += " Its last charge spent, it breaks."  # ITM-BRK-3
    return words


@request
class UseItem(Request):
    """Use an item: what its ``use`` does (ITM-OUT-2..16). In a formula fight a use aimed at the
    other side, or one naming ``target=``, is one of the round's actions
    (docs/rules/items.md#13-using-items-in-combat): it spends one whole use of its budget
    (``no-time`` past it; a ``free`` use spends nothing and begins no round), lands in its user's
    initiative order among the round's attacks, and rolls its ``toHit`` against each target's
    defence or each target's save against its ``saveDifficulty``; any other use is answered as
    outside a fight."""

    item: str = attr(HELD, "the item used, by name",
                     missing='Say what to use: [inventory: action="use" item="<name>"].')
    who: int = attr(WHO, "who uses it", shown="the player")
    target: str = attr(FIGHTERS, "in a formula fight: who the use is aimed at, comma-separated (as "
                       "many as its targetCount): foes for a use against the other side, heroes "
                       "for a heal or buff", shown="the only foe standing, or the user")


USE_RECORD = {
    "who": "who used it", "item": "the item's reference", "name": "the item's name",
    "used": "whether its use did something (ITM-OUT-16: an item without one is only named)",
    "gate": "passed or failed: the check before the use (ITM-GATE-1..8)",
    "gateTotal": "the gate check's total", "gateDc": "its difficulty",
    "gateRolls": "its dice", "healed": "health given back", "temporary": "temporary "
    "points kept", "restored": "a pool given back", "closed": "wound marks closed",
    "hits": "outside a fight an attack hits nobody", "left": "uses or items left",
    "charges": "charges left", "breaksRoll": "the break die", "broke": "it broke (ITM-BRK-4)",
    "playerMessage": "the Use button: what the player says",
    "itemUsed": "the Use button: the [item_used] line",
    **FIGHT_RECORD,  # an item used in a formula fight (ITM-USE)
    **KIND_USE_RECORD,  # an item used in a fight of a kind with its own answer (ITM-CLS-1..19)
}
USE_REASONS = (reasons.NOT_HELD, reasons.NOT_WORN, reasons.NO_USE_LEFT, reasons.NO_DIFFICULTY,
               *dict.fromkeys((*FIGHT_REASONS, *KIND_USE_REASONS)))


def _helped(game: Game, state: State, who: int, use: Use, ctx: TurnContext,
            kind: str) -> tuple[Character, dict[str, Any], list[str]]:
    """ITM-OUT-3/4 inside a fight (engine/actions/fight/use.py): what a heal and its temporary
    points give hero ``who`` — the new character, the record and the words."""
    character = state.characters[who]
    outcome = _Outcome(pools=dict(character.pools), conditions=list(character.conditions),
                       tracks=dict(character.tracks))
    _effect(game, state, character, use, outcome, ctx, kind)
    return (character.model_copy(update={"pools": outcome.pools, "tracks": outcome.tracks}),
            outcome.record, outcome.effects)


def _spent_in_fight(game: Game, state: State, item: Item, bag: list[Stack], index: int,
                    ctx: TurnContext, kind: str) -> dict[str, Any]:
    """ITM-OUT-8 inside a fight: the item or its charges spent from ``bag`` as out of one;
    the record (``left``, ``breaksRoll``, ``broke``)."""
    outcome = _Outcome(pools={}, conditions=[])
    _spend(game, state, item, bag, index, ctx, kind, outcome)
    return outcome.record


OUTSIDE = Outside(gate=_roll_gate, helps=_helped, spend=_spent_in_fight)
"""What a use in a fight does as one outside it (engine/actions/fight/use.py)."""


def use_item(game: Game, state: State, request: UseItem, ctx: TurnContext,
             kind: str) -> tuple[State, Answer, str | None]:
    """ITM-OUT-2..13: use ``item=`` for ``who=``; the new state, the answer, and the player's
    message for the Use button (``I use my Poultice.``, ITM-OUT-14/16)."""
    own = kind_of(game).use_item if state.encounter is not None else None
    if own is not None:  # a kind with its own answer to an item used in its fight (ITM-CLS)
        return own(game, state, request, ctx, kind)
    tag, name, who = request.tag, request.item, request.who
    character = state.characters[who]
    found = _matching(game, state, character, name)
    if not found:
        return state, refused(tag, reasons.NOT_HELD,
                              f"{character.name} has no {name[:80]}; nothing was used."), None
    first = character.bag[found[0]]
    item = item_of(game, state, first.item)
    spoken = f"I use my {first.name}."
    if item is None or item.use is None:  # ITM-OUT-16: still named, nothing happens
        # ITM-FAKE-13: even so, using a fake finds it out.
        state = reveal_on_use(game, state, who, found[0], ctx.turn_label)
        shown = state.characters[who].bag[found[0]].name
        record = {"name": shown, "who": character.name, "used": False}
        return state, accepted(tag, f"{character.name} uses {shown}.", record), spoken
    refusals = [(i, _refusal_for(game, state, item, character.bag[i])) for i in found]
    usable = [i for i, why in refusals if why is None]
    if not usable:  # ITM-OUT-9: nothing changes
        code, words = next(why for _, why in refusals if why is not None)
        return state, refused(tag, code, f"{words}; nothing was used."), spoken
    index = usable[0]
    if uses_in_round(game, state) and (aimed(item.use) or request.target.strip()):
        # a use aimed at the other side, or at target=, acts in the formula fight on now
        # (engine/actions/fight/use.py); a helping use without target= is answered as out of one, as
        # the recorded corpus pins (a friend's potion poured into a downed hero)
        found_at = (who, index, item, item_label(game, character.bag[index]))
        new_state, answer = use_in_fight(game, state, request, found_at, request.target, ctx,
                                         kind, OUTSIDE)
        return new_state, answer, spoken
    # ITM-FAKE-13: using a fake finds it out; what it really does then happens.
    state = reveal_on_use(game, state, who, index, ctx.turn_label)
    character = state.characters[who]
    stack = character.bag[index]
    use = item.use
    label = item_label(game, stack)
    outcome = _Outcome(pools=dict(character.pools), conditions=list(character.conditions),
                       tracks=dict(character.tracks))
    outcome.record.update({"item": stack.item, "name": label, "who": character.name})
    passed = True
    failure = ""
    if use.gate is not None:  # ITM-OUT-11: the gate is rolled first
        gated = _roll_gate(game, state, who, item, stack, ctx, kind)
        if isinstance(gated, Answer):
            return state, refused(tag, gated.reason or reasons.NO_RESOLUTION,
                                  f"{gated.text.rstrip('.')}; {label} was not used."), spoken
        passed, failure, gate_record = gated
        outcome.record.update(gate_record)
    if passed:
        _effect(game, state, character, use, outcome, ctx, kind)
    else:  # ITM-GATE-6, ITM-OUT-12
        outcome.effects = [f"{failure}; it is used up for nothing"]
    bag = list(character.bag)
    left = _spend(game, state, item, bag, index, ctx, kind, outcome)
    line = f"{character.name} uses {label}: {', '.join(outcome.effects)}."
    if left:
        line += f" {left}"
    new_character = character.model_copy(update={  # ITM-OUT-10: sheet and bag together
        "bag": tuple(bag), "pools": outcome.pools, "tracks": outcome.tracks,
        "conditions": tuple(outcome.conditions)})
    new_state = state.with_character(who, new_character)
    if outcome.record.get("broke"):  # ITM-BRK-4: the journal counts it as lost
        journal = JournalEntry(turn=ctx.turn_label,
                               text=f"{character.name} lost {label}: it broke.")
        new_state = new_state.model_copy(update={"journal": (*state.journal, journal)})
    outcome.record["used"] = True
    return new_state, accepted(tag, line, outcome.record), spoken


def acts_in_fight(game: Game, state: State, tag: Tag) -> bool:
    """Whether ``[inventory: action="use"]`` acts in the formula fight on now (its user's budget
    spent, in the round's initiative order): a use aimed at the other side, or one that names
    ``target=``; any other use is answered as out of a fight
    (docs/rules/items.md#13-using-items-in-combat)."""
    if not uses_in_round(game, state):
        return False
    if (tag.get("target") or "").strip():
        return True
    who = read_character(state, (tag.get("who") or "").strip() or None)
    if isinstance(who, Read):  # as the request reads them, the name and the item
        who = who.value
    if isinstance(who, Refusal):
        return False
    character = state.characters[who]
    item_name = meant_stack(game, state, character.bag, tag.get("item") or "")
    if isinstance(item_name, list):
        return False
    found = _matching(game, state, character, item_name)
    item = item_of(game, state, character.bag[found[0]].item) if found else None
    return item is not None and item.use is not None and aimed(item.use)


def item_label(game: Game, stack: Stack) -> str:
    """ITM-USE-3: a use is named after the item, whatever the stack is called."""
    found = game.items.get(stack.item) if stack.item is not None else None
    return found.label if found is not None else stack.name


@action("inventory", "use", UseItem, record=USE_RECORD, reasons=USE_REASONS)
def use_tag(game: Game, state: State, request: UseItem,
            ctx: TurnContext) -> tuple[State, Answer]:
    """``[inventory: action="use" item=... who=...]`` (ITM-OUT-2, ITM-OUT-15)."""
    new_state, answer, _ = use_item(game, state, request, ctx, "inventory")
    return new_state, _target_note(request, answer)


def _target_note(request: UseItem, answer: Answer) -> Answer:
    """A ``target=`` no fight read is named in the answer's notes."""
    if not request.target.strip() or not answer.ok or "round" in answer.record:
        return answer
    return answer.model_copy(update={"notes": (
        *answer.notes, "ignored target=: no formula fight is on, so the item acts on its user")})


@action("event", "use", UseItem, record=USE_RECORD, reasons=USE_REASONS)
def use_event(game: Game, state: State, request: UseItem,
              ctx: TurnContext) -> tuple[State, Answer]:
    """The host's Use button (ITM-OUT-2, ITM-OUT-14/16): ``playerMessage`` is what the player
    says, ``itemUsed`` the line of the ``[item_used]`` block (absent for an item without
    ``use``)."""
    new_state, answer, spoken = use_item(game, state, request, ctx, "event")
    answer = _target_note(request, answer)
    if spoken is None:
        return new_state, answer
    record = {**answer.record, "playerMessage": spoken}
    update: dict[str, Any] = {"record": record}
    if answer.ok and answer.record.get("used") is True:
        record["itemUsed"] = answer.text
    elif answer.ok:  # ITM-OUT-16: only the player's words, no [item_used] block
        update["text"] = spoken
    return new_state, answer.model_copy(update=update)
