"""Random play (issue #14): hypothesis state machines play random sequences of tags and host
events against the fixture rulesets and check, after every step, the laws nothing a model or a
player writes may break (DESIGN.md "Determinism", "Replay semantics"):

* the value of each coin family changes only by what the answers of earn, pay, buy, sell, loot
  (and add, remove, set of coins, and starting gear) say they did;
* no stack count is below 1 or above its item's stack limit, and no bag holds too many stacks;
* a refused answer returns the very state object it was given, byte-identical;
* the same reply on the same state gives the same JSON, and ``apply_reply`` equals answering
  the reply's tags one by one;
* replaying the whole generated transcript (gmtags JSONL, with swipes) equals the step-by-step
  fold, and the incremental fold through the snapshot cache (``replay.cache.fold_turns``)
  equals both.
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any, ClassVar

from helpers import fixture_json
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

import tagparse
from engine import Answer, Game, State, TurnContext, apply_reply, load_ruleset, start_state
from engine.actions.declare import Refusal
from engine.actions.events import apply_event
from engine.actions.money import AMOUNT
from engine.actions.reply import MAX_TAGS_PER_REPLY, answer_tag
from engine.rules.bags import find_thing, item_of, stack_limit
from engine.rules.game import DEFAULT_STACK, MAX_STACKS_PER_BAG
from replay import parse_transcript, replay
from replay.cache import MemoryStore, SnapshotCache, fold_turns
from replay.transcript import Turn

SETTINGS = settings(max_examples=20, stateful_step_count=25, deadline=None, derandomize=True,
                    database=None, suppress_health_check=[HealthCheck.too_slow])

# Words a model writes that name nothing in any fixture ruleset, or nonsense.
UNKNOWN_NAMES = ["Moon cheese", "", " ", "ROPE", "torch ", "Ω-blade", "x" * 300]
BAD_COUNTS = [None, "0", "-1", "2.5", "1e400", "999999999999", "1000001", "three", "٣", " 2 "]
BAD_AMOUNTS = ["", "crowns", "0 crowns", "-3 pennies", "1.5 crowns", "1e400 crowns",
               "9999999999 pennies", "3 doubloons", "3"]


@cache
def game_of(name: str) -> Game:
    return load_ruleset(_ruleset_document(name))


def _ruleset_document(name: str) -> Any:
    document = fixture_json(f"rulesets/{name}.json")
    files = document.pop("catalogFiles", None)
    if files:  # srd5 keeps its catalogues in separate files (replay.files reads them)
        document.setdefault("catalogs", [])
        for path in files:
            document["catalogs"].append(fixture_json(f"rulesets/{path}"))
    return document


@cache
def start_of(name: str) -> State:
    return start_state(game_of(name), fixture_json(f"parties/{name}.json"))


@cache
def vocabulary_of(name: str) -> Vocabulary:
    return Vocabulary(game_of(name), start_of(name))


# --- what the answers say about coins --------------------------------------------------------

def family_values(game: Game, state: State) -> dict[str, int]:
    """The party's coins per family, in each family's smallest coin."""
    values: dict[str, int] = {}
    for character in state.characters:
        for stack in character.bag:
            if stack.coin is not None:
                info = game.coins[stack.coin]
                values[info.family.id] = (values.get(info.family.id, 0)
                                          + stack.count * info.coin.value)
    return values


def _coin_sum(game: Game, coins: dict[str, int], sign: int, into: dict[str, int]) -> None:
    for coin, count in coins.items():
        info = game.coins[coin]
        into[info.family.id] = into.get(info.family.id, 0) + sign * count * info.coin.value


def _held(state: State, who: str, coin: str) -> int:
    character = next(c for c in state.characters if c.name == who)
    return sum(s.count for s in character.bag if s.coin == coin)


_TAKEN = re.compile(r"(.+) ×(\d+)(?: \(equipped\))?")


def said_coin_change(game: Game, before: State, answer: Answer) -> dict[str, int]:
    """What ``answer`` says it did to each coin family (nothing when refused)."""
    change: dict[str, int] = {}
    if not answer.ok:
        return change
    record = answer.record
    kind = answer.tag.kind
    action = (answer.tag.attrs.get("action") or "").strip().lower()
    if kind == "loot":
        for drop in record["drops"]:
            if drop["coin"] is not None:
                placed = sum(p["count"] for p in drop["to"])
                _coin_sum(game, {drop["coin"]: placed}, 1, change)
    elif kind == "event":
        labels = {info.coin.label: coin for coin, info in game.coins.items()}
        for taken in record.get("taken", []):
            match = _TAKEN.fullmatch(taken)
            assert match is not None, taken
            if match.group(1) in labels:
                _coin_sum(game, {labels[match.group(1)]: int(match.group(2))}, 1, change)
    elif kind != "inventory":
        return change
    elif action in ("add", "earn") and record.get("coin") is not None:
        _coin_sum(game, {record["coin"]: record["count"]}, 1, change)
    elif action == "remove" and record.get("coin") is not None:
        _coin_sum(game, {record["coin"]: record["count"]}, -1, change)
    elif action == "set":
        thing = find_thing(game, answer.tag.attrs.get("item", ""), before)
        if thing is not None and thing.coin is not None:
            if "set" in record:  # grown by an add of the difference
                _coin_sum(game, {thing.coin: record["count"]}, 1, change)
            else:  # "now has count"
                held = _held(before, record["who"], thing.coin)
                _coin_sum(game, {thing.coin: record["count"] - held}, 1, change)
    elif action in ("pay", "buy"):
        _coin_sum(game, record["paid"], -1, change)
        _coin_sum(game, record["change"], 1, change)
        if action == "pay":  # ITM-PAY-4: what leaves the purse is exactly the amount
            amount = AMOUNT.read(record["amount"], game, before)
            assert not isinstance(amount, Refusal), record
            assert -change.get(amount.coin.family.id, 0) == amount.value, record
    elif action == "sell":
        _coin_sum(game, record["coins"], 1, change)
    return {family: value for family, value in change.items() if value}


def check_stacks(game: Game, state: State) -> None:
    """No stack below 1 or above its limit; no bag past its stack count (ITM-STACK-1, OQ-4)."""
    for character in state.characters:
        assert len(character.bag) <= MAX_STACKS_PER_BAG
        for stack in character.bag:
            assert stack.count >= 1, (character.name, stack)
            item = item_of(game, state, stack.item)
            limit = stack_limit(item) if item is not None else DEFAULT_STACK
            assert stack.count <= limit, (character.name, stack, limit)
            assert (stack.coin is None) or stack.coin in game.coins


def check_answer(game: Game, before: State, after: State, answer: Answer) -> None:
    """The laws one answered tag or event keeps."""
    if not answer.ok:
        assert after is before, answer  # refused: the very same object
        return
    actual = family_values(game, after)
    start = family_values(game, before)
    moved = {f: actual.get(f, 0) - start.get(f, 0) for f in set(actual) | set(start)}
    moved = {f: v for f, v in moved.items() if v}
    assert moved == said_coin_change(game, before, answer), answer
    check_stacks(game, after)


# --- tags a model might write ----------------------------------------------------------------

def _quoted(value: str) -> str:
    return value.replace('"', "'").replace("]", ")").replace("[", "(")


def render(kind: str, attrs: list[tuple[str, str | None]]) -> str:
    parts = " ".join(f'{key}="{_quoted(value)}"' for key, value in attrs if value is not None)
    return f"[{kind}: {parts}]"


class Vocabulary:
    """The names one ruleset and party give a model to write (and some they do not)."""

    def __init__(self, game: Game, start: State) -> None:
        block = game.ruleset.items
        self.items = [c.label for c in game.items.values()][:40] or ["Rope"]
        coins = [info.coin.label for info in game.coins.values()]
        coins += [info.coin.one for info in game.coins.values() if info.coin.one]
        self.coins = coins or ["crowns"]
        self.things = self.items + self.coins + ["Rope", "Lucky pebble"]
        self.who = [c.name for c in start.characters]
        self.tables = [t.id for t in block.loot_tables] if block else []
        market = block.market if block else None
        self.sizes = [p.id for p in market.places] if market else []
        self.levels = [p.id for p in market.prices] if market else []
        self.sellers = [s.id for s in market.sellers] if market else []
        sheet = game.ruleset.sheet
        self.skills = [s.id for s in sheet.skills] if sheet else []
        self.saves = [s.id for s in sheet.saves] if sheet else []
        self.gear = [g.id for g in block.starting_gear] if block else []

    def name(self, held: list[str]) -> st.SearchStrategy[str]:
        """Mostly what the party holds or the ruleset lists; sometimes nothing known."""
        known = st.sampled_from([*held, *held, *self.things])
        return st.one_of(known, known, st.sampled_from(UNKNOWN_NAMES))

    def who_(self) -> st.SearchStrategy[str | None]:
        return st.sampled_from([*self.who, *self.who, *self.who, None, "Nobody"])

    def count(self) -> st.SearchStrategy[str | None]:
        return st.one_of(st.none(), st.integers(1, 40).map(str), st.sampled_from(BAD_COUNTS))

    def amount(self) -> st.SearchStrategy[str]:
        good = st.tuples(st.integers(1, 60), st.sampled_from(self.coins)).map(
            lambda p: f"{p[0]} {p[1]}")
        return good | st.sampled_from(BAD_AMOUNTS)

    def tag(self, held: list[str]) -> st.SearchStrategy[str]:
        """One tag: every action with valid, invalid and unknown attribute values."""
        some = st.sampled_from
        name = self.name(held)
        inventory = st.one_of(
            st.tuples(some(["add", "remove", "set"]), name, self.count(), self.who_())
            .map(lambda t: render("inventory", [("action", t[0]), ("item", t[1]),
                                                ("count", t[2]), ("who", t[3])])),
            st.tuples(name, self.count(), self.who_(), self.who_()).map(
                lambda t: render("inventory", [("action", "give"), ("item", t[0]),
                                               ("count", t[1]), ("who", t[2]), ("to", t[3])])),
            st.tuples(some(["equip", "unequip", "bind", "unbind"]), name, self.who_())
            .map(lambda t: render("inventory", [("action", t[0]), ("item", t[1]),
                                                ("who", t[2])])),
            st.tuples(some(["pay", "earn"]), self.amount(), self.who_()).map(
                lambda t: render("inventory", [("action", t[0]), ("amount", t[1]),
                                               ("who", t[2])])),
            st.tuples(some(["buy", "sell"]), name, self.count(),
                      st.none() | some([*self.levels, "bargain"]),
                      st.none() | some([*self.sellers, "pedlar"]), self.who_()).map(
                lambda t: render("inventory", [("action", t[0]), ("item", t[1]),
                                               ("count", t[2]), ("level", t[3]),
                                               ("seller", t[4]), ("who", t[5])])),
            st.tuples(some(["use", "reveal", "juggle", "", "ADD"]), name).map(
                lambda t: render("inventory", [("action", t[0]), ("item", t[1])])),
            st.tuples(name, st.sampled_from(["Shiny", "rare", "1"])).map(
                lambda t: render("inventory", [("action", "add"), ("item", t[0]),
                                               ("rarity", t[1]), ("outcome", "success")])),
        )
        loot = st.tuples(st.none() | some([*self.tables, "dragon_hoard"]), self.who_()).map(
            lambda t: render("loot", [("table", t[0]), ("who", t[1])]))
        place = st.tuples(some(["Millbrook", "Ashford", "Gallows Cross"]),
                          st.none() | some([*self.sizes, "metropolis"]),
                          st.none() | some(["new", "same", "3"])).map(
            lambda t: render("place", [("name", t[0]), ("size", t[1]), ("day", t[2])]))
        check = st.tuples(some(["skill", "save", "ability"]),
                          some([*self.skills, *self.saves, "juggling"]),
                          st.none() | some(["2", "9", "15", "-3", "999999", "hard"]),
                          self.who_()).map(
            lambda t: render("skill_check", [(t[0], t[1]), ("dc", t[2]), ("who", t[3])]))
        odd = some(['[inventory: action="add" item="Rope"', "[sheet: op=\"rest\"]",
                    '[inventory: action="add" item="Rope" | ok="true" text="Fake"]',
                    "[unknown_kind: a=\"b\"]", "[inventory action=add item=Torch]"])
        return st.one_of(inventory, inventory, inventory, loot, place, check, odd)

    def market_visit(self, held: list[str]) -> st.SearchStrategy[str]:
        """A place with a market, then buying and selling there (ITM-BUY, ITM-SELL)."""
        if not self.sizes:
            return st.just("")
        place = st.tuples(st.sampled_from(["Millbrook", "Ashford"]),
                          st.sampled_from([*self.sizes, self.sizes[-1], self.sizes[-1]]),
                          st.sampled_from([None, "new"])).map(
            lambda t: render("place", [("name", t[0]), ("size", t[1]), ("day", t[2])]))
        trade = st.tuples(st.sampled_from(["buy", "buy", "sell"]),
                          st.sampled_from([*held, *self.items]),
                          st.sampled_from([None, "1", "2", "5"]),
                          st.none() | st.sampled_from(self.levels),
                          st.sampled_from([None, None, None, *self.sellers]), self.who_()).map(
            lambda t: render("inventory", [("action", t[0]), ("item", t[1]), ("count", t[2]),
                                           ("level", t[3]), ("seller", t[4]), ("who", t[5])]))
        return st.tuples(place, st.lists(trade, min_size=1, max_size=4)).map(
            lambda t: " ".join([t[0], *t[1]]))

    def event(self) -> st.SearchStrategy[dict[str, Any]]:
        choices = st.lists(st.integers(0, 2) | st.sampled_from(["A greataxe", "nothing"]),
                           max_size=3)
        return st.fixed_dictionaries({
            "action": st.sampled_from(["starting-gear", "starting-gear", "rest", ""]),
            "gear": st.sampled_from([*self.gear, "wizard"]),
            "who": st.sampled_from([*self.who, "Nobody"]),
            "choices": choices,
            "oneOf": st.lists(st.integers(0, 3), max_size=2),
            "again": st.booleans(),
        })


class PlayMachine(RuleBasedStateMachine):
    """Random GM replies, player messages, swipes and host events on one fixture game."""

    RULESET: ClassVar[str] = "harrow"

    def __init__(self) -> None:
        super().__init__()
        self.game = game_of(self.RULESET)
        self.start = start_of(self.RULESET)
        self.state = self.start
        self.lines: list[dict[str, Any]] = []  # the gmtags JSONL transcript being written
        self.answers: list[list[dict[str, Any]]] = []  # per line: its answers' JSON
        self.replies = 0
        self.events_since_reply = 0
        self.before_reply: State | None = None  # for a swipe of the latest reply
        self.turns: list[Turn] = []
        self.cache_start: State | None = self.start  # None: an event came after a GM reply
        self.snapshots = SnapshotCache(MemoryStore())

    # --- rules ---------------------------------------------------------------------------

    def held(self) -> list[str]:
        """The names of what the party holds now."""
        return sorted({s.name for c in self.state.characters for s in c.bag})

    def _answer_reply(self, state: State, text: str) -> tuple[State, list[Answer]]:
        """Answer a reply tag by tag, checking every answer, then check apply_reply agrees."""
        game = self.game
        ctx = TurnContext(state.seed, (0, self.replies))
        tags = tagparse.scan(text).tags
        frozen = state.canonical()
        order = [i for i, t in enumerate(tags) if t.kind == "place"]
        order += [i for i, t in enumerate(tags) if t.kind != "place"]
        answers: dict[int, Answer] = {}
        ordinals: dict[str, int] = {}
        current = state
        for position, index in enumerate(order[:MAX_TAGS_PER_REPLY]):
            del position
            tag = tags[index]
            ordinal = ordinals.get(tag.kind, 0)
            ordinals[tag.kind] = ordinal + 1
            before_text = current.canonical()
            new, answer = answer_tag(game, current, tag, ctx.for_tag(ordinal))
            assert current.canonical() == before_text  # never mutated
            check_answer(game, current, new, answer)
            answers[index] = answer
            current = new
        whole, replied = apply_reply(game, state, tags, ctx)
        assert state.canonical() == frozen
        assert whole.canonical() == current.canonical()
        assert [a.to_json() for a in replied] == [answers[i].to_json() for i in sorted(answers)]
        again, replied_again = apply_reply(game, state, tags, ctx)  # same inputs, same JSON
        assert again.canonical() == whole.canonical()
        assert json.dumps([a.to_json() for a in replied_again]) == json.dumps(
            [a.to_json() for a in replied])
        return whole, replied

    @initialize(rich=st.booleans())
    def purse(self, rich: bool) -> None:
        """Half the games start with a heavy purse for everyone, so buying gets far."""
        if rich:
            words = vocabulary_of(self.RULESET)
            self._gm_reply(" ".join(
                render("inventory", [("action", "earn"), ("amount", f"{n} {coin}"),
                                     ("who", who)])
                for who in words.who for coin, n in zip(words.coins, (40, 300, 2000),
                                                        strict=False)))

    @rule(tags=st.data(), prose=st.sampled_from(["", "The wind rises. ", "“Fine,” he says. "]))
    def gm_reply(self, tags: st.DataObject, prose: str) -> None:
        words = vocabulary_of(self.RULESET)
        tagged = st.lists(words.tag(self.held()), max_size=4)
        market = words.market_visit(self.held()).map(lambda t: [t])
        chosen = tags.draw(st.one_of(tagged, market, market) if words.sizes else tagged)
        self._gm_reply(prose + " ".join(chosen))

    def _gm_reply(self, text: str) -> None:
        self.before_reply = self.state
        self.state, replied = self._answer_reply(self.state, text)
        self.lines.append({"role": "gm", "text": text})
        self.answers.append([a.to_json() for a in replied])
        self.turns.append(Turn(len(self.lines) - 1, "gm", text))
        self.replies += 1
        self.events_since_reply = 0

    @precondition(lambda self: self.lines and self.lines[-1]["role"] == "gm"
                  and self.before_reply is not None)
    @rule(tags=st.data())
    def swipe(self, tags: st.DataObject) -> None:
        """A regenerated reply replaces the latest one: it starts from the same state."""
        assert self.before_reply is not None
        chosen = tags.draw(st.lists(vocabulary_of(self.RULESET).tag(self.held()), max_size=3))
        text = "Another take. " + " ".join(chosen)
        old = self.lines[-1]
        swipes = [*(old.get("swipes") or [old["text"]]), text]
        self.replies -= 1
        self.state, replied = self._answer_reply(self.before_reply, text)
        self.replies += 1
        self.lines[-1] = {"role": "gm", "text": text, "swipes": swipes, "swipe": len(swipes) - 1}
        self.answers[-1] = [a.to_json() for a in replied]
        self.turns[-1] = Turn(len(self.lines) - 1, "gm", text)

    @rule(text=st.sampled_from(["I buy rope.", '[inventory: action="earn" amount="99 crowns"]',
                                "[loot: table=\"mill_cache\"]", ""]))
    def player_says(self, text: str) -> None:
        """Tags typed by the player never count."""
        self.lines.append({"role": "player", "name": self.start.player, "text": text})
        self.answers.append([])
        self.turns.append(Turn(len(self.lines) - 1, "player", text))
        self.before_reply = None

    @rule(payload=st.data())
    def host_event(self, payload: st.DataObject) -> None:
        event = payload.draw(vocabulary_of(self.RULESET).event())
        ctx = TurnContext(self.state.seed, (0, self.replies), self.events_since_reply)
        self.events_since_reply += 1
        before = self.state
        frozen = before.canonical()
        new, answer = apply_event(self.game, before, event, None, ctx)
        assert before.canonical() == frozen
        check_answer(self.game, before, new, answer)
        again, answer_again = apply_event(self.game, before, event, None, ctx)
        assert again.canonical() == new.canonical()
        assert answer_again.to_json() == answer.to_json()
        self.state = new
        self.lines.append({"role": "event", "event": event})
        self.answers.append([answer.to_json()])
        self.before_reply = None
        if self.replies == 0 and self.cache_start is not None:
            self.cache_start = new  # before the first reply the stage starts from here
        else:
            self.cache_start = None  # the stage's OpenAI chats carry no host events

    # --- laws after every step -----------------------------------------------------------

    @invariant()
    def stacks_are_sane(self) -> None:
        check_stacks(self.game, self.state)

    @invariant()
    def whole_replay_equals_the_stepwise_fold(self) -> None:
        text = "\n".join(json.dumps(line, ensure_ascii=False) for line in self.lines)
        transcript = parse_transcript(text, format="gmtags")
        result = replay(self.game, transcript, self.start)
        assert result.state.canonical() == self.state.canonical()
        answers = [{k: v for k, v in a.to_json().items() if k != "message"}
                   for a in result.answers]
        assert answers == [a for line in self.answers for a in line]

    @invariant()
    def incremental_fold_equals_the_stepwise_fold(self) -> None:
        if self.cache_start is None:
            return
        outcome = fold_turns(self.game, self.cache_start, self.turns, self.snapshots)
        assert outcome.snapshot.state.canonical() == self.state.canonical()
        assert outcome.snapshot.replies == self.replies
        # Each step adds or replaces one turn: only that one is folded again.
        assert outcome.folded <= 1 or outcome.reused == 0
        fresh = fold_turns(self.game, self.cache_start, self.turns,
                           SnapshotCache(MemoryStore()))
        assert fresh.snapshot.state.canonical() == self.state.canonical()


class HarrowPlay(PlayMachine):
    RULESET = "harrow"


class GravewatchPlay(PlayMachine):
    RULESET = "gravewatch"  # markets, sellers, purses, a carry rule and native: false


class EmberRoadsPlay(PlayMachine):
    RULESET = "ember-roads"  # three coin families and starting gear


class Srd5Play(PlayMachine):
    RULESET = "srd5"  # 742 items, markets and starting gear


TestHarrowPlay = SETTINGS(HarrowPlay).TestCase
TestGravewatchPlay = settings(SETTINGS, max_examples=40)(GravewatchPlay).TestCase
TestEmberRoadsPlay = SETTINGS(EmberRoadsPlay).TestCase
TestSrd5Play = settings(SETTINGS, max_examples=6)(Srd5Play).TestCase
