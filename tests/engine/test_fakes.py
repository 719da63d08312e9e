"""Honest and dishonest sellers, fakes, inspecting and revealing (spec/items.md §19–§20:
ITM-RISK-*, ITM-FAKE-*, ITM-TELL-*, ITM-INSP-*, ITM-NOTICE-*, ITM-SEE-*, ITM-FAKEV-*).

The 5e ruleset (a d20 dice-sum with advantage) sells the spec's fakes at its fence; the party
is Brannoc (the player), Sister Maelis (Insight, Wis 16) and Quill (knows the trade)."""

from __future__ import annotations

import copy

import pytest
from helpers import fixture_json
from scipy.stats import chisquare

import replay
import tagparse
from engine import TurnContext, apply_reply, load_ruleset, start_state
from engine.actions.fakes import inspect_prompt
from engine.actions.market import market_block
from engine.rules.fakes import add_disguised, reveal_on_use, settle_fakes
from engine.rules.game import Game
from engine.rules.market import day_stock, market_of
from engine.rules.state import Place, Stack, State
from engine.ruleset import validate
from engine.text.prompt import inventory_block

POISON = "magic_items/potion-of-poison"
HEALING = "magic_items/potion-of-healing"
DEVOURING = "magic_items/bag-of-devouring"
HOLDING = "magic_items/bag-of-holding"


@pytest.fixture(scope="module")
def game() -> Game:
    return replay.load_ruleset("fixtures/rulesets/srd5.json")


@pytest.fixture(scope="module")
def party(game: Game) -> State:
    return replay.load_party(game, "fixtures/parties/srd5.json")


def run(game: Game, state: State, text: str, turn: tuple[int, ...] = (5, 0)):
    new, answers = apply_reply(game, state, tagparse.scan(text).tags,
                               TurnContext(state.seed, turn))
    return new, answers


def who(state: State, name: str):
    return next(c for c in state.characters if c.name == name)


def day_where(game: Game, state: State, want) -> State:
    """The party at a town on the first market day whose fence stock satisfies ``want``."""
    market = market_of(game)
    assert market is not None
    for n in range(400):
        place = Place(name="Westhaven", size="town", began=(0, n, 0))
        stocks = {s.id: w for s, w in day_stock(game, state, market, place)}
        if want({e.ref: c for e, c in stocks.get("fence", [])}):
            return state.model_copy(update={"place": place})
    raise AssertionError("no such day")


def only_poison(wares: dict[str, int]) -> bool:
    return wares.get(POISON, 0) >= 1 and HEALING not in wares


def with_poison(state: State, name: str, game: Game, count: int = 1) -> State:
    """``name`` carries a Potion of Poison passing for a Potion of Healing."""
    index = state.character_index(name)
    assert index is not None
    character = state.characters[index]
    bag = add_disguised(character.bag, game.items[POISON], game.items[HEALING], count)
    assert bag is not None
    return state.with_character(index, character.model_copy(update={"bag": bag}))


# --- §19.1 risky, §19.3 honest: false (ITM-RISK-*, ITM-FAKE-5..8) ------------------------------


def test_itm_risk_1_2_3_honest_sellers_warn_dishonest_say_nothing(game: Game, party: State) -> None:
    state = party.model_copy(update={"place": Place(name="Westhaven", size="town")})
    block = market_block(game, state)
    dealer = next(line for line in block.splitlines()[block.splitlines().index(
        next(x for x in block.splitlines() if x.startswith("- arcane dealer"))) + 1:][:1])
    fence = block.splitlines()[block.splitlines().index(
        next(x for x in block.splitlines() if x.startswith("- Fence"))) + 1]
    assert "(warn the buyer first: every wave is a gamble" in dealer or "Wand of Wonder" not in dealer
    assert "warn the buyer first" not in fence


def test_itm_fake_6_honest_by_default(game: Game) -> None:
    market = market_of(game)
    assert market is not None
    assert [s.id for s in market.sellers if not s.honest] == ["fence"]


def test_itm_fake_5_never_a_ware_nor_in_an_honest_stock(game: Game, party: State) -> None:
    state = day_where(game, party, lambda w: POISON in w)
    block = market_block(game, state)
    assert "Bag of Devouring" not in block.split("Today's stock")[0]
    doc = copy.deepcopy(fixture_json("rulesets/gravewatch.json"))
    fence = next(s for s in doc["items"]["market"]["sellers"] if s["id"] == "fence")
    fence["honest"] = True
    fence.pop("manner")
    honest = load_ruleset(doc)
    market = market_of(honest)
    assert market is not None
    for n in range(60):  # a roll of an honest stock that lands on a fake yields nothing
        place = Place(name="Lowgate", size="town", began=(0, n, 0))
        for seller, wares in day_stock(honest, party, market, place):
            assert all(w.item.passes_for is None for w, _ in wares), seller.id


