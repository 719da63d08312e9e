"""A hero's defence and typed defences in a fight
(docs/rules/items.md#8-typed-defences-from-conditions-levels-items-and-sheet-rows,
docs/rules/items.md#12-armour-and-worn-effects-in-combat): the ruleset's ``combat.attack.defence``
formula with what the hero wears and carries, and the ``resist``/``immune``/``vulnerable`` entries
and condition immunities its conditions, levels, items and sheet rows grant — and what they do to
one strike's damage. Plain functions of state and ruleset values; the fight reads them."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import TypeAdapter, ValidationError

from ..dice import Stream
from ..ruleset.effects import Effects
from ..ruleset.fight import Combat, Defences, Defended, Except
from .checks.modifiers import sources
from .formula import evaluate, sheet_reader
from .game import Game
from .sheet import SheetView, owned_items
from .state import Character, Combatant, State

Kind = Literal["resist", "immune", "vulnerable"]
KINDS: tuple[Kind, ...] = ("resist", "immune", "vulnerable")
EVERY_TYPE = "*"  # the ``resist-all`` effect (ITM-ARM-2): every damage, whatever its type
_DEFENCES: TypeAdapter[Any] = TypeAdapter(Defences)


@dataclass(frozen=True, slots=True)
class Guard:
    """One typed defence: of ``kind`` against damage of ``type``, bypassed by a strike that
    carries any ``except_`` tag (ITM-DEF-7/8), granted by ``source`` (a condition, a level,
    an item named after its stack, a sheet row; ITM-ARM-6)."""

    kind: Kind
    type: str
    except_: frozenset[str]
    source: str

    def meets(self, damage_type: str | None, tags: frozenset[str]) -> bool:
        """Whether this entry concerns a strike of ``damage_type`` carrying ``tags``."""
        if self.except_ & tags:  # ITM-DEF-8, ITM-WPN-28: what gets through is taken in full
            return False
        if self.type == EVERY_TYPE:
            return True
        return damage_type is not None and self.type.casefold() == damage_type.casefold()

    @property
    def text(self) -> str:
        """``resists bludgeoning except magical, silvered (Stoneskin)``."""
        verb = {"resist": "resists", "immune": "immune to", "vulnerable": "vulnerable to"}
        what = "all damage" if self.type == EVERY_TYPE else self.type
        unless = f" except {', '.join(sorted(self.except_))}" if self.except_ else ""
        return f"{verb[self.kind]} {what}{unless} ({self.source})"


@dataclass(frozen=True, slots=True)
class Typed:
    """Everything that guards one combatant: typed defences and condition immunities, each
    with where it comes from."""

    guards: tuple[Guard, ...] = ()
    condition_immunities: tuple[tuple[str, str], ...] = ()
    """(condition id, source) pairs (ITM-DEF-1/3, ITM-ARM-5)."""

    def immune_to(self, condition: str) -> bool:
        """ITM-DEF-3, ITM-ARM-5: whether ``condition`` is never applied to this combatant."""
        wanted = condition.casefold()
        return any(c.casefold() == wanted for c, _ in self.condition_immunities)

    def lines(self, game: Game) -> tuple[str, ...]:
        """ITM-HIDES-9: each defence as the summaries show it, with its exceptions."""
        labels = {c.id: c.label for c in game.ruleset.conditions}
        return (*(g.text for g in self.guards),
                *(f"immune to {labels.get(c, c)} ({source})"
                  for c, source in self.condition_immunities))


# --- a hero's defence --------------------------------------------------------------------

def defence_parts(game: Game, state: State, who: int) -> tuple[int, tuple[tuple[str, int], ...]]:
    """CMB-ATK-6, ITM-ARM-3/6/7/9: a hero's defence and what changed it. The ruleset's
    ``combat.attack.defence`` formula read for the hero (armour and shields that add to it
    are item stats the formula reads through ``itemStat``, ITM-ARM-9), then every flat
    ``{"to": "defence"}`` modifier of what applies to the hero as it applies to a check
    (ITM-CHK-1: its wound penalty, conditions, each worn or carried item once — a worn copy
    winning — named after its stack, and the ``otherwise`` of a worn item's unmet
    requirement). A defence is one number: dice in a defence modifier count nothing, and
    dice in the formula roll from a stream of the game and the hero, the same every time.
    0 without a formula."""
    combat = game.ruleset.combat
    character = state.characters[who]
    view = SheetView(game, character, state)
    total = 0
    if combat is not None and combat.attack is not None:
        stream = Stream(state.seed, (), f"defence/{character.name.casefold()}")
        total = evaluate(combat.attack.defence, sheet_reader(view), stream).value
    changes: list[tuple[str, int]] = []
    for name, part in sources(game, state, character, view):
        flat = sum(m.flat or 0 for m in part.modifiers if m.to == "defence")
        if flat:
            total += flat
            changes.append((name, flat))
    return total, tuple(changes)


def defence_of(game: Game, state: State, who: int) -> int:
    """The number a foe's attack must reach to hit hero ``who`` (:func:`defence_parts`)."""
    return defence_parts(game, state, who)[0]


