"""Health and wound tracks (spec/items.md glossary "Track"): a heal on a track (ITM-OUT-3), the
wound penalty on gates and checks (ITM-OUT-11, checks.md CHK-HIGH-3 / CHK-POOL-A3 *W*), a
track's max from the sheet alone (ITM-ABIL-6), party files, the GM's block and replay."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

import replay
from engine import Game, State, load_ruleset, start_state
from engine.dice import Stream
from engine.rules.party import PartyError
from engine.text.prompt import gm_context, inventory_block, sheet_block
from tests.engine.test_use import grave, grave_party, person, turn_where
from tests.helpers import answer, fixture_json

POULTICE = '[inventory: action="use" item="Poultice" who="Ada"]'
KNOT = '[inventory: action="use" item="Ward knot" who="Ada"]'
PAGE = '[inventory: action="use" item="Page of the vigil litany" who="Ada"]'
WARD = '[skill_check: skill="ward" dc="8" who="Ada"]'
STEEL = '[skill_check: save="steel" dc="8" who="Ada"]'


def mire_doc() -> dict[str, Any]:
    doc: dict[str, Any] = fixture_json("rulesets/wounds.json")
    return doc


def mire(mutate: Any = None) -> Game:
    doc = mire_doc()
    if mutate is not None:
        mutate(doc)
    return load_ruleset(doc)


def mire_party(game: Game, **ada: Any) -> State:
    doc = fixture_json("parties/wounds.json")
    doc["characters"][0].update(ada)
    return start_state(game, doc)


def health_track(doc: dict[str, Any]) -> None:
    """Mirewatch with a plain health track of 11 points instead of its wound track."""
    doc["live"]["tracks"] = [{"id": "blood", "label": "Blood", "kind": "health",
                              "max": {"const": 11}}]


# --- ITM-OUT-3: a heal on a track ------------------------------------------------------------

def test_itm_out_3_a_heal_closes_one_wound() -> None:
    game = mire()
    state = mire_party(game, tracks={"wounds": 3})
    new, answers = answer(game, state, POULTICE)
    assert answers[0].ok
    # Wounds max = Toughness = 3 + Brawn 2 = 5
    assert answers[0].text == "Ada uses Poultice: one wound closes (Wounds 2/5). 1 left."
    assert person(new, "Ada").tracks == {"wounds": 2}
    assert answers[0].record["closed"] == 1


def test_itm_out_3_a_heal_with_no_wound_still_uses_the_item_and_says_so() -> None:
    game = mire()
    state = mire_party(game, tracks={})
    new, answers = answer(game, state, POULTICE)
    assert answers[0].ok
    assert answers[0].text == "Ada uses Poultice: no wound to close (Wounds 0/5). 1 left."
    ada = person(new, "Ada")
    assert ada.tracks == {} and answers[0].record["closed"] == 0
    assert [(s.name, s.count) for s in ada.bag if s.item == "kit/poultice"] == [("Poultice", 1)]


def test_itm_out_3_a_heal_on_a_health_track_is_the_spec_line() -> None:
    game = mire(health_track)
    state = mire_party(game, tracks={"blood": 2})
    # 1d4 + 1 heals 4 when the heal stream's die shows 3.
    turn = turn_where(lambda t: Stream(state.seed, t, "inventory/0/use/heal").die(4) == 3)
    new, answers = answer(game, state, POULTICE, turn)
    assert answers[0].text == "Ada uses Poultice: heals 4 (Blood 6/11). 1 left."
    assert person(new, "Ada").tracks == {"blood": 6}
    assert answers[0].record["healed"] == 4


def test_itm_out_3_a_heal_on_a_health_track_never_passes_its_max() -> None:
    game = mire(health_track)
    state = mire_party(game, tracks={"blood": 10})
    for reply in range(20):
        new, answers = answer(game, state, POULTICE, (0, reply))
        assert person(new, "Ada").tracks == {"blood": 11}
        assert answers[0].text == "Ada uses Poultice: heals 1 (Blood 11/11). 1 left."


def test_itm_out_3_an_untouched_health_track_is_full() -> None:
    game = mire(health_track)
    state = mire_party(game, tracks={})
    new, answers = answer(game, state, POULTICE)
    assert answers[0].text == "Ada uses Poultice: heals 0 (Blood 11/11). 1 left."
    assert person(new, "Ada").tracks == {"blood": 11}


def test_itm_out_3_the_health_pool_comes_before_a_wound_track() -> None:
    """Gravewatch keeps its Blood pool and gains a wound track: a heal mends the pool."""
    def wounds(doc: dict[str, Any]) -> None:
        doc["live"]["tracks"] = [{"id": "wounds", "label": "Wounds", "kind": "wounds",
                                  "max": {"const": 4}}]
        kit = next(c for c in doc["catalogs"] if c["id"] == "kit")
        tonic = next(e for e in kit["entries"] if e["id"] == "warming-tonic")
        tonic["item"]["use"].pop("restore")
    game = grave(wounds)
    state = grave_party(game, [{"item": "kit/warming-tonic", "count": 1}],
                        pools={"health": 5}, tracks={"wounds": 2})
    new, answers = answer(game, state, '[inventory: action="use" item="Warming tonic" who="Ada"]')
    assert answers[0].text == "Ada uses Warming tonic: heals 1 (Blood 6/8). 0 left."
    assert person(new, "Ada").tracks == {"wounds": 2}


def test_itm_out_4_temporary_points_need_a_health_pool_as_before() -> None:
    """ITM-OUT-4 puts temporary points on a health pool: with only a track they go nowhere,
    as they did in a ruleset without a health pool, and the line says only what happened."""
    def temporary(doc: dict[str, Any]) -> None:
        health_track(doc)
        doc["catalogs"][0]["entries"][0]["item"]["use"]["temporary"] = {"flat": 3}
    game = mire(temporary)
    state = mire_party(game, tracks={"blood": 10})
    new, answers = answer(game, state, POULTICE)
    assert answers[0].text == "Ada uses Poultice: heals 1 (Blood 11/11). 1 left."
    assert person(new, "Ada").pools == {}
    assert "temporary" not in answers[0].record


def test_itm_abil_6_a_track_max_reads_the_sheet_without_items() -> None:
    """Oxhide-style gloves that set Brawn 5 do not raise Toughness for the track's max."""
    def gloves(doc: dict[str, Any]) -> None:
        doc["items"]["slots"] = [{"id": "hands", "label": "Hands", "count": 1}]
        doc["catalogs"][0]["entries"].append({"id": "gloves", "label": "Gloves", "item": {
            "category": "charm", "slots": {"hands": 1},
            "worn": {"abilities": {"brawn": {"set": 5}}}}})
    game = mire(gloves)
    state = mire_party(game, tracks={"wounds": 3},
                       bag=[{"item": "kit/poultice", "count": 2},
                            {"item": "kit/gloves", "count": 1, "equipped": True}])
    _, answers = answer(game, state, POULTICE)
    assert answers[0].text == "Ada uses Poultice: one wound closes (Wounds 2/5). 1 left."