def test_itm_fake_2_7_the_fake_is_offered_as_what_it_passes_for(game: Game, party: State) -> None:
    state = day_where(game, party, only_poison)
    stock = next(x for x in market_block(game, state).splitlines()
                 if "Today's stock" in x and "FAKE" in x)
    assert "Potion of Healing ×" in stock
    assert "at 50 gold pieces (FAKE: really Potion of Poison)" in stock


def test_itm_fake_8_only_a_buy_naming_the_seller_gets_the_fake(game: Game, party: State) -> None:
    state = day_where(game, party, only_poison)
    quiet = state.model_copy(update={"characters": state.characters[1:2]})  # nobody to notice
    _, (answer,) = run(game, quiet, '[inventory: action="buy" item="Potion of Healing" '
                                    'who="Sister Maelis"]')
    assert answer.ok and answer.record["seller"] != "fence"
    new, (answer,) = run(game, quiet, '[inventory: action="buy" item="Potion of Healing" '
                                      'seller="Fence" who="Sister Maelis"]')
    assert answer.ok and answer.record["seller"] == "fence"
    assert answer.record["item"] == HEALING  # the answer tells the player nothing more
    stack = next(s for s in new.characters[0].bag if s.item == POISON)
    assert (stack.name, stack.shows_as) == ("Potion of Healing", HEALING)  # ITM-FAKE-9


def test_itm_fake_9_10_the_gm_sees_the_truth(game: Game, party: State) -> None:
    state = with_poison(party, "Brannoc", game)
    line = next(x for x in inventory_block(game, state).splitlines()
                if x.startswith("- Potion of Healing"))
    assert "FAKE: really Potion of Poison; keep calling it Potion of Healing" in line


def test_itm_fake_9_a_fake_never_merges_with_one_found_out(game: Game) -> None:
    known = Stack(name="Potion of Poison", item=POISON, count=1)
    bag = add_disguised((known,), game.items[POISON], game.items[HEALING], 2)
    assert bag is not None and [(s.name, s.count) for s in bag] == [
        ("Potion of Poison", 1), ("Potion of Healing", 2)]


# --- §19.5 how a fake is found out (ITM-FAKE-11..19) -------------------------------------------


def test_itm_fake_11_16_reveal(game: Game, party: State) -> None:
    state = with_poison(party, "Brannoc", game)
    new, (answer,) = run(game, state, '[inventory: action="reveal" item="Potion of Healing" '
                                      'who="Brannoc"]')
    assert answer.ok
    assert answer.text == ("Brannoc's Potion of Healing is really Potion of Poison; from now on "
                           "it is called Potion of Poison.")
    stack = next(s for s in who(new, "Brannoc").bag if s.item == POISON)
    assert (stack.name, stack.shows_as) == ("Potion of Poison", None)
    assert "FAKE" not in inventory_block(game, new)


@pytest.mark.parametrize(("text", "reason"), [
    ('[inventory: action="reveal" item="Longsword" who="Brannoc"]', "not-a-fake"),
    ('[inventory: action="reveal" item="Bag of Holding" who="Brannoc"]', "not-held"),
    ('[inventory: action="reveal" who="Brannoc"]', "missing-attribute"),
    ('[inventory: action="reveal" item="Potion of Healing" who="Nobody"]', "unknown-character"),
])
def test_itm_fake_11_refusals_change_nothing(game: Game, party: State, text: str,
                                             reason: str) -> None:
    state = with_poison(party, "Brannoc", game)
    new, (answer,) = run(game, state, text)
    assert (answer.ok, answer.reason) == (False, reason)
    assert new is state


def test_itm_fake_12_binding_finds_it_out(game: Game, party: State) -> None:
    state = with_poison(party, "Brannoc", game)
    index = state.character_index("Brannoc")
    assert index is not None
    bag = list(state.characters[index].bag)
    bag[-1] = bag[-1].model_copy(update={"bound": True})
    bound = state.with_character(index, state.characters[index].model_copy(
        update={"bag": tuple(bag)}))
    settled = settle_fakes(game, bound)
    assert settled.characters[index].bag[-1].name == "Potion of Poison"
    assert "binding it showed it" in settled.journal[-1].text


def test_itm_fake_13_using_finds_it_out(game: Game, party: State) -> None:
    state = with_poison(party, "Brannoc", game)
    index = state.character_index("Brannoc")
    assert index is not None
    last = len(state.characters[index].bag) - 1
    used = reveal_on_use(game, state, index, last, "5.0")
    assert used.characters[index].bag[last].name == "Potion of Poison"
    assert reveal_on_use(game, state, index, 0) is state  # a genuine item: nothing happens
    assert reveal_on_use(game, state, index, 999) is state


