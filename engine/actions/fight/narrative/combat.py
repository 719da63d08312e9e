"""Narrative d100 combat's answers (docs/rules/combat.md#part-b--narrative-d100-fights;
docs/design.md#narrative-combat): the GM grades, the dice decide. A fight starts, foes join and it
ends as in formula combat, each fighter with a rank; a hero's ``[attack:]`` is graded (tactics,
risk, aim, purpose, effort) and the engine rolls a d100 against the hit chance those grades, the
power gap, the side's momentum and fatigue make, grades the margin and deals the blow; a foe's
``[attack:]`` is its announcement, landing in the next round after every hero has acted
(:func:`land`), met by the defence a hero declared with ``[combat: op="defend"]``.
engine/actions/fight/formula.py dispatches its ``start``, ``join``, ``end`` and ``attack`` here when
the ruleset fights narratively."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, Protocol

from tagparse import Tag

from ....rules import reasons
from ....rules.context import TurnContext
from ....rules.fight.conditions import fight_keys, fight_over, names_of
from ....rules.fight.formula import (
    MAX_FOES,
    TIERS,
    foe_names,
    hero_health,
    hurt,
    in_order,
    next_joined,
    standing,
    template_for,
    whole_number,
)
from ....rules.fight.narrative import (
    AIM,
    ALLY_DOWN,
    DEFAULT_RANK,
    EDGES,
    FLAIRS,
    HERO_RANKS,
    KILL,
    MOMENTUM,
    MULTIPLIERS,
    PURPOSES,
    RANKS,
    RISK,
    TACTICS,
    Part,
    chance,
    d100,
    defence_chance,
    defended,
    edge_factor,
    edge_word,
    effort_cost,
    effort_damage,
    effort_ladder,
    faded,
    fatigue,
    gap_label,
    gap_term,
    grade_of,
    grade_word,
    half_up,
    meaningless,
    overexertion,
    power,
    rank_name,
    rank_word,
    reachable,
)
from ....rules.formula import Resolve, evaluate, foe_reader, sheet_reader
from ....rules.game import Game
from ....rules.sheet import SheetView
from ....rules.state import Announced, Combatant, Defence, Encounter, State
from ....ruleset import Formula, parse_formula
from ....ruleset.fight import Narrative, Overexertion, Technique
from ...answers import Answer, accepted, fraction, refused
from ...attrs import FIGHTER, TEXT
from ...declare import FIRST, Refusal, Request, action, attr, request
from ...examples import FOE, FOE_COUNT, FOE_NAMES, Party, example
from ..hp0 import lost_if_none_stand, zero_meaning
from . import bleed as bleeding
from . import spoils

PARTY, FOES = "party", "foes"
DEFAULT_DAMAGE = "10"  # docs/design.md#narrative-combat: the blow before the grade's multiplier
STATUS_STEP = 10  # ITM-CLS-7: a status's advantage or disadvantage, in defence points
FITTING = "fitting"  # D100-PARTY-9: count="fitting"
STRIKE = "strike"  # what an attack spends: one a round for each fighter
HOWS = ("dodge", "block", "parry", "sidestep", "counter", "step-in", "tend")
"""D100-DEF-2, D100-PARTY-6 (step-in), D100-PARTY-7 (tend: bare hands stop an ally's
bleeding)."""


XP_RECORD = {"xp": "a narrative victory: the experience each standing hero got (D100-PARTY-10): "
                    "field, each, heroes"}
ATTACK_RECORD = {
    "chance": "narrative: the hit chance, not clamped (D100-ATK-A3)",
    "parts": "narrative: each term of the chance: base, tactics, risk, aim, gap, momentum, "
             "fatigue, focus (only when it counts) — term, value, grade",
    "roll": "narrative: the d100 (1..100)", "margin": "narrative: chance − roll",
    "grade": "narrative: critical, clean, solid, glancing, blocked, miss or backfire",
    "rolled": "narrative: the grade before the target's defence",
    "multiplier": "narrative: the grade's damage multiplier, a fraction {num, den}",
    "purpose": "narrative: kill, subdue, incapacitate or restrained",
    "blow": "narrative: the damage formula's exact value, a fraction {num, den}",
    "gap": "narrative: the gap label (D100-RANK-6)",
    "momentum": "narrative: the side's momentum after", "momentumChange": "narrative: what "
    "the strike moved it by", "effort": "narrative: the effort word",
    "effortRank": "narrative: the rank of the effect", "scaledTo": "narrative: the rank it "
    "was scaled down to (D100-EFF-7)", "overexertion": "narrative: the price of a push: "
    "rupture, grave or far (D100-OVER-1)", "cost": "narrative: what the effort cost",
    "pool": "narrative: the pool it drew on", "left": "narrative: that pool after",
    "max": "narrative: the pool's maximum after a rupture or grave injury",
    "maxLost": "narrative: what it lost for good", "scar": "narrative: the scar a grave "
    "injury left", "collapsed": "narrative: pushed far over, the hero collapsed",
    "landed": "narrative: the announced strikes that landed after the heroes acted "
              "(D100-PARTY-3), each a strike's record with landed true or false",
    "announced": "narrative: a foe's strike announced, landing next round (D100-DEF-1)",
    "lands": "narrative: the round it lands in", "tactics": "narrative: its tactics grade",
    "risk": "narrative: its risk grade", "aim": "narrative: its aim grade",
    "undodgeable": "narrative: no defence meets it (D100-DEF-7)",
    "technique": "narrative: the foe's own technique (D100-DEF-8)",
    "edge": "narrative: better or superior, the hero's weapon against the armour (D100-DMG-3)",
    "flair": "narrative: creative or cooperative play, momentum added (D100-MOM-5)",
    "bled": "narrative: the downed heroes whose bleeding-out clock ran out this round "
            "(D100-PARTY-7): who, since", **XP_RECORD}
"""What a narrative ``[attack:]`` adds to the attack's record (docs/design.md#combat-records)."""
ATTACK_REASONS = (reasons.UNKNOWN_TECHNIQUE,)


def _narrative(game: Game) -> Narrative | None:
    combat = game.ruleset.combat
    return combat.narrative if combat is not None else None


def _base(game: Game, side: str) -> int:
    """D100-HIT-1, OQ-D100-2: 80 for the party, 65 for foes, unless the world says."""
    narrative = _narrative(game)
    base = narrative.base if narrative is not None else None
    if base is None:
        return 80 if side == PARTY else 65
    return base.party if side == PARTY else base.foes


def _exact(value: float) -> Fraction:
    """A ruleset's share (``restrained``, ``recklessTarget``) as the fraction it means."""
    return Fraction(value).limit_denominator(1000)


# --- start, join, end ----------------------------------------------------------------------


class Joining(Protocol):
    """What ``op="start"`` and ``op="join"`` read (engine/actions/fight/requests.py)."""

    @property
    def tag(self) -> Tag: ...
    @property
    def foe(self) -> str: ...
    @property
    def role(self) -> str: ...
    @property
    def tier(self) -> str | None: ...
    @property
    def count(self) -> str | None: ...
    @property
    def rank(self) -> str: ...


