"""Random fights (issue 24 "Done when"): hypothesis state machines play formula fights on
fixtures/rulesets/skirmish.json, skirmish-round.json and srd5.json — fights started with
several templates, tiers and counts, foes and heroes joining late, conditions applied and
removed (with rounds, saves, ``noActions``), heroes and foes attacking valid and invalid
targets with weapons worn, carried, unknown or none, on every budget and in any mode,
healing items used, ``op="end"``, swipes — in replies of several tags in shuffled order, and
check after every step the laws of DESIGN.md "Combat" and spec/combat.md:

* hit points stay in 0..hpMax for foes and 0..the health pool's max for heroes (CMB-ATK-A6,
  ITM-OUT-3), and temporary points never go below 0 (ITM-OUT-4);
* a felled foe or a downed hero has no answered attack afterwards — in a later reply, or
  later in the same round's order (CMB-TURN-8, DESIGN.md "Rounds and order"), until healed;
* no attacker makes more answered attacks in a round than ``per`` × ``attacks`` of the budget
  it spends (CMB-TURN-9..12), a foe more than its template's ``attacks`` (one without), and
  ``no-time`` is given only once that many were answered;
* a reply with an answered attack is one round (its first is round 1), any other is none;
  the encounter is gone exactly when an answer ended it;
* the order is initiative order and every combatant's name is its own (CMB-TURN-3/4);
* a tag refused alone leaves the very same state; a reply with nothing answered changes
  nothing;
* the state's JSON reads back to the same state, and a reply answered on the state read back
  gives the same JSON (no memo decides a result);
* the same reply on the same state gives the same JSON; a round of attacks by different
  attackers gives the same state in any text order (DESIGN.md "Dice": a reordered swipe
  cannot fish for rolls); a swipe that writes the same reply again rolls the same;
* replaying the whole recorded transcript (gmtags JSONL, with swipes) from the start gives
  the same state and answers (DESIGN.md "Determinism").

Issue 25 adds two machines on skirmish-foes.json and skirmish-arms.json for reactions,
sustained abilities, foes' own abilities, regeneration, ammunition and clips (their laws are
in the comment above :class:`CombatTwo`), and one on ember-fights.json for items used in a
fight (consumed stacks, charges, used-up items; the comment above :class:`ItemsFight`).

In memory only, so that heroes can be healed in every game: skirmish.json gets
skirmish-round.json's Tonic (heal 5, an action), and srd5's Potion of Healing the SRD's use
(heal 2d4 + 2, an action; the fixture lists the potion without one).
"""

from __future__ import annotations

import copy
import json
import math
from collections import Counter
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any, ClassVar, TypeVar

from helpers import fixture_json
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

import tagparse
from engine import Answer, Game, State, TurnContext, apply_reply, load_ruleset, start_state
from engine.rules import reasons
from engine.rules.fight.formula import hero_health
from engine.rules.state import plain_canonical
from replay import parse_transcript, replay

T = TypeVar("T")

SETTINGS = settings(max_examples=15, stateful_step_count=25, deadline=None, derandomize=True,
                    database=None, suppress_health_check=[HealthCheck.too_slow])

TONIC = next(e for e in fixture_json("rulesets/skirmish-round.json")["catalogs"][0]["entries"]
             if e["id"] == "tonic")
POTION_USE = {"kind": "heal", "budget": "action", "targets": "self", "consumes": True,
              "amount": {"dice": "2d4", "flat": 2}}
HEALS = {"skirmish": "Tonic", "skirmish-round": "Tonic", "srd5": "Potion of Healing"}

# What each hero's turn actions allow a round, per × attacks, worked out by hand from the
# fixtures (CMB-TURN-9..11): skirmish's Action is "1" × "1"; skirmish-round's is
# "@class.attacks" — Brannoc's ranger 10 gives 1 + floor(10 / 5) = 3 (his fighter 2 gives 1,
# and the largest counts, CMB-TURN-11), Ada's ranger 2 gives 1; srd5's heroes are all level 3:
# 1 + min(1, floor(3 / 5)) + min(1, floor(level_fighter / 11)) + … = 1. Every budget not
# named here allows none.
HERO_ATTACKS = {
    "skirmish": {"Brannoc": {"action": 1}, "Ada": {"action": 1}},
    "skirmish-round": {"Brannoc": {"action": 3}, "Ada": {"action": 1}},
    "srd5": {hero: {"action": 1} for hero in ("Brannoc", "Sister Maelis", "Quill", "Ysolde")},
}

FOES = ["Goblin", "Orc", "Wolf", "Goblin 1"]
FOE_NAMES = [*FOES, "goblin", "Rat 2", "Ada", "", " ", "Ω-wraith", "x" * 80]
TIERS = [None, "1", "2", "3", "4", "6", "0", "9", "x"]
COUNTS = [None, "1", "1", "2", "3", "0", "40", "two"]
ROUNDS = [None, "1", "2", "3", "0", "999", "x"]
DCS = [None, "8", "12", "15", "abc", "5000"]
OUTCOMES = ["victory", "defeat", "fled", "truce", "meh", ""]
RANGES = [None, None, "near", "far", "x"]
MODES = [None, None, None, "thrown", "melee", "x"]


def document_of(name: str) -> Any:
    """The ruleset document, its catalogue files read in (as replay.files does), with the
    healing items of the module docstring."""
    document = copy.deepcopy(fixture_json(f"rulesets/{name}.json"))
    for path in document.pop("catalogFiles", None) or ():
        document.setdefault("catalogs", []).append(fixture_json(f"rulesets/{path}"))
    if name == "skirmish":
        document["catalogs"][0]["entries"].append(copy.deepcopy(TONIC))
    if name == "srd5":
        magic = next(c for c in document["catalogs"] if c["id"] == "magic_items")
        potion = next(e for e in magic["entries"] if e["id"] == "potion-of-healing")
        potion["item"]["use"] = POTION_USE
    return document


@cache
def game_of(name: str) -> Game:
    return load_ruleset(document_of(name))


@cache
def start_of(name: str) -> State:
    return start_state(game_of(name), fixture_json(f"parties/{name}.json"))