def _gravewatch_with(carried: dict | None) -> Game:
    doc = copy.deepcopy(fixture_json("rulesets/gravewatch.json"))
    magic = next(c for c in doc["catalogs"] if c["id"] == "magic_items")
    bag = next(e for e in magic["entries"] if e["id"] == "bag-of-devouring")
    if carried is not None:
        bag["item"]["carried"] = carried
    return load_ruleset(doc)


def test_itm_fake_18_19_the_sheet_gives_it_away_only_when_it_differs() -> None:
    for carried, found in ((None, False),
                           ({"modifiers": [{"to": "checks", "skills": ["ward"], "flat": -1}]},
                            True)):
        grave = _gravewatch_with(carried)
        state = start_state(grave, {"seed": "s", "characters": [{"name": "Ada"}]})
        bag = add_disguised((), grave.items[DEVOURING], grave.items[HOLDING], 1)
        assert bag is not None
        state = state.with_character(0, state.characters[0].model_copy(update={"bag": bag}))
        settled = settle_fakes(grave, state)
        assert (settled.characters[0].bag[0].shows_as is None) is found
        assert (settled is state) is not found


def test_itm_fake_14_an_honest_buyer_names_it_and_pays_its_own_cost(game: Game,
                                                                     party: State) -> None:
    state = with_poison(party, "Brannoc", game)
    state = state.model_copy(update={"place": Place(name="Westhaven", size="town")})
    new, (answer,) = run(game, state, '[inventory: action="sell" item="Potion of Healing" '
                                      'seller="arcane dealer" who="Brannoc"]')
    # the potion of poison has its own cost? then it is paid for, else refused
    poison_cost = game.items[POISON].item.cost
    assert answer.text.startswith("The arcane dealer says the Potion of Healing is really "
                                  "Potion of Poison")
    assert not any(s.shows_as for s in who(new, "Brannoc").bag)
    if poison_cost is None:
        assert (answer.ok, answer.reason) == (False, "not-for-sale")
        assert any(s.item == POISON for s in who(new, "Brannoc").bag)
    else:
        assert answer.ok


def test_itm_fake_14_oq_57_buy_back_of_the_fakes_own_cost() -> None:
    grave = _gravewatch_with(None)
    state = start_state(grave, {"seed": "s", "characters": [{"name": "Ada"}]})
    bag = add_disguised((), grave.items[DEVOURING], grave.items[HOLDING], 1)
    assert bag is not None
    state = state.with_character(0, state.characters[0].model_copy(update={"bag": bag}))
    state = state.model_copy(update={"place": Place(name="Lowgate", size="city")})
    _new, (answer,) = run(grave, state, '[inventory: action="sell" item="Bag of Holding" '
                                       'seller="apothecary" who="Ada"]')
    assert answer.ok, answer.text
    assert answer.record["price"] == "3 gold pieces"  # 5 gp × buyBack 0.5, half up (OQ-54/57)
    assert answer.text.startswith("The apothecary says the Bag of Holding is really Bag of "
                                  "Devouring. Ada sold Bag of Devouring ×1")


def test_itm_fake_15_a_dishonest_buyer_pays_for_what_it_seems() -> None:
    grave = _gravewatch_with(None)
    state = start_state(grave, {"seed": "s", "characters": [{"name": "Ada"}]})
    bag = add_disguised((), grave.items[DEVOURING], grave.items[HOLDING], 1)
    assert bag is not None
    state = state.with_character(0, state.characters[0].model_copy(update={"bag": bag}))
    state = state.model_copy(update={"place": Place(name="Lowgate", size="town")})
    _new, (answer,) = run(grave, state, '[inventory: action="sell" item="Bag of Holding" '
                                       'seller="fence" who="Ada"]')
    assert answer.ok, answer.text
    assert answer.record["price"] == "250 gold pieces"
    assert answer.record["item"] == HOLDING
    assert "Devouring" not in answer.text


# --- §20.2 inspecting (ITM-INSP-*, ITM-TELL-*) --------------------------------------------------


def test_itm_insp_2_inspect_prompt(party: State) -> None:
    stack = Stack(name="Potion of Healing", item=POISON, count=1, shows_as=HEALING)
    assert inspect_prompt(party.characters[0], stack) == (
        "I take a close look at my Potion of Healing before I trust it.")


def test_itm_insp_9_nothing_to_check_spends_nothing(game: Game, party: State) -> None:
    for text in ('[inventory: action="inspect" item="Longsword" who="Brannoc"]',):
        new, (answer,) = run(game, party, text)
        assert (answer.ok, answer.reason) == (False, "nothing-to-check")
        assert new is party