def _hero_rank(game: Game, state: State, index: int, notes: list[str]) -> str:
    """D100-RANK-1/2, docs/design.md#narrative-combat: a hero's rank is its sheet's ``rank`` field,
    C without one; X and XX are the world's own beings', so a hero's is held to SSS (noted)."""
    character = state.characters[index]
    written = character.fields.get("rank")
    if written is None or not str(written).strip():
        return DEFAULT_RANK
    rank = rank_word(str(written), _narrative(game))
    if rank is None:
        notes.append(f'{character.name}\'s rank "{str(written)[:20]}" is no rank: '
                     f"{DEFAULT_RANK} was used")
        return DEFAULT_RANK
    if rank not in HERO_RANKS:
        notes.append(f"{character.name}'s rank {rank} belongs to beings of the world itself "
                     "(D100-RANK-2): SSS was used")
        return HERO_RANKS[-1]
    return rank


def _foe_rank(game: Game, state: State, written: str, notes: list[str]) -> str:
    """docs/design.md#narrative-combat: a foe's ``rank=``, a letter or the world's name of one;
    without it (or with a word that is none) the player's rank."""
    player = state.character_index(None)
    default = _hero_rank(game, state, player, []) if player is not None else DEFAULT_RANK
    if not written.strip():
        return default
    rank = rank_word(written, _narrative(game))
    if rank is None:
        notes.append(f'rank="{written[:20]}" is no rank ({", ".join(RANKS)}): the player\'s, '
                     f"{default}, was used")
        return default
    return rank


def _count(game: Game, state: State, encounter: Encounter | None, raw: str | None,
           per_hero: int, notes: list[str]) -> int:
    """``count=``: a whole number 1..12, or ``fitting`` — the standing heroes × the template's
    ``perHero`` (D100-PARTY-9), held to 12."""
    if (raw or "").strip().casefold() != FITTING:
        return whole_number(raw, "count", 1, MAX_FOES, notes)
    heroes = [c for c in encounter.combatants if c.side == PARTY] if encounter else None
    up = (sum(1 for c in heroes if standing(game, state, c)) if heroes is not None
          else sum(1 for i in range(len(state.characters))
                   if (h := hero_health(game, state, i)) is None or h.hp > 0))
    return min(max(up, 1) * per_hero, MAX_FOES)


def _new_foes(game: Game, state: State, encounter: Encounter, joining: Joining,
              kinds: list[str], notes: list[str], ctx: TurnContext) -> list[Combatant]:
    """The foes ``joining`` brings: a template's hit points at its tier where the ruleset has
    templates, else ``10 + 10 × tier`` (docs/design.md#narrative-combat); every one with its
    rank."""
    combat = game.ruleset.combat
    template = None
    if combat is not None and combat.templates:
        template, fell_back = template_for(game, joining.role or combat.templates[0].role)
        if fell_back:
            notes.append(f'role="{joining.role[:40]}" is no template\'s role: '
                         f'"{template.role}" was used')
    tier = whole_number(joining.tier, "tier", *TIERS, notes)
    count = _count(game, state, encounter, joining.count, template.per_hero if template else 1,
                   notes) if len(kinds) == 1 else 1
    rank = _foe_rank(game, state, joining.rank, notes)
    found: list[Combatant] = []
    joined = next_joined(encounter)
    for kind in kinds:
        standing_now = encounter.model_copy(update={"combatants": (*encounter.combatants,
                                                                    *found)})
        for name in foe_names(standing_now, kind, count):
            if template is not None:
                stream = ctx.stream("combat", f"foe/{name.casefold()}")
                hp = max(evaluate(template.tracks.hp, foe_reader(game.ruleset, tier, 0),
                                  stream).value, 0)
            else:
                hp = 10 + 10 * tier
            found.append(Combatant(name=name, side=FOES, initiative=0, joined=joined + len(found),
                                   hp=hp, hp_max=hp, role=template.role if template else None,
                                   tier=tier, rank=rank))
    return found


def _order(game: Game, encounter: Encounter) -> list[dict[str, Any]]:
    """docs/design.md#rounds-and-order: every hero first, then the foes, in join order."""
    narrative = _narrative(game)
    return [{"name": c.name, "side": c.side, "rank": rank_name(c.rank or DEFAULT_RANK, narrative)}
            for c in encounter.combatants]


def _joined(game: Game, state: State, encounter: Encounter, new: list[Combatant],
            notes: list[str], tag: Tag, verb: str) -> tuple[State, Answer]:
    """The encounter with ``new`` in it, and the answer saying who came and at what rank."""
    encounter = encounter.model_copy(update={
        "combatants": in_order((*encounter.combatants, *new))})
    narrative = _narrative(game)
    foes = [{"name": c.name, "hp": c.hp, "hpMax": c.hp_max, "rank": rank_name(
        c.rank or DEFAULT_RANK, narrative), "role": c.role, "tier": c.tier}
            for c in new if c.side == FOES]
    record: dict[str, Any] = {"round": encounter.round, "order": _order(game, encounter),
                              "foes": foes}
    if not encounter.round and all(c in new for c in encounter.combatants):
        record["events"] = ["start"]  # CMB-CARD-1: the first engagement
    shown = ", ".join(
        f"{c.name} {rank_name(c.rank or DEFAULT_RANK, narrative)}"
        + (f" ({c.hp}/{c.hp_max})" if c.side == FOES else "") for c in encounter.combatants)
    text = f"{verb}: {', '.join(c.name for c in new)}. Ranks: {shown}."
    return (state.model_copy(update={"encounter": encounter}),
            accepted(tag, text, record, tuple(notes)))


def _heroes(game: Game, state: State, joined: int, indexes: Sequence[int],
            notes: list[str]) -> list[Combatant]:
    return [Combatant(name=state.characters[i].name, side=PARTY, initiative=0,
                      joined=joined + offset, rank=_hero_rank(game, state, i, notes))
            for offset, i in enumerate(indexes)]


def start(game: Game, state: State, joining: Joining, kinds: list[str], notes: list[str],
          ctx: TurnContext) -> tuple[State, Answer]:
    """``[combat: op="start" foe= rank= tier= count=]`` in a narrative fight: every hero joins
    with its rank, the foes with theirs (a fight on: more foes join); momentum starts at 0
    for each side (D100-MOM-1, docs/design.md#narrative-combat)."""
    encounter = state.encounter
    heroes: list[Combatant] = []
    if encounter is None:
        encounter = Encounter(kind="narrative", momentum={PARTY: 0, FOES: 0})
        heroes = _heroes(game, state, 0, range(len(state.characters)), notes)
    with_heroes = encounter.model_copy(update={"combatants": (*encounter.combatants, *heroes)})
    foes = _new_foes(game, state, with_heroes, joining, kinds, notes, ctx)
    verb = "A fight begins" if not encounter.combatants else "More foes join"
    return _joined(game, state, encounter, [*heroes, *foes], notes, joining.tag, verb)


def join(game: Game, state: State, joining: Joining, foe: str,
         ctx: TurnContext) -> tuple[State, Answer]:
    """``[combat: op="join" foe=]`` in a narrative fight: a foe with its rank, or a hero of
    the party not in the fight yet."""
    encounter = state.encounter
    if encounter is None:
        return state, refused(joining.tag, reasons.NO_ENCOUNTER, NO_FIGHT)
    notes: list[str] = []
    hero = state.character_index(foe)
    if hero is not None:
        if encounter.find(foe) is not None:
            return state, refused(joining.tag, reasons.UNKNOWN_COMBATANT,
                                  f"{state.characters[hero].name} is already in the fight; "
                                  "nothing was done.")
        new = _heroes(game, state, next_joined(encounter), [hero], notes)
    else:
        new = _new_foes(game, state, encounter, joining, [foe], notes, ctx)
    return _joined(game, state, encounter, new, notes, joining.tag, "Joins the fight")


