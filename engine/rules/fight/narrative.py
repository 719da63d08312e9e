"""Narrative d100 combat's pure rules (docs/rules/combat.md#part-b--narrative-d100-fights;
docs/design.md#narrative-combat): the grades the GM writes and what each adds to the hit chance, the
d100 and the grade its margin falls in, the grade's damage multiplier, ranks as power points and the
gap between two fighters, momentum, fatigue, the effort ladder and its price, and the defence roll.
No tags and no sentences: engine/actions/fight/narrative/combat.py answers the tags with these."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

from ...dice import Stream
from ...ruleset.fight import Narrative
from .formula import held

# --- the GM's grades (D100-HIT-2, OQ-D100-1): each word, its Korean alias, its modifier -------

TACTICS = {"poor": -5, "standard": 0, "good": 5, "excellent": 8, "perfect": 12}
RISK = {"careful": 0, "moderate": 0, "aggressive": -8, "reckless": -20}
AIM = {"easy": 5, "standard": 0, "hard": -8, "extreme": -15}
"""``aim=`` is the spec's "target" grade (target= names who is attacked)."""
PURPOSES = ("kill", "subdue", "incapacitate", "restrained")  # D100-DMG-4
ALIASES = {
    "미흡": "poor", "표준": "standard", "양호": "good", "훌륭": "excellent", "완벽": "perfect",
    "신중": "careful", "무난": "moderate", "공격적": "aggressive", "무모함": "reckless",
    "무모": "reckless", "쉬움": "easy", "어려움": "hard", "극한": "extreme",
    "살해": "kill", "제압": "subdue", "무력화": "incapacitate", "절제": "restrained",
}
"""The source's Korean words (docs/rules/combat.md#b2-hit-chance,
docs/rules/combat.md#b4-damage), read as the English grade."""
STANDARD = {"tactics": "standard", "risk": "moderate", "aim": "standard", "purpose": "kill"}
GRADED = {"tactics": TACTICS, "risk": RISK, "aim": AIM}


def grade_word(kind: str, written: str) -> tuple[str, bool]:
    """The grade ``written`` for ``kind`` (``tactics``, ``risk``, ``aim``, ``purpose``), in
    English, and whether it was read as written: an unknown word (or none) is the standard
    grade (docs/design.md#combat-tags: ``standard``, ``moderate``; ``kill`` for a purpose)."""
    word = written.strip().casefold()
    word = ALIASES.get(word, word)
    known = PURPOSES if kind == "purpose" else GRADED[kind]
    if word in known:
        return word, True
    return STANDARD[kind], not word


# --- the d100 and the grade of its margin (D100-GRADE-1..6, OQ-D100-4) -------------------

GRADES = ("critical", "clean", "solid", "glancing", "blocked", "miss", "backfire")
"""Best to worst (D100-GRADE-5); ``miss`` is the source's WHIFF."""
BANDS = ((25, "critical"), (12, "clean"), (0, "solid"), (-9, "glancing"), (-19, "blocked"),
         (-29, "miss"))
"""The lowest margin of each band, best first; below the last is a backfire."""
MULTIPLIERS = {"critical": Fraction(7, 5), "clean": Fraction(23, 20), "solid": Fraction(1),
               "glancing": Fraction(1, 2), "blocked": Fraction(1, 5), "miss": Fraction(0),
               "backfire": Fraction(0)}  # D100-GRADE-2/3


def d100(stream: Stream) -> int:
    """D100-ATK-A4: one d100, uniform 1..100."""
    return stream.die(100)


def grade_of(margin: int) -> str:
    """D100-GRADE-1, OQ-D100-4: the grade of margin ``m = chance − roll`` (m = 0 is solid)."""
    for lowest, grade in BANDS:
        if margin >= lowest:
            return grade
    return "backfire"


def better(grade: str) -> str:
    """D100-GRADE-5: one grade better (one step towards critical)."""
    return GRADES[max(GRADES.index(grade) - 1, 0)]


def half_up(value: Fraction) -> int:
    """docs/design.md#narrative-combat: narrative damage is rounded half up."""
    return math.floor(value + Fraction(1, 2))


# --- ranks and the gap (D100-RANK-1..7, OQ-D100-6) ---------------------------------------

RANKS = ("D", "C", "B", "A", "S", "SS", "SSS", "X", "XX")
HERO_RANKS = RANKS[:7]  # D100-RANK-2: X and XX belong to beings of the world itself
DEFAULT_RANK = "C"
GAP_LOW, GAP_HIGH = -10, 12  # D100-HIT-2: the "who is stronger" term is held to this
GAP_LABELS = ((10, "Far beneath you."), (3, "Advantage"), (-2, "Even"), (-9, "Disadvantage"),
              (-19, "Suicide."))