@cache
def foe_attacks(name: str) -> dict[str, int]:
    """Each template's attacks a round, from the document (CMB-TURN-12; one without)."""
    templates = document_of(name)["combat"]["templates"]
    return {t["role"]: int(t["combat"].get("attacks", "1")) for t in templates}


def _quoted(value: str) -> str:
    return value.replace('"', "'").replace("]", ")").replace("[", "(")


def render(kind: str, attrs: list[tuple[str, str | None]]) -> str:
    parts = " ".join(f'{key}="{_quoted(value)}"' for key, value in attrs if value is not None)
    return f"[{kind}: {parts}]"


class Words:
    """The names one ruleset and party give a model to write in a fight, and some wrong ones."""

    def __init__(self, name: str) -> None:
        game, start = game_of(name), start_of(name)
        combat = game.ruleset.combat
        assert combat is not None
        self.heroes = [c.name for c in start.characters]
        self.roles = [t.role for t in combat.templates]
        self.budgets = [a.id for a in combat.turn_actions] + [a.name for a in combat.turn_actions]
        conditions = game.ruleset.conditions
        self.conditions = [c.id for c in conditions] + [c.label for c in conditions][:3]
        sheet = game.ruleset.sheet
        self.saves = [s.id for s in sheet.saves] + [a.id for a in sheet.abilities]
        self.weapons = sorted({s.name for c in start.characters for s in c.bag
                               if s.item is not None})
        self.heal = HEALS[name]


@cache
def words_of(name: str) -> Words:
    return Words(name)


# --- what the answers of one reply say -------------------------------------------------------

def attacks_of(answers: list[Answer]) -> list[Answer]:
    """The answered attacks of a reply, in the round's order (record ``slot``)."""
    done = [a for a in answers if a.ok and a.tag.kind == "attack"]
    return sorted(done, key=lambda a: a.record["slot"])


def events_of(answer: Answer) -> list[str]:
    return list(answer.record.get("events", [])) if answer.ok else []


def down_names(game: Game, state: State) -> set[str]:
    """Who is down now: a foe of the fight at 0 hit points, a hero at 0 on its health pool
    (in a fight or not: one that starts later finds it down)."""
    encounter = state.encounter
    down = {c.name for c in encounter.combatants if c.side == "foes" and not c.hp} \
        if encounter is not None else set()
    for index, character in enumerate(state.characters):
        health = hero_health(game, state, index)
        if health is not None and health.hp == 0:
            down.add(character.name)
    return down


def budget_of(game: Game, answer: Answer) -> str:
    """The budget a hero's attack asked for: ``action=`` by id or name, else the Action (every
    fixture weapon's budget, and the first turn action with attacks)."""
    combat = game.ruleset.combat
    assert combat is not None
    wanted = (answer.tag.attrs.get("action") or "").strip().casefold()
    for action in combat.turn_actions:
        if wanted in (action.id.casefold(), action.name.casefold()):
            return action.id
    return "action"