# --- typed defences ----------------------------------------------------------------------

def _entries(raw: Any) -> list[str | Except]:
    """A ``resist``/``immune``/``vulnerable`` value in the creature form, or nothing when it
    is not one (the loader reports such a value, ITM-ARM-4)."""
    if raw is None:
        return []
    try:
        found: list[str | Except] = _DEFENCES.validate_python(raw)
    except ValidationError:
        return []
    return found


def _granted(source: str, kinds: Mapping[str, Any], immunities: Any,
             effects: Iterable[str] = ()) -> Iterator[Guard | tuple[str, str]]:
    for kind in KINDS:
        for entry in _entries(kinds.get(kind)):
            if isinstance(entry, Except):
                # ITM-DEF-9: vulnerable stays plain; an except written there is not honoured
                tags = frozenset(entry.except_) if kind != "vulnerable" else frozenset()
                yield Guard(kind, entry.type, tags, source)
            else:
                yield Guard(kind, entry, frozenset(), source)
    if "resist-all" in effects:  # ITM-ARM-2
        yield Guard("resist", EVERY_TYPE, frozenset(), source)
    for condition in immunities if isinstance(immunities, list | tuple) else ():
        if isinstance(condition, str):
            yield condition, source


def _defended(source: str, granted: Defended) -> Iterator[Guard | tuple[str, str]]:
    kinds: dict[str, Any] = {k: getattr(granted, k) for k in KINDS}
    return _granted(source, kinds, granted.condition_immunities)


def _effects_granted(source: str, part: Effects) -> Iterator[Guard | tuple[str, str]]:
    """ITM-ARM-4/5, ITM-DEF-10: the typed defences of a ``worn``/``carried``/``otherwise``
    part, kept as written beside what a check reads."""
    extra = part.model_extra or {}
    return _granted(source, extra, extra.get("conditionImmunities"), part.effects)


def _conditions(game: Game, combat: Combat, conditions: Iterable[str]
                ) -> Iterator[Guard | tuple[str, str]]:
    """ITM-DEF-1/2: what ``combat.conditions`` grants while each condition lasts."""
    labels = {c.id: c.label for c in game.ruleset.conditions}
    by_name = {c.name: c for c in combat.conditions}
    for ident in dict.fromkeys(conditions):
        entry = by_name.get(ident)
        if entry is not None:
            yield from _defended(labels.get(ident, ident), entry)


def _levels(combat: Combat, view: SheetView) -> Iterator[Guard | tuple[str, str]]:
    """ITM-DEF-2: a level's grants hold while its value reaches ``atLeast``."""
    for level in combat.levels:
        if view.value(level.value) >= level.at_least:
            yield from _defended(level.label or level.id, level)


def hide_words(text: str) -> list[str]:
    """ITM-HIDES-3: a row's comma-separated words, trimmed, without the empty ones."""
    return [word.strip() for word in text.split(",") if word.strip()]


def _rows(game: Game, character: Character, catalog: str, column: str
          ) -> Iterator[tuple[str, str]]:
    """(label, text) of each row the character has in sheet list ``catalog`` (the entries of
    that catalog the character chose, CHK-TAL-1) whose ``column`` is text."""
    found = next((c for c in game.ruleset.catalogs if c.id == catalog), None)
    if found is None:
        return
    chosen = set(character.entries)
    for entry in found.entries:
        if f"{catalog}/{entry.id}" not in chosen or entry.filters is None:
            continue
        value = entry.filters.get(column)
        texts = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        for text in texts:
            if isinstance(text, str):
                yield entry.label, text


