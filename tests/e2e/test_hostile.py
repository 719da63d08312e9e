"""Hostile input (issue #14): nothing a model or player writes crashes gmtags, hangs it, or
makes it allocate without bound. Each case gets a refusal or a diagnostic."""

from __future__ import annotations

import json

import pytest
from helpers import answer, fixture_json, harrow, harrow_party

import tagparse
from engine.actions.reply import MAX_TAGS_PER_REPLY
from engine.ruleset import validate
from replay import TranscriptError, parse_transcript, replay
from replay.files import InputError, parse_json

GAME = harrow()


def fold_text(text: str):
    return replay(GAME, parse_transcript(json.dumps({"role": "gm", "text": text}),
                                         format="gmtags"), harrow_party(GAME))


def test_a_one_megabyte_tag_is_refused_or_read_not_crashed():
    result = fold_text('[inventory: action="add" item="' + "x" * 1_000_000 + '"]')
    assert len(result.answers) == 1
    stack = result.state.characters[0].bag[-1]
    assert len(stack.name) <= 200  # names are cut to a sane length


def test_one_hundred_thousand_tags_in_a_reply():
    text = "".join(f'[inventory: action="add" item="Torch" who="Ada" count="{1 + i % 2}"] '
                   for i in range(100_000))  # two tags, each written 50,000 times
    result = fold_text(text)
    assert len(result.answers) == 100_000
    torches = sum(s.count for s in result.state.characters[0].bag if s.item == "kit/torch")
    assert torches == 3 * (1 + 2)  # each tag answered 3 times
    assert {a.answer.reason for a in result.answers[6:]} == {"repeated-tag"}


def test_one_hundred_thousand_different_tags_in_a_reply():
    text = "".join(f'[inventory: action="add" item="Torch" who="Ada" count="{1 + i % 1000}"] '
                   for i in range(100_000))
    result = fold_text(text)
    assert len(result.answers) == 100_000
    assert {a.answer.reason for a in result.answers[MAX_TAGS_PER_REPLY:]} == {
        "too-many-tags", "repeated-tag"}  # past the first 1,000, every tag is a copy


@pytest.mark.parametrize("text", [
    "[" * 100_000,
    "]" * 100_000,
    '"' * 100_000,
    "[inventory: " * 20_000,
    '[inventory: a="' * 20_000,
    "[[[[inventory: action=\"add\" item=\"Rope\"]]]]" * 1_000,
    "\x00\x01\x02[inventory: action=\"add\" item=\"Ro\x07pe\"]\x1b[0m" * 100,
])
def test_brackets_quotes_and_control_characters(text):
    result = tagparse.scan(text)
    assert isinstance(result.tags, tuple)
    fold_text(text)


def test_invalid_utf8_in_a_transcript_is_a_diagnostic():
    data = b'{"role": "gm", "text": "caf\xe9 [inventory: action=\\"add\\" item=\\"Rope\\"]"}\n'
    transcript = parse_transcript(data, format="gmtags")
    result = replay(GAME, transcript, harrow_party(GAME))
    assert result.answers[0].answer.ok
    assert any(d.code == "bad-utf8" for d in result.diagnostics)


@pytest.mark.parametrize(("tag", "reason"), [
    ('[inventory: action="add" item="Rope" count="999999999999999999999"]', "bad-count"),
    ('[inventory: action="add" item="Rope" count="-1"]', "bad-count"),
    ('[inventory: action="earn" amount="1e400 crowns"]', "bad-amount"),
    ('[inventory: action="pay" amount="99999999999999999999999 pennies"]', "bad-amount"),
])
def test_huge_or_negative_numbers_are_refused(tag, reason):
    state = harrow_party(GAME)
    new, [reply] = answer(GAME, state, tag)
    assert (reply.ok, reply.reason) == (False, reason)
    assert new is state


def test_a_ten_kilobyte_name():
    state = harrow_party(GAME)
    new, [reply] = answer(GAME, state, '[inventory: action="add" item="' + "n" * 10_000 + '"]')
    assert reply.ok
    assert len(new.characters[0].bag[-1].name) == 200