class FightMachine(RuleBasedStateMachine):
    """Random GM replies that fight, swipes and player messages on one fixture game."""

    RULESET: ClassVar[str] = "skirmish"

    def __init__(self) -> None:
        super().__init__()
        self.game = game_of(self.RULESET)
        self.start = start_of(self.RULESET)
        self.words = words_of(self.RULESET)
        self.state = self.start
        self.lines: list[dict[str, Any]] = []  # the gmtags JSONL transcript being written
        self.answers: list[list[dict[str, Any]]] = []  # per line: its answers' JSON
        self.replies = 0
        self.before_reply: State | None = None  # for a swipe of the latest reply
        self.tag = self.tags()

    # --- tags a model might write in a fight -------------------------------------------------

    def pick(self, choices: Callable[[], Sequence[T]]) -> st.SearchStrategy[T]:
        """One of what ``choices()`` gives at the moment of the draw (names in the fight now),
        so the strategies are built once per game rather than once per step."""
        def chosen(index: int) -> T:
            now = choices()
            return now[index % len(now)]

        return st.integers(0, 1 << 16).map(chosen)

    def fighting(self) -> list[str]:
        """Everyone in the fight; the heroes out of one."""
        encounter = self.state.encounter
        return [c.name for c in encounter.combatants] if encounter is not None \
            else self.words.heroes

    def names(self) -> list[str]:
        """Who a tag may name: everyone in the fight (sometimes in another case), the
        heroes, and nobody known."""
        fighting = self.fighting() if self.state.encounter is not None else []
        return [*fighting, *fighting, *(n.upper() for n in fighting[:2]), *self.words.heroes,
                "Nobody"]

    def pairs(self) -> list[tuple[str, str]]:
        """Attacker and target on opposite sides of the fight (standing or not); without a
        fight, a hero and a foe that is not there."""
        encounter = self.state.encounter
        pairs = [(c.name, o.name) for c in encounter.combatants for o in encounter.combatants
                 if o.side != c.side] if encounter is not None else []
        return pairs or [(hero, "Goblin") for hero in self.words.heroes]

    def tags(self) -> st.SearchStrategy[str]:
        """One tag of a fight, with valid, invalid and unknown attribute values."""
        words, some = self.words, st.sampled_from
        names = self.pick(self.names)
        maybe_names = st.none() | names
        roles = st.none() | some([*words.roles, "dragon"])
        start = st.tuples(some(FOE_NAMES), roles, some(TIERS), some(COUNTS)).map(
            lambda t: render("combat", [("op", "start"), ("foe", t[0]), ("role", t[1]),
                                        ("tier", t[2]), ("count", t[3])]))
        join = st.tuples(some([*FOE_NAMES, *words.heroes]), roles, some(TIERS),
                         some(COUNTS)).map(
            lambda t: render("combat", [("op", "join"), ("foe", t[0]), ("role", t[1]),
                                        ("tier", t[2]), ("count", t[3])]))
        known = some(words.conditions)
        condition = st.tuples(maybe_names | self.pick(self.fighting),
                              some(["add", "add", "add", "remove"]),
                              known | known | some(["glum", ""]), some(ROUNDS),
                              st.none() | st.none() | some([*words.saves, "luck"]), some(DCS)).map(
            lambda t: render("combat", [("op", "condition"), ("who", t[0]), (t[1], t[2]),
                                        ("rounds", t[3]), ("save", t[4]), ("dc", t[5])]))
        weapons = st.none() | some([*words.weapons, "unarmed", "Spoon"])
        budgets = st.none() | some([*words.budgets, "dance"])
        wild = st.tuples(maybe_names, maybe_names | st.just(""), weapons, budgets,
                         some(RANGES), some(MODES)).map(
            lambda t: render("attack", [("who", t[0]), ("target", t[1]), ("with", t[2]),
                                        ("action", t[3]), ("range", t[4]), ("mode", t[5])]))
        aimed = st.tuples(self.pick(self.pairs), weapons, budgets, some(RANGES)).map(
            lambda t: render("attack", [("who", t[0][0]), ("target", t[0][1]), ("with", t[1]),
                                        ("action", t[2]), ("range", t[3])]))
        heroes = some(words.heroes)
        heal = heroes.map(lambda who: render("inventory", [("action", "use"),
                                                           ("item", words.heal), ("who", who)]))
        supply = heroes.map(lambda who: render("inventory", [("action", "add"),
                                                             ("item", words.heal),
                                                             ("who", who)]))
        gear = st.tuples(some(["equip", "unequip"]), some(words.weapons), heroes).map(
            lambda t: render("inventory", [("action", t[0]), ("item", t[1]), ("who", t[2])]))
        end = some(OUTCOMES).map(lambda o: render("combat", [("op", "end"), ("outcome", o)]))
        other = some(['[skill_check: skill="athletics" dc="12"]',
                      '[skill_check: skill="attack" dc="12"]', '[combat: op="dance"]',
                      '[attack: who="Ada" target="Goblin"', "[combat: foe=\"Goblin\"]"])
        # Weights: mostly attacks, as in a fight; an end now and then.
        return st.one_of(*[aimed] * 9, *[wild] * 3, *[condition] * 3, *[start] * 2, join,
                         *[heal] * 2, supply, gear, other, end)

    def round_of_attacks(self, data: st.DataObject) -> list[str]:
        """Some of those standing in the fight attack someone standing on the other side,
        once each, in any text order: a round as a GM writes it."""
        encounter = self.state.encounter
        assert encounter is not None
        down = down_names(self.game, self.state)
        up = [c for c in encounter.combatants if c.name not in down]
        strikes = []
        for combatant in up:
            others = [c.name for c in up if c.side != combatant.side]
            if others and data.draw(st.booleans(), label=f"{combatant.name} attacks"):
                target = data.draw(st.sampled_from(others))
                strikes.append(render("attack", [("who", combatant.name), ("target", target)]))
        return data.draw(st.permutations(strikes)) if strikes else []

    # --- answering, with the laws of one reply ------------------------------------------------

    def _answer(self, state: State, text: str) -> tuple[State, list[Answer]]:
        """Answer a reply on ``state`` and check what one reply must keep."""
        game = self.game
        ctx = TurnContext(state.seed, (0, self.replies))
        tags = tagparse.scan(text).tags
        frozen = state.canonical()
        after, answers = apply_reply(game, state, tags, ctx)
        assert state.canonical() == frozen  # never mutated
        assert len(answers) == len(tags)
        said = [a.to_json() for a in answers]
        # The same reply on the same state, and on the state read back from its JSON: the same.
        for again_on in (state, State.model_validate_json(frozen)):
            again, answered = apply_reply(game, again_on, tags, ctx)
            assert again.canonical() == after.canonical()
            assert json.dumps([a.to_json() for a in answered]) == json.dumps(said)
        if not any(a.ok for a in answers):
            assert after is state, answers  # nothing answered: nothing changed
        for tag in tags:  # a tag refused alone leaves the very same state
            alone, (answer,) = apply_reply(game, state, [tag], ctx)
            if not answer.ok:
                assert alone is state, answer
                assert answer.reason in reasons.MEANINGS, answer
        self._check_round(state, after, answers)
        self._check_hit_points(state, after, answers)
        self._check_combatants(state, after, answers)
        return after, answers

    def _check_round(self, before: State, after: State, answers: list[Answer]) -> None:
        """CMB-TURN-8..12 and DESIGN.md "Rounds and order" over one reply's answers."""
        game = self.game
        struck = attacks_of(answers)
        down = down_names(game, before)
        counts: Counter[tuple[str, str]] = Counter()
        for answer in struck:  # in the round's order
            record = answer.record
            attacker = record["attacker"]
            assert attacker not in down, (attacker, "acted while down", answer.text)
            for event in events_of(answer):
                kind, _, name = event.partition(":")
                if kind in ("felled", "down"):
                    down.add(name)
            counts[(attacker, record.get("budget", "strike"))] += 1
        encounter = before.encounter
        for (attacker, budget), count in counts.items():
            assert count <= self._allowed(before, after, attacker, budget), (attacker, budget)
        for answer in answers:
            if answer.reason != reasons.NO_TIME:
                continue
            named = ((answer.tag.attrs.get("who") or "").strip() or before.player).casefold()
            hero = next((h for h in HERO_ATTACKS[self.RULESET] if h.casefold() == named), None)
            budget = budget_of(game, answer) if hero is not None else "strike"
            attacker = hero or next(a for a, _ in counts if a.casefold() == named)
            assert counts[(attacker, budget)] == self._allowed(before, after, attacker, budget)
        # DESIGN.md "Rounds": a reply with an answered attack is one round of the encounter.
        ended = any(a.ok and a.tag.kind == "combat" and "outcome" in a.record for a in answers) \
            or any(e.startswith("end:") for a in struck for e in events_of(a))
        if ended:
            assert after.encounter is None
        elif encounter is not None:
            assert after.encounter is not None, "the fight ended without an answer saying so"
        if after.encounter is not None:
            was = encounter.round if encounter is not None else 0
            assert after.encounter.round == was + (1 if struck else 0)

    def _check_hit_points(self, before: State, after: State, answers: list[Answer]) -> None:
        """CMB-ATK-A6, ITM-OUT-3: hit points change only as the answers say — each strike in
        the round's order takes its damage (never below 0) and gives the target's hit points
        after, then each heal adds what it says it healed."""
        game = self.game
        hp = {c.name: hero_health(game, before, i).hp for i, c in enumerate(before.characters)}
        foes = {c.name: c.hp or 0 for c in before.encounter.combatants
                if c.side == "foes"} if before.encounter is not None else {}
        for answer in answers:  # those who joined in this reply, with their hit points
            if answer.ok and answer.tag.kind == "combat" and "foes" in answer.record:
                foes.update({foe["name"]: foe["hp"] for foe in answer.record["foes"]})
        for answer in attacks_of(answers):
            record = answer.record
            if record["target"] in hp:
                known = hp
            else:
                known = foes
                if record["attacker"] not in hp:
                    raise AssertionError(f"a foe attacked a foe: {answer.text}")
            assert record["damage"] >= 0
            known[record["target"]] = max(known[record["target"]] - record["damage"], 0)
            assert record["hp"] == known[record["target"]], answer.text
        for answer in answers:
            if answer.ok and answer.tag.kind == "inventory" and "healed" in answer.record:
                assert answer.record["healed"] >= 0
                hp[answer.record["who"]] += answer.record["healed"]
        now = {c.name: hero_health(game, after, i).hp for i, c in enumerate(after.characters)}
        assert now == hp, (now, hp)
        if after.encounter is not None:
            for combatant in after.encounter.combatants:
                if combatant.side == "foes":
                    assert combatant.hp == foes[combatant.name], combatant

    def _check_combatants(self, before: State, after: State, answers: list[Answer]) -> None:
        """CMB-TPL-8: a combatant's numbers are fixed when it joins; CMB-COND-3..6: at the end
        of a round its conditions count down (or end when saved against), and a reply that is
        no round leaves them be."""
        if before.encounter is None or after.encounter is None:
            return
        was = {c.name: c for c in before.encounter.combatants}
        fixed = ("side", "initiative", "joined", "hp_max", "defence", "attack", "damage",
                 "role", "tier", "modifier", "attacks", "loot", "damage_type")
        afflicted = any(a.ok and a.tag.kind == "combat" and "condition" in a.record
                        for a in answers) or any(a.ok and a.tag.kind == "combat" and
                                                 (a.tag.attrs.get("op") or "") == "condition"
                                                 for a in answers)
        rounds = after.encounter.round != before.encounter.round
        for combatant in after.encounter.combatants:
            old = was.get(combatant.name)
            if old is None:
                continue
            for name in fixed:
                assert getattr(old, name) == getattr(combatant, name), (name, old, combatant)
            if afflicted:
                continue
            now = {c.name: c for c in combatant.conditions}
            if not rounds or (combatant.side == "foes" and not combatant.hp):
                assert combatant.conditions == old.conditions, (old, combatant)
                continue
            assert set(now) <= {c.name for c in old.conditions}
            for lasting in old.conditions:
                kept = now.get(lasting.name)
                if lasting.rounds is None and lasting.save is None:
                    assert kept == lasting  # until removed
                elif kept is not None:  # not saved against, not run out
                    left = None if lasting.rounds is None else lasting.rounds - 1
                    assert kept == lasting.model_copy(update={"rounds": left}), (lasting, kept)
                else:
                    assert lasting.save is not None or lasting.rounds == 1, lasting

    def _allowed(self, before: State, after: State, attacker: str, budget: str) -> int:
        """What ``attacker`` may spend on ``budget`` in a round (CMB-TURN-9..12)."""
        heroes = HERO_ATTACKS[self.RULESET]
        if attacker in heroes:
            return heroes[attacker].get(budget, 0)
        for state in (after, before):  # a foe that joined in this reply is only after it
            if state.encounter is not None:
                found = state.encounter.find(attacker)
                if found is not None:
                    foe = state.encounter.combatants[found]
                    assert foe.role is not None
                    expected = foe_attacks(self.RULESET)[foe.role]
                    assert (1 if foe.attacks is None else foe.attacks) == expected
                    return expected
        raise AssertionError(f"{attacker} attacked from nowhere")

    def _gm_reply(self, text: str) -> None:
        self.before_reply = self.state
        self.state, answers = self._answer(self.state, text)
        self.lines.append({"role": "gm", "text": text})
        self.answers.append([a.to_json() for a in answers])
        self.replies += 1

    # --- rules ---------------------------------------------------------------------------------

    def _start(self, fight: st.DataObject) -> str:
        """A fight of one template, tier and count (CMB-TPL-1..8)."""
        role = fight.draw(st.sampled_from(self.words.roles))
        tier = fight.draw(st.integers(1, 3))
        count = fight.draw(st.integers(1, 3))
        foe = fight.draw(st.sampled_from(FOES))
        return render("combat", [("op", "start"), ("foe", foe), ("role", role),
                                 ("tier", str(tier)), ("count", str(count))])

    @initialize(fight=st.data())
    def maybe_a_fight(self, fight: st.DataObject) -> None:
        """Most games start with a fight on."""
        if fight.draw(st.integers(0, 3), label="no fight"):
            self._gm_reply(self._start(fight))

    @precondition(lambda self: self.state.encounter is None)
    @rule(fight=st.data())
    def new_fight(self, fight: st.DataObject) -> None:
        """Out of a fight, another begins."""
        self._gm_reply(self._start(fight))

    @precondition(lambda self: any(hero_health(self.game, self.state, i).hp < 4
                                   for i in range(len(self.state.characters))))
    @rule()
    def recover(self) -> None:
        """The GM hands the wounded a healing item and they use it (ITM-OUT-3): the last
        tags of a reply, after its attacks."""
        heal = self.words.heal
        wounded = [c.name for i, c in enumerate(self.state.characters)
                   if hero_health(self.game, self.state, i).hp < 4]
        self._gm_reply(" ".join(
            render("inventory", [("action", action), ("item", heal), ("who", who)])
            for who in wounded for action in ("add", "use")))

    @rule(tags=st.data(), prose=st.sampled_from(["", "Steel rings. ", "“Now!” "]))
    def gm_reply(self, tags: st.DataObject, prose: str) -> None:
        """A reply of a few fight tags, in any order."""
        chosen = tags.draw(st.lists(self.tag, min_size=1, max_size=5))
        self._gm_reply(prose + " ".join(chosen))

    @precondition(lambda self: self.state.encounter is not None)
    @rule(tags=st.data(), extra=st.data())
    def fight_a_round(self, tags: st.DataObject, extra: st.DataObject) -> None:
        """A round of attacks by different attackers, sometimes with another tag: the same
        state in any text order of the attacks (DESIGN.md "Dice")."""
        strikes = self.round_of_attacks(tags)
        if not strikes:
            return
        more = extra.draw(st.lists(self.tag, max_size=2))
        text = " ".join(strikes + more)
        if not more:
            shuffled = extra.draw(st.permutations(strikes))
            ctx = TurnContext(self.state.seed, (0, self.replies))
            one, _ = apply_reply(self.game, self.state, tagparse.scan(text).tags, ctx)
            other, _ = apply_reply(self.game, self.state,
                                   tagparse.scan(" ".join(shuffled)).tags, ctx)
            assert one.canonical() == other.canonical(), (text, shuffled)
        self._gm_reply(text)

    @precondition(lambda self: self.state.encounter is not None)
    @rule(data=st.data())
    def afflict(self, data: st.DataObject) -> None:
        """The story puts a condition on someone in the fight — for rounds, until saved
        against, or until removed — or ends one it bears (CMB-COND-1..6, CMB-TYPE-2), then
        the round goes on."""
        encounter = self.state.encounter
        assert encounter is not None
        who = data.draw(st.sampled_from(encounter.combatants))
        borne = [c.name for c in who.conditions]
        if borne and data.draw(st.booleans(), label="remove"):
            tag = render("combat", [("op", "condition"), ("who", who.name),
                                    ("remove", data.draw(st.sampled_from(borne)))])
        else:
            save = data.draw(st.none() | st.sampled_from(self.words.saves))
            tag = render("combat", [
                ("op", "condition"), ("who", who.name),
                ("add", data.draw(st.sampled_from(self.words.conditions))),
                ("rounds", data.draw(st.sampled_from([None, "1", "2", "3"]))),
                ("save", save), ("dc", None if save is None else data.draw(
                    st.sampled_from(["5", "10", "15", "25"])))])
        self._gm_reply(" ".join([tag, *self.round_of_attacks(data)]))

    @precondition(lambda self: self.state.encounter is not None)
    @rule(strikes=st.data())
    def flurry(self, strikes: st.DataObject) -> None:
        """One combatant attacks several times in a reply, on several budgets: past what the
        budget allows, NO TIME (CMB-TURN-9..12)."""
        encounter = self.state.encounter
        assert encounter is not None
        who = strikes.draw(st.sampled_from(encounter.combatants))
        others = [c.name for c in encounter.combatants if c.side != who.side] or ["Nobody"]
        budgets = st.none() | st.sampled_from(self.words.budgets)
        chosen = strikes.draw(st.lists(st.tuples(st.sampled_from(others), budgets),
                                       min_size=2, max_size=5))
        self._gm_reply(" ".join(render("attack", [("who", who.name), ("target", target),
                                                  ("action", budget)])
                                for target, budget in chosen))

    @precondition(lambda self: self.lines and self.lines[-1]["role"] == "gm"
                  and self.before_reply is not None)
    @rule(tags=st.data(), same=st.booleans())
    def swipe(self, tags: st.DataObject, same: bool) -> None:
        """A regenerated reply replaces the latest one and starts from the same state; the
        same text again rolls the same (DESIGN.md "Dice": per-turn)."""
        assert self.before_reply is not None
        old = self.lines[-1]
        if same:
            text = old["text"]
        else:
            text = "Another take. " + " ".join(tags.draw(st.lists(self.tag, max_size=4)))
        self.replies -= 1
        was = self.state
        self.state, answers = self._answer(self.before_reply, text)
        self.replies += 1
        if same:
            assert self.state.canonical() == was.canonical()
            assert [a.to_json() for a in answers] == self.answers[-1]
        swipes = [*(old.get("swipes") or [old["text"]]), text]
        self.lines[-1] = {"role": "gm", "text": text, "swipes": swipes, "swipe": len(swipes) - 1}
        self.answers[-1] = [a.to_json() for a in answers]

    @rule(text=st.sampled_from(["I strike!", '[attack: target="Goblin"]', ""]))
    def player_says(self, text: str) -> None:
        """Tags typed by the player never count."""
        self.lines.append({"role": "player", "name": self.start.player, "text": text})
        self.answers.append([])
        self.before_reply = None

    # --- laws after every step -----------------------------------------------------------------

    @invariant()
    def hit_points_stay_in_range(self) -> None:
        """CMB-ATK-A6, ITM-OUT-3/4: 0 <= hp <= max, for foes and for heroes."""
        state = self.state
        for index, character in enumerate(state.characters):
            health = hero_health(self.game, state, index)
            assert health is not None
            assert 0 <= health.hp <= health.hp_max, (character.name, health)
            assert health.temporary >= 0, (character.name, health)
        if state.encounter is None:
            return
        for combatant in state.encounter.combatants:
            if combatant.side == "foes":
                assert combatant.hp is not None and combatant.hp_max is not None
                assert 0 <= combatant.hp <= combatant.hp_max, combatant
            else:
                assert combatant.hp is None and state.character_index(combatant.name) is not None

    @invariant()
    def the_encounter_is_well_formed(self) -> None:
        """CMB-TURN-3/4, OQ-CMB-7 a: highest first, a hero before a foe on a tie, then join
        order; one name each, whatever its case; a hero's fight conditions on its sheet."""
        encounter = self.state.encounter
        if encounter is None:
            return
        combatants = list(encounter.combatants)
        assert combatants == sorted(combatants, key=lambda c: (-c.initiative, c.side != "party",
                                                               c.joined))
        assert len({c.name.casefold() for c in combatants}) == len(combatants)
        for combatant in combatants:
            if combatant.side == "party":
                character = self.state.characters[self.state.character_index(combatant.name)]
                assert {c.name for c in combatant.conditions} <= set(character.conditions)

    @invariant()
    def the_state_json_round_trips(self) -> None:
        text = self.state.canonical()
        assert text == plain_canonical(self.state)
        assert State.model_validate_json(text).canonical() == text

    def teardown(self) -> None:
        """DESIGN.md "Determinism": the whole transcript replayed from the start is the
        step-by-step fold, answer for answer."""
        if not self.lines:
            return
        text = "\n".join(json.dumps(line, ensure_ascii=False) for line in self.lines)
        result = replay(self.game, parse_transcript(text, format="gmtags"), self.start)
        assert result.state.canonical() == self.state.canonical()
        answers = [{k: v for k, v in a.to_json().items() if k != "message"}
                   for a in result.answers]
        assert answers == [a for line in self.answers for a in line]