# --- ITM-OUT-11: the wound penalty on a gate and on every check -------------------------------

def _gate(game: Game, state: State, turn: tuple[int, int]) -> dict[str, Any]:
    _, answers = answer(game, state, KNOT, turn)
    record: dict[str, Any] = answers[0].record
    return record


def test_itm_out_11_a_gate_rolls_with_the_users_wound_penalty() -> None:
    """Ward = Nerve 3 + Trained 1 = +4; two marks take 1, four take 2: the same dice, the total
    lower by exactly the penalty."""
    game = mire()
    for reply in range(30):
        turn = (0, reply)
        clean = _gate(game, mire_party(game, tracks={}), turn)
        hurt = _gate(game, mire_party(game, tracks={"wounds": 2}), turn)
        worse = _gate(game, mire_party(game, tracks={"wounds": 4}), turn)
        assert clean["gateRolls"] == hurt["gateRolls"] == worse["gateRolls"]
        assert clean["gateTotal"] == sum(clean["gateRolls"]) + 4
        assert hurt["gateTotal"] == clean["gateTotal"] - 1
        assert worse["gateTotal"] == clean["gateTotal"] - 2
        assert hurt["gate"] == ("passed" if hurt["gateTotal"] >= 8 else "failed")


def test_itm_out_11_a_failed_gate_names_the_lowered_total() -> None:
    game = mire()
    state = mire_party(game, tracks={"wounds": 2})
    turn = turn_where(lambda t: _gate(game, state, t)["gate"] == "failed")
    record = _gate(game, state, turn)
    _, answers = answer(game, state, KNOT, turn)
    assert answers[0].text == (f"Ada uses Ward knot: Ward check {record['gateTotal']} against 8, "
                               "failed; it is used up for nothing. 1 left.")