def test_json_nested_ten_thousand_deep_is_an_input_error():
    with pytest.raises(InputError):
        parse_json("[" * 10_000 + "]" * 10_000, "deep.json")
    deep_line = '{"role": "gm", "text": ' + "[" * 10_000 + "]" * 10_000 + "}"
    transcript = parse_transcript('{"role": "player", "text": "hi"}\n' + deep_line,
                                  format="gmtags")
    assert [d.code for d in transcript.diagnostics] == ["bad-json"]
    with pytest.raises(TranscriptError):
        parse_transcript(deep_line)


def test_a_ruleset_with_a_derived_cycle_is_refused_at_load():
    document = fixture_json("rulesets/harrow.json")
    document["sheet"]["derived"] = [
        {"id": "a", "label": "A", "of": [{"derived": "b"}]},
        {"id": "b", "label": "B", "of": [{"derived": "c"}]},
        {"id": "c", "label": "C", "of": [{"derived": "a"}]},
    ]
    _, problems = validate(document)
    assert any("cycle" in p.message for p in problems)


def test_a_ruleset_nested_ten_thousand_deep_is_refused():
    document: object = {}
    for _ in range(10_000):
        document = {"x": document}
    _, problems = validate({"id": "deep", "label": "Deep", "items": document})
    assert problems


# --- issue #14, the cases the first pass did not cover ------------------------------------

DICE = "999999d999999"


@pytest.mark.parametrize(("tag", "reason"), [
    (f'[skill_check: skill="climb" dc="{DICE}"]', "missing-difficulty"),
    (f'[inventory: action="add" item="Rope" count="{DICE}"]', "bad-count"),
    (f'[inventory: action="earn" amount="{DICE} crowns"]', "bad-amount"),
    (f'[inventory: action="pay" amount="{DICE}"]', "bad-amount"),
    (f'[loot: table="{DICE}"]', "unknown-table"),
])
def test_huge_dice_in_a_tag_are_refused_unrolled(tag, reason):
    state = harrow_party(GAME)
    new, [reply] = answer(GAME, state, tag)
    assert (reply.ok, reply.reason) == (False, reason)
    assert new is state


def _gravewatch_with(change) -> list[tuple[str, str]]:
    document = fixture_json("rulesets/gravewatch.json")
    change(document)
    _, problems = validate(document)
    return [(p.pointer, p.message) for p in problems]


def _set(path: tuple[object, ...], value: object):
    def change(document):
        for part in path[:-1]:
            document = document[part]
        document[path[-1]] = value
    return change


@pytest.mark.parametrize(("path", "value", "pointer", "says"), [
    (("items", "lootTables", 0, "rolls"), DICE, "/items/lootTables/0/rolls", "100 dice"),
    (("items", "lootTables", 0, "entries", 0, "count"), DICE,
     "/items/lootTables/0/entries/0/count", "100 dice"),
    (("items", "market", "sold", 0, "limited"), DICE, "/items/market/sold/0/limited",
     "100 dice"),
    (("catalogs", 0, "entries", 0, "item", "stats", "hurt"), DICE,
     "/catalogs/0/entries/0/item/stats/hurt", "not dice notation"),
])
def test_huge_dice_in_a_ruleset_are_a_validation_error(path, value, pointer, says):
    problems = _gravewatch_with(_set(path, value))
    assert any(p == pointer and says in m for p, m in problems), problems


@pytest.mark.parametrize(("path", "value", "pointer", "says"), [
    # A fake that passes for itself (ITM-FAKE: passesFor names a real, saleable item).
    (("catalogs", 1, "entries", 0, "item", "passesFor"), "magic_items/bag-of-devouring",
     "/catalogs/1/entries/0/item/passesFor", "is a fake itself"),
    (("items", "lootTables", 0, "entries", 0, "item"), "kit/nothing-here",
     "/items/lootTables/0/entries/0/item", 'unknown item "kit/nothing-here"'),
    (("items", "market", "sellers", 0, "stock"), {"table": "nope"},
     "/items/market/sellers/0/stock/table", 'unknown loot table "nope"'),
])
def test_catalogs_that_reference_themselves_or_nothing_are_refused(path, value, pointer, says):
    problems = _gravewatch_with(_set(path, value))
    assert any(p == pointer and says in m for p, m in problems), problems