def test_itm_insp_1_3_4_7_8_itm_tell_1_one_try_per_character(game: Game, party: State) -> None:
    state = with_poison(party, "Brannoc", game)
    tag = '[inventory: action="inspect" item="Potion of Healing" who="Brannoc"]'
    outcomes = set()
    for turn in range(40):
        new, (answer,) = run(game, state, tag, (7, turn))
        assert answer.ok and answer.record["check"] == "Arcana"  # Brannoc has no kit (TELL-5)
        outcomes.add(answer.record["result"])
        stack = next(s for s in who(new, "Brannoc").bag if s.item == POISON)
        assert "Brannoc" in stack.inspected_by
        again, (second,) = run(game, new, tag, (7, 100 + turn))
        assert (second.ok, second.reason) == (False, "already-inspected") and again is new
        if answer.record["result"] == "suspect":
            assert stack.suspected_by == ("Brannoc",)
            assert "Brannoc thinks it's a fake" in inventory_block(game, new)
        elif answer.record["result"] == "cannot-tell":
            assert answer.text == "Brannoc cannot tell anything about the Potion of Healing."
    assert {"cannot-tell"} <= outcomes


def test_itm_insp_6_genuine_items_roll_the_tells_of_their_fakes(game: Game,
                                                                 party: State) -> None:
    index = party.character_index("Quill")
    assert index is not None
    quill = party.characters[index]
    bag = (*quill.bag, Stack(name="Potion of Healing", item=HEALING, count=1))
    state = party.with_character(index, quill.model_copy(update={"bag": bag}))
    seen = set()
    for turn in range(60):
        _, (answer,) = run(game, state, '[inventory: action="inspect" item="Potion of Healing" '
                                        'who="Quill"]', (8, turn))
        assert answer.ok
        seen.add(answer.record["result"])
    assert seen <= {"genuine", "cannot-tell"} and "genuine" in seen


def d20_success(modifier: int, dc: int, lean: int) -> float:
    p = sum(1 for face in range(1, 21) if face + modifier >= dc) / 20
    return 1 - (1 - p) ** 2 if lean > 0 else p * p if lean < 0 else p


def test_itm_insp_3_odds_follow_the_rulesets_dice(game: Game, party: State) -> None:
    """Sister Maelis (Int 11, no Arcana) rolls Arcana +0 against 18: P = 3/20; chi-square over
    many turns."""
    state = with_poison(party, "Sister Maelis", game)
    draws = 2000
    wins = 0
    for turn in range(draws):
        _, (answer,) = run(game, state, '[inventory: action="inspect" item="Potion of Healing" '
                                        'who="Sister Maelis"]', (9, turn))
        assert answer.record["check"] == "Arcana"
        wins += bool(answer.record["success"])
    p = d20_success(0, 18, 0)
    assert chisquare([wins, draws - wins], [p * draws, (1 - p) * draws]).pvalue > 1e-4


def test_itm_insp_5_named_at_names_it_at(game: Game, party: State) -> None:
    """Int 20: Arcana +5 against 18 names the fake from a total of 23 (namesItAt 5)."""
    state = with_poison(party, "Sister Maelis", game)
    index = state.character_index("Sister Maelis")
    assert index is not None
    maelis = state.characters[index]
    state = state.with_character(index, maelis.model_copy(
        update={"abilities": {**maelis.abilities, "int": 20}}))
    named = 0
    for turn in range(400):
        new, (answer,) = run(game, state, '[inventory: action="inspect" '
                                          'item="Potion of Healing" who="Sister Maelis"]',
                             (10, turn))
        if answer.record["result"] == "named":
            named += 1
            assert answer.record["total"] - 18 >= 5
            assert any(s.name == "Potion of Poison" for s in who(new, "Sister Maelis").bag)
        elif answer.record["result"] == "suspect":
            assert 0 <= answer.record["total"] - 18 < 5
    assert named


# --- §20.3 noticing before a purchase (ITM-NOTICE-*) ---------------------------------------------