def test_itm_out_11_a_dice_pool_gate_rolls_one_die_fewer_per_penalty_point() -> None:
    """Gravewatch (dice-pool): Ward = Nerve 2 + Sworn 1 = 3 d10; a wound penalty of -1 takes a
    die, so the gate rolls the first two of the same three dice."""
    def wounds(doc: dict[str, Any]) -> None:
        doc["live"]["tracks"] = [{"id": "wounds", "label": "Wounds", "kind": "wounds",
                                  "max": {"const": 4}, "penalties": [
                                      {"atLeast": 1, "modifiers": [{"to": "checks", "flat": -1}]}]}]
    game = grave(wounds)
    ada = {"abilities": {"sinew": 3, "wits": 2, "nerve": 2}, "skills": {"ward": "sworn"}}
    clean = grave_party(game, [{"item": "kit/litany-page", "count": 2}], **ada)
    hurt = grave_party(game, [{"item": "kit/litany-page", "count": 2}], tracks={"wounds": 1},
                       **ada)
    for reply in range(10):
        _, whole = answer(game, clean, PAGE, (0, reply))
        _, fewer = answer(game, hurt, PAGE, (0, reply))
        assert len(whole[0].record["gateRolls"]) == 3
        assert fewer[0].record["gateRolls"] == whole[0].record["gateRolls"][:2]


def test_itm_out_11_a_skill_check_carries_the_penalty_and_names_the_track() -> None:
    game = mire()
    clean = mire_party(game, tracks={})
    hurt = mire_party(game, tracks={"wounds": 2})
    _, plain = answer(game, clean, WARD)
    _, lowered = answer(game, hurt, WARD)
    assert "effects" not in plain[0].record and "from" not in plain[0].record
    assert lowered[0].record["rolls"] == plain[0].record["rolls"]
    assert lowered[0].record["total"] == plain[0].record["total"] - 1
    assert (lowered[0].record["effects"], lowered[0].record["from"]) == ("-1", "Wounds")
    rolls = plain[0].record["rolls"]
    assert lowered[0].text.startswith(
        f"Ada: Ward 2d6+3 → {rolls[0]}+{rolls[1]}+3 = {sum(rolls) + 3} vs 8: ")


def test_itm_out_11_the_highest_penalty_row_met_applies_to_saves_too() -> None:
    game = mire()
    totals = {}
    for marks in (0, 1, 2, 3, 4, 5):
        _, answers = answer(game, mire_party(game, tracks={"wounds": marks}), STEEL)
        totals[marks] = answers[0].record["total"]
    base = totals[0]
    assert totals == {0: base, 1: base, 2: base - 1, 3: base - 1, 4: base - 2, 5: base - 2}


def test_itm_out_11_a_penalty_scoped_to_skills_spares_the_others() -> None:
    def scoped(doc: dict[str, Any]) -> None:
        doc["live"]["tracks"][0]["penalties"] = [
            {"atLeast": 1, "modifiers": [{"to": "checks", "skills": ["wade"], "flat": -3}]}]
    game = mire(scoped)
    state = mire_party(game, tracks={"wounds": 1})
    _, ward = answer(game, state, WARD)
    _, wade = answer(game, state, '[skill_check: skill="wade" dc="8" who="Ada"]')
    assert "from" not in ward[0].record
    assert wade[0].record["effects"] == "-3"


def test_a_wound_penalty_may_be_disadvantage() -> None:
    """A penalty is any ITM-WORN-4 modifier: mode disadvantage on a sum that rolls twice."""
    def lean(doc: dict[str, Any]) -> None:
        doc["resolution"]["advantage"] = True
        doc["live"]["tracks"][0]["penalties"] = [
            {"atLeast": 1, "modifiers": [{"to": "checks", "mode": "disadvantage"}]}]
    game = mire(lean)
    _, answers = answer(game, mire_party(game, tracks={"wounds": 1}), WARD)
    record = answers[0].record
    assert record["from"] == "Wounds"
    rolls = record["rolls"]
    assert len(rolls) == 4 and sum(record["kept"]) == min(sum(rolls[:2]), sum(rolls[2:]))


# --- the GM's block ----------------------------------------------------------------------------

def test_the_sheet_block_shows_tracks_and_the_penalty() -> None:
    """ITM-OUT-3/11: the GM sees each track and the penalty its marks give, in the SHEET
    block (not among the bag's stacks)."""
    game = mire()
    state = mire_party(game, tracks={"wounds": 2})
    block = sheet_block(game, state)
    assert block.splitlines() == ["SHEET",
                                  "Ada: Resolve 3/3; Wounds 2/5 (-1 on checks; -1 on saves)",
                                  "Bram: Resolve 3/3; Wounds 0/6"]
    assert "Wounds" not in inventory_block(game, state)
    assert block in gm_context(game, state)
    assert "applies wound penalties, conditions" in gm_context(game, state)