@pytest.mark.parametrize("number", [float("inf"), float("-inf"), float("nan")])
def test_a_stat_of_1e400_is_a_problem_not_a_crash(number):
    """Found by benchmarks/fuzz.py: JSON's 1e400 reads as infinity, and the stat check
    converted it with int() (OverflowError) instead of reporting it."""
    problems = _gravewatch_with(_set(("catalogs", 0, "entries", 0, "item", "stats", "weight"),
                                     number))
    assert any(pointer == "/catalogs/0/entries/0/item/stats/weight" and "finite number" in m
               for pointer, m in problems), problems


@pytest.mark.parametrize("path", [
    ("catalogs", 0, "entries", 0, "item", "stats", "cover"),  # an integer stat
    ("catalogs", 0, "entries", 0, "item", "stats", "weight"),
    ("items", "stats", 1, "default"),
])
def test_a_stat_of_ten_to_the_400_is_a_problem_not_a_crash(path):
    """Found by benchmarks/fuzz.py: a whole number too large for a float made the stat check
    raise OverflowError in float()."""
    problems = _gravewatch_with(_set(path, 10**400))
    assert any("above the maximum" in message for _, message in problems), problems


def test_a_ruleset_file_with_1e400_is_checked_not_crashed():
    text = json.dumps(fixture_json("rulesets/gravewatch.json"))
    text = text.replace('"stats": {"weight": 0.25}', '"stats": {"weight": 1e400}', 1)
    document = parse_json(text, "r.json")
    _, problems = validate(document)
    assert any("finite" in p.message for p in problems)


@pytest.mark.parametrize(("text", "expected"), [
    ('[inventory: action="add item="Rope"]', [(False, "malformed")]),
    ("[inventory: action='add\" item=\"Rope\"] [inventory: action=\"add\" item=\"Torch\"]",
     [(False, "malformed"), (True, None)]),
    ('[inventory: action="add" item="Rope]  and "more" [inventory: action="add" item="Torch"]',
     [(False, "malformed"), (True, None)]),
    ('“[inventory: action="add" item="Torch"]', [(True, None)]),
    ('[inventory: action="add" item="To""rch"]', [(False, "malformed")]),
])
def test_unbalanced_quotes_spoil_only_their_own_tag(text, expected):
    state = harrow_party(GAME)
    new, replies = answer(GAME, state, text)
    assert [(r.ok, r.reason) for r in replies] == expected
    if not any(ok for ok, _ in expected):
        assert new is state


def test_unbalanced_quotes_repeated_stay_linear():
    text = '[inventory: action="add item="Rope" ' * 5_000 + '"' * 50_000
    result = tagparse.scan(text)
    assert result.tags
    assert all(t.malformed is not None for t in result.tags)


def test_an_infinite_constant_is_refused_at_load():
    """Found by benchmarks/fuzz.py: ``{"const": Infinity}`` (or 1e400) in a derived value
    loaded, then the carry limit raised ValueError in Fraction('inf') on the first add."""
    document = fixture_json("rulesets/harrow.json")
    document["sheet"]["derived"][0]["of"][0] = {"const": float("inf")}
    _, problems = validate(document)
    assert [(p.pointer, p.message) for p in problems] == [
        ("/sheet/derived/0/of/0/const", "Input should be a finite number")]


def test_a_fraction_tier_of_zero_is_refused_at_load():
    """Found by benchmarks/fuzz.py: a roll-against ``by: "fraction"`` tier with atLeast 0
    loaded, then every check divided the target by zero (CHK-RA-A9)."""
    document = fixture_json("rulesets/against-d100.json")
    tiers = document["resolution"]["outcomes"]["tiers"]
    index = next(i for i, t in enumerate(tiers) if t.get("atLeast") == 1)
    tiers[index]["atLeast"] = 0
    _, problems = validate(document)
    assert (f"/resolution/outcomes/tiers/{index}/atLeast",
            "a fraction tier's atLeast is above 0") in [(p.pointer, p.message) for p in problems]