def test_itm_notice_1_3_6_held_then_the_same_buy_goes_through(game: Game, party: State) -> None:
    """ITM-NOTICE-1/3/6 and ITM-BUY-16 (held, nothing paid); ITM-NOTICE-2: the first member in
    party order whose score reaches a dc has noticed; ITM-NOTICE-4: the GM is asked to let the
    buyer decide; ITM-TELL-3: the tell's ``says`` is what was noticed."""
    state = day_where(game, party, only_poison)
    tag = ('[inventory: action="buy" item="Potion of Healing" seller="Fence" '
           'who="Sister Maelis"]')
    held, (answer,) = run(game, state, tag)
    assert (answer.ok, answer.reason) == (False, "held")
    # Brannoc (Wis 13, no Insight): 10 + 1 < 13 on the manner and he has no kit; Quill carries
    # a poisoner's kit: 10 + Int 2 + kit 2 = 14 ≥ 13 on the first tell (OQ-61: tells first).
    assert answer.record["noticed"] == "Quill"
    assert answer.record["about"] == "item"
    assert answer.record["says"] == "a faint bitterness under the sweetness"
    assert "let Sister Maelis decide" in answer.text
    assert held.characters == state.characters  # nothing paid; only the day's ledger knows
    assert held.place is not None and len(held.place.held) == 1
    bought, (again,) = run(game, held, tag, (5, 1))
    assert again.ok and again.record["seller"] == "fence"
    assert any(s.shows_as == HEALING for s in who(bought, "Sister Maelis").bag)


def test_itm_notice_7_warn_by_roll_rolls() -> None:
    doc = copy.deepcopy(fixture_json("rulesets/gravewatch.json"))
    doc["items"]["warnBy"] = "roll"
    assert not validate(doc)[1]


# --- §20.4 seeing through fakes (ITM-SEE-*) ----------------------------------------------------


@pytest.mark.parametrize(("way", "result", "found"), [
    ("Identify", "genuine", False),  # ITM-SEE-6: the potion's foolsReveal lists identify
    ("detect poison and disease", "fake", True),  # ITM-SEE-2/5: it names the potion
])
def test_itm_see_1_2_3_4_8_ways(game: Game, party: State, way: str, result: str, found: bool) -> None:
    state = with_poison(party, "Brannoc", game)
    new, (answer,) = run(game, state, '[inventory: action="inspect" item="Potion of Healing" '
                                      f'who="Brannoc" with="{way}"]')
    assert answer.ok and answer.record["result"] == result
    stack = next(s for s in who(new, "Brannoc").bag if s.item == POISON)
    assert (stack.shows_as is None) is found
    assert stack.inspected_by == ()  # ITM-SEE-8: no attempt spent


def test_itm_see_7_a_partial_way_is_unsure_of_a_genuine_item(game: Game, party: State) -> None:
    index = party.character_index("Brannoc")
    assert index is not None
    brannoc = party.characters[index]
    state = party.with_character(index, brannoc.model_copy(update={"bag": (
        *brannoc.bag, Stack(name="Potion of Healing", item=HEALING, count=1))}))
    _, (answer,) = run(game, state, '[inventory: action="inspect" item="Potion of Healing" '
                                    'who="Brannoc" with="detect-poison"]')
    assert answer.record["result"] == "unsure"


def test_itm_see_4_unknown_way_is_refused(game: Game, party: State) -> None:
    state = with_poison(party, "Brannoc", game)
    new, (answer,) = run(game, state, '[inventory: action="inspect" item="Potion of Healing" '
                                      'who="Brannoc" with="Scrying"]')
    assert (answer.ok, answer.reason) == (False, "unknown-way") and new is state


# --- §20.5 install checks (ITM-FAKEV-*, ITM-FAKE-3/4) ------------------------------------------


def _problems(mutate) -> list[str]:
    doc = copy.deepcopy(fixture_json("rulesets/gravewatch.json"))
    mutate(doc)
    return [str(p) for p in validate(doc)[1]]


def _magic(doc, ident):
    magic = next(c for c in doc["catalogs"] if c["id"] == "magic_items")
    return next(e for e in magic["entries"] if e["id"] == ident)["item"]


@pytest.mark.parametrize(("rule", "mutate", "message"), [
    ("ITM-FAKE-3 a fake of a fake", lambda d: _magic(d, "potion-of-poison").__setitem__(
        "passesFor", "magic_items/bag-of-devouring"), "is a fake itself"),
    ("ITM-FAKE-3 same slots", lambda d: _magic(d, "bag-of-devouring").__setitem__(
        "slots", {"neck": 1}), "is worn in other slots"),
    ("ITM-FAKE-3 binding", lambda d: _magic(d, "bag-of-devouring").__setitem__("binds", {}),
     "does not bind"),
    ("ITM-FAKEV-2 foolsReveal only on a fake", lambda d: _magic(d, "wand-of-wonder").__setitem__(
        "foolsReveal", ["identify"]), 'only a fake ("passesFor") has "foolsReveal"'),
    ("ITM-FAKEV-1 needs 1.802", lambda d: d.__setitem__("capabilityApi", "1.79"), "1.802"),
])
def test_install_refusals(rule: str, mutate, message: str) -> None:
    assert any(message in p for p in _problems(mutate)), rule


