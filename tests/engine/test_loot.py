"""Loot tables and the [loot:] tag (spec/items.md §15)."""

from __future__ import annotations

from collections import Counter

import pytest
from helpers import answer, bag, fixture_json, harrow, harrow_party
from scipy.stats import chisquare

from engine import load_ruleset, start_state
from engine.dice import Stream
from engine.rules.loot import find_table, roll_table

GAME = harrow()
TABLE = find_table(GAME, "mill_cache")
WEAPONS = ["kit/hand-axe", "kit/longbow", "kit/arrow"]


def test_itm_loot_7_rows_drop_by_weight_chi_square():
    """≥ 20,000 single draws: row frequencies match weights 4:3:2:1:2."""
    table = TABLE.model_copy(update={"rolls": 1})
    counts: Counter[int] = Counter()
    for turn in range(24_000):
        _, record = roll_table(GAME, harrow_party(GAME), table, Stream("loot-stat", (turn,), "d"))
        counts[record["draws"][0]["row"]] += 1
    weights = [4, 3, 2, 1, 2]
    expected = [24_000 * w / 12 for w in weights]
    assert chisquare([counts[i] for i in range(5)], expected).pvalue > 1e-4


def test_itm_loot_9_count_dice_match_their_distribution():
    """The torch row counts 1d4: uniform on 1..4."""
    table = TABLE.model_copy(update={"rolls": 1, "entries": [TABLE.entries[0]]})
    state = harrow_party(GAME)
    counts = Counter(roll_table(GAME, state, table, Stream("count", (t,), "d"))[0][0].count
                     for t in range(20_000))
    assert set(counts) == {1, 2, 3, 4}
    assert chisquare([counts[k] for k in range(1, 5)]).pvalue > 1e-4


def test_itm_loot_6_rolls_dice_match_their_distribution():
    """rolls "1d2": one or two draws, evenly."""
    state = harrow_party(GAME)
    counts = Counter(roll_table(GAME, state, TABLE, Stream("rolls", (t,), "d"))[1]["rolls"]
                     for t in range(20_000))
    assert set(counts) == {1, 2}
    assert chisquare([counts[1], counts[2]]).pvalue > 1e-4


def test_itm_loot_8_filter_chooses_uniformly_among_matches():
    table = TABLE.model_copy(update={"rolls": 1, "entries": [TABLE.entries[3]]})
    state = harrow_party(GAME)
    counts = Counter(roll_table(GAME, state, table, Stream("filter", (t,), "d"))[0][0].thing.item
                     for t in range(21_000))
    assert set(counts) == set(WEAPONS)
    assert chisquare([counts[w] for w in WEAPONS]).pvalue > 1e-4


def test_itm_loot_8_coins_row_drops_coin_stacks():
    table = TABLE.model_copy(update={"rolls": 1, "entries": [TABLE.entries[4]]})
    drops, _ = roll_table(GAME, harrow_party(GAME), table, Stream("coins", (), "d"))
    assert drops[0].thing.coin == "shilling" and 1 <= drops[0].count <= 6


def _with_layer(hides=(), coins=()):
    document = fixture_json("rulesets/harrow.json")
    document["layers"].append({"id": "bare", "label": "Bare", "hides": list(hides),
                               "coins": list(coins)})
    game = load_ruleset(document)
    party = fixture_json("parties/harrow.json")
    party["layers"] = ["bare"]
    return game, start_state(game, party)


def test_itm_loot_10_a_hidden_item_or_removed_coin_never_drops_and_the_draw_is_spent():
    """OQ-36: the draw lands on the row and yields nothing (weights are not renormalised)."""
    game, state = _with_layer(hides=["kit/torch", "kit/poultice", "kit/rope", *WEAPONS],
                              coins=["shilling"])
    table = find_table(game, "mill_cache")
    for turn in range(200):
        drops, record = roll_table(game, state, table, Stream("layer", (turn,), "d"))
        assert drops == []
        assert all(d["name"] is None for d in record["draws"])


def test_itm_loot_10_a_filter_that_finds_nothing_drops_nothing():
    game, state = _with_layer(hides=WEAPONS)
    table = find_table(game, "mill_cache").model_copy(
        update={"rolls": 1, "entries": [find_table(game, "mill_cache").entries[3]]})
    drops, _ = roll_table(game, state, table, Stream("f", (), "d"))
    assert drops == []


def test_itm_loot_16_who_puts_everything_in_one_bag():
    state = harrow_party(GAME)
    new, [reply] = answer(GAME, state, '[loot: table="mill_cache" who="Bram the Quiet"]')
    assert reply.ok and reply.text.startswith("Mill cache: ")
    ada_before, ada_after = bag(state, "Ada"), bag(new, "Ada")
    assert ada_before == ada_after
    for drop in reply.record["drops"]:
        assert [p["who"] for p in drop["to"]] == ["Bram the Quiet"]