class SkirmishFight(FightMachine):
    RULESET = "skirmish"  # d20 with both naturals, prone and paralyzed, a standard and a minion


class SkirmishRoundFight(FightMachine):
    RULESET = "skirmish-round"  # multiclass attacks, a two-strike brute, loot on victory


class Srd5Fight(FightMachine):
    RULESET = "srd5"  # worn armour, typed damage and resistances, four heroes, 5e templates


TestSkirmishFight = SETTINGS(SkirmishFight).TestCase
TestSkirmishRoundFight = SETTINGS(SkirmishRoundFight).TestCase
TestSrd5Fight = settings(SETTINGS, max_examples=6)(Srd5Fight).TestCase


# --- Combat II (issue 25): reactions, sustain, foes' own abilities, ammunition and clips -------
#
# Two smaller machines, each on one fixture, answer random rounds of the tags Combat II adds
# and check after every reply:
#
# * the same reply on the same state (and on the state read back) gives the same JSON, and a
#   tag refused alone leaves the very same state;
# * CMB-REACT-2: one reaction per hero per round (per reply), its defence kept only in the
#   round it fired;
# * CMB-SUS-2/3/7: a hero sustains one ability at most, and every condition a sustainer applied
#   is borne only while it still sustains (nothing it applied is left after it ends);
# * ITM-AMMO-3/5/6: each hero's ammunition left = carried − spent + recovered (spent: shot
#   from the bag, or loaded into a clip by a reload), recovered only after a won fight, and
#   per stack ≤ ⌊shot × recover⌋; ITM-CLIP-4/6: a clip is never below 0 nor above its size;
# * hit points stay in 0..most (a regenerating foe too, CMB-ABIL-7).