"""The lowest gap of each label, highest first; below the last: no meaningful damage."""
NO_DAMAGE_LABEL = "Cannot deal meaningful damage"


def power(rank: str) -> int:
    """docs/design.md#narrative-combat: ranks D..SSS are 0, 10, … 60 power points, X and XX 70 and
    80."""
    return 10 * RANKS.index(rank)


def rank_word(written: str, narrative: Narrative | None) -> str | None:
    """The rank letter ``written`` names: a letter, or a world's own name for one
    (D100-RANK-3, ``combat.narrative.ranks``), in any case; None when it names none."""
    word = written.strip().casefold()
    for letter in RANKS:
        if word == letter.casefold():
            return letter
    names = narrative.ranks if narrative is not None else {}
    return next((letter for letter, name in names.items() if name.casefold() == word), None)


def rank_name(rank: str, narrative: Narrative | None) -> str:
    """A rank as the world names it (D100-RANK-3)."""
    names = narrative.ranks.items() if narrative is not None else ()
    return next((name for letter, name in names if letter == rank), rank)


def gap_term(gap: int) -> int:
    """D100-HIT-2, OQ-D100-3: the power gap held to −10..+12."""
    return held(gap, GAP_LOW, GAP_HIGH)


def gap_label(gap: int) -> str:
    """D100-RANK-6: the label the raw gap chooses."""
    for lowest, label in GAP_LABELS:
        if gap >= lowest:
            return label
    return NO_DAMAGE_LABEL


def meaningless(gap: int) -> bool:
    """D100-RANK-5/7: a fighter 100× weaker (gap ≤ −20) deals no meaningful damage."""
    return gap <= -20


# --- momentum (D100-MOM-1..6, OQ-D100-10) ------------------------------------------------

MOMENTUM = {"critical": 3, "clean": 1, "solid": 0, "glancing": 0, "blocked": -1, "miss": -1,
            "backfire": -4}
KILL = 2  # D100-MOM-3
ALLY_DOWN = -3  # D100-MOM-4


def faded(momentum: int) -> int:
    """D100-MOM-6: one step toward 0, at the start of every round after the first."""
    return momentum - 1 if momentum > 0 else momentum + 1 if momentum < 0 else 0


# --- fatigue and effort (D100-HIT-4, D100-EFF-1..7, D100-OVER-1/2) -----------------------

FATIGUE = ((80, -15), (60, -10), (40, -5))


def fatigue(current: int, most: int) -> int:
    """D100-HIT-4, OQ-D100-3: the highest band the pool's used share has reached — −5 at
    ≥ 40 %, −10 at ≥ 60 %, −15 at ≥ 80 % — the bands never add; 0 for a pool of no size."""
    if most <= 0:
        return 0
    used = Fraction(max(most - current, 0) * 100, most)
    return next((value for least, value in FATIGUE if used >= least), 0)


EFFORT = {"everyday": None, "strain": "D", "cripple": "C", "massacre": "B", "siege": "A",
          "ruin": "S", "cataclysm": "SS", "calamity": "SSS"}
"""D100-EFF-2, OQ-D100-7: the effect ladder's words and the rank of the effect each is (an
``everyday`` act — talking, walking — costs nothing): ``strain`` a hard physical task,
``cripple`` cripple a person, ``massacre`` kill twelve people, ``siege`` bring down a stone
building, ``ruin`` a town, ``cataclysm`` a region, ``calamity`` beyond. A ruleset may give its
own words (``combat.narrative.effort``)."""
OVER = {"rupture": 1, "grave": 2, "far": 3}
"""D100-OVER-1, OQ-D100-8: how many ranks past what the actor can reach now each price
begins at (``combat.narrative.overexertion``)."""
EFFORT_DAMAGE = {0: Fraction(2), 1: Fraction(13, 10), 2: Fraction(11, 10)}
"""D100-DMG-2: the blow's factor for an effort ``k`` ranks below the attacker's own (the whole
pool at 0, a tenth at 1, a hundredth at 2: diminishing returns); 1 further below; each rank
pushed above one's own adds ½."""


def effort_ladder(narrative: Narrative | None) -> Mapping[str, str | None]:
    """The effort words of the ruleset (``combat.narrative.effort``), else :data:`EFFORT`."""
    if narrative is not None and narrative.effort:
        return narrative.effort
    return EFFORT


