"""``[combat: op="reload" who= with=]``: a hero fills the clip of a worn weapon in a fight
(docs/rules/items.md#102-clip: ITM-CLIP-3/5/6, ITM-AMMO-8/10). The reload spends the clip's
``reload`` budget — one whole use of that turn action — and loads from the bag what the
weapon shoots (as much as the bag still has, if that is less), or fully for a weapon
without ``ammo``. Like an attack it acts in the round, in the initiative order of its hero
(engine/actions/reply.py)."""

from __future__ import annotations

import math
from typing import Any

from ...rules import reasons
from ...rules.ammo import carried, clip_size, loaded, shoot, with_loaded
from ...rules.context import TurnContext
from ...rules.fight.formula import largest_per_class, standing
from ...rules.formula import evaluate, sheet_reader
from ...rules.game import Game
from ...rules.sheet import SheetView
from ...rules.state import Combatant, JournalEntry, State
from ...rules.weapons import armed_with
from ..answers import Answer, accepted, refused
from ..attrs import FIGHTER, WIELDED
from ..declare import ROUND, Refusal, Request, action, attr, request
from ..examples import FOE_NAMES, Party, example, item_where
from .arms import Armed
from .encounter import budget_of, cannot_act, combat_of, encounter_on, fighting, round_of, weapon_of


@request
class Reload(Request):
    """A hero fills a worn weapon's clip (ITM-CLIP-3/5)."""

    who: str = attr(FIGHTER, "who reloads: a hero in the fight", shown="the player")
    weapon: str | None = attr(WIELDED, "the worn weapon with a clip", name="with",
                              shown="the first worn weapon with a clip")


def _clipped(game: Game, state: State, who: int, named: str | None) -> Armed | Refusal:
    """``with=`` a worn weapon that keeps a loaded count; without it the first such weapon
    worn."""
    name = state.characters[who].name
    if named is not None and named.strip():
        armed = weapon_of(game, state, who, named)
        if isinstance(armed, Refusal):
            return armed
        if armed is not None and armed[2].clip is not None:
            return armed
        shown = armed[0].name if armed is not None else "An unarmed strike"
        return Refusal(reasons.NO_CLIP, f"{shown} keeps no loaded count (no clip) to reload; "
                       "nothing was done.")
    for stack in state.characters[who].bag:
        armed = armed_with(game, state, stack) if stack.equipped else None  # ITM-FAKE-20
        if armed is not None and armed[2].clip is not None:
            return armed
    return Refusal(reasons.NO_CLIP, f"{name} wears no weapon with a clip to reload; nothing "
                   "was done.")


def one_use(game: Game, view: SheetView, striker: Combatant, budget: str,
             ctx: TurnContext) -> tuple[str, ...] | Refusal:
    """ITM-CLIP-5, CMB-TURN-9..12: a reload spends one whole use of its budget's turn action
    (all the attacks that use allows), so it happens only while a use is untouched this round;
    the budget entries it spends. A budget that is no turn action is not counted."""
    found = next((a for a in combat_of(game).turn_actions if a.id == budget), None)
    if found is None:
        return (budget,)
    stream = ctx.for_tag(0).stream("attack", "budget")
    per = max(evaluate(found.per, sheet_reader(view), stream).value, 0)
    each = max(largest_per_class(view, found.attacks, stream), 1) \
        if found.attacks is not None else 1
    used = math.ceil(striker.spent.count(budget) / each)
    if used >= per:
        return Refusal(reasons.NO_TIME, f"NO TIME: {striker.name} has no {found.name} left "
                       "this round to reload; nothing was done.")
    return (budget,) * (each * (used + 1) - striker.spent.count(budget))


RECORD = {"round": "the encounter's round", "who": "who reloaded", "weapon": "the weapon",
          "budget": "the turn action the reload spent (the clip's reload)",
          "loaded": "how many went into the clip", "held": "what it holds loaded after",
          "of": "the clip's size", "usedUp": "stacks of ammunition the reload took to 0"}


def _teach(game: Game, party: Party) -> list[str]:
    """The GM's lines for the weapons this ruleset has: reloading a clip, a weapon's modes,
    the off-hand strike (only where some weapon has them), each on the first such weapon."""
    if fighting(game) is not None:
        return []
    lines = []
    clip = item_where(game, lambda c: c.item.attack is not None and c.item.attack.clip is not None)
    if clip is not None:
        lines.append("- Reload a weapon with a clip: " + example(
            "combat", op="reload", who=party.hero, with_=clip.label)
            + " (spends the clip's reload budget; loads from what the hero carries).")
    moded = item_where(game, lambda c: c.item.attack is not None and bool(c.item.attack.modes))
    if moded is not None and moded.item.attack is not None:
        mode = moded.item.attack.modes[0]
        lines.append("- A weapon's other way of attacking: " + example(
            "attack", who=party.hero, target=FOE_NAMES[0], with_=moded.label,
            mode=mode.label) + ".")
    rule = combat_of(game).off_hand
    off = item_where(game, lambda c: c.item.attack is not None and c.item.attack.off_hand)
    if rule is not None and off is not None:
        lines.append("- After a strike with a weapon marked off hand, a second such weapon "
                     "strikes once: " + example("attack", who=party.hero, target=FOE_NAMES[0],
                                                with_=off.label, action=rule.budget) + ".")
    return lines