NO_FIGHT = ('No fight is on: begin one with [combat: op="start" foe="<name>"]; nothing was '
            "done.")


def fight_on(game: Game, state: State) -> Encounter | Refusal:
    """The narrative fight on now, or why there is none (``op="end"`` ends it as a formula
    fight ends; its foes drop no loot, ITM-LOOT-13)."""
    return state.encounter or Refusal(reasons.NO_ENCOUNTER, NO_FIGHT)


def rank(encounter: Encounter, found: int) -> int:
    """D100-PARTY-3: every hero first, in text order, then the foes."""
    return 0 if encounter.combatants[found].side == PARTY else 1


def start_tag(game: Game, state: State, joining: Joining, ctx: TurnContext,
              named: list[str], notes: list[str]) -> tuple[State, Answer]:
    """``[combat: op="start"]`` in a narrative fight, the foes ``named`` as the request reads
    them."""
    return start(game, state, joining, named, notes, ctx)


def join_tag(game: Game, state: State, joining: Joining,
             ctx: TurnContext) -> tuple[State, Answer]:
    """``[combat: op="join" foe=]`` in a narrative fight."""
    return join(game, state, joining, joining.foe, ctx)


# --- rounds --------------------------------------------------------------------------------


def begin_round(encounter: Encounter, ctx: TurnContext) -> Encounter:
    """docs/design.md#rounds-and-order: the first answered attack or defence of a reply begins a
    round; every fighter may strike again, last round's defences are gone, and from the second round
    on each side's momentum fades one toward 0 (D100-MOM-6)."""
    if encounter.turn == ctx.turn_key:
        return encounter
    number = encounter.round + 1
    momentum = dict(encounter.momentum or {PARTY: 0, FOES: 0})
    if number > 1:
        momentum = {side: faded(value) for side, value in momentum.items()}
    fresh = tuple(c.model_copy(update={"spent": ()}) if c.spent else c
                  for c in encounter.combatants)
    return encounter.model_copy(update={"round": number, "turn": ctx.turn_key,
                                        "combatants": fresh, "momentum": momentum,
                                        "defences": (), "struck": ()})


def _moved(encounter: Encounter, side: str, change: int) -> Encounter:
    momentum = dict(encounter.momentum or {PARTY: 0, FOES: 0})
    momentum[side] = momentum.get(side, 0) + change
    return encounter.model_copy(update={"momentum": momentum})


def _other(side: str) -> str:
    return FOES if side == PARTY else PARTY


# --- the grades ----------------------------------------------------------------------------