def test_determinism(game: Game, party: State) -> None:
    state = with_poison(party, "Sister Maelis", game)
    tag = '[inventory: action="inspect" item="Potion of Healing" who="Sister Maelis"]'
    a, x = run(game, state, tag, (11, 3))
    b, y = run(game, state, tag, (11, 3))
    assert a.canonical() == b.canonical() and [v.to_json() for v in x] == [v.to_json() for v in y]


def test_itm_tell_5_carries_and_needs(game: Game, party: State) -> None:
    """Quill with his poisoner's kit makes the kit check (+2 Int, +2 kit: 4 − 13 beats Arcana
    2 − 18, OQ-59); without it, only Arcana is left."""
    with_kit = with_poison(party, "Quill", game)
    index = with_kit.character_index("Quill")
    assert index is not None
    quill = with_kit.characters[index]
    state = with_kit.with_character(index, quill.model_copy(update={"bag": tuple(
        s for s in quill.bag if s.item != "gear/poisoners-kit")}))
    _, (answer,) = run(game, with_kit, '[inventory: action="inspect" item="Potion of Healing" '
                                       'who="Quill"]')
    assert answer.record["check"] == "Poisoner's kit check"
    _, (answer,) = run(game, state, '[inventory: action="inspect" item="Potion of Healing" '
                                    'who="Quill"]')
    assert answer.record["check"] == "Arcana"


# --- the fakes reached through tags (wiring in apply/use/bags) -----------------------------


def test_itm_fake_9_tags_find_a_disguised_fake_by_what_it_passes_for(game: Game,
                                                                     party: State) -> None:
    state = with_poison(party, "Brannoc", game)
    new, [answer] = run(game, state, '[inventory: action="remove" item="Potion of Healing" '
                                     'who="Brannoc"]')
    assert answer.ok, answer.text
    assert all(s.item != POISON for s in who(new, "Brannoc").bag)


def test_itm_fake_13_using_a_disguised_fake_by_tag_finds_it_out(game: Game,
                                                                party: State) -> None:
    state = with_poison(party, "Brannoc", game, count=2)
    new, [answer] = run(game, state, '[inventory: action="use" item="Potion of Healing" '
                                     'who="Brannoc"]')
    assert answer.ok, answer.text
    assert any("Potion of Poison" in j.text for j in new.journal)
    assert all(s.shows_as is None for s in who(new, "Brannoc").bag if s.item == POISON)


def test_itm_fake_12_an_inventory_change_settles_fakes(game: Game, party: State) -> None:
    """A bound fake is found out after the next inventory change (apply runs settle_fakes)."""
    state = with_poison(party, "Brannoc", game)
    index = state.character_index("Brannoc")
    assert index is not None
    bag = list(state.characters[index].bag)
    bag[-1] = bag[-1].model_copy(update={"bound": True})
    state = state.with_character(index, state.characters[index].model_copy(
        update={"bag": tuple(bag)}))
    new, [answer] = run(game, state, '[inventory: action="add" item="Rope" who="Brannoc"]')
    assert answer.ok
    assert any(s.item == POISON and s.shows_as is None for s in who(new, "Brannoc").bag)


# --- ITM-FAKE-20: a worn fake weapon in a fight ------------------------------------------------

def _gilded_club_game() -> Game:
    """The 5e ruleset with a gilded club passing for a longsword (a weapon, like it)."""
    from helpers import FIXTURES

    from replay.files import ruleset_document
    document = ruleset_document(FIXTURES / "rulesets/srd5.json")
    equipment = next(c for c in document["catalogs"] if c["id"] == "equipment")
    club = next(e for e in equipment["entries"] if e["id"] == "club")
    fake = copy.deepcopy(club)
    fake.update(id="gilded-club", label="Gilded club")
    fake["item"]["passesFor"] = "equipment/longsword"
    equipment["entries"].append(fake)
    return load_ruleset(document)


def _fights_with_the_club(game: Game, party: State, found_out: bool) -> list[dict]:
    """Brannoc wears the gilded club (disguised, or found out) and strikes a dummy."""
    index = party.character_index("Brannoc")
    assert index is not None
    bag = add_disguised((), game.items["equipment/gilded-club"],
                        game.items["equipment/longsword"], 1)
    assert bag is not None
    (stack,) = bag
    stack = stack.model_copy(update={"equipped": True})
    if found_out:
        stack = stack.model_copy(update={"shows_as": None, "name": "Gilded club"})
    state = party.with_character(index, party.characters[index].model_copy(
        update={"bag": (stack,)}))
    fight, answers = run(game, state, '[combat: op="start" foe="Dummy" role="boss" tier="6"]')
    assert answers[0].ok
    records = []
    for turn in range(40):
        after, answers = run(game, fight, '[attack: who="Brannoc" target="Dummy"]', (6, turn))
        assert answers[0].ok, answers[0].text
        assert after.characters[index].bag == (stack,)  # fighting reveals nothing
        records.append(answers[0].record)
    return records


