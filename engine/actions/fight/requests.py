"""The requests of ``[combat:]`` start, join and end and of ``[attack:]``: the attributes each
reads, shared by the kinds of combat that answer them."""

from __future__ import annotations

from ...rules import reasons
from ...rules.fight.formula import MAX_FOES
from ...rules.game import Game
from ...rules.state import State
from ..attrs import FIGHTER, FIGHTERS, NUMERAL, TEXT, WIELDED
from ..declare import Read, Reader, Reading, Refusal, Request, attr, request

OUTCOMES = ("victory", "defeat", "fled", "truce")

LEGACY_FOES = ("enemies", "foes", "enemy")
"""The legacy form models write, ``[combat: enemies="Goblin, Skeleton"]`` (no ``op=``), starts a
fight with one foe of each name rather than being refused: models write it unprompted
(engine/actions/reply.py routes it)."""
NAME_THE_FOE = 'Name the foe: foe="<name>".'


@request
class Start(Request):
    """A fight begins, or, when one is on, more foes join (CMB-TPL-1..8, CMB-TURN-2..5)."""

    foe: str = attr(TEXT, "what the foes are called", shown="required (or enemies=)")
    role: str = attr(TEXT, "the template's role (minion, standard, elite, boss...)",
                     shown="the first template")
    tier: str | None = attr(NUMERAL, "the danger, 1 to 6 (held to it)", shown="1")
    count: str | None = attr(NUMERAL, "how many, 1 to 12 (held to it)", shown="1")
    enemies: str = attr(TEXT, "the legacy form (also without op=): a comma list of foes, one "
                        "of each, noted; write foe= instead", aliases=LEGACY_FOES[1:],
                        shown="none")
    rank: str = attr(TEXT, "narrative fights: the foes' rank, D to SSS, X or XX (D100-RANK)",
                     shown="the player's")


@request
class Join(Request):
    """A late arrival rolls initiative when it appears (CMB-TURN-5): a foe from a template,
    or a hero of the party not yet in the fight."""

    foe: str = attr(TEXT, "who joins: a foe's name, or a hero of the party",
                    missing='Name who joins: foe="<name>".')
    role: str = attr(TEXT, "the template's role", shown="the first template")
    tier: str | None = attr(NUMERAL, "the danger, 1 to 6 (held to it)", shown="1")
    count: str | None = attr(NUMERAL, "how many, 1 to 12 (held to it)", shown="1")
    rank: str = attr(TEXT, "narrative fights: the foe's rank, D to SSS, X or XX (D100-RANK)",
                     shown="the player's")


@request
class End(Request):
    """The fight ends, as the story says: victory, defeat, fled or truce."""

    outcome: str = attr(TEXT, "victory, defeat, fled or truce",
                        missing='Say how it ended: outcome="fled" (or victory, defeat, truce).')


def attacker_named(raw: str | None, game: Game, state: State) -> Reading[str]:
    """``who=``: a hero of the party or a foe in the fight, by name (any case) or by its first
    words (:data:`engine.actions.attrs.FIGHTER`); the player without one (CMB-ATK-7:
    foes roll the same attack check)."""
    read = FIGHTER.read(raw, game, state)
    if isinstance(read, Refusal):
        return read
    written = read.value if isinstance(read, Read) else read
    hero = state.character_index(written or None)
    encounter = state.encounter
    if hero is not None:
        name = state.characters[hero].name
    elif encounter is None:
        return written  # no fight is on: the attack is refused no-encounter
    else:
        found = encounter.find(written)
        if found is None:
            names = ", ".join(c.name for c in encounter.combatants)
            return Refusal(reasons.UNKNOWN_COMBATANT, f'Nobody called "{written[:60]}" is in '
                           f"the party or the fight ({names}); nothing was done.")
        name = encounter.combatants[found].name
    return Read(name, name) if isinstance(read, Read) else name


ATTACKER = Reader("combatant", attacker_named, {"type": "string"}, (reasons.UNKNOWN_COMBATANT,))
"""``who=`` of an attack: a hero of the party or a foe in the fight; the player when absent."""