AMMO = {"arms/arrows": 0.5, "arms/silver-arrows": 0.5, "arms/shot": 0.0}  # bow recover 0.5
CLIPS = {"arms/pistol": 1}


@cache
def plain_game(name: str) -> Game:
    return load_ruleset(fixture_json(f"rulesets/{name}.json"))


@cache
def plain_start(name: str, party: str) -> State:
    return start_state(plain_game(name), fixture_json(f"parties/{party}.json"))


class CombatTwo(RuleBasedStateMachine):
    """Random rounds of Combat II tags on one fixture; the laws in the comment above."""

    RULESET: ClassVar[str] = "skirmish-foes"
    PARTY: ClassVar[str] = "skirmish-spells"
    ROLES: ClassVar[tuple[str, ...]] = ()

    def __init__(self) -> None:
        super().__init__()
        self.game = plain_game(self.RULESET)
        self.state = plain_start(self.RULESET, self.PARTY)
        self.replies = 0
        self.carried = {c.name: self._carried(self.state, c.name) for c in self.state.characters}
        self.shot_this_fight: Counter[str] = Counter()

    def _carried(self, state: State, name: str) -> int:
        character = state.characters[state.character_index(name)]
        return sum(s.count for s in character.bag if s.item in AMMO)

    def tag_choices(self) -> list[str]:
        raise NotImplementedError

    def reply(self, text: str) -> list[Answer]:
        game, state = self.game, self.state
        ctx = TurnContext(state.seed, (0, self.replies))
        tags = tagparse.scan(text).tags
        after, answers = apply_reply(game, state, tags, ctx)
        again, answered = apply_reply(game, State.model_validate_json(state.canonical()),
                                      tags, ctx)
        assert again.canonical() == after.canonical()
        assert [a.to_json() for a in answered] == [a.to_json() for a in answers]
        for tag in tags:
            alone, (answer,) = apply_reply(game, state, [tag], ctx)
            if not answer.ok:
                assert alone is state and answer.reason in reasons.MEANINGS, answer
        self._reactions(after, answers)
        self._ammunition(state, after, answers)
        self.state = after
        self.replies += 1
        return answers

    def _reactions(self, after: State, answers: list[Answer]) -> None:
        """CMB-REACT-2: one reaction per hero per round."""
        fired: Counter[str] = Counter()
        for answer in answers:
            if not answer.ok:
                continue
            rows = [answer.record, *answer.record.get("targets", [])]
            fired.update(r["reaction"]["who"] for r in rows if "reaction" in r)
            fired.update(r["who"] for r in answer.record.get("reactions", []))  # on leave
        assert all(n == 1 for n in fired.values()), fired
        if after.encounter is not None:
            for combatant in after.encounter.combatants:
                if combatant.name in fired:
                    assert combatant.reacted == after.encounter.round

    def _ammunition(self, before: State, after: State, answers: list[Answer]) -> None:
        """ITM-AMMO-3/5/6, ITM-CLIP-4/6 over one reply, in the order it was applied (an
        ``op="end"`` after the round's attacks)."""
        for answer in sorted(answers, key=lambda a: a.tag.kind == "combat"
                             and a.tag.attrs.get("op") == "end"):
            if not answer.ok:
                continue
            record = answer.record
            ammo = record.get("ammo")
            if ammo is not None and "of" not in ammo:  # shot from the bag
                self.carried[record["attacker"]] -= ammo["shot"]
                self.shot_this_fight[record["attacker"]] += ammo["shot"]
            if answer.tag.kind == "combat" and answer.tag.attrs.get("op") == "reload":
                self.carried[record["who"]] -= record["loaded"]
            recovered = record.get("recovered", [])
            if recovered:
                assert "end:victory" in record.get("events", []) or \
                    record.get("outcome") == "victory", record
            for row in recovered:
                assert row["recovered"] <= math.floor(row["shot"] * 0.5), row
                self.carried[row["who"]] += row["recovered"]
            ended = "end:victory" in record.get("events", []) or "outcome" in record or any(
                e.startswith("end:") for e in record.get("events", []))
            if ended:
                shot: Counter[str] = Counter()
                for row in recovered:
                    shot[row["who"]] += row["shot"]
                for who, count in shot.items():
                    assert count <= self.shot_this_fight[who]
                self.shot_this_fight.clear()
        for character in after.characters:
            assert self._carried(after, character.name) == self.carried[character.name]
            for stack in character.bag:
                if stack.item in CLIPS and stack.loaded is not None:
                    assert 0 <= stack.loaded <= CLIPS[stack.item], stack

    @rule(data=st.data())
    def a_round(self, data: st.DataObject) -> None:
        if self.state.encounter is None:
            role = data.draw(st.sampled_from(self.ROLES))
            count = data.draw(st.sampled_from(["1", "2"]))
            self.reply(render("combat", [("op", "start"), ("foe", "Foe"), ("role", role),
                                         ("count", count)]))
            return
        tags = data.draw(st.lists(st.sampled_from(self.tag_choices()), min_size=1,
                                  max_size=4))
        self.reply(" ".join(tags))

    @invariant()
    def sustained_and_applied(self) -> None:
        """CMB-SUS-2/3/7: what a sustainer applied is borne only while it sustains."""
        encounter = self.state.encounter
        if encounter is None:
            return
        sustaining = {c.name for c in encounter.combatants if c.sustains is not None}
        for combatant in encounter.combatants:
            for lasting in combatant.conditions:
                assert lasting.by is None or lasting.by in sustaining, (combatant, lasting)
            assert combatant.guard == 0 or combatant.reacted is not None

    @invariant()
    def hit_points_in_range(self) -> None:
        for index, character in enumerate(self.state.characters):
            health = hero_health(self.game, self.state, index)
            assert health is not None and 0 <= health.hp <= health.hp_max, character.name
        encounter = self.state.encounter
        for combatant in encounter.combatants if encounter is not None else ():
            if combatant.side == "foes":
                assert combatant.hp is not None and combatant.hp_max is not None
                assert 0 <= combatant.hp <= combatant.hp_max, combatant