@action("combat", "reload", Reload, phase=ROUND, teach=_teach, record=RECORD,
        reasons=(reasons.NO_COMBAT, reasons.UNSUPPORTED, reasons.NO_ENCOUNTER,
                 reasons.UNKNOWN_COMBATANT, reasons.DOWNED, reasons.CANNOT_ACT,
                 reasons.UNKNOWN_WEAPON, reasons.NOT_WORN, reasons.NO_CLIP, reasons.ALREADY,
                 reasons.NO_AMMO, reasons.UNKNOWN_BUDGET, reasons.NO_TIME))
def reload(game: Game, state: State, request: Reload, ctx: TurnContext) -> tuple[State, Answer]:
    """``[combat: op="reload" who= with=]``: the clip filled from the bag (ITM-CLIP-5)."""
    encounter = encounter_on(game, state)
    if isinstance(encounter, Refusal):
        return state, refused(request.tag, encounter.reason, encounter.text)
    who = state.character_index(request.who or None)
    me = encounter.find(state.characters[who].name) if who is not None else None
    if who is None or me is None:
        return state, refused(request.tag, reasons.UNKNOWN_COMBATANT,
                              f'No hero called "{(request.who or state.player)[:60]}" is in '
                              "the fight; nothing was done.")
    hero = state.characters[who]
    if not standing(game, state, encounter.combatants[me]):
        return state, refused(request.tag, reasons.DOWNED,
                              f"{hero.name} is down and does not act; nothing was done.")
    stopped = cannot_act(game, state, encounter, me)
    armed = stopped or _clipped(game, state, who, request.weapon)
    if isinstance(armed, Refusal):
        return state, refused(request.tag, armed.reason, armed.text)
    stack, item, attack = armed
    assert attack.clip is not None
    size = clip_size(game, item, attack.clip)
    held = loaded(game, item, attack.clip, stack)
    if held >= size:
        return state, refused(request.tag, reasons.ALREADY, f"{stack.name} is loaded already "
                              f"({held} of {size}); nothing was done.")
    budget = budget_of(game, attack.clip.reload, None)
    if isinstance(budget, Refusal):
        return state, refused(request.tag, budget.reason, budget.text)
    encounter = round_of(encounter, ctx)
    spends = one_use(game, SheetView(game, hero, state), encounter.combatants[me], budget, ctx)
    if isinstance(spends, Refusal):
        return state, refused(request.tag, spends.reason, spends.text)
    record: dict[str, Any] = {"round": encounter.round, "who": hero.name,
                              "weapon": stack.name, "budget": budget}
    count = size - held
    after = state
    if attack.ammo is not None:  # ITM-CLIP-5: from the bag, as much as it still has
        count = min(count, carried(game, state, hero, attack.ammo.tag))
        taken = shoot(game, state, who, attack.ammo.tag, count, 0, (), kept=False) \
            if count else None
        if taken is None:
            return state, refused(request.tag, reasons.NO_AMMO,
                                  f"{hero.name} carries nothing {stack.name} shoots "
                                  f"({attack.ammo.tag}) to load it with; nothing was done.")
        after = taken.state
        if taken.used_up:  # ITM-AMMO-8: the journal names what was used up
            record["usedUp"] = list(taken.used_up)
            after = after.model_copy(update={"journal": (*after.journal, *(
                JournalEntry(turn=ctx.turn_label, text=f"{hero.name} used up {used}.")
                for used in taken.used_up))})
    position = next((i for i, s in enumerate(after.characters[who].bag) if s is stack), None)
    if position is not None:  # ITM-CLIP-6: on its stack (gone only if it shot itself)
        after = with_loaded(after, who, position, held + count)
    combatants = list(encounter.combatants)
    striker = combatants[me]
    combatants[me] = striker.model_copy(update={"spent": (*striker.spent, *spends)})
    after = after.model_copy(update={"encounter": encounter.model_copy(
        update={"combatants": tuple(combatants)})})
    record.update({"loaded": count, "held": held + count, "of": size})
    # ITM-AMMO-10: "Ada loads 1 into Watch pistol: 1 of 1 loaded."
    text = f"{hero.name} loads {count} into {stack.name}: {held + count} of {size} loaded."
    return after, accepted(request.tag, text, record)
