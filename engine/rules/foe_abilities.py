"""A foe's own abilities and its regeneration, as pure rules (CMB-ABIL-4/5/7/8 of
docs/rules/combat.md#a11-abilities-against-foes-and-the-bestiary; the keys are
:mod:`engine.ruleset.foe_abilities`). Their numbers are worked out once, when the foe joins
(CMB-TPL-8); the ``[attack: who="<foe>" use=]`` tag is :mod:`engine.actions.fight.foes`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..dice import Stream
from ..ruleset import Template
from .fight.formula import worked
from .formula import evaluate, foe_reader
from .game import Game
from .state import Combatant, FoeUse


def with_abilities(game: Game, template: Template, tier: int, foe: Combatant,
                   stream: Stream) -> Combatant:
    """CMB-ABIL-4/7, CMB-TPL-8: ``foe`` made from ``template`` at ``tier`` with its own
    abilities (each ``toHit``, DC and damage read now, for its tier and ability modifier) and
    its regeneration; the very foe when the template has neither."""
    abilities = template.combat.abilities
    regenerate = template.regenerate
    if not abilities and regenerate is None:
        return foe
    reader = foe_reader(game.ruleset, tier, foe.modifier or 0)
    uses = []
    for ability in abilities:
        save = ability.save
        dc = None
        if save is not None:
            dc = save.difficulty if save.difficulty is not None else (
                evaluate(ability.save_difficulty, reader, stream).value
                if ability.save_difficulty is not None else 10)
        uses.append(FoeUse(
            id=ability.id, label=ability.label or ability.id,
            to_hit=(evaluate(ability.to_hit, reader, stream).value
                    if ability.to_hit is not None else foe.attack or 0)
            if save is None else None,
            save=save.save if save is not None else None, dc=dc,
            on_success=(save.on_success or "half") if save is not None else None,
            damage=worked(ability.damage.tree, reader, stream)
            if ability.damage is not None else None,
            damage_type=ability.damage_type or foe.damage_type,  # CMB-TYPE-1
            targets=ability.targets, left=ability.uses, spell=ability.spell or None))
    update: dict[str, Any] = {"abilities": tuple(uses)}
    if regenerate is not None:
        update["regenerate"] = max(evaluate(regenerate.amount, reader, stream).value, 0)
        update["stopped_by"] = tuple(regenerate.stopped_by)
    return foe.model_copy(update=update)


def foe_use(foe: Combatant, named: str) -> int | None:
    """The index of the foe's ability ``named`` names (its id or label, any case), or None."""
    wanted = named.strip().casefold()
    return next((i for i, u in enumerate(foe.abilities)
                 if wanted in (u.id.casefold(), u.label.casefold())), None)


def damage_taken(records: Iterable[Mapping[str, Any]]) -> dict[str, set[str]]:
    """CMB-ABIL-7: the damage types each combatant (by name, folded) took this round, read
    from the round's answered records by one walk over every damaging row, however deep —
    a strike's ``target`` and ``damageType`` with damage dealt (a formula or a pool strike),
    each ``plus`` component it dealt (its ``dealt``), each ``targets`` row of an ability's or
    an item's use (the type written on the row, else the use's), each strike of a ``volley``.
    A row without a ``target`` is its parent's; damage without a type counts as no type."""
    taken: dict[str, set[str]] = {}
    for record in records:
        _walk(taken, record, None, None, 0)
    return taken


def _walk(taken: dict[str, set[str]], row: Mapping[str, Any], target: Any, kind: Any,
          depth: int) -> None:
    """One row of :func:`damage_taken`'s walk, and the rows nested in it (a module function,
    not a closure that calls itself: that would be a reference cycle on every round, and the
    fold makes none, tests/replay/test_no_reference_cycles.py)."""
    target = row.get("target", target)
    kind = row.get("damageType", kind)
    dealt = row.get("dealt", row.get("damage"))
    if isinstance(target, str) and isinstance(kind, str) and isinstance(dealt, int) \
            and dealt > 0:
        taken.setdefault(target.casefold(), set()).add(kind)
    if depth >= _DEPTH:
        return
    for key, value in row.items():
        if not isinstance(value, list | tuple):
            continue
        inherited = kind if key in _INHERIT else None  # a plus row has its own type
        for nested in value:
            if isinstance(nested, Mapping):
                _walk(taken, nested, target, inherited, depth + 1)


_INHERIT = frozenset({"targets"})  # rows that deal the use's own damage type
_DEPTH = 4  # records nest a volley's strike's plus rows at most three deep


def regenerates(foe: Combatant, took: set[str]) -> int:
    """CMB-ABIL-7: what a foe regains at the end of a round — its ``regenerate`` while above
    0 and below its most, unless it took damage of a ``stoppedBy`` type (0 then)."""
    if not foe.regenerate or not foe.hp or foe.hp_max is None or foe.hp >= foe.hp_max:
        return 0
    if took & set(foe.stopped_by):
        return 0
    return min(foe.regenerate, foe.hp_max - foe.hp)
