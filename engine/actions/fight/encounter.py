"""What every ``[combat:]`` and ``[attack:]`` handler asks first: whether the ruleset fights
this way, the fight on now, who may act and at whom, with what and on which turn action, and
the round a reply's strike belongs to."""

from __future__ import annotations

from typing import Any

from ...rules import reasons
from ...rules.context import TurnContext
from ...rules.fight.conditions import held_back, names_of
from ...rules.fight.formula import standing
from ...rules.fight.pool import risen
from ...rules.game import Game
from ...rules.state import Combatant, Encounter, Stack, State
from ...rules.weapons import armed_with, first_worn_weapon
from ...ruleset import Item
from ...ruleset.combat import Attack
from ...ruleset.fight import Combat
from ...ruleset.ruleset import SYMBOLS
from ..answers import Answer, accepted, refused
from ..declare import Refusal, Request
from . import check_kinds as other_kinds  # roll-against and symbol-pool fights

RANGES = ("near", "far")
UNARMED = "unarmed"

FORMULA = ("formula",)
BY_TURNS = ("formula", "outcome")
"""The kinds of combat whose start, join, condition and end are formula combat's (an
outcome fight's foes join, are afflicted and leave the same way)."""

MAX_TARGETS = 12
"""The most names a ``target=`` list is read for; one more is kept, so that a list naming too
many is refused rather than cut short."""


def target_names(written: str) -> list[str]:
    """``target=`` as comma-separated names, each once, in the order written (at most
    :data:`MAX_TARGETS` and one more)."""
    names = dict.fromkeys(n.strip() for n in written.split(",") if n.strip())
    return list(names)[:MAX_TARGETS + 1]


FOE_STRIKE = "strike"  # what a foe's attack spends (its template's attacks a round)


def fighting(game: Game, kinds: tuple[str, ...] = FORMULA) -> Refusal | None:
    """Why this ruleset answers no tag of ``kinds`` of combat, or None when it does."""
    kind = game.fight.kind
    if kind == "none":
        return Refusal(reasons.NO_COMBAT, 'This ruleset turns fights off ("kind": "none"); '
                       "nothing was done.")
    armed_symbols = game.fight.kind == SYMBOLS and game.fight.armed
    if kind not in kinds and not ("formula" in kinds and armed_symbols):
        # a symbol-pool ruleset with combat.attack fights as formula combat does
        return (other_kinds.no_attack(game) if "formula" in kinds else None) or Refusal(
            reasons.UNSUPPORTED, f"This ruleset fights with {kind} combat, which does not "
            "answer this tag; nothing was done.")
    return None


def encounter_on(game: Game, state: State,
              kinds: tuple[str, ...] = FORMULA) -> Encounter | Refusal:
    """The fight on now, or why there is none to act in."""
    refusal = fighting(game, kinds)
    if refusal is not None:
        return refusal
    if state.encounter is None:
        return Refusal(reasons.NO_ENCOUNTER, 'No fight is on: begin one with [combat: '
                       'op="start" foe="<name>"]; nothing was done.')
    return state.encounter


def combat_of(game: Game) -> Combat:
    combat = game.ruleset.combat
    assert combat is not None
    return combat


def refuse(state: State, tag: Any, refusal: Refusal) -> tuple[State, Answer]:
    return state, refused(tag, refusal.reason, refusal.text)


def target_of(game: Game, state: State, encounter: Encounter, attacker: Combatant,
            named: str) -> int | Refusal:
    """``target=``: one of the other side, still standing; without it the only one standing
    there. Heroes attacking heroes and foes attacking foes are not answered yet."""
    side = "foes" if attacker.side == "party" else "party"
    up = [i for i, c in enumerate(encounter.combatants)
          if c.side == side and standing(game, state, c)]
    if not named:
        if len(up) == 1:
            return up[0]
        names = ", ".join(encounter.combatants[i].name for i in up)
        what = "foe" if side == "foes" else "hero"
        return Refusal(reasons.MISSING_ATTRIBUTE, f'Name the target: target="<{what}>" ({names}).')
    index = encounter.find(named)
    if index is None:
        names = ", ".join(c.name for c in encounter.combatants)
        return Refusal(reasons.UNKNOWN_COMBATANT,
                       f'Nobody called "{named[:60]}" is in the fight ({names}).')
    found = encounter.combatants[index]
    if found.side != side:
        who = "heroes' attacks on heroes" if side == "foes" else "foes' attacks on foes"
        return Refusal(reasons.UNSUPPORTED, f"{found.name} is on {attacker.name}'s side: "
                       f"{who} are not answered by this version of gmtags; nothing was done.")
    if not standing(game, state, found):
        return Refusal(reasons.TARGET_DOWN, f"{found.name} is already down; nothing was done.")
    return index


