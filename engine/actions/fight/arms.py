"""What a hero's weapon adds to its ``[attack:]`` beyond its numbers
(docs/rules/items.md#10-ammunition-and-reloading,
docs/rules/items.md#11-modes-a-second-weapon-a-floor-and-conditions-on-a-hit):
the mode it is made in (``mode=``), the ammunition or loaded count it shoots, the off-hand
strike, the floor its damage is raised to, the further amounts (``plus``) dealt on a hit, the
conditions it puts on what it hits (``onHit``), and the ammunition picked up after a won
fight. engine/actions/fight/formula.py calls these from its strike; the Reload action is in
:mod:`.fight_weapons`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...rules import reasons
from ...rules.ammo import carried, clip_size, loaded, recover, shoot, shots_per_attack, with_loaded
from ...rules.armour import foe_defences, typed_damage
from ...rules.checks.read import CheckKind, CheckRead
from ...rules.context import TurnContext
from ...rules.fight.conditions import immunities, label_of, names_of
from ...rules.fight.formula import attacks_left, strike
from ...rules.formula import Resolve
from ...rules.game import Game
from ...rules.items import read_stat
from ...rules.saves_against import MAGICAL, save_bonus
from ...rules.sheet import SheetView
from ...rules.state import Combatant, Encounter, FightCondition, JournalEntry, Stack, State
from ...rules.weapons import armed_with, best, whole
from ...ruleset import Formula, Item, parse_formula
from ...ruleset.combat import Attack, Mode, OnHit, Plus
from ...ruleset.fight import ONE, TurnAction
from ...ruleset.formula import Number
from ..checks.pipeline import effective_resolution, resolve_request
from ..declare import Refusal

Armed = tuple[Stack, Item, Attack]
OFF_HAND = ", off hand"  # ITM-OFF-3: "Silver coffin nail, off hand"
NO_DICE = Formula("0", Number(0))  # a plus component of a flat amount only


@dataclass(frozen=True, slots=True)
class Arming:
    """How this attack is made with its weapon: in which ``mode`` (None: the default), and
    whether it is the off-hand strike (ITM-OFF-3)."""

    mode: Mode | None = None
    off_hand: bool = False


PLAIN = Arming()


# --- before the dice: the mode, the off hand, what there is to shoot -----------------------


def mode_of(armed: Armed | None, named: str) -> Mode | Refusal | None:
    """ITM-MODE-2, docs/design.md#combat-forms: ``mode=`` one of the weapon's modes, by id or label
    (any case); None without it (the weapon's default way). A name the weapon has no mode of, or a
    mode for an unarmed strike, is refused ``unknown-mode``."""
    wanted = named.strip().casefold()
    if not wanted:
        return None
    modes = armed[2].modes if armed is not None else []
    found = next((m for m in modes if wanted in (m.id.casefold(), m.label.casefold())), None)
    if found is not None:
        return found
    weapon = armed[0].name if armed is not None else "An unarmed strike"
    known = f" (modes: {', '.join(m.id for m in modes)})" if modes else " (it has none)"
    return Refusal(reasons.UNKNOWN_MODE, f'{weapon} has no mode "{named.strip()[:40]}"{known}; '
                   "nothing was done.")


def is_off_hand(game: Game, state: State, who: int, striker: Combatant, armed: Armed | None,
                budget: str) -> bool:
    """ITM-OFF-1..3, docs/design.md#combat-forms: the attack is the off-hand strike when it spends
    the combat block's ``offHand`` budget with a weapon marked ``offHand``, and its wearer struck
    this round with another weapon so marked."""
    rule = game.ruleset.combat.off_hand if game.ruleset.combat is not None else None
    if rule is None or armed is None or not armed[2].off_hand or budget != rule.budget:
        return False
    bag = state.characters[who].bag
    for name in striker.wielded:
        stack = next((s for s in bag if s.name == name), None)
        if stack is None or stack is armed[0] or name == armed[0].name:
            continue
        other = armed_with(game, state, stack)  # ITM-FAKE-20: as the weapon it passes for
        if other is not None and other[2].off_hand:
            return True
    return False


def off_hand_no_time(game: Game, view: SheetView, striker: Combatant, budget: str,
                     ctx: TurnContext) -> Refusal | None:
    """ITM-OFF-2/5: the off-hand strike is a single strike on its budget, whatever that budget
    allows in attacks: it happens while a use of the budget is left this round."""
    combat = game.ruleset.combat
    assert combat is not None
    found = next((a for a in combat.turn_actions if a.id == budget), None)
    action = found if found is not None else TurnAction(id=budget, name=budget)
    once = action.model_copy(update={"attacks": ONE})
    if attacks_left(once, view, ctx.for_tag(0).stream("attack", "budget"), striker.spent):
        return None
    return Refusal(reasons.NO_TIME, f"NO TIME: {striker.name} has no {action.name} left this "
                   "round for an off-hand attack; nothing was done.")


def ready(game: Game, state: State, who: int, armed: Armed | None,
          mode: Mode | None) -> Refusal | None:
    """ITM-AMMO-4, ITM-CLIP-4, ITM-MODE-7: a weapon that shoots is used only while its wearer
    carries enough for one attack (``no-ammo``) or, with a clip, while it holds enough loaded
    (``not-loaded``)."""
    if armed is None:
        return None
    stack, item, attack = armed
    need = shots_per_attack(attack, mode)
    if not need:
        return None
    name = state.characters[who].name
    if attack.clip is not None:
        held = loaded(game, item, attack.clip, stack)
        if held >= need:
            return None
        return Refusal(reasons.NOT_LOADED, f"{stack.name} holds {held} loaded and this attack "
                       f'shoots {need}: reload first ([combat: op="reload" who="{name}" '
                       f'with="{stack.name}"]); nothing was done.')
    assert attack.ammo is not None
    have = carried(game, state, state.characters[who], attack.ammo.tag)
    if have >= need:
        return None
    return Refusal(reasons.NO_AMMO, f"{name} carries {have} of what {stack.name} shoots "
                   f"({attack.ammo.tag}) and this attack shoots {need}; nothing was done.")


def mode_to_hit(arming: Arming) -> int:
    """ITM-MODE-4: a mode's ``toHit`` is added to hit (a number in a sum fight)."""
    return arming.mode.to_hit or 0 if arming.mode is not None else 0


def off_hand_flat(game: Game, view: SheetView, armed: Armed, flat: int) -> int:
    """ITM-OFF-4/7: the off-hand strike's flat damage — with ``ability: penalty-only`` its
    damage ability counts only where it subtracts, unless the wearer's ``fullWhen`` value is
    above 0."""
    rule = game.ruleset.combat.off_hand if game.ruleset.combat is not None else None
    damage = armed[2].damage
    if rule is None or rule.ability == "full" or damage is None:
        return flat
    if rule.full_when is not None and view.value(rule.full_when) > 0:
        return flat
    ability = best(game, view, armed[1], damage.abilities)
    return flat - ability if ability > 0 else flat


# --- the damage: floor and plus --------------------------------------------------------------


def floor_of(game: Game, armed: Armed | None) -> int:
    """ITM-FLOOR-1: the least a hit deals, written out or read from a number stat (0: none)."""
    if armed is None or armed[2].floor is None:
        return 0
    return max(whole(read_stat(game, armed[1], armed[2].floor)), 0)


def foe_save(game: Game, state: State, foe: Combatant, save: str, dc: int, ctx: TurnContext,
             purpose: str, bonus: int = 0) -> tuple[bool, dict[str, Any]]:
    """ITM-ONHIT-5, ITM-PLUS-3: a foe's save (a save of the sheet, else an ability) against
    ``dc``, with the ability modifier it joined with (CMB-TPL-8), as its other saves, and
    ``bonus`` (ITM-ONHIT-7: what its template adds against the condition or magic)."""
    res = game.ruleset.resolution
    if res is None:
        return False, {"rolls": [], "total": 0}
    kind: CheckKind = "save" if any(s.id == save for s in game.ruleset.sheet.saves) \
        else "ability"
    view = SheetView(game, None, state)
    effective, _ = effective_resolution(res, kind, save, view)
    label = next((r.label for r in (*game.ruleset.sheet.saves, *game.ruleset.sheet.abilities)
                  if r.id == save), save)
    read = CheckRead(who=foe.name, kind=kind, ident=save, label=label, attrs={"dc": str(dc)},
                     view=view, ability=None, ability_part=foe.modifier or 0, rank=0,
                     own_bonus=bonus)
    rolled = resolve_request(game, effective, read, ctx, purpose)
    if rolled is None:
        return False, {"rolls": [], "total": 0}
    row: dict[str, Any] = {"save": save, "dc": dc, "rolls": list(rolled.rolls),
                           "total": int(rolled.value), "saved": rolled.success}
    if bonus:
        row["bonus"] = bonus
    return rolled.success, row


def _reaches(plus: Plus, foe: Combatant) -> bool:
    """ITM-PLUS-4: a ``targetIs`` component reaches only a target of those creature types or
    tags (a foe's come from its template)."""
    wanted = plus.target_is
    if wanted is None:
        return True
    return bool(set(wanted.types) & set(foe.types)) or bool(set(wanted.tags) & set(foe.tags))


@dataclass(frozen=True, slots=True)
class Extra:
    """The further amounts of one hit (ITM-PLUS-1..8): what they dealt together, one record
    row and one text part each."""

    dealt: int
    rows: tuple[dict[str, Any], ...]
    texts: tuple[str, ...]


def extra_damage(game: Game, state: State, armed: Armed | None, foe: Combatant, critical: bool,
                 resolve: Resolve, ctx: TurnContext, strike_key: str) -> Extra:
    """ITM-PLUS-1..6/8: each ``plus`` component of the weapon that applies — ``when:
    critical`` only on a critical hit, ``when: toggled`` only while the item's switch is on,
    ``targetIs`` only against such a target — rolled on its own (its dice doubled on a
    critical, like the weapon's), typed and met by the target's defences on its own; a
    ``save`` the target makes halves it or takes it all (``onSuccess``)."""
    if armed is None or not armed[2].plus:
        return Extra(0, (), ())
    defences = foe_defences(game, foe)
    dealt = 0
    rows: list[dict[str, Any]] = []
    texts: list[str] = []
    stream_ctx = ctx.for_tag(0)
    for index, plus in enumerate(armed[2].plus):
        if plus.when == "critical" and not critical:
            continue
        if plus.when == "toggled" and not armed[0].toggled:
            continue
        if not _reaches(plus, foe):
            continue
        parsed = parse_formula(plus.dice) if plus.dice else None
        formula = parsed if isinstance(parsed, Formula) else NO_DICE
        struck = strike(formula, resolve, critical, foe.hp or 0,
                        stream_ctx.stream(strike_key, f"plus/{index}"), plus.flat or 0)
        amount = struck.damage
        row: dict[str, Any] = {"damage": amount,
                               "damageRolls": [list(r.faces) for r in struck.rolls.rolls]}
        shown = " + ".join(f"{r} ({'+'.join(map(str, r.faces))})" for r in struck.rolls.rolls)
        if plus.flat:
            shown = f"{shown} + {plus.flat}" if shown else str(plus.flat)
        text = f"+ {shown or 0} = {amount}" + (f" {plus.type}" if plus.type else "")
        if plus.save is not None and plus.save.difficulty is not None:
            saved, rolled = foe_save(game, state, foe, plus.save.save, plus.save.difficulty,
                                     stream_ctx, f"{strike_key}/plus/{index}/save")
            row["save"] = rolled
            if saved:
                amount = amount // 2 if plus.save.on_success == "half" else 0
                text += f" (saved: {amount})"
        kept, guards = typed_damage(amount, plus.type, defences, frozenset(armed[1].tags))
        if guards:
            text += f" ({'; '.join(g.text for g in guards)}: {kept})"
            row["affectedBy"] = [g.text for g in guards]
        if plus.type is not None:
            row["damageType"] = plus.type
        row["dealt"] = kept
        dealt += kept
        rows.append(row)
        texts.append(text)
    return Extra(dealt, tuple(rows), tuple(texts))


# --- after the dice: what it puts on the target, what it shoots --------------------------------


def on_hit(game: Game, state: State, encounter: Encounter, target: int, armed: Armed | None,
           dealt: int, ctx: TurnContext, strike_key: str
           ) -> tuple[Combatant, list[dict[str, Any]], list[str]]:
    """ITM-ONHIT-1..3/5/6: each ``onHit`` condition the target gets because the damage that
    arrived (after resistances) reached ``atLeast``: for ``rounds`` of its turns, or until
    removed, or — ``saveEnds`` — until it makes that save (rolled at the end of each round,
    as every save against a fight condition, CMB-COND-3); an entry's ``save`` is rolled now
    and a success keeps it off; a condition the target is immune to is never applied."""
    foe = encounter.combatants[target]
    if armed is None or not armed[2].on_hit or not foe.hp:
        return foe, [], []
    names = names_of(state, encounter, target)
    immune = immunities(game, names)
    typed = foe_defences(game, foe)
    conditions = list(foe.conditions)
    rows: list[dict[str, Any]] = []
    texts: list[str] = []
    for index, entry in enumerate(armed[2].on_hit):
        if dealt < entry.at_least:
            continue
        label = label_of(game, entry.condition)
        row: dict[str, Any] = {"condition": entry.condition}
        if entry.condition in immune or typed.immune_to(entry.condition):
            row["immune"] = True
            texts.append(f"{foe.name} is immune to {label}")
            rows.append(row)
            continue
        if entry.save is not None and entry.save.difficulty is not None:
            bonus = save_bonus(game, foe, entry.condition, MAGICAL in armed[1].tags)
            saved, rolled = foe_save(game, state, foe, entry.save.save, entry.save.difficulty,
                                     ctx.for_tag(0), f"{strike_key}/onhit/{index}/save", bonus)
            row["save"] = rolled
            if saved:
                texts.append(f"{foe.name} saves against {label}")
                rows.append(row)
                continue
        lasting = _lasting(entry)
        conditions = [c for c in conditions if c.name != entry.condition] + [lasting]
        row.update({k: v for k, v in (("rounds", lasting.rounds), ("saveEnds", lasting.save))
                    if v is not None})
        rows.append(row)
        texts.append(f"{foe.name} is {label}" + (
            f" for {lasting.rounds} round{'s' if lasting.rounds != 1 else ''}"
            if lasting.rounds is not None else ""))
    return foe.model_copy(update={"conditions": tuple(conditions)}), rows, texts


def _lasting(entry: OnHit) -> FightCondition:
    """ITM-ONHIT-2/6: how long an onHit condition lasts."""
    ends = entry.save_ends
    if ends is not None:
        return FightCondition(name=entry.condition, save=ends.save, dc=ends.difficulty)
    return FightCondition(name=entry.condition, rounds=entry.rounds)


def fire(game: Game, state: State, who: int, armed: Armed | None, arming: Arming,
         ctx: TurnContext) -> tuple[State, dict[str, Any], str]:
    """ITM-AMMO-3/8/10, ITM-CLIP-4/6: what the attack shoots, taken as it is made (hit or
    miss): from the loaded count on the weapon's stack, else from the tagged stacks of the
    bag (counted in the encounter for recovery); the record's ``ammo`` and the log line
    ``Hunting bow: 2 left to shoot.``; a stack used up is named in the journal."""
    if armed is None:
        return state, {}, ""
    stack, item, attack = armed
    need = shots_per_attack(attack, arming.mode)
    if not need:
        return state, {}, ""
    if attack.clip is not None:
        left = loaded(game, item, attack.clip, stack) - need
        position = state.characters[who].bag.index(stack)
        state = with_loaded(state, who, position, left)
        return (state, {"ammo": {"shot": need, "left": left,
                                 "of": clip_size(game, item, attack.clip)}},
                f" {stack.name}: {left} left to shoot.")
    assert attack.ammo is not None and state.encounter is not None
    shooting = shoot(game, state, who, attack.ammo.tag, need, attack.ammo.recover,
                     state.encounter.shots)
    assert shooting is not None  # ready() refused an attack without enough
    state = shooting.state.model_copy(update={"encounter": state.encounter.model_copy(
        update={"shots": shooting.shots})})
    record: dict[str, Any] = {"ammo": {"shot": need, "left": shooting.left}}
    if shooting.used_up:
        record["ammo"]["usedUp"] = list(shooting.used_up)
        name = state.characters[who].name
        lines = [JournalEntry(turn=ctx.turn_label, text=f"{name} used up {used}.")
                 for used in shooting.used_up]
        state = state.model_copy(update={"journal": (*state.journal, *lines)})
    return state, record, f" {stack.name}: {shooting.left} left to shoot."


def picked_up(game: Game, state: State, encounter: Encounter
              ) -> tuple[State, list[dict[str, Any]], str]:
    """ITM-AMMO-5/6/10, OQ-30: after a won fight each hero picks up ``recover`` of what it
    shot, per stack — ``Brannoc picks up 2 of 5 Arrow shot.``; the record's ``recovered``."""
    state, found = recover(game, state, encounter)
    rows = [{"who": r.who, "item": r.name, "shot": r.shot, "recovered": r.recovered}
            for r in found]
    words = [f"{r.who} picks up {r.recovered} of {r.shot} {r.name} shot." for r in found]
    return state, rows, (" " + " ".join(words)) if words else ""


def spent_with(striker: Combatant, budget: str, armed: Armed | None) -> Combatant:
    """The striker after a strike: its budget spent (CMB-TURN-9) and the weapon it struck
    with this round (ITM-OFF-3)."""
    return striker.model_copy(update={
        "spent": (*striker.spent, budget),
        "wielded": (*striker.wielded, armed[0].name if armed is not None else "")})