def effort_cost(most: int, below: int) -> int:
    """D100-EFF-4/5, OQ-D100-7: the effort an effect ``below`` ranks under one's own costs —
    the whole pool at one's own rank, a tenth for each rank below (rounded half up, so
    everyday acts are free); above one's own rank it costs more than the whole pool can give
    (``most`` × 10 per rank above)."""
    return half_up(Fraction(most) * Fraction(10) ** (-below))


def reachable(current: int, most: int, own: int) -> int | None:
    """D100-EFF-6: the highest effect rank (an index of :data:`RANKS`) a fighter of rank
    ``own`` can pay for with ``current`` of ``most``; None when not even the lowest."""
    for rank in range(own, -1, -1):
        if effort_cost(most, own - rank) <= current:
            return rank
    return None


def effort_damage(below: int) -> Fraction:
    """D100-DMG-1/2: the factor effort puts on the blow (:data:`EFFORT_DAMAGE`)."""
    if below < 0:
        return 2 + Fraction(-below, 2)
    return EFFORT_DAMAGE.get(below, Fraction(1))


def overexertion(over: int, steps: Mapping[str, int]) -> str | None:
    """D100-OVER-1: the price of pushing ``over`` ranks past what one can reach: ``far``,
    ``grave``, ``rupture`` or None (not over)."""
    for price in ("far", "grave", "rupture"):
        if over >= steps.get(price, OVER[price]):
            return price
    return None


# --- the defence roll (D100-DEF-1..8, OQ-D100-9) -----------------------------------------

EXTRA_STRIKE = -10  # docs/design.md#narrative-combat: each strike beyond the first a defence meets


def defence_chance(base: int, momentum: int, tired: int, met: int) -> int:
    """docs/design.md#narrative-combat: a defence's chance against the ``met``-th strike it meets
    this round (0-based) — 80 (a foe's 65) + its side's momentum + its fatigue − 10 for each strike
    beyond the first."""
    return base + momentum + tired + EXTRA_STRIKE * met


def defended(grade: str, defence: str) -> str:
    """D100-DEF-4/5, docs/design.md#narrative-combat: what a defence graded ``defence`` makes of a
    strike graded ``grade`` — critical or clean turns it into a miss, solid caps it at glancing,
    miss or backfire makes it one grade better for the attacker, glancing and blocked leave it."""
    if defence in ("critical", "clean"):
        return "miss" if GRADES.index(grade) < GRADES.index("miss") else grade
    if defence == "solid":
        return grade if GRADES.index(grade) >= GRADES.index("glancing") else "glancing"
    if defence in ("miss", "backfire"):
        return better(grade)
    return grade


@dataclass(frozen=True, slots=True)
class Part:
    """One term of a hit chance (D100-ATK-A3, ``record.parts``): what it is, the grade it
    comes from where the GM graded it, and the points it adds."""

    term: str
    value: int
    grade: str | None = None

    def json(self) -> dict[str, str | int]:
        shown: dict[str, str | int] = {"term": self.term, "value": self.value}
        if self.grade is not None:
            shown["grade"] = self.grade
        return shown


def chance(parts: tuple[Part, ...]) -> int:
    """D100-ATK-A3, OQ-D100-2: the hit chance is the sum of its parts, not clamped."""
    return sum(p.value for p in parts)


# --- weapon against armour, flair, the bleeding-out clock -------------------------------

EDGES = {"even": 0, "better": 1, "superior": 2}
"""D100-DMG-3, OQ-D100-5: the GM's grade of a hero's weapon against the target's armour
(``edge=``), as steps; each step adds ``combat.narrative.weaponArmour`` (default ⅓) of the
blow, so a superior weapon adds ⅔ — "more than" the reckless target's third."""
FLAIRS = ("creative", "cooperative")
"""D100-MOM-5, OQ-D100-10: the GM's word for play that builds momentum a little at a time
(``flair=``); each such strike adds ``combat.narrative.flair`` (default 1) to its side."""


def edge_word(written: str) -> tuple[str, bool]:
    """The ``edge=`` grade in English and whether it was read as written (unknown: even)."""
    word = written.strip().casefold()
    if word in EDGES:
        return word, True
    return "even", not word


def edge_factor(steps: int, share: Fraction) -> Fraction:
    """D100-DMG-3: the blow's factor for a weapon ``steps`` better than the armour."""
    return 1 + share * max(steps, 0)


def bleeds_out(now: int, since: int, rounds: int) -> bool:
    """D100-PARTY-7, OQ-D100-12: a hero downed in round ``since`` and neither healed nor
    stanched dies at the end of round ``since + rounds`` (``rounds`` full rounds after)."""
    return now >= since + rounds