def weapon_of(game: Game, state: State, who: int,
            named: str | None) -> tuple[Stack, Item, Attack] | Refusal | None:
    """docs/design.md#combat-tags: ``with=`` a worn weapon the attacker has (``unarmed`` or none:
    unarmed); without it the first worn weapon, else unarmed (None)."""
    bag = state.characters[who].bag
    wanted = (named or "").strip().casefold()
    if not wanted:
        return first_worn_weapon(game, state, state.characters[who])
    if wanted == UNARMED:
        return None
    named_stacks = [s for s in bag if s.name.casefold() == wanted]  # a worn one first
    stack = next((s for s in named_stacks if s.equipped), named_stacks[0] if named_stacks else None)
    armed = armed_with(game, state, stack) if stack is not None else None
    if armed is None:
        name = state.characters[who].name
        return Refusal(reasons.UNKNOWN_WEAPON,
                       f'{name} has no weapon called "{(named or "").strip()[:60]}"; '
                       "nothing was done.")
    if not armed[0].equipped:
        return Refusal(reasons.NOT_WORN, f"{armed[0].name} is carried, not worn: equip it "
                       "first; nothing was done.")
    return armed


def turn_action(game: Game, named: str, default: str | None) -> str | Refusal:
    """docs/design.md#combat-tags: the turn action ``action=`` names (by id or name, any case; one
    that is none is refused ``unknown-budget``), else ``default`` (a weapon's budget, an ability's
    ``uses``), else the first action that allows attacks."""
    actions = combat_of(game).turn_actions
    wanted = named.strip().casefold()
    if wanted:
        found = next((a for a in actions if wanted in (a.id.casefold(), a.name.casefold())),
                     None)
        if found is None:
            known = ", ".join(a.id for a in actions)
            return Refusal(reasons.UNKNOWN_BUDGET, f'action="{named[:40]}" is no turn action '
                           f"({known}); nothing was done.")
        return found.id
    if default is not None:
        return default
    return next((a.id for a in actions if a.attacks is not None),
                actions[0].id if actions else "action")


def budget_of(game: Game, named: str, attack: Attack | None) -> str | Refusal:
    """docs/design.md#combat-tags: ``action=`` a turn action, else the weapon's budget, else the
    first action that allows attacks."""
    return turn_action(game, named, attack.budget if attack is not None else None)


def round_of(encounter: Encounter, ctx: TurnContext) -> Encounter:
    """docs/design.md#rounds-and-order: a reply with an answered attack is one round of the
    encounter; a new round gives every combatant its whole budget again."""
    if encounter.turn == ctx.turn_key:
        return encounter
    fresh = tuple(c.model_copy(update={"spent": (), "wielded": (), "granted": ()})
                  if c.spent or c.granted else c for c in encounter.combatants)
    if encounter.round:  # the spending style's numbers rise each round after the first
        fresh = tuple(risen(c) for c in fresh)
    return encounter.model_copy(update={"round": encounter.round + 1, "turn": ctx.turn_key,
                                        "combatants": fresh})


def foe_no_time(foe: Combatant) -> Refusal | None:
    """docs/design.md#formula-combat, CMB-TURN-12: a foe makes one attack a round, or its template's
    ``combat.attacks`` (fixed when it joined); one past that is NO TIME."""
    allowed = 1 if foe.attacks is None else foe.attacks
    if len(foe.spent) < allowed:
        return None
    return Refusal(reasons.NO_TIME, f"NO TIME: {foe.name} has no attack left this round; "
                   "nothing was done.")


def cannot_act(game: Game, state: State, encounter: Encounter, index: int) -> Refusal | None:
    """CMB-TYPE-2: a combatant (hero or foe) under a condition with ``noActions`` makes no
    attack (a hero's conditions are on its sheet, a foe's in the fight)."""
    stopping = held_back(game, names_of(state, encounter, index))
    if not stopping:
        return None
    return Refusal(reasons.CANNOT_ACT, f"{encounter.combatants[index].name} cannot act "
                   f"({', '.join(stopping)}); nothing was done.")


def answered(request: Request, state: State, record: dict[str, Any], text: str,
              events: list[str], notes: list[str], ctx: TurnContext) -> tuple[State, Answer]:
    """The answer of a strike that happened: its place in the round's order (the reply's
    attacks are applied in initiative order, so the ordinal among them is that place) and
    its rule-card events (CMB-CARD-1)."""
    record["slot"] = ctx.ordinal + 1
    if events:
        record["events"] = events
    return state, accepted(request.tag, text, record, tuple(notes))
