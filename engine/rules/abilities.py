"""A hero's abilities in a formula fight, as pure rules (docs/rules/combat.md#a8-reactions,
docs/rules/combat.md#a9-sustained-abilities-concentration,
docs/rules/combat.md#a11-abilities-against-foes-and-the-bestiary, CMB-TURN-17): which chosen entry a
name means, what its cost takes from the hero's pools, what a sustained ability leaves behind when
it ends, and the defence a reaction added. The tags are in :mod:`engine.actions.fight.abilities` and
:mod:`engine.actions.fight.react`."""

from __future__ import annotations

from dataclasses import dataclass

from ..ruleset import Entry
from ..ruleset.abilities import Ability, ability_of
from .game import Game
from .sheet import SheetView
from .state import Character, Combatant, Encounter, State


@dataclass(frozen=True, slots=True)
class Chosen:
    """One of a hero's fight abilities: the entry's reference, the entry and its keys."""

    ref: str
    entry: Entry
    ability: Ability


def entry_of(game: Game, ref: str) -> Entry | None:
    """The catalog entry ``<catalog>/<entry>`` names, or None."""
    catalog_id, _, entry_id = ref.partition("/")
    catalog = next((c for c in game.ruleset.catalogs if c.id == catalog_id), None)
    if catalog is None:
        return None
    return next((e for e in catalog.entries if e.id == entry_id), None)


def chosen_ability(game: Game, character: Character, named: str) -> Chosen | None:
    """CHK-PAY-5, CMB-ABIL-1: the fight ability among the entries ``character`` chose that
    ``named`` names by label, id or reference (any case); None when it chose none such."""
    wanted = named.strip().casefold()
    for ref in character.entries:
        entry = entry_of(game, ref)
        if entry is None or wanted not in (ref.casefold(), entry.id.casefold(),
                                           entry.label.casefold()):
            continue
        ability = ability_of(entry.mechanics)
        if ability is not None:
            return Chosen(ref, entry, ability)
    return None


def abilities_of(game: Game, character: Character) -> list[Chosen]:
    """Every fight ability among the entries ``character`` chose, in the order chosen."""
    found = []
    for ref in character.entries:
        entry = entry_of(game, ref)
        ability = ability_of(entry.mechanics) if entry is not None else None
        if entry is not None and ability is not None:
            found.append(Chosen(ref, entry, ability))
    return found


def pool_now(game: Game, state: State, character: Character, pool: str) -> int:
    """A live pool's points now: as written on the sheet, else full (its max)."""
    if pool in character.pools:
        return character.pools[pool]
    row = next((p for p in game.ruleset.live.pools if p.id == pool), None)
    if row is None:
        return 0
    return character.most(pool, SheetView(game, character, state, items_apply=False).value(
        row.max))


def paid(game: Game, state: State, character: Character,
         ability: Ability) -> tuple[Character, list[str]] | str:
    """The ability's ``cost`` taken from the character's pools, all or nothing: the new
    character and what was paid (``slot_1:1``), or the pool that cannot pay."""
    pools = dict(character.pools)
    taken = []
    for row in ability.cost:
        now = pools[row.pool] if row.pool in pools else pool_now(game, state, character,
                                                                 row.pool)
        if now < row.amount:
            return row.pool
        pools[row.pool] = now - row.amount
        taken.append(f"{row.pool}:{row.amount}")
    if not taken:
        return character, []
    return character.model_copy(update={"pools": pools}), taken


def guard_of(combatant: Combatant, round_: int) -> int:
    """CMB-REACT-7, OQ-CMB-11: the defence a reaction this round added (it lasts the rest of
    the round, until the hero's next turn)."""
    return combatant.guard if combatant.reacted == round_ else 0


def reacted_this_round(combatant: Combatant, round_: int) -> bool:
    """CMB-REACT-2: a hero gets one reaction a round."""
    return combatant.reacted == round_


def sustain_ended(state: State, encounter: Encounter, index: int) -> tuple[State, list[str]]:
    """CMB-SUS-3/4/6/7: combatant ``index`` stops sustaining: everything its sustained ability
    applied leaves everyone it affected (the fight's conditions, and a hero's sheet). Returns
    the state and who lost what (``Goblin 1: paralyzed``); the very state when it sustained
    nothing."""
    sustainer = encounter.combatants[index]
    if sustainer.sustains is None:
        return state, []
    gone: list[str] = []
    combatants = list(encounter.combatants)
    characters = list(state.characters)
    for at, combatant in enumerate(combatants):
        mine = [c.name for c in combatant.conditions if c.by == sustainer.name]
        kept = tuple(c for c in combatant.conditions if c.by != sustainer.name)
        update: dict[str, object] = {"conditions": kept} if mine else {}
        if at == index:
            update["sustains"] = None
        if update:
            combatants[at] = combatant.model_copy(update=update)
        gone += [f"{combatant.name}: {name}" for name in mine]
        hero = state.character_index(combatant.name) if combatant.side == "party" else None
        if hero is not None and mine:
            names = tuple(n for n in characters[hero].conditions if n not in mine)
            characters[hero] = characters[hero].model_copy(update={"conditions": names})
    encounter = encounter.model_copy(update={"combatants": tuple(combatants)})
    return state.model_copy(update={"encounter": encounter,
                                    "characters": tuple(characters)}), gone
