"""Formula combat's pure rules (spec/combat.md Part A; DESIGN.md "Combat"): foes made from the
ruleset's templates, the initiative order, and one attack's hit and damage. No tags and no
sentences: the ``[combat:]`` and ``[attack:]`` actions (engine/actions/fight.py) use these."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ..dice import Stream
from ..ruleset import Formula, Template, combat_kind
from ..ruleset.formula import double_dice
from .formula import Evaluation, Resolve, evaluate, foe_modifier, foe_reader
from .game import Game
from .state import Combatant, Encounter

MAX_FOES = 12  # DESIGN.md: count= is held to 1..12
TIERS = (1, 6)  # CMB-TPL-3: a tier is 1 to 6


def held(value: int, low: int, high: int) -> int:
    """``value`` held to ``low..high``."""
    return min(max(value, low), high)


def template_for(game: Game, role: str) -> tuple[Template, bool]:
    """CMB-TPL-2, OQ-CMB-13: the template of ``role`` (any case), else the first template;
    the flag says whether it fell back."""
    combat = game.ruleset.combat
    assert combat is not None and combat.templates
    wanted = role.strip().casefold()
    for template in combat.templates:
        if template.role.casefold() == wanted:
            return template, False
    return combat.templates[0], True


def combat_only(game: Game) -> frozenset[str]:
    """CMB-ATK-2, DESIGN.md "Formula combat": the skills only a fight rolls — the attack
    check and the initiative check — by id and by label, in lower case."""
    combat = game.ruleset.combat
    if combat is None or combat_kind(game.ruleset) != "formula":
        return frozenset()
    ids = {combat.attack.check} if combat.attack is not None else set()
    if combat.turn is not None and combat.turn.initiative is not None:
        ids.add(combat.turn.initiative.check)
    labels = {s.label for s in game.ruleset.sheet.skills if s.id in ids}
    return frozenset(n.casefold() for n in ids | labels)


def foe_names(encounter: Encounter | None, foe: str, count: int) -> list[str]:
    """DESIGN.md: ``foe`` when one comes and none of that name stands yet, else ``"<foe> 1"``,
    ``"<foe> 2"``, … numbering on from the highest number the encounter already gave."""
    names = [c.name for c in encounter.combatants] if encounter is not None else []
    numbered = re.compile(re.escape(foe.casefold()) + r" (\d+)")
    highest = 0
    plain = False
    for name in names:
        found = numbered.fullmatch(name.casefold())
        if found is not None:
            highest = max(highest, int(found.group(1)))
        plain = plain or name.casefold() == foe.casefold()
    if count == 1 and not plain and not highest:
        return [foe]
    start = max(highest, 1 if plain else 0) + 1
    return [f"{foe} {n}" for n in range(start, start + count)]


def make_foe(game: Game, template: Template, tier: int, name: str, joined: int,
             initiative: int, stream: Stream) -> Combatant:
    """CMB-TPL-1..8: a foe's numbers, worked out once from its template at ``tier``."""
    modifier = foe_modifier(game.ruleset, template, tier, stream)
    reader = foe_reader(game.ruleset, tier, modifier)
    numbers = template.combat
    hp = max(evaluate(template.tracks.hp, reader, stream).value, 0)
    return Combatant(name=name, side="foes", initiative=initiative, joined=joined, hp=hp,
                     hp_max=hp, defence=evaluate(numbers.defence, reader, stream).value,
                     attack=evaluate(numbers.attack, reader, stream).value,
                     damage=numbers.damage.text, role=template.role, tier=tier)


def in_order(combatants: Iterable[Combatant]) -> tuple[Combatant, ...]:
    """CMB-TURN-3/4, OQ-CMB-7 a: highest initiative first, a hero before a foe on a tie, then
    the order they joined."""
    return tuple(sorted(combatants, key=lambda c: (-c.initiative, c.side != "party", c.joined)))


def next_joined(encounter: Encounter | None) -> int:
    """The join number the next combatant gets."""
    if encounter is None or not encounter.combatants:
        return 0
    return max(c.joined for c in encounter.combatants) + 1


@dataclass(frozen=True, slots=True)
class Struck:
    """One attack's damage: how much, the dice rolled, and the target's hit points after."""

    damage: int
    rolls: Evaluation
    hp: int


def strike(formula: Formula, resolve: Resolve, critical: bool, hp: int, stream: Stream,
           flat: int = 0, reroll_up_to: int = 0) -> Struck:
    """CMB-ATK-A5/A6: the damage of a hit, ``formula`` plus ``flat`` (a critical doubles the
    dice of each dice term, CMB-ATK-5, OQ-CMB-3), never below 0; hit points never go below
    0. ``reroll_up_to``: a two-handed weapon's dice showing that or less, the critical's extra
    dice too, are rerolled once (ITM-WPN-15, :attr:`WeaponNumbers.reroll_up_to`)."""
    tree = double_dice(formula.tree) if critical else formula.tree
    rolled = evaluate(tree, resolve, stream, reroll_up_to)
    damage = max(rolled.value + flat, 0)
    return Struck(damage, rolled, max(hp - damage, 0))