def test_the_sheet_block_shows_pools_temporary_points_and_conditions() -> None:
    """The live sheet the GM narrates: the health pool with its temporary points
    (ITM-OUT-4) and the conditions a character has (ITM-OUT-6)."""
    game = load_ruleset(fixture_json("rulesets/gravewatch.json"))
    state = start_state(game, fixture_json("parties/gravewatch.json"))
    first = state.characters[0]
    pool = game.ruleset.live.pools[0]
    condition = game.ruleset.conditions[0]
    changed = state.with_character(0, first.model_copy(update={
        "pools": {pool.id: 1, f"{pool.id}:temporary": 3},
        "conditions": (condition.id, condition.id)}))
    line = sheet_block(game, changed).splitlines()[1]
    assert line.startswith(f"{first.name}: {pool.label} 1/")
    assert "(+3 temporary)" in line
    assert line.endswith(f"; conditions: {condition.label}")


def test_no_sheet_block_without_pools_tracks_or_conditions() -> None:
    document = fixture_json("rulesets/bags.json")
    document["live"]["pools"] = []
    game = load_ruleset(document)
    party = fixture_json("parties/bags.json")
    for character in party["characters"]:
        character.pop("pools", None)  # a pool the ruleset does not have is refused
    state = start_state(game, party)
    assert sheet_block(game, state) == ""
    assert "SHEET" not in gm_context(game, state)


def test_a_ruleset_without_tracks_shows_the_block_as_before() -> None:
    game = load_ruleset(fixture_json("rulesets/harrow.json"))
    state = start_state(game, fixture_json("parties/harrow.json"))
    text = gm_context(game, state)
    assert "wound" not in text.casefold()
    assert "gmtags rolls the dice and applies conditions and items itself" in text


# --- party files ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("tracks", "message"), [
    ({"wounds": 6}, "/characters/0/tracks/wounds: 6 marks is outside Wounds's 0..5"),
    ({"wounds": -1}, "/characters/0/tracks/wounds: -1 marks is outside Wounds's 0..5"),
    ({"grit": 1}, '/characters/0/tracks/grit: no track "grit" in the ruleset'),
])
def test_a_party_track_out_of_range_or_unknown_is_refused(tracks: dict[str, int],
                                                         message: str) -> None:
    game = mire()
    with pytest.raises(PartyError) as error:
        mire_party(game, tracks=tracks)
    assert [str(p) for p in error.value.problems] == [message]


def test_an_exported_state_with_a_track_out_of_range_is_refused() -> None:
    game = mire()
    exported = mire_party(game).to_json()
    exported["characters"][0]["tracks"] = {"wounds": 9}
    with pytest.raises(PartyError, match="/characters/0/tracks/wounds"):
        start_state(game, exported)


def test_a_health_track_party_value_reads_points() -> None:
    game = mire(health_track)
    with pytest.raises(PartyError) as error:
        mire_party(game, tracks={"blood": 12})
    assert [str(p) for p in error.value.problems] == [
        "/characters/0/tracks/blood: 12 points is outside Blood's 0..11"]


# --- determinism and replay ------------------------------------------------------------------------

def test_same_inputs_give_identical_json() -> None:
    game = mire()
    state = mire_party(game, tracks={"wounds": 4})
    text = " ".join((WARD, KNOT, POULTICE, STEEL))
    first_state, first = answer(game, copy.deepcopy(state), text, (0, 3))
    second_state, second = answer(game, state, text, (0, 3))
    assert first_state.canonical() == second_state.canonical()
    assert json.dumps([a.to_json() for a in first], sort_keys=True) == json.dumps(
        [a.to_json() for a in second], sort_keys=True)


def _chat(*lines: dict[str, object]) -> replay.Transcript:
    return replay.parse_transcript("\n".join(json.dumps(line) for line in lines) + "\n",
                                   format="gmtags")


def test_itm_out_15_swipes_of_a_heal_close_one_wound_once() -> None:
    game = mire()
    state = mire_party(game, tracks={"wounds": 3})
    use = "You pack the wound. " + POULTICE
    chat = _chat({"role": "player", "name": "Ada", "text": "I use a poultice."},
                 {"role": "gm", "text": use, "swipes": [use, use + " It stings.", use],
                  "swipe": 2},
                 {"role": "player", "name": "Ada", "text": "Better."},
                 {"role": "gm", "text": "You rest a moment. " + WARD})
    result = replay.replay(game, chat, state)
    assert person(result.state, "Ada").tracks == {"wounds": 2}
    texts = [a.answer.text for a in result.answers]
    assert texts[0] == "Ada uses Poultice: one wound closes (Wounds 2/5). 1 left."
    assert result.answers[1].answer.record["from"] == "Wounds"  # 2 marks: still -1
    assert json.dumps(result.to_json(), sort_keys=True) == json.dumps(
        replay.replay(game, chat, state).to_json(), sort_keys=True)