class SpellsFight(CombatTwo):
    """Reactions (Ada's Shield on hit, Brannoc's Deflect on spell), sustained spells (Hold
    Person, Faerie Fire, Bless on heroes), heals on heroes, foes leaving (Brannoc's
    Opportunity Attack on leave), Action Surge,
    foes' own abilities (Claw, the breaths, Bite) and a regenerating troll."""

    RULESET = "skirmish-foes"
    PARTY = "skirmish-foes"
    ROLES = ("standard", "minion", "troll", "dragon")

    def tag_choices(self) -> list[str]:
        encounter = self.state.encounter
        assert encounter is not None
        foes = [c.name for c in encounter.combatants if c.side == "foes"]
        uses = {c.name: [u.label for u in c.abilities] or ["claw"]
                for c in encounter.combatants if c.side == "foes"}
        heroes = ["Ada", "Brannoc"]
        spells = ["Fire Bolt", "Burning Hands", "Hold Person", "Faerie Fire"]
        found = [render("attack", [("who", "Ada"), ("use", s), ("target", f)])
                 for s in spells for f in [*foes, ", ".join(foes)]]
        found += [render("attack", [("who", "Brannoc"), ("target", f)]) for f in foes]
        found.append('[attack: who="Brannoc" use="Action Surge"]')
        found += ['[attack: who="Ada" use="Bless" target="Ada, Brannoc"]',
                  '[attack: who="Ada" use="Cure Wounds" target="Brannoc"]',
                  '[attack: who="Brannoc" use="Second Wind"]']
        for foe in foes:
            found += [render("attack", [("who", foe), ("target", h)]) for h in heroes]
            found += [render("attack", [("who", foe), ("use", u), ("target", h)])
                      for u in uses[foe] for h in [*heroes, "Ada, Brannoc"]]
        found += [render("combat", [("op", "leave"), ("who", f), ("how", h)])
                  for f in foes for h in (None, None, "disengage")]
        found.append('[combat: op="end" outcome="victory"]')
        return found