def _sheet_hides(game: Game, combat: Combat,
                 character: Character) -> Iterator[Guard | tuple[str, str]]:
    """ITM-HIDES-2..7: the words each ``sheetHides`` source's rows contribute. Resistance and
    immunity words may name tags after ``except``; vulnerabilities and condition immunities
    are plain words; an undeclared damage word (where ``combat.damageTypes`` declares them)
    and an unknown condition are ignored."""
    declared = combat.damage_words
    folded = {w.casefold(): w for w in declared} if declared is not None else None
    conditions = {c.id.casefold(): c.id for c in game.ruleset.conditions}
    for source in combat.sheet_hides or ():
        for label, text in _rows(game, character, source.list_, source.column):
            for word in hide_words(text):
                if source.kind == "conditionImmunities":
                    if word.casefold() in conditions:
                        yield conditions[word.casefold()], label
                    continue
                kind: Kind = source.kind
                head, _, tail = word.partition(" except ")
                tags = frozenset(tail.split()) if tail and kind != "vulnerable" else frozenset()
                damage = (head if kind != "vulnerable" else word).strip()
                if folded is not None:
                    if damage.casefold() not in folded:
                        continue
                    damage = folded[damage.casefold()]
                yield Guard(kind, damage, tags, label)


def _collected(found: Iterable[Guard | tuple[str, str]]) -> Typed:
    guards: list[Guard] = []
    immunities: list[tuple[str, str]] = []
    for item in found:
        if isinstance(item, Guard):
            if item not in guards:
                guards.append(item)
        elif item not in immunities:
            immunities.append(item)
    return Typed(tuple(guards), tuple(immunities))


def defences_of(game: Game, state: State, who: int) -> Typed:
    """ITM-DEF-1..3, ITM-ARM-4..7, ITM-HIDES-2..7: hero ``who``'s typed defences and
    condition immunities from its conditions (``combat.conditions``), the levels it reaches
    (``combat.levels``), each item it owns once (``worn``, else ``carried``, named after the
    stack; the ``otherwise`` of a worn item's unmet requirement) and its sheet rows
    (``combat.sheetHides``)."""
    combat = game.ruleset.combat
    if combat is None:
        return Typed()
    character = state.characters[who]
    view = SheetView(game, character, state)

    def found() -> Iterator[Guard | tuple[str, str]]:
        yield from _conditions(game, combat, character.conditions)
        yield from _levels(combat, view)
        for owned in owned_items(game, character, state) if character.bag else ():
            part = owned.item.worn if owned.worn else owned.item.carried
            if part is not None:
                yield from _effects_granted(owned.label, part)
            for requirement in owned.item.requires or () if owned.worn else ():  # ITM-ARM-7
                if view.value(requirement.value) < requirement.at_least:
                    yield from _effects_granted(owned.label, requirement.otherwise)
        yield from _sheet_hides(game, combat, character)

    return _collected(found())


def foe_defences(game: Game, foe: Combatant) -> Typed:
    """A foe's typed defences: what ``combat.conditions`` grants for the conditions it is
    under (a template gives none of its own)."""
    combat = game.ruleset.combat
    if combat is None or not foe.conditions:
        return Typed()
    return _collected(_conditions(game, combat, (c.name for c in foe.conditions)))


def foe_qualities(game: Game, foe: Combatant, ability: str | None = None) -> frozenset[str]:
    """ITM-WPN-29: the item tags a foe's damage carries — its template's ``combat.qualities``
    for its own attacks, or those of its ability ``ability`` — which an ``except`` naming one
    lets through (ITM-DEF-8); none for a foe without a template."""
    combat = game.ruleset.combat
    if combat is None or foe.role is None:
        return frozenset()
    template = next((t for t in combat.templates if t.role == foe.role), None)
    if template is None:
        return frozenset()
    if ability is None:
        return frozenset(template.combat.qualities)
    found = next((a for a in template.combat.abilities if a.id == ability), None)
    return frozenset(found.qualities) if found is not None else frozenset()


# --- one strike's damage -----------------------------------------------------------------

def typed_damage(damage: int, damage_type: str | None, defences: Typed,
                 tags: frozenset[str] = frozenset()) -> tuple[int, tuple[Guard, ...]]:
    """ITM-DEF-4..8, ITM-WPN-27/28: the damage a strike of ``damage_type`` carrying ``tags``
    deals, and the entries that decided it. Immunity takes it all; a resistance and a
    vulnerability cancel; otherwise a resistance halves it (rounded down) and a vulnerability
    doubles it — once however many apply. An entry whose ``except`` names one of the strike's
    tags lets it through in full."""
    meeting = [g for g in defences.guards if g.meets(damage_type, tags)]
    immune = [g for g in meeting if g.kind == "immune"]
    if immune:
        return 0, tuple(immune)
    resist = [g for g in meeting if g.kind == "resist"]
    vulnerable = [g for g in meeting if g.kind == "vulnerable"]
    if resist and vulnerable:
        return damage, (*resist, *vulnerable)
    if resist:
        return damage // 2, tuple(resist)
    if vulnerable:
        return damage * 2, tuple(vulnerable)
    return damage, ()