class Graded(Protocol):
    """What a narrative ``[attack:]`` reads
    (:class:`engine.actions.fight.requests.NarrativeStrike`)."""

    @property
    def tag(self) -> Tag: ...
    @property
    def who(self) -> str: ...
    @property
    def target(self) -> str: ...
    @property
    def tactics(self) -> str: ...
    @property
    def risk(self) -> str: ...
    @property
    def aim(self) -> str: ...
    @property
    def purpose(self) -> str: ...
    @property
    def effort(self) -> str: ...
    @property
    def push(self) -> str: ...
    @property
    def pool(self) -> str: ...
    @property
    def undodgeable(self) -> str: ...
    @property
    def technique(self) -> str: ...
    @property
    def edge(self) -> str: ...
    @property
    def flair(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Grades:
    """The GM's grades of one strike (D100-ATK-A1), each an English word of the spec."""

    tactics: str = "standard"
    risk: str = "moderate"
    aim: str = "standard"
    purpose: str = "kill"
    undodgeable: bool = False
    edge: str = "even"
    """D100-DMG-3: the hero's weapon against the target's armour (:data:`EDGES`)."""
    flair: str | None = None
    """D100-MOM-5: ``creative`` or ``cooperative`` (:data:`FLAIRS`), or None."""


YES = frozenset({"yes", "true", "1"})


def grades_of(request: Graded, notes: list[str]) -> Grades:
    """OQ-D100-1, docs/design.md#combat-tags: the grades as written, the spec's Korean words as
    aliases; an unknown word is the standard grade, with a note."""
    read: dict[str, str] = {}
    for kind in ("tactics", "risk", "aim", "purpose"):
        written = getattr(request, kind)
        word, known = grade_word(kind, written)
        if not known:
            notes.append(f'{kind}="{written[:20]}" is no {kind} grade: {word} was used')
        read[kind] = word
    edge, known = edge_word(request.edge)
    if not known:
        notes.append(f'edge="{request.edge[:20]}" is not one of {", ".join(EDGES)}: even '
                     "was used")
    flair = request.flair.strip().casefold()
    if flair and flair not in FLAIRS:
        notes.append(f'flair="{request.flair[:20]}" is not one of {", ".join(FLAIRS)}: no '
                     "momentum was added for it")
    return Grades(read["tactics"], read["risk"], read["aim"], read["purpose"],
                  request.undodgeable.strip().casefold() in YES, edge,
                  flair if flair in FLAIRS else None)


# --- the blow ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Effort:
    """D100-EFF-3..7: what an effort cost and what it put on the blow."""

    factor: Fraction = Fraction(1)
    rows: tuple[tuple[str, Any], ...] = ()
    text: str = ""
    collapses: bool = False
    """D100-OVER-1: pushed far over, the hero collapses once the effect has happened."""


@dataclass(frozen=True, slots=True)
class Blow:
    """One strike as it happened: the new state, its record, its line and its events."""

    state: State
    record: dict[str, Any]
    text: str
    events: list[str]


def _pool(game: Game, side: str, which: str) -> str | None:
    """D100-EFF-1, OQ-D100-3: the pool an action draws on — ``combat.narrative.mana`` for
    ``pool="mana"``, else ``stamina`` — where the ruleset names one; foes have none."""
    narrative = _narrative(game)
    if side != PARTY or narrative is None:
        return None
    return narrative.mana if which.strip().casefold() == "mana" else narrative.stamina


def pool_now(game: Game, state: State, who: int, pool: str) -> tuple[int, int]:
    """A hero's pool as it is now and at most."""
    character = state.characters[who]
    row = next(p for p in game.ruleset.live.pools if p.id == pool)
    most = character.most(pool, SheetView(game, character, state, items_apply=False).value(
        row.max))
    return character.pools.get(pool, most), most


def _tired(game: Game, state: State, combatant: Combatant, pool: str | None) -> int:
    """D100-HIT-4: the fatigue band of the pool the action draws on (0 for foes and where the
    ruleset names no pool)."""
    who = state.character_index(combatant.name) if combatant.side == PARTY else None
    if pool is None or who is None:
        return 0
    return fatigue(*pool_now(game, state, who, pool))


def _effort(game: Game, state: State, who: int, rank: str, pool: str | None, word: str,
            push: bool, notes: list[str]) -> tuple[State, Effort]:
    """D100-EFF-2..7, D100-OVER-1/2: the effort ``word`` priced against the hero's pool — the
    whole pool at its own rank, a tenth per rank below; past what it can pay now it is
    scaled down to what it can reach, unless the GM writes ``push="yes"``: then it happens,
    the pool is spent, and the record names the price (far over: the hero collapses)."""
    written = word.strip().casefold()
    if not written:
        return state, Effort()
    ladder = effort_ladder(_narrative(game))
    if written not in ladder:
        notes.append(f'effort="{word[:20]}" is not on the effort ladder '
                     f"({', '.join(ladder)}): no effort was counted")
        return state, Effort()
    effect = ladder[written]
    if effect is None:
        return state, Effort(rows=(("effort", written),))
    if pool is None:
        notes.append("this ruleset names no pool for effort (combat.narrative.stamina or mana):"
                     " the effort cost nothing and added nothing")
        return state, Effort(rows=(("effort", written),))
    current, most = pool_now(game, state, who, pool)
    own, wanted = RANKS.index(rank), RANKS.index(effect)
    cost = effort_cost(most, own - wanted)
    rows: list[tuple[str, Any]] = [("effort", written), ("effortRank", effect)]
    reach = reachable(current, most, own)
    text = ""
    price = None
    if cost > current and not push:  # D100-EFF-7: quietly scaled down
        if reach is None:
            return state, Effort(rows=(*rows, ("scaledTo", None), ("cost", 0)),
                                 text=f" ({written}: nothing left to give)")
        wanted = reach
        cost = effort_cost(most, own - wanted)
        rows.append(("scaledTo", RANKS[wanted]))
        text = f" ({written} scaled down to rank {RANKS[wanted]})"
    elif cost > current:  # D100-OVER-1: pushed past the limit
        over = _over(game)
        steps = {"rupture": over.rupture, "grave": over.grave, "far": over.far}
        price = overexertion(wanted - (reach if reach is not None else -1), steps)
        cost = current
        rows.append(("overexertion", price))
        text = f" (pushed past the limit: {price})"
    character = state.characters[who]
    state = state.with_character(who, character.model_copy(update={
        "pools": {**character.pools, pool: current - cost}}))
    rows += [("cost", cost), ("pool", pool), ("left", current - cost)]
    if price in ("rupture", "grave"):
        state, row, text = _scarred(game, state, who, pool, most, price)
        rows += row
    return state, Effort(effort_damage(own - wanted), tuple(rows), text, price == "far")


def _over(game: Game) -> Overexertion:
    """D100-OVER-1, OQ-D100-8: the ruleset's ``combat.narrative.overexertion``, else the
    defaults (thresholds 1, 2, 3 ranks over; a rupture keeps 4/5, a grave injury 1/2)."""
    narrative = _narrative(game)
    if narrative is not None and narrative.overexertion is not None:
        return narrative.overexertion
    return Overexertion()


def _scarred(game: Game, state: State, who: int, pool: str, most: int,
             price: str) -> tuple[State, list[tuple[str, Any]], str]:
    """D100-OVER-1: the permanent price of a push — a rupture leaves the pool's maximum at
    ``ruptureKeeps`` (4/5) of what it was, a grave injury at ``graveKeeps`` (1/2) and puts its
    ``scar`` condition on the sheet for life; both rounded down, kept in the character's
    ``lost`` so every later read of the maximum (a rest too) counts it."""
    over = _over(game)
    keeps = _exact(over.rupture_keeps if price == "rupture" else over.grave_keeps)
    after = math.floor(most * keeps)
    character = state.characters[who]
    lost = {**character.lost, pool: character.lost.get(pool, 0) + most - after}
    update: dict[str, Any] = {"lost": lost, "pools": {
        **character.pools, pool: min(character.pools.get(pool, after), after)}}
    rows: list[tuple[str, Any]] = [("max", after), ("maxLost", most - after)]
    text = f" (pushed past the limit: {price}, {pool} max {most} → {after} for good"
    if price == "grave":
        update["conditions"] = tuple(dict.fromkeys((*character.conditions, over.scar)))
        rows.append(("scar", over.scar))
        text += f", and a scar for life: {over.scar}"
    state = state.with_character(who, character.model_copy(update=update))
    return state, rows, text + ")"


def _collapse(game: Game, state: State, name: str, record: dict[str, Any],
              events: list[str]) -> tuple[State, str]:
    """D100-OVER-1, OQ-D100-12: pushed far over, the effect happened and the hero collapses,
    bleeding out — its hit points at 0 (downed: it does not act, D100-PARTY-7 brings it
    back), its side's momentum −3 (D100-MOM-4), and the fight lost when no hero stands."""
    who = state.character_index(name)
    health = hero_health(game, state, who) if who is not None else None
    if who is None or health is None or health.hp + health.temporary <= 0:
        return state, ""
    state, _ = hurt(game, state, who, health.hp + health.temporary)
    record["collapsed"] = True
    events.append(f"down:{name}")
    text = f" {name} collapses, bleeding out."
    encounter = state.encounter
    if encounter is None:  # the blow won the fight
        return state, text
    encounter = _moved(encounter, PARTY, ALLY_DOWN)
    state = state.model_copy(update={"encounter": encounter})
    state, lost = lost_if_none_stand(game, state, encounter, events)
    return state, text + lost


def _damage_formula(game: Game) -> Formula:
    narrative = _narrative(game)
    if narrative is not None and narrative.damage is not None:
        return narrative.damage
    parsed = parse_formula(DEFAULT_DAMAGE)
    assert isinstance(parsed, Formula)
    return parsed


def _reader(game: Game, state: State, attacker: Combatant) -> Resolve:
    """docs/design.md#narrative-combat: the damage formula is read for the attacker — a hero's
    sheet, a foe's tier."""
    who = state.character_index(attacker.name) if attacker.side == PARTY else None
    if who is None:
        return foe_reader(game.ruleset, attacker.tier or 1, 0)
    return sheet_reader(SheetView(game, state.characters[who], state))


def _defence(game: Game, state: State, encounter: Encounter, target: Combatant,
             grade: str, grades: Grades, ctx: TurnContext) -> tuple[Encounter, str, Any]:
    """D100-DEF-3..7, docs/design.md#narrative-combat: the target's one defence roll of the round
    met against this strike — its chance less 10 for each strike it met before — and the grade it
    leaves."""
    index = next((i for i, d in enumerate(encounter.defences)
                  if d.who == target.name and d.round == encounter.round), None)
    if index is None:
        return encounter, grade, None
    found = encounter.defences[index]
    if grades.undodgeable:  # D100-DEF-7
        return encounter, grade, {"who": found.who, "how": found.how, "undodgeable": True}
    momentum = (encounter.momentum or {}).get(target.side, 0)
    pool = _pool(game, target.side, "stamina")
    at = encounter.find(target.name)
    assert at is not None
    statuses = status_term(game, names_of(state, encounter, at))  # ITM-CLS-7
    odds = defence_chance(_base(game, target.side), momentum,
                          _tired(game, state, target, pool), found.met) + statuses
    margin = odds - found.roll
    graded = grade_of(margin)
    after = defended(grade, graded)
    defences = list(encounter.defences)
    defences[index] = found.model_copy(update={"met": found.met + 1})
    row = {"who": found.who, "how": found.how, "roll": found.roll, "chance": odds,
           "margin": margin, "grade": graded, "before": grade, "after": after}
    if statuses:
        row["status"] = statuses
    return encounter.model_copy(update={"defences": tuple(defences)}), after, row


def status_term(game: Game, conditions: tuple[str, ...]) -> int:
    """ITM-CLS-7, docs/design.md#narrative-combat: what the statuses a defender bears (a buff or
    debuff an item applied, or any of the Engine's own) do to its defence chance, as they do in a
    ruleset fight: each ``against`` edge that holds from anywhere (no ``reach``) — advantage for
    attacks on the bearer, +1, or disadvantage, −1 — moves the chance by ``STATUS_STEP`` × −edge (a
    debuff that opens the bearer up lowers it, a buff raises it)."""
    total = 0
    for name in conditions:
        keys = fight_keys(game, name)
        if keys is None:
            continue
        total += sum(-STATUS_STEP * (a.edge or 0) for a in keys.against if a.reach is None)
    return total


def blow(game: Game, state: State, encounter: Encounter, me: int, at: int, grades: Grades,
         effort: Effort, tired: int, key: str, ctx: TurnContext, focus: int = 0) -> Blow:
    """D100-ATK-A3..A8: one strike of fighter ``me`` on fighter ``at``: the hit chance and its
    parts (not clamped; ``tired`` is the attacker's fatigue band before its effort), the d100
    keyed by ``key``, the margin's grade, the target's defence,
    the damage (the formula for the attacker × the grade's multiplier × effort × the reckless
    target's bonus; subdue leaves 1, incapacitate none, restrained its share; 100× weaker:
    none), rounded half up, then momentum and who fell."""
    attacker, target = encounter.combatants[me], encounter.combatants[at]
    narrative = _narrative(game)
    side = attacker.side
    gap = power(attacker.rank or DEFAULT_RANK) - power(target.rank or DEFAULT_RANK)
    label = gap_label(gap)
    momentum = (encounter.momentum or {}).get(side, 0)
    parts = (Part("base", _base(game, side)),
             Part("tactics", TACTICS[grades.tactics], grades.tactics),
             Part("risk", RISK[grades.risk], grades.risk),
             Part("aim", AIM[grades.aim], grades.aim),
             Part("gap", gap_term(gap), label),
             Part("momentum", momentum),
             Part("fatigue", tired),
             *((Part("focus", focus),) if focus else ()))  # D100-PARTY-8: only when it counts
    odds = chance(parts)
    stream = ctx.for_tag(0).stream(key, "d100")
    roll = d100(stream)
    margin = odds - roll
    rolled = grade_of(margin)
    encounter, grade, defence = _defence(game, state, encounter, target, rolled, grades, ctx)
    multiplier = MULTIPLIERS[grade]
    hp = _hp(game, state, target)
    factor = multiplier * effort.factor
    if target.risk in ("reckless", "aggressive") and multiplier:  # D100-DMG-3
        bonus = _exact(narrative.reckless_target if narrative else 1 / 3)
        factor *= 1 + (bonus if target.risk == "reckless" else bonus / 2)
    if grades.purpose == "restrained":
        factor *= _exact(narrative.restrained if narrative else 0.5)
    steps = EDGES[grades.edge]
    if steps and multiplier:  # D100-DMG-3: a better weapon against worse armour
        factor *= edge_factor(steps, _exact(narrative.weapon_armour if narrative else 1 / 3))
    dealt = 0
    formula_value = None
    if multiplier:
        evaluated = evaluate(_damage_formula(game), _reader(game, state, attacker),
                             ctx.for_tag(0).stream(key, "damage"))
        formula_value = evaluated.exact
        dealt = max(half_up(evaluated.exact * factor), 0)
    if meaningless(gap) or grades.purpose == "incapacitate":  # D100-RANK-7, D100-DMG-4
        dealt = 0
    if grades.purpose == "subdue":  # D100-DMG-4: standing, but only just
        dealt = min(dealt, max(hp - 1, 0))
    dealt = min(dealt, hp)
    record: dict[str, Any] = {
        "round": encounter.round, "attacker": attacker.name, "target": target.name,
        "chance": odds, "parts": [p.json() for p in parts], "roll": roll, "margin": margin,
        "grade": grade, "multiplier": fraction(multiplier), "purpose": grades.purpose,
        "damage": dealt, "gap": label}
    if defence is not None:
        record["rolled"] = rolled
        record["defence"] = defence
    if formula_value is not None:
        record["blow"] = fraction(formula_value)
    for name, value in effort.rows:
        record[name] = value
    state, encounter, hp_after, events = struck(game, state, encounter, at, dealt)
    meaning = ""
    who = state.character_index(target.name) if target.side != FOES else None
    if who is not None and not hp_after and hp:  # CMB-HP0-1..4: what 0 means for the hero
        told_events: list[str] = []
        state, meaning = zero_meaning(game, state, who, told_events, record)
        down = events.index(f"down:{target.name}") + 1
        events[down:down] = told_events
    change = MOMENTUM[grade]
    if grades.flair is not None:  # D100-MOM-5: creative or cooperative play
        change += narrative.flair if narrative is not None else 1
        record["flair"] = grades.flair
    if steps:
        record["edge"] = grades.edge
    encounter = _moved(encounter, side, change)
    told = f" {target.name} is {'felled' if target.side == FOES else 'down'}." if not hp_after \
        and hp else ""
    if not hp_after and hp:  # D100-MOM-3/4: a kill lifts the side, a fallen ally sinks its own
        encounter = _moved(_moved(encounter, side, KILL), target.side, ALLY_DOWN)
        change += KILL
    record["hp"] = hp_after
    record["hpMax"] = hp_max(game, state, encounter.combatants[at])
    record["momentum"] = (encounter.momentum or {}).get(side, 0)
    record["momentumChange"] = change
    shown = "WHIFF" if grade == "miss" else grade.upper()  # D100-GRADE-6
    terms = ", ".join([str(parts[0].value), *(f"{p.term} {p.value:+d}" for p in parts[1:]
                                               if p.value)])
    text = f"{attacker.name} → {target.name}: {odds}% ({terms}), d100 {roll} · {shown}"
    if defence is not None and "roll" in defence:
        text += (f" ({target.name}'s {defence['how']}: d100 {defence['roll']} vs "
                 f"{defence['chance']}%, {defence['grade']}; {rolled} → {grade})")
    elif defence is not None:
        text += " (undodgeable)"
    text += effort.text
    text += f", {dealt} damage · {target.name} {hp_after}/{record['hpMax']} · {label}."
    text += told + meaning
    state = state.model_copy(update={"encounter": encounter})
    if events and events[-1].startswith("end:"):
        text += " The fight is won." if events[-1] == "end:victory" else " The fight is lost."
        if events[-1] == "end:victory":  # D100-PARTY-10
            state, extra, words = spoils.won(game, state, encounter, ctx)
            record.update(extra)
            text += words
        state = fight_over(state)
    return Blow(state, record, text, events)


def _hp(game: Game, state: State, combatant: Combatant) -> int:
    """A fighter's hit points now: a foe's in the fight, a hero's on its health pool or track
    (a hero the ruleset keeps none for: 0, nothing to take)."""
    if combatant.side == FOES:
        return combatant.hp or 0
    who = state.character_index(combatant.name)
    health = hero_health(game, state, who) if who is not None else None
    return health.hp if health is not None else 0


def hp_max(game: Game, state: State, combatant: Combatant) -> int:
    if combatant.side == FOES:
        return combatant.hp_max or 0
    who = state.character_index(combatant.name)
    health = hero_health(game, state, who) if who is not None else None
    return health.hp_max if health is not None else 0


def struck(game: Game, state: State, encounter: Encounter, at: int,
            dealt: int) -> tuple[State, Encounter, int, list[str]]:
    """``dealt`` taken by fighter ``at`` (a hero's temporary points first, never below 0),
    with the rule-card events (CMB-CARD-1): damage, felled or down, and the end when the last
    of a side falls (docs/design.md#rounds-and-order)."""
    target = encounter.combatants[at]
    before = _hp(game, state, target)
    events = [f"damage:{target.name}:{dealt}"] if dealt else []
    if target.side == FOES:
        after = max(before - dealt, 0)
        combatants = list(encounter.combatants)
        combatants[at] = target.model_copy(update={"hp": after})
        encounter = encounter.model_copy(update={"combatants": tuple(combatants)})
    else:
        who = state.character_index(target.name)
        assert who is not None
        state, health = hurt(game, state, who, dealt) if dealt else (state, None)
        after = health.hp if health is not None else before
    if after or not before:
        return state, encounter, after, events
    events.append(f"{'felled' if target.side == FOES else 'down'}:{target.name}")
    left = [c for c in encounter.combatants if c.side == target.side
            and (c.hp if c.side == FOES else standing(game, state, c))]
    if not left:
        events.append("end:victory" if target.side == FOES else "end:defeat")
    return state, encounter, after, events


# --- attacking -----------------------------------------------------------------------------


def _target(game: Game, state: State, encounter: Encounter, attacker: Combatant,
            named: str) -> int | tuple[str, str]:
    """``target=``: one of the other side, standing; without it the only one standing."""
    side = _other(attacker.side)
    up = [i for i, c in enumerate(encounter.combatants)
          if c.side == side and standing(game, state, c)]
    if not named.strip():
        if len(up) == 1:
            return up[0]
        names = ", ".join(encounter.combatants[i].name for i in up)
        return (reasons.MISSING_ATTRIBUTE, f'Name the target: target="<name>" ({names}).')
    index = encounter.find(named)
    if index is None:
        names = ", ".join(c.name for c in encounter.combatants)
        return (reasons.UNKNOWN_COMBATANT, f'Nobody called "{named[:60]}" is in the fight '
                f"({names}); nothing was done.")
    found = encounter.combatants[index]
    if found.side != side:
        return (reasons.UNSUPPORTED, f"{found.name} is on {attacker.name}'s side: attacks on "
                "one's own side are not answered by this version of gmtags; nothing was done.")
    if not standing(game, state, found):
        return (reasons.TARGET_DOWN, f"{found.name} is already down; nothing was done.")
    return index


def attack(game: Game, state: State, strike: Graded, ctx: TurnContext) -> tuple[State, Answer]:
    """``[attack: who= target= tactics= risk= aim= purpose= effort= push= pool=]`` in a
    narrative fight (D100-ATK-A1..A8): a hero's strike lands now; a foe's is announced and
    lands next round (D100-DEF-1). Each fighter strikes once a round (``no-time`` past it)."""
    tag = strike.tag
    encounter = state.encounter
    if encounter is None:
        return state, refused(tag, reasons.NO_ENCOUNTER, NO_FIGHT)
    me = encounter.find(strike.who)
    if me is None:
        return state, refused(tag, reasons.UNKNOWN_COMBATANT,
                              f'{strike.who[:60]} is not in the fight: [combat: op="join" '
                              f'foe="{strike.who[:60]}"] first; nothing was done.')
    attacker = encounter.combatants[me]
    if not standing(game, state, attacker):
        return state, refused(tag, reasons.DOWNED,
                              f"{attacker.name} is down and does not act; nothing was done.")
    at = _target(game, state, encounter, attacker, strike.target)
    if isinstance(at, tuple):
        return state, refused(tag, *at)
    technique = _technique(game, attacker, strike.technique)
    if isinstance(technique, tuple):
        return state, refused(tag, *technique)
    if attacker.side == PARTY:
        who = state.character_index(attacker.name)
        if who is None or hero_health(game, state, who) is None:
            return state, refused(tag, reasons.UNSUPPORTED, NO_HIT_POINTS)
    encounter = begin_round(encounter, ctx)
    if encounter.combatants[me].spent:
        return state, refused(tag, reasons.NO_TIME, f"NO TIME: {attacker.name} has struck "
                              "this round already; nothing was done.")
    notes: list[str] = []
    grades = grades_of(strike, notes)
    if technique is not None and technique.undodgeable:  # D100-DEF-7/8
        grades = replace(grades, undodgeable=True)
    if attacker.side == FOES and (grades.edge != "even" or grades.flair is not None):
        notes.append("edge= and flair= count on a hero's strike only (D100-DMG-3, D100-MOM-5):"
                     " they were not kept for this announced strike")
        grades = replace(grades, edge="even", flair=None)
    combatants = list(encounter.combatants)
    combatants[me] = combatants[me].model_copy(update={"spent": (STRIKE,),
                                                       "risk": grades.risk})
    encounter = encounter.model_copy(update={"combatants": tuple(combatants)})
    target = encounter.combatants[at]
    if attacker.side == FOES:
        return _announce(state, encounter, attacker, target, grades, notes, tag, ctx,
                         technique)
    narrative = _narrative(game)
    focus = (narrative.focus if narrative is not None else 3) * min(  # D100-PARTY-8
        encounter.struck.count(target.name), 3)
    encounter = encounter.model_copy(update={"struck": (*encounter.struck, target.name)})
    who = state.character_index(attacker.name)
    assert who is not None
    pool = _pool(game, PARTY, strike.pool)
    tired = _tired(game, state, attacker, pool)
    paid, effort = _effort(game, state, who, attacker.rank or DEFAULT_RANK, pool,
                           strike.effort, strike.push.strip().casefold() in YES, notes)
    key = f"narrative/{attacker.name.casefold()}/0"
    done = blow(game, paid, encounter, me, at, grades, effort, tired, key, ctx, focus)
    record = {**done.record, "slot": ctx.ordinal + 1}
    after, text, events = done.state, done.text, list(done.events)
    if effort.collapses:
        after, told = _collapse(game, after, attacker.name, record, events)
        text += told
    if events:
        record["events"] = events
    return after, accepted(tag, text, record, tuple(notes))


NO_HIT_POINTS = ("This ruleset keeps no hit points for heroes (no health pool or health track), "
                 "so nobody can be hurt; nothing was done.")


def _technique(game: Game, attacker: Combatant,
               written: str) -> Technique | tuple[str, str] | None:
    """D100-DEF-8: ``technique=`` names one of the techniques of the foe's own template (by
    id or label, any case) — never one made up on the spot; a hero's strike names none."""
    word = written.strip().casefold()
    if not word:
        return None
    combat = game.ruleset.combat
    if attacker.side == PARTY:
        return (reasons.UNKNOWN_TECHNIQUE, f"technique= is for a foe's strike (D100-DEF-8); "
                f"{attacker.name} is a hero: grade its plan with tactics=; nothing was done.")
    template = (template_for(game, attacker.role or "")[0]
                if combat is not None and combat.templates else None)
    known = template.techniques if template is not None else []
    found = next((t for t in known if word in (t.id.casefold(), (t.label or "").casefold())),
                 None)
    if found is None:
        names = ", ".join(t.label or t.id for t in known) or "none"
        return (reasons.UNKNOWN_TECHNIQUE, f'{attacker.name} has no technique "{written[:40]}"'
                f" (its own: {names}; D100-DEF-8); nothing was done.")
    return found


def _announce(state: State, encounter: Encounter, foe: Combatant, target: Combatant,
              grades: Grades, notes: list[str], tag: Tag, ctx: TurnContext,
              technique: Technique | None = None) -> tuple[State, Answer]:
    """D100-DEF-1, D100-PARTY-3: a foe's strike is announced now and lands next round, after
    every hero has acted, unless the foe is down by then; with its ``technique`` (D100-DEF-8)."""
    announced = Announced(foe=foe.name, target=target.name, round=encounter.round,
                          tactics=grades.tactics, risk=grades.risk, aim=grades.aim,
                          purpose=grades.purpose, undodgeable=grades.undodgeable,
                          technique=technique.id if technique is not None else None)
    encounter = encounter.model_copy(update={"announced": (*encounter.announced, announced)})
    record: dict[str, Any] = {"round": encounter.round, "attacker": foe.name,
                              "target": target.name, "announced": True,
                              "lands": encounter.round + 1, "tactics": grades.tactics,
                              "risk": grades.risk, "aim": grades.aim,
                              "purpose": grades.purpose, "slot": ctx.ordinal + 1}
    if grades.undodgeable:
        record["undodgeable"] = True
    what = "a strike"
    if technique is not None:
        record["technique"] = technique.id
        what = technique.label or technique.id
    text = (f"{foe.name} readies {what} at {target.name}: it lands next round, after every "
            f"hero has acted, unless {foe.name} is down by then"
            + (" (it cannot be dodged or blocked)." if grades.undodgeable else "."))
    return state.model_copy(update={"encounter": encounter}), accepted(tag, text, record,
                                                                        tuple(notes))


def land(game: Game, before: State, state: State, answers: list[Answer],
         ctx: TurnContext, in_round: Callable[[Answer], bool]) -> tuple[State, list[Answer]]:
    """D100-PARTY-3/4, D100-DEF-1: after every hero of a round has acted, the strikes the
    foes announced in an earlier round land, in the order announced — each unless its foe
    is down, on the ally a hero stepped in for on that hero (D100-PARTY-6) — told at the end
    of the round's last answered attack or defence (record ``landed``)."""
    encounter = state.encounter
    if encounter is None or encounter.turn != ctx.turn_key:
        return state, answers
    if before.encounter is not None and before.encounter.turn == ctx.turn_key:
        return state, answers
    due = [a for a in encounter.announced if a.round < encounter.round]
    last = next((i for i in range(len(answers) - 1, -1, -1)
                 if in_round(answers[i]) or _narrative_act(answers[i])), None)
    if not due or last is None:
        return state, answers
    encounter = encounter.model_copy(update={"announced": tuple(
        a for a in encounter.announced if a.round >= encounter.round)})
    state = state.model_copy(update={"encounter": encounter})
    rows: list[dict[str, Any]] = []
    lines: list[str] = []
    events: list[str] = []
    for number, strike in enumerate(due):
        encounter = state.encounter
        if encounter is None:  # the fight ended on an earlier strike
            break
        me = encounter.find(strike.foe)
        foe = encounter.combatants[me] if me is not None else None
        if foe is None or not foe.hp:
            rows.append({"attacker": strike.foe, "target": strike.target, "landed": False})
            lines.append(f"{strike.foe} is down: its strike at {strike.target} never lands")
            continue
        at = _shielded(game, state, encounter, strike.target)
        if at is None:
            rows.append({"attacker": strike.foe, "target": strike.target, "landed": False})
            lines.append(f"{strike.target} is down: {strike.foe}'s strike falls on nobody")
            continue
        grades = Grades(strike.tactics, strike.risk, strike.aim, strike.purpose,
                        strike.undodgeable)
        key = f"narrative/{strike.foe.casefold()}/landing/{number}"
        assert me is not None
        done = blow(game, state, encounter, me, at, grades, Effort(), 0, key, ctx)
        state = done.state
        technique = {"technique": strike.technique} if strike.technique else {}
        rows.append({**done.record, "landed": True, **technique})
        lines.append(done.text.rstrip("."))
        events += done.events
    told = answers[last]
    answers = list(answers)
    record = {**told.record, "landed": rows}
    if events:
        record["events"] = [*told.record.get("events", []), *events]
    answers[last] = told.model_copy(update={
        "text": f"{told.text} Announced strikes land: {'; '.join(lines)}.", "record": record})
    return state, answers


def bleed(game: Game, before: State, state: State, answers: list[Answer],
          ctx: TurnContext, in_round: Callable[[Answer], bool]) -> tuple[State, list[Answer]]:
    """D100-PARTY-7: the bleeding-out clocks at the end of a round
    (engine/actions/fight/narrative/bleed.py)."""
    return bleeding.bleed(game, before, state, answers, ctx,
                          lambda answer: in_round(answer) or _narrative_act(answer))


def _narrative_act(answer: Answer) -> bool:
    """What a narrative round counts besides every fight's acts: a defence (D100-DEF-2) and an
    item used (ITM-CLS: using an item is the hero's action of the round)."""
    tag = answer.tag
    op = tag.attrs.get("op" if tag.kind == "combat" else "action", "").strip().lower()
    return answer.ok and ((tag.kind == "combat" and op == "defend") or (
        tag.kind == "inventory" and op == "use" and answer.record.get("used") is True))


def _shielded(game: Game, state: State, encounter: Encounter, named: str) -> int | None:
    """D100-PARTY-6: the hero a strike at ``named`` falls on — one standing who stepped in
    for it this round, else ``named`` while standing; None when it falls on nobody."""
    for found in encounter.defences:
        if found.shields is not None and found.shields.casefold() == named.casefold() \
                and found.round == encounter.round:
            index = encounter.find(found.who)
            if index is not None and standing(game, state, encounter.combatants[index]):
                return index
    index = encounter.find(named)
    if index is None or not standing(game, state, encounter.combatants[index]):
        return None
    return index


# --- defending -----------------------------------------------------------------------------


@request
class Defend(Request):
    """How a fighter meets the strikes of this round (D100-DEF-2/3, D100-PARTY-6)."""

    who: str = attr(FIGHTER, "who defends: a hero, or a foe in the fight", shown="the player")
    how: str = attr(TEXT, "dodge, block, parry, sidestep, counter, step-in (with for=), or "
                    "tend (with for=: stop a downed ally's bleeding, D100-PARTY-7)",
                    shown="dodge")
    ally: str = attr(FIGHTER, "step-in: the ally whose strikes this fighter takes; tend: the "
                     "downed ally it tends", name="for", shown="none")


DEFEND_RECORD = {"round": "the encounter's round", "who": "who defends",
                 "how": "dodge, block, parry, sidestep, counter or step-in",
                 "roll": "the defence's one d100 of the round",
                 "for": "step-in: the ally whose strikes it takes (D100-PARTY-6); tend: the "
                        "downed ally whose bleeding it stopped (D100-PARTY-7)"}


@action("combat", "defend", Defend, phase=FIRST, record=DEFEND_RECORD,
        reasons=(reasons.NO_COMBAT, reasons.UNSUPPORTED, reasons.NO_ENCOUNTER,
                 reasons.UNKNOWN_COMBATANT, reasons.DOWNED, reasons.ALREADY,
                 reasons.NOT_BLEEDING))
def defend(game: Game, state: State, request: Defend, ctx: TurnContext) -> tuple[State, Answer]:
    """``[combat: op="defend" who= how= for=]`` (narrative fights): the fighter's one defence
    roll of the round, met against every strike on it this round
    (docs/design.md#narrative-combat)."""
    tag = request.tag
    kind = game.fight.kind
    if kind == "none":
        return state, refused(tag, reasons.NO_COMBAT, 'This ruleset turns fights off ("kind": '
                              '"none"); nothing was done.')
    if kind != "narrative":
        return state, refused(tag, reasons.UNSUPPORTED, 'op="defend" is for narrative fights '
                              f"(D100-DEF-2); this ruleset fights with {kind} combat; nothing "
                              "was done.")
    encounter = state.encounter
    if encounter is None:
        return state, refused(tag, reasons.NO_ENCOUNTER, NO_FIGHT)
    hero = state.character_index(request.who or None)
    name = state.characters[hero].name if hero is not None else request.who
    me = encounter.find(name)
    if me is None:
        return state, refused(tag, reasons.UNKNOWN_COMBATANT,
                              f'Nobody called "{name[:60]}" is in the fight; nothing was done.')
    fighter = encounter.combatants[me]
    if not standing(game, state, fighter):
        return state, refused(tag, reasons.DOWNED, f"{fighter.name} is down and does not act; "
                              "nothing was done.")
    notes: list[str] = []
    how = request.how.strip().casefold()
    if how not in HOWS:
        if how:
            notes.append(f'how="{request.how[:20]}" is not one of {", ".join(HOWS)}: dodge '
                         "was used")
        how = "dodge"
    shields = tends = None
    if how == "step-in":
        ally = encounter.find(request.ally)
        if ally is None or encounter.combatants[ally].side != fighter.side or ally == me:
            return state, refused(tag, reasons.UNKNOWN_COMBATANT,
                                  f'Step in for whom? for="{request.ally[:60]}" names no ally '
                                  f"of {fighter.name} in the fight; nothing was done.")
        shields = encounter.combatants[ally].name
    encounter = begin_round(encounter, ctx)
    if any(d.who == fighter.name for d in encounter.defences):
        return state, refused(tag, reasons.ALREADY, f"{fighter.name} has declared its defence "
                              "this round already (one roll a round); nothing was done.")
    if how == "tend":  # D100-PARTY-7: bare hands can only stop the bleeding
        tended = bleeding.stanch(game, state, encounter, fighter.name, request.ally)
        if isinstance(tended, tuple):
            return state, refused(tag, *tended)
        encounter = tended
        tends = encounter.combatants[encounter.find(request.ally) or 0].name
    roll = d100(ctx.for_tag(0).stream(f"narrative/{fighter.name.casefold()}", "defence"))
    found = Defence(who=fighter.name, how=how, round=encounter.round, roll=roll,
                    shields=shields)
    encounter = encounter.model_copy(update={"defences": (*encounter.defences, found)})
    record: dict[str, Any] = {"round": encounter.round, "who": fighter.name, "how": how,
                              "roll": roll}
    text = f"{fighter.name} meets this round's strikes: {how} (d100 {roll})"
    if how == "tend":
        record["for"] = tends
        text += f", and stops {tends}'s bleeding with bare hands"
    elif shields is not None:
        record["for"] = shields
        text += f", stepping in front of {shields}"
    return (state.model_copy(update={"encounter": encounter}),
            accepted(tag, text + ".", record, tuple(notes)))


# --- teaching the GM -----------------------------------------------------------------------


def teach_start(game: Game, party: Party) -> list[str]:
    """docs/design.md#combat-prompt: out of a fight, how to start one — with a wolf, and how to
    choose its rank and tier (``rank="<D|C|…>"`` gave S-rank wolves)."""
    narrative = _narrative(game)
    combat = game.ruleset.combat
    roles = [t.role for t in combat.templates] if combat is not None else []
    lowest = rank_name(RANKS[0], narrative)
    tag = example("combat", op="start", foe=FOE, role=roles[0] if roles else None,
                  rank=lowest, tier=str(TIERS[0]), count=str(FOE_COUNT))
    ranks = ", ".join(rank_name(r, narrative) for r in HERO_RANKS)
    world = ", ".join(rank_name(r, narrative) for r in RANKS[len(HERO_RANKS):])
    return [f"- A fight begins: {tag}: an ordinary animal or common thug is rank {lowest}, "
            f"tier {TIERS[0]}; tougher foes rank higher ({ranks}; {world} for world beings), "
            f"tiers {TIERS[0]}-{TIERS[1]}" + (f"; roles: {', '.join(roles)}" if roles else "")
            + '; count="fitting" suits the party.']


def _techniques(game: Game) -> list[str]:
    """D100-DEF-8: the foes' own techniques, where the templates give any."""
    combat = game.ruleset.combat
    found = {t.label or t.id: None for tpl in (combat.templates if combat else [])
             for t in tpl.techniques}
    return list(found)


def teach_fight(game: Game, party: Party) -> list[str]:
    """D100-ROLE-1..3: the GM grades, the engine rolls — the grades in a few lines, each
    example showing one word of a grade and the others listed beside it."""
    hero = party.hero
    efforts = ", ".join(effort_ladder(_narrative(game)))
    techniques = _techniques(game)
    announce = example("attack", who=FOE_NAMES[-1], target=hero,
                       technique=techniques[0] if techniques else None)
    lines = ["How to fight: you grade each move in words, the engine rolls a d100; never write "
             "numbers or outcomes, narrate the grade it answers.",
             "- A hero strikes: " + example("attack", who=hero, target=FOE_NAMES[0], tactics="good",
                                            risk="moderate")
             + f". tactics=: {', '.join(TACTICS)}. risk=: {', '.join(RISK)}. Optional: aim= "
             f"({', '.join(AIM)}), purpose= ({', '.join(PURPOSES)}), effort= for a big effect "
             f'({efforts}; push="yes" only when the player pushes past the limit, pool="mana" '
             'for magic), edge= (' + ", ".join(e for e in EDGES if EDGES[e])
             + ") when the weapon outclasses the target's armour, flair= ("
             + ", ".join(FLAIRS) + ") for a creative or joint move.",
             f"- A foe announces its strike: {announce}; it lands next round after the heroes "
             "act, unless the foe is down (describe what is coming)."
             + (f" Its techniques, never another: {', '.join(techniques)}." if techniques
                else ""),
             "- A hero meets it: " + example("combat", op="defend", who=hero, how="dodge")
             + f" (how=: {', '.join(HOWS[:HOWS.index('step-in')])}; step-in with for= an ally "
             "takes the ally's strikes; tend with for= a downed ally stops its bleeding).",
             "- More foes: " + example("combat", op="join", foe=FOE, rank=rank_name(
                 RANKS[0], _narrative(game))) + "; it ends: "
             + example("combat", op="end", outcome="fled")
             + " (or victory, defeat, truce; felling the last foe wins)."]
    return lines