def test_itm_fake_20_a_worn_fake_weapon_attacks_as_the_weapon_it_passes_for(party) -> None:
    """ITM-FAKE-20: worn and not found out, the gilded club strikes as the longsword it passes
    for — its name, its 1d8 slashing and its to-hit — and the fight does not reveal it
    (ITM-FAKE-19); found out (ITM-FAKE-16) it strikes as the club it is, 1d4 bludgeoning."""
    game = _gilded_club_game()
    longsword = _fights_with_the_club(game, party, found_out=False)
    club = _fights_with_the_club(game, party, found_out=True)
    assert {r["weapon"] for r in longsword} == {"Longsword"}
    assert {r["weapon"] for r in club} == {"Gilded club"}
    hits = [r for r in longsword if r["result"] == "hit"]
    assert hits and {r["damageType"] for r in hits} == {"slashing"}
    assert max(f for r in hits for f in r["damageRolls"][0]) > 4  # a d8, not the club's d4
    assert {r["modifier"] for r in longsword} == {5}  # Str +3, proficient +2, as the longsword
    club_hits = [r for r in club if r["result"] == "hit"]
    assert club_hits and {r["damageType"] for r in club_hits} == {"bludgeoning"}
    assert all(f <= 4 for r in club_hits for f in r["damageRolls"][0])


# --- ITM-TELL-6: advantageIf and disadvantageIf ---------------------------------------------

def test_itm_tell_6_one_row_met_leans_the_check_and_both_cancel(party: State) -> None:
    """ITM-TELL-6: one met row of ``advantageIf`` rolls the tell with advantage, one of
    ``disadvantageIf`` with disadvantage, both cancel (ITM-CHK-5). Rows: advantage at Int 14
    or Wis 16, disadvantage at Str 16 or Dex 17 — Brannoc (Str 16) leans down, Sister Maelis
    (Wis 16, the second row alone) and Ysolde (Int 17) up, Quill (Int 14, Dex 17) both: none.
    The 5e dice roll twice only when the check leans (two d20s, the better or the worse)."""
    from engine.actions.fakes import lean, roll_check
    from replay.files import ruleset_document
    document = ruleset_document("fixtures/rulesets/srd5.json")
    poison = next(e for c in document["catalogs"] for e in c["entries"]
                  if e["id"] == "potion-of-poison")
    arcana = poison["item"]["tells"][1]
    arcana["advantageIf"] = [{"value": {"abilityScore": "int"}, "atLeast": 14},
                             {"value": {"abilityScore": "wis"}, "atLeast": 16}]
    arcana["disadvantageIf"] = [{"value": {"abilityScore": "str"}, "atLeast": 16},
                                {"value": {"abilityScore": "dex"}, "atLeast": 17}]
    game = load_ruleset(document)
    tell = game.items[POISON].item.tells[1]
    expected = {"Brannoc": -1, "Sister Maelis": 1, "Quill": 0, "Ysolde": 1}
    for character in party.characters:
        leans = lean(game, party, character, tell)
        assert leans == expected[character.name], character.name
        modifiers = set()
        for turn in range(12):
            rolled = roll_check(game, party, character, tell, TurnContext(party.seed, (8, turn)))
            assert rolled is not None
            rolls = rolled.record["rolls"]
            assert len(rolls) == (2 if leans else 1)
            kept = max(rolls) if leans > 0 else min(rolls)
            modifiers.add(rolled.record["total"] - kept)  # the better (worse) die was kept
        assert len(modifiers) == 1, character.name


# --- ITM-TELL-4 needs / needsAny, ITM-TELL-8 a seller's manner --------------------------------

def _arcana_tell(**keys: object) -> Game:
    """srd5 with the potion of poison's Arcana tell given ``keys``."""
    from replay.files import ruleset_document
    document = ruleset_document("fixtures/rulesets/srd5.json")
    poison = next(e for c in document["catalogs"] for e in c["entries"]
                  if e["id"] == "potion-of-poison")
    poison["item"]["tells"][1].update(keys)
    return load_ruleset(document)