class ArmsFight(CombatTwo):
    """Ammunition taken per attack and picked up after a won fight, a pistol's clip and its
    reload, the bow's modes and the off hand."""

    RULESET = "skirmish-arms"
    PARTY = "skirmish-arms"
    ROLES = ("standard", "minion")

    def tag_choices(self) -> list[str]:
        encounter = self.state.encounter
        assert encounter is not None
        foes = [c.name for c in encounter.combatants if c.side == "foes"]
        found = []
        for foe in foes:
            found += [render("attack", [("who", "Ada"), ("with", "Hunting bow"),
                                        ("target", foe), ("mode", m), ("range", "far")])
                      for m in (None, None, "volley", "aimed")]
            found += [render("attack", [("who", "Brannoc"), ("with", w), ("target", foe),
                                        ("action", a)])
                      for w, a in (("Silver coffin nail", None), ("Knife", "bonus"),
                                   ("Watch pistol", None))]
            found += [render("attack", [("who", foe), ("target", h)]) for h in ("Ada",
                                                                                "Brannoc")]
        found += ['[combat: op="reload" who="Brannoc" with="Watch pistol"]',
                  '[combat: op="reload" who="Brannoc" with="Watch pistol"]',
                  '[inventory: action="unequip" item="Knife" who="Brannoc"] '
                  '[inventory: action="equip" item="Watch pistol" who="Brannoc"]',
                  '[inventory: action="unequip" item="Watch pistol" who="Brannoc"]',
                  '[inventory: action="equip" item="Silver coffin nail" who="Brannoc"]',
                  '[combat: op="end" outcome="victory"]', '[combat: op="end" outcome="fled"]']
        return found