def test_itm_loot_17_the_same_turn_drops_the_same_and_another_turn_may_not():
    state = harrow_party(GAME)
    first = answer(GAME, state, '[loot: table="mill_cache"]', turn=(0, 3))[1][0]
    again = answer(GAME, state, 'Swipe. [loot: table="mill_cache"]', turn=(0, 3))[1][0]
    assert first.record == again.record
    others = {str(answer(GAME, state, '[loot: table="mill_cache"]', turn=(0, t))[1][0].record)
              for t in range(10)}
    assert len(others) > 1


def test_itm_loot_14_shared_view_and_what_nobody_carries_stays_behind():
    document = fixture_json("rulesets/harrow.json")
    document["items"]["carry"] = {"stat": "bulk", "encumberedAbove": {"const": 1},
                                  "limit": {"const": 2}}
    document["items"]["lootTables"].append({"id": "ropes", "label": "Ropes", "rolls": 1,
                                            "entries": [{"item": "kit/rope", "count": 9}]})
    game = load_ruleset(document)
    party = fixture_json("parties/harrow.json")
    for character in party["characters"]:
        character["bag"] = []
    state = start_state(game, party)
    _new, [reply] = answer(game, state, '[loot: table="ropes"]')
    assert reply.ok
    (drop,) = reply.record["drops"]
    assert sum(p["count"] for p in drop["to"]) == 4  # two characters, limit 2 bulk each
    assert drop["left"] == 5
    assert "stays behind" in reply.text


def test_itm_loot_15_journal_names_what_fell():
    new, [_reply] = answer(GAME, harrow_party(GAME), '[loot: table="Mill cache"]', turn=(1, 2))
    assert new.journal[-1].turn == "1.2"
    assert new.journal[-1].text.startswith("Loot (Mill cache): ")


@pytest.mark.parametrize(("tag", "reason", "says"), [
    ('[loot: table="dragon_hoard"]', "unknown-table", '"mill_cache" (Mill cache)'),
    ('[loot: table="mill_cache" who="Nobody"]', "unknown-character", "Nobody"),
])
def test_oq_38_refusals_change_nothing(tag, reason, says):
    state = harrow_party(GAME)
    new, [reply] = answer(GAME, state, tag)
    assert (reply.ok, reply.reason) == (False, reason)
    assert says in reply.text
    assert new is state


def test_loot_without_a_table_name_uses_the_only_table_or_refuses():
    state = harrow_party(GAME)
    _, [reply] = answer(GAME, state, "[loot:]")
    assert reply.ok and reply.record["table"] == "mill_cache"
    document = fixture_json("rulesets/harrow.json")
    document["items"]["lootTables"].append({"id": "b", "label": "B",
                                            "entries": [{"item": "kit/rope"}]})
    game = load_ruleset(document)
    state = start_state(game, fixture_json("parties/harrow.json"))
    new, [reply] = answer(game, state, "[loot:]")
    assert (reply.ok, reply.reason) == (False, "missing-attribute")
    assert new is state


def test_itm_loot_4_no_tables_is_refused():
    document = fixture_json("rulesets/harrow.json")
    document["items"]["lootTables"] = []
    game = load_ruleset(document)
    state = start_state(game, fixture_json("parties/harrow.json"))
    new, [reply] = answer(game, state, '[loot: table="x"]')
    assert (reply.ok, reply.reason) == (False, "no-loot-tables")
    assert new is state


def test_golden_loot_record_pins_the_dice():
    """A refactor that moves one die changes every recorded loot drop: pin one."""
    _, [reply] = answer(GAME, harrow_party(GAME), '[loot: table="mill_cache" who="Ada"]',
                        turn=(0, 1))
    assert reply.text == "Mill cache: Added Poultice ×2 to Ada's bag."
    assert reply.record == {
        "table": "mill_cache", "rolls": 2, "rollsDice": [2],
        "draws": [{"row": 1, "name": "Poultice", "count": 1},
                  {"row": 1, "name": "Poultice", "count": 1}],
        "drops": [{"name": "Poultice", "item": "kit/poultice", "coin": None, "count": 2,
                   "to": [{"who": "Ada", "count": 2}], "left": 0}],
    }


def test_itm_loot_18_each_drop_is_answered_like_an_add():
    """ITM-LOOT-18: a ``[loot:]`` answers each drop with the sentence ``[inventory:
    action="add"]`` gives the same thing arriving the same way, after the table's label."""
    state = harrow_party(GAME)
    after, [reply] = answer(GAME, state, '[loot: table="mill_cache" who="Ada"]', turn=(0, 1))
    added = state
    sentences = []
    for drop in reply.record["drops"]:
        added, [one] = answer(GAME, added, f'[inventory: action="add" item="{drop["name"]}" '
                              f'count="{drop["count"]}" who="Ada"]', turn=(0, 1))
        sentences.append(one.text)
    assert reply.text == "Mill cache: " + " ".join(sentences)
    assert [c.bag for c in after.characters] == [c.bag for c in added.characters]