@pytest.mark.parametrize(("keys", "possible"), [
    ({}, True),
    ({"needs": [{"value": {"abilityScore": "int"}, "atLeast": 12}]}, False),
    ({"needs": [{"value": {"abilityScore": "int"}, "atLeast": 11},
                {"value": {"abilityScore": "wis"}, "atLeast": 16}]}, True),
    ({"needs": [{"value": {"abilityScore": "int"}, "atLeast": 12},
                {"value": {"abilityScore": "wis"}, "atLeast": 16}]}, False),
    ({"needsAny": [{"value": {"abilityScore": "int"}, "atLeast": 12},
                   {"value": {"abilityScore": "wis"}, "atLeast": 16}]}, True),
    ({"needsAny": [{"value": {"abilityScore": "int"}, "atLeast": 12},
                   {"value": {"abilityScore": "wis"}, "atLeast": 17}]}, False),
])
def test_itm_tell_4_needs_every_row_needs_any_one(party: State, keys: dict,
                                                   possible: bool) -> None:
    """ITM-TELL-4, OQ-58: ``needs`` — every row met — or ``needsAny`` — one row — for the check
    to be possible at all. Sister Maelis (Int 11, Wis 16, no kit) has only the Arcana tell;
    without it there is nothing to check, which spends nothing (ITM-INSP-9)."""
    game = _arcana_tell(**keys)
    state = with_poison(party, "Sister Maelis", game)
    new, (answer,) = run(game, state, '[inventory: action="inspect" item="Potion of Healing" '
                                      'who="Sister Maelis"]')
    if possible:
        assert answer.ok and answer.record["check"] == "Arcana"
    else:
        assert (answer.ok, answer.reason, new is state) == (False, "nothing-to-check", True)


def test_itm_tell_8_a_manner_says_something_is_wrong_never_what(game: Game,
                                                                party: State) -> None:
    """ITM-TELL-7/8: inspecting a ware with ``seller=`` rolls the dishonest fence's manner; a
    success says that something is wrong with the fence's wares (its ``says``) and never
    which ware is a fake or what it really is."""
    state = day_where(game, party, only_poison)
    seen = set()
    for turn in range(60):
        new, (answer,) = run(game, state, '[inventory: action="inspect" item="Potion of '
                                          'Healing" seller="Fence" who="Brannoc"]', (12, turn))
        assert answer.ok
        seen.add(answer.record["result"])
        if answer.record["result"] == "seller":
            assert answer.text == ("Brannoc senses that something is wrong with the Fence's "
                                   "wares (their eyes slide away when you ask about it).")
            assert "Poison" not in answer.text and "fake" not in answer.text.lower()
            assert new.characters == state.characters
    assert "seller" in seen


def test_itm_fake_4_a_fake_whose_target_a_layer_hides_is_never_sold(party: State) -> None:
    """ITM-FAKE-4: the fake's target is checked again whenever a market offers the fake — on a
    day the fence has the poison (as a healing potion), a layer that hides the healing potion
    leaves the fence nothing to sell as it, and a buy of it there is refused."""
    from replay.files import ruleset_document
    document = ruleset_document("fixtures/rulesets/srd5.json")
    document["layers"].append({"id": "no-healing", "label": "No healing",
                               "hides": [HEALING]})
    game = load_ruleset(document)
    state = day_where(game, party, only_poison)
    assert state.place is not None and market_of(game) is not None
    open_day = {s.id: w for s, w in day_stock(game, state, market_of(game), state.place)}
    assert any(entry.ref == POISON for entry, _ in open_day["fence"])
    hidden = state.model_copy(update={"layers": ("no-healing",)})
    stock = {s.id: w for s, w in day_stock(game, hidden, market_of(game), hidden.place)}
    assert all(entry.ref != POISON for entry, _ in stock.get("fence", []))
    new, (answer,) = run(game, hidden, '[inventory: action="buy" item="Potion of Healing" '
                                       'seller="Fence" who="Brannoc"]')
    assert not answer.ok and new is hidden


def test_itm_fake_17_a_carried_fake_does_what_it_really_does() -> None:
    """ITM-FAKE-17: carried and not yet found out, the Bag of Devouring (passing for a Bag of
    Holding) changes a check by its own ``carried`` part — Ward −1 — not by the item it
    passes for (which does nothing to checks)."""
    grave = _gravewatch_with({"modifiers": [{"to": "checks", "skills": ["ward"], "flat": -1}]})
    state = start_state(grave, {"seed": "s", "characters": [{"name": "Ada"}]})
    bag = add_disguised((), grave.items[DEVOURING], grave.items[HOLDING], 1)
    assert bag is not None
    state = state.with_character(0, state.characters[0].model_copy(update={"bag": bag}))
    assert state.characters[0].bag[0].shows_as == HOLDING
    _, (answer,) = run(grave, state, '[skill_check: skill="ward" dc="1"]')
    assert answer.ok and answer.record["effects"] == "-1"
