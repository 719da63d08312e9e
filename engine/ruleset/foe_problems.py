"""Load-time rules of a template's own abilities, its regeneration and the 0-HP keys (CMB-ABIL,
CMB-HP0; the keys are :mod:`.foe_abilities`) that their field types cannot say: the saves, damage
words and conditions they name, ability ids once per template, and what their formulas read
(``@tier`` and abilities, as every foe formula)."""

from __future__ import annotations

from collections.abc import Iterator

from .fight import TIER, Combat, reference_read
from .formula import Formula, references
from .pointers import Problem, duplicates, pointer
from .ruleset import Ruleset

Where = tuple[str | int, ...]


def _add(problems: list[Problem], where: Where, message: str) -> None:
    problems.append(Problem(pointer("combat", *where), message))


def _formulas(combat: Combat) -> Iterator[tuple[Where, Formula]]:
    for index, template in enumerate(combat.templates):
        for at, ability in enumerate(template.combat.abilities):
            where: Where = ("templates", index, "combat", "abilities", at)
            for key, formula in (("toHit", ability.to_hit), ("damage", ability.damage),
                                 ("saveDifficulty", ability.save_difficulty)):
                if formula is not None:
                    yield (*where, key), formula
        if template.regenerate is not None:
            yield ("templates", index, "regenerate", "amount"), template.regenerate.amount


def foe_problems(ruleset: Ruleset, combat: Combat) -> list[Problem]:
    """CMB-ABIL-4/5/7, CMB-HP0-1..4: everything wrong with these keys."""
    problems: list[Problem] = []
    for where, formula in _formulas(combat):
        for reference in references(formula.tree):
            if reference_read(ruleset.sheet, reference, frozenset({TIER}), False) is None:
                _add(problems, where, f'unknown reference "{reference}" (a foe\'s formulas '
                     "read @tier and abilities)")
                break
    saves = {s.id for s in ruleset.sheet.saves} | {a.id for a in ruleset.sheet.abilities}
    words = combat.damage_words
    for index, template in enumerate(combat.templates):
        abilities = template.combat.abilities
        for at, ident in duplicates(a.id for a in abilities):
            _add(problems, ("templates", index, "combat", "abilities", at, "id"),
                 f'a second ability "{ident}"')
        for at, ability in enumerate(abilities):
            place: Where = ("templates", index, "combat", "abilities", at)
            if ability.save is not None and ability.save.save not in saves:
                _add(problems, (*place, "save", "save"), f'unknown save "{ability.save.save}"')
            if ability.save is None and ability.save_difficulty is not None:
                _add(problems, (*place, "saveDifficulty"), "a DC without a save")
            if ability.save is not None and ability.to_hit is not None:
                _add(problems, (*place, "toHit"), "an ability is an attack or a save, not both")
            kind = ability.damage_type
            if kind is not None and words is not None and kind not in words:
                _add(problems, (*place, "damageType"), f'unknown damage type "{kind}"')
        regenerate = template.regenerate
        for at, word in enumerate(regenerate.stopped_by if regenerate is not None else ()):
            if words is not None and word not in words:
                _add(problems, ("templates", index, "regenerate", "stoppedBy", at),
                     f'unknown damage type "{word}"')
    conditions = {c.id for c in ruleset.conditions}
    for index, template in enumerate(combat.templates):  # ITM-ONHIT-7
        for at, against in enumerate(template.saves_against):
            if against.condition is not None and against.condition not in conditions:
                _add(problems, ("templates", index, "savesAgainst", at, "condition"),
                     f'unknown condition "{against.condition}"')
    rule = combat.zero_hp
    named: tuple[tuple[str, str | None], ...] = (
        ("dead", rule.dead if rule else None), ("stable", rule.stable if rule else None))
    for key, condition in named:
        if condition is not None and condition not in conditions:
            _add(problems, ("zeroHp", key), f'unknown condition "{condition}"')
    return problems