@request
class Strike(Request):
    """A hero attacks a foe, or a foe a hero (CMB-ATK-1..7, CMB-ATK-A1..A7; ITM-WPN-6..15)."""

    # what every kind of combat reads; a kind's own request (FightKind.strike) reads more
    who: str = attr(ATTACKER, "who attacks: a hero, or a foe in the fight", shown="the player")
    target: str = attr(FIGHTERS, "who is attacked: a foe (for a hero) or a hero (for a foe)",
                       shown="the only one standing on the other side")


@request
class FormulaStrike(Strike):
    """A strike with a weapon, the turn action it spends, its reach and its mode."""

    weapon: str | None = attr(WIELDED, "a hero's weapon, worn; unarmed without one", name="with",
                              shown="the first worn weapon, else unarmed")
    budget: str = attr(TEXT, "the turn action a hero's attack spends", name="action",
                       shown="the weapon's budget, else the first action with attacks")
    range: str = attr(TEXT, "near or far (CMB-GRID-3)", shown="near, far for a ranged weapon")
    mode: str = attr(TEXT, "one of the weapon's modes, by id or label (ITM-MODE-2); a mode "
                     "with targets takes comma-separated foes in target= (ITM-MODE-6)",
                     shown="the weapon's default way")


@request
class NarrativeStrike(Strike):
    """The GM's grades of the strike (D100-HIT-2, D100-DMG-4, D100-EFF-2)."""

    tactics: str = attr(TEXT, "poor, standard, good, excellent or perfect", shown="standard")
    risk: str = attr(TEXT, "careful, moderate, aggressive or reckless", shown="moderate")
    aim: str = attr(TEXT, "how hard the target is to hit: easy, standard, hard or extreme",
                    shown="standard")
    purpose: str = attr(TEXT, "kill, subdue (leaves 1), incapacitate (no damage) or restrained",
                        shown="kill")
    effort: str = attr(TEXT, "the size of the effect on the effort ladder", shown="none")
    push: str = attr(TEXT, '"yes" when the player pushes past the limit', shown="no")
    pool: str = attr(TEXT, "stamina or mana, the pool the effort draws on", shown="stamina")
    undodgeable: str = attr(TEXT, '"yes" for a strike no defence can meet (D100-DEF-7)',
                            shown="no")
    technique: str = attr(TEXT, "a foe's technique, one of its template's techniques "
                          "(D100-DEF-8)", shown="none")
    edge: str = attr(TEXT, "a hero's weapon against the target's armour: even, better or "
                     "superior (D100-DMG-3)", shown="even")
    flair: str = attr(TEXT, "creative or cooperative play, building momentum (D100-MOM-5)",
                      shown="none")


@request
class OutcomeStrike(Strike):
    """A hero's action graded by the GM (CMB-OUTC-2, OQ-CMB-6); its weapon adds its toHit
    and its effect."""

    weapon: str | None = attr(WIELDED, "a hero's weapon, worn; unarmed without one", name="with",
                              shown="the first worn weapon, else unarmed")
    position: str = attr(TEXT, "controlled, risky or desperate (how hard a failure comes back)",
                         shown="risky")
    effect: str = attr(TEXT, "limited, standard or great (how much a success achieves)",
                       shown="standard")


def foes_named(request: Start, notes: list[str]) -> list[str]:
    """The foes ``op="start"`` brings: ``foe=``; else, in the legacy form (:data:`LEGACY_FOES`),
    each name of the comma list ``enemies=`` (``foes=``, ``enemy=``) once, at most MAX_FOES, with a
    note saying what to write instead. Empty when neither names anyone."""
    if request.foe.strip():
        if request.enemies.strip():
            notes.append("ignored enemies=: foe= names the foes")
        return [request.foe]
    named = [n.strip() for n in request.enemies.split(",") if n.strip()]
    if not named:
        return []
    if len(named) > MAX_FOES:
        notes.append(f"enemies= names {len(named)} foes: the first {MAX_FOES} joined")
        named = named[:MAX_FOES]
    notes.append('enemies= is a legacy form: write [combat: op="start" foe="<name>" '
                 'count="<n>"], one tag for each kind of foe')
    return named