COMBAT_TWO = settings(max_examples=8, stateful_step_count=12, deadline=None, derandomize=True,
                      database=None, suppress_health_check=[HealthCheck.too_slow],
                      phases=[Phase.explicit, Phase.generate])  # no long shrinking
TestSpellsFight = COMBAT_TWO(SpellsFight).TestCase
TestArmsFight = COMBAT_TWO(ArmsFight).TestCase


# --- items used in a fight (issue 25, spec/items.md §13 with §21) -----------------------------
#
# A third Combat II machine answers random rounds of ``[inventory: action="use"]`` on
# ember-fights.json (its party's kit: consumed stacks, the worn and bound Dawn bell with 3
# charges and a break die, the Whistle charm with 2 and no recharge, Juno's Poultice aimed with
# ``target=``) beside attacks, foes striking and ends, and checks after every reply, besides
# CombatTwo's laws:
#
# * ITM-USE-11/12/20: a consumed stack goes down by exactly one per answered use, and nothing
#   else changes it (the machine writes no add, buy or rest);
# * ITM-CHG-1/4, ITM-OUT-9: a charged item goes down by one charge per answered use (the
#   ``left`` its answer tells), never below 0 nor above its most, kept across fights; on its
#   break die the stack is gone (ITM-BRK-2);
# * ITM-USE-21, ITM-OUT-9: a use of what is used up (no stack, no charge) is never answered,
#   and refused alone it changes nothing (CombatTwo.reply).

CONSUMED = ("kit/fire-flask", "kit/pitch-stone", "kit/blasting-powder", "kit/warming-tonic",
            "kit/litany-page", "outfitter/poultice")
CHARGES = {"kit/dawn-bell": 3, "kit/whistle-charm": 2}  # charges.max in the fixture
KIT = {"Fire flask": "kit/fire-flask", "Pitch stone": "kit/pitch-stone",
       "Blasting powder": "kit/blasting-powder", "Warming tonic": "kit/warming-tonic",
       "Page of the vigil litany": "kit/litany-page", "Poultice": "outfitter/poultice",
       "Dawn bell": "kit/dawn-bell", "Whistle charm": "kit/whistle-charm"}


def held(state: State, who: str, item: str) -> tuple[int, int | None]:
    """How many of ``item`` ``who`` holds, and the charges left on it (None: not charged)."""
    character = state.characters[state.character_index(who)]
    stacks = [s for s in character.bag if s.item == item]
    count = sum(s.count for s in stacks)
    if item not in CHARGES:
        return count, None
    return count, sum(CHARGES[item] if s.charges is None else s.charges for s in stacks)


class ItemsFight(CombatTwo):
    """Ada's and Juno's kit used in fights against goblins; the laws in the comment above."""

    RULESET = "ember-fights"
    PARTY = "ember-fights"
    ROLES = ("standard", "minion")

    def tag_choices(self) -> list[str]:
        encounter = self.state.encounter
        assert encounter is not None
        foes = [c.name for c in encounter.combatants if c.side == "foes"]
        found = []
        for label in ("Fire flask", "Pitch stone", "Dawn bell"):
            found += [render("inventory", [("action", "use"), ("item", label), ("who", "Ada"),
                                           ("target", f)]) for f in foes]
        found.append(render("inventory", [("action", "use"), ("item", "Blasting powder"),
                                          ("who", "Ada"), ("target", ", ".join(foes))]))
        for label in ("Warming tonic", "Page of the vigil litany", "Whistle charm"):
            found.append(render("inventory", [("action", "use"), ("item", label),
                                              ("who", "Ada"), ("target", "Ada")]))
        found += [render("inventory", [("action", "use"), ("item", "Poultice"), ("who", "Juno"),
                                       ("target", h)]) for h in ("Ada", "Juno")]
        found += [render("attack", [("who", h), ("target", f)]) for h in ("Ada", "Juno")
                  for f in foes]
        found += [render("attack", [("who", f), ("target", h)]) for f in foes
                  for h in ("Ada", "Juno")]
        found += ['[combat: op="end" outcome="victory"]', '[combat: op="end" outcome="fled"]']
        return found

    def reply(self, text: str) -> list[Answer]:
        before = self.state
        answers = super().reply(text)
        self._uses(before, self.state, answers)
        return answers

    def _uses(self, before: State, after: State, answers: list[Answer]) -> None:
        answered: Counter[tuple[str, str]] = Counter()
        broke: set[tuple[str, str]] = set()
        asked: set[tuple[str, str]] = set()
        for answer in answers:
            attrs = answer.tag.attrs
            if answer.tag.kind != "inventory" or attrs.get("action") != "use":
                continue
            key = (attrs["who"], KIT[attrs["item"]])
            asked.add(key)
            count, charges = held(before, *key)
            if count == 0 or charges == 0:  # used up before the reply: never answered
                assert not answer.ok, answer
            if answer.reason == reasons.NO_USE_LEFT:
                assert charges is not None
            if answer.ok:
                answered[key] += 1
                assert answer.record["item"] == key[1] and answer.record["who"] == key[0]
                if answer.record.get("broke"):
                    broke.add(key)
        for key in asked:
            (count, charges), (now, left) = held(before, *key), held(after, *key)
            uses = answered[key]
            if key[1] in CONSUMED:
                assert now == count - uses >= 0, (key, count, uses, now)
            elif key in broke:
                assert now == 0 and charges == uses  # the last charge, then the die
            else:
                assert charges is not None and left == charges - uses >= 0, (key, left)

    @invariant()
    def charges_in_range(self) -> None:
        """ITM-CHG-1, ITM-OUT-9: 0 <= charges <= most on every charged stack."""
        for character in self.state.characters:
            for stack in character.bag:
                if stack.item in CHARGES and stack.charges is not None:
                    assert 0 <= stack.charges <= CHARGES[stack.item], stack


TestItemsFight = COMBAT_TWO(ItemsFight).TestCase
