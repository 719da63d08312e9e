"""Issue 39, "Names as models write them": a party member, a combatant or a stack of the bag
named by its first word or a unique word-prefix, and a number read out of a labelled value,
each noted on the answer (engine/rules/names.py, engine/actions/attrs.py). Who= names the
roller or the bag's owner (OQ-CHK-5); item= a stack of the bag (ITM-NAME-1..3)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from helpers import answer, bag, fixture_json, harrow

from engine import Answer, Game, State, TurnContext, load_ruleset, start_state
from engine.actions.events import apply_event
from engine.actions.reply import ACTIONS
from engine.rules.names import meant_name, number_in
from engine.rules.state import plain_canonical

HARROW = harrow()
BRAMS = ["Bram the Quiet", "Bram the Bold"]


def party(*names: str, game: Game = HARROW) -> State:
    """The harrow party with its second member (Bram the Quiet) renamed and more members
    like it, one for each further name."""
    document = fixture_json("parties/harrow.json")
    second = document["characters"][1]
    members = [document["characters"][0]]
    for name in names or ("Bram the Quiet",):
        member = copy.deepcopy(second)
        member["name"] = name
        members.append(member)
    document["characters"] = members
    return start_state(game, document)


def one(state: State, text: str, game: Game = HARROW) -> tuple[State, Answer]:
    new, [reply] = answer(game, state, text)
    return new, reply


def refused_unchanged(state: State, text: str, reason: str,
                      game: Game = HARROW) -> Answer:
    """Every refusal leaves the state exactly as it was (conventions.md "Tests")."""
    new, reply = one(state, text, game)
    assert (reply.ok, reply.reason) == (False, reason), reply
    assert new is state
    return reply


# --- the rule itself: which name a written name means -----------------------------------------

NAMES = ["Bram the Quiet", "Ada", "Grey wolf", "Wolf 1", "Wolf 12", "Bramble"]


@pytest.mark.parametrize(("written", "meant"), [
    ("Bram the Quiet", "Bram the Quiet"),  # exact
    ("bram THE quiet", "Bram the Quiet"),  # exact, any case
    ("Bram", "Bram the Quiet"),  # the first word: whole words win over Bramble's cut one
    ("bram", "Bram the Quiet"),
    ("Bram the", "Bram the Quiet"),  # leading words
    ("Bram the Qui", "Bram the Quiet"),  # the last one cut, 3 letters or more
    ("  Bram  the ", "Bram the Quiet"),  # spaces do not count
    ("Bram, the Quiet", "Bram the Quiet"),  # nor punctuation between words
    ("Bramb", "Bramble"),  # a cut word, where no whole word fits
    ("Grey", "Grey wolf"),
    ("Wolf 1", "Wolf 1"),  # exact: numbered foes stay themselves
    ("Wolf 12", "Wolf 12"),
    ("Ada", "Ada"),
])
def test_issue_39_a_name_means_the_one_it_is_or_begins(written: str, meant: str) -> None:
    found = meant_name(written, NAMES)
    assert found.found is not None and NAMES[found.found] == meant
    assert found.exact == (written.strip().casefold() == meant.casefold())


@pytest.mark.parametrize("written", [
    "Bram the Q",  # a cut word keeps 3 letters
    "Br",
    "Quiet",  # not the leading words
    "the Quiet",
    "Wolf",  # Wolf 1 and Wolf 12: neither
    "Wolf 2",  # a number is never cut: not Wolf 12 ...
    "wolf 12 3",  # ... and more words than the name has are no name
    "", "   ", "!!",
])
def test_issue_39_a_name_that_is_no_name_or_fits_several_means_none(written: str) -> None:
    assert meant_name(written, NAMES).found is None


def test_issue_39_a_name_that_fits_several_names_them_in_their_order() -> None:
    assert meant_name("Wolf", NAMES).candidates == (3, 4)
    assert meant_name("bram the", BRAMS).candidates == (0, 1)
    assert meant_name("Bram the Q", BRAMS).candidates == ()  # no candidates: no name at all


@pytest.mark.parametrize(("text", "number"), [
    ("10", "10"), ("DC 10", "10"), ("10 (hard)", "10"), ("difficulty: 12", "12"),
    ("3 torches", "3"), ("x2", "2"), ("DC10", "10"), ("+2", "+2"), ("bonus -1", "-1"),
    ("tier 2", "2"), ("15, a hard climb", "15"),
])
def test_issue_39_the_one_whole_number_of_a_value(text: str, number: str) -> None:
    assert number_in(text) == number


@pytest.mark.parametrize("text", ["", "hard", "ten", "2 or 3", "1.5", "10-12", "1,000", "d20",
                                  "2d6", "DC 1d6+2"])
def test_issue_39_no_number_or_several_or_dice_is_no_number(text: str) -> None:
    assert number_in(text) is None


# --- who=: a party member ----------------------------------------------------------------------


@pytest.mark.parametrize("who", ["Bram", "bram", "BRAM", "Bram the", "bram the qui", "Bra"])
def test_oq_chk_5_who_is_the_member_whose_first_words_it_is_with_a_note(who: str) -> None:
    state = party()
    new, reply = one(state, f'[inventory: action="add" item="Torch" who="{who}"]')
    assert reply.ok and reply.text == "Added Torch ×1 to Bram the Quiet's bag."
    assert reply.notes == (f'read who="{who}" as Bram the Quiet',)
    exact, _ = one(state, '[inventory: action="add" item="Torch" who="Bram the Quiet"]')
    assert plain_canonical(new) == plain_canonical(exact)


def test_oq_chk_5_the_roller_of_a_check_by_first_word() -> None:
    state = party()
    _, short = one(state, '[skill_check: skill="climb" dc="9" who="Bram"]')
    _, whole = one(state, '[skill_check: skill="climb" dc="9" who="Bram the Quiet"]')
    assert short.ok and short.record == whole.record and short.text == whole.text
    assert short.notes == ('read who="Bram" as Bram the Quiet',)


@pytest.mark.parametrize(("text", "note"), [
    ('[inventory: action="give" item="Rope" who="Ada" to="Bram"]',
     'read to="Bram" as Bram the Quiet'),
    ('[inventory: action="pay" amount="1 penny" who="bram"]', 'read who="bram" as Bram the Quiet'),
    ('[inventory: action="earn" amount="2 pennies" who="Bram"]',
     'read who="Bram" as Bram the Quiet'),
    ('[loot: table="mill_cache" who="Bram"]', 'read who="Bram" as Bram the Quiet'),
])
def test_issue_39_every_reader_of_a_member_reads_first_words(text: str, note: str) -> None:
    state = party()
    _, reply = one(state, text)
    assert note in reply.notes and reply.reason != "unknown-character", reply


def test_issue_39_an_exact_name_wins_over_a_longer_one_it_begins() -> None:
    state = party("Bram", "Bram the Quiet")
    _, reply = one(state, '[inventory: action="add" item="Torch" who="bram"]')
    assert reply.text == "Added Torch ×1 to Bram's bag." and reply.notes == ()


def test_issue_39_whole_words_win_over_a_cut_word() -> None:
    state = party("Bram the Quiet", "Bramble")
    _, whole = one(state, '[inventory: action="add" item="Torch" who="Bram"]')
    _, cut = one(state, '[inventory: action="add" item="Torch" who="Bramb"]')
    assert whole.text == "Added Torch ×1 to Bram the Quiet's bag."
    assert cut.text == "Added Torch ×1 to Bramble's bag."


@pytest.mark.parametrize(("who", "text"), [
    ("Bram", '"Bram" could be Bram the Quiet or Bram the Bold: write the whole name; nothing '
             "was done."),
    ("bram the", '"bram the" could be Bram the Quiet or Bram the Bold: write the whole name; '
                 "nothing was done."),
])
def test_issue_39_a_name_two_members_begin_is_refused_naming_them(who: str, text: str) -> None:
    state = party(*BRAMS)
    reply = refused_unchanged(state, f'[inventory: action="add" item="Torch" who="{who}"]',
                              "unknown-character")
    assert reply.text == text and reply.notes == ()
    check = refused_unchanged(state, f'[skill_check: skill="climb" dc="9" who="{who}"]',
                              "unknown-character")
    assert check.text == text
    give = refused_unchanged(state, f'[inventory: action="give" item="Rope" to="{who}"]',
                             "unknown-character")
    assert give.text == text


@pytest.mark.parametrize("who", ["Bram the Q", "Quiet", "Br", "Brom", "Bram the Quiet Bold"])
def test_oq_chk_5_a_name_that_begins_no_member_is_refused_as_before(who: str) -> None:
    state = party()
    reply = refused_unchanged(state, f'[inventory: action="add" item="Torch" who="{who}"]',
                              "unknown-character")
    assert reply.text == f'Nobody called "{who}" is in the party (Ada, Bram the Quiet).'


def test_issue_39_a_refusal_after_a_name_was_read_keeps_the_note() -> None:
    state = party()
    reply = refused_unchanged(state, '[inventory: action="give" item="Harp" to="Bram"]',
                              "not-held")
    assert reply.notes == ('read to="Bram" as Bram the Quiet',)


def test_issue_39_the_hosts_to_reads_a_members_first_words() -> None:
    state = party()
    new, reply = apply_event(HARROW, state, {"action": "add", "item": "Torch", "to": "Bram"},
                             "Ada", TurnContext("seed", (0, 0)))
    assert reply.ok and reply.notes == ('read to="Bram" as Bram the Quiet',)
    assert ("Torch", 4) in bag(new, "Bram the Quiet")
    brams = party(*BRAMS)
    same, refused = apply_event(HARROW, brams, {"action": "add", "item": "Torch", "to": "Bram"},
                                "Ada", TurnContext("seed", (0, 0)))
    assert (refused.ok, refused.reason, same is brams) == (False, "unknown-character", True)


# --- item=: a stack of the bag -----------------------------------------------------------------


def holding(*names: str) -> State:
    """The harrow party, Ada holding one each of ``names`` besides her own bag."""
    state = party()
    for name in names:
        state, reply = one(state, f'[inventory: action="add" item="{name}" who="Ada"]')
        assert reply.ok, reply
    return state


@pytest.mark.parametrize(("written", "meant"), [
    ("Silver", "Silver lantern"),  # a catalog item's stack by its first word
    ("silver", "Silver lantern"),
    ("SILVER LAN", "Silver lantern"),  # the last word cut
    ("Bone", "Bone flute"),  # a plain stack
    ("bone flu", "Bone flute"),
    ("Hand", "Hand axe"),
])
def test_itm_name_3_a_stack_by_its_first_words_is_removed_with_a_note(written: str,
                                                                      meant: str) -> None:
    state = holding("Silver lantern", "Bone flute")
    new, reply = one(state, f'[inventory: action="remove" item="{written}"]')
    exact, whole = one(state, f'[inventory: action="remove" item="{meant}"]')
    assert reply.ok and reply.text == whole.text and reply.record == whole.record
    assert reply.notes == (f'read item="{written}" as {meant}',)
    assert plain_canonical(new) == plain_canonical(exact)


@pytest.mark.parametrize(("text", "words"), [
    ('[inventory: action="give" item="silver" to="Bram the Quiet"]',
     "Ada gives Silver lantern ×1 to Bram the Quiet."),
    ('[inventory: action="set" item="bone" count="3"]', "Ada now has Bone flute ×3."),
    ('[inventory: action="unequip" item="hand"]', "Ada unequips Hand axe."),
    ('[inventory: action="use" item="poul"]', "Ada uses Poultice"),
])
def test_issue_39_every_action_on_a_held_stack_reads_first_words(text: str, words: str) -> None:
    state = holding("Silver lantern", "Bone flute", "Poultice")
    state, _ = one(state, '[inventory: action="set" item="Bone flute" count="5"]')
    _, reply = one(state, text)
    assert reply.ok and reply.text.startswith(words), reply
    assert len(reply.notes) == 1 and reply.notes[0].startswith('read item="')


HELD_ACTIONS = ["remove", "give", "set", "equip", "unequip", "bind", "unbind", "use", "sell",
                "reveal", "inspect"]


@pytest.mark.parametrize("action", HELD_ACTIONS)
def test_issue_39_every_action_that_looks_up_a_stack_declares_item_held(action: str) -> None:
    declared = dict(ACTIONS[("inventory", action)].request.declared)
    assert declared["item"].reader.kind == "item held"


@pytest.mark.parametrize("action", ["add", "buy"])
def test_issue_39_what_an_add_or_a_buy_names_is_never_read_as_a_stack(action: str) -> None:
    declared = dict(ACTIONS[("inventory", action)].request.declared)
    assert declared["item"].reader.kind == "text"


def test_issue_39_an_add_is_never_redirected_to_a_stack_it_begins() -> None:
    state = holding("Rope ladder", "Bone flute")
    added, reply = one(state, '[inventory: action="add" item="Bone"]')
    assert reply.ok and reply.notes == () and ("Bone", 1) in bag(added, "Ada")
    assert ("Bone flute", 1) in bag(added, "Ada")
    ladder, reply = one(state, '[inventory: action="add" item="rope ladder"]')
    assert reply.ok and ("Rope ladder", 2) in bag(ladder, "Ada")  # as today: the same stack


def test_itm_name_1_a_name_of_the_ruleset_wins_over_a_stack_it_begins() -> None:
    """Rope is a harrow item: remove item="Rope" takes Rope, never the Rope ladder."""
    state = holding("Rope ladder")
    new, reply = one(state, '[inventory: action="remove" item="rope"]')
    assert reply.ok and reply.notes == () and ("Rope ladder", 1) in bag(new, "Ada")
    assert "Rope" not in [name for name, _ in bag(new, "Ada")]
    none_left = refused_unchanged(new, '[inventory: action="remove" item="rope"]', "not-held")
    assert none_left.text == "Ada has no Rope." and none_left.notes == ()


def test_itm_cls_14_a_name_a_companion_holds_is_never_read_as_another_stack() -> None:
    """A fight's use may draw on a companion's stack: a name of a stack anyone in the party
    holds means that, not a stack of who='s bag it begins."""
    state = holding("Bone flute")
    state, _ = one(state, '[inventory: action="add" item="Bone" who="Bram the Quiet"]')
    reply = refused_unchanged(state, '[inventory: action="remove" item="bone"]', "not-held")
    assert (reply.text, reply.notes) == ("Ada has no bone.", ())


def test_issue_39_an_item_two_stacks_begin_is_refused_naming_them() -> None:
    state = holding("Bone flute", "Bone dice")
    for text in ('[inventory: action="remove" item="bone"]',
                 '[inventory: action="give" item="bone" to="Bram the Quiet"]',
                 '[inventory: action="set" item="Bone" count="2"]'):
        reply = refused_unchanged(state, text, "not-held")
        word = text.split('item="')[1].split('"')[0]
        assert reply.text == (f'Ada\'s "{word}" could be Bone flute or Bone dice: write the '
                              "whole name; nothing was done.")
    listed = refused_unchanged(state, '[inventory: action="remove" item="Torch, bone"]',
                               "not-held")
    assert "Bone flute or Bone dice" in listed.text


def test_issue_39_an_item_no_stack_begins_is_refused_as_before() -> None:
    state = holding("Bone flute")
    reply = refused_unchanged(state, '[inventory: action="remove" item="Harp"]', "not-held")
    assert (reply.text, reply.notes) == ("Ada has no Harp.", ())
    cut = refused_unchanged(state, '[inventory: action="remove" item="Bo"]', "not-held")
    assert cut.text == "Ada has no Bo."


def test_issue_39_a_comma_list_reads_each_name() -> None:
    state = holding("Silver lantern", "Bone flute")
    new, reply = one(state, '[inventory: action="remove" item="silver, Bone"]')
    assert reply.ok and reply.notes == ('read item="silver, Bone" as Silver lantern, Bone flute',)
    names = [name for name, _ in bag(new, "Ada")]
    assert "Silver lantern" not in names and "Bone flute" not in names


def test_issue_39_the_item_is_read_in_the_bag_of_who() -> None:
    state = holding("Bone flute")
    reply = refused_unchanged(state, '[inventory: action="remove" item="Bone" who="Bram"]',
                              "not-held")
    assert reply.notes == ('read who="Bram" as Bram the Quiet',)
    assert reply.text == "Bram the Quiet has no Bone."


# --- numbers -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("count", "read"), [
    ("3 torches", 3), ("x2", 2), ("+2", 2), ("2x", 2), ("count: 4", 4), ("1 more", 1),
])
def test_issue_39_a_labelled_count_is_its_number_with_a_note(count: str, read: int) -> None:
    state = party()
    new, reply = one(state, f'[inventory: action="add" item="Torch" count="{count}"]')
    plain, _ = one(state, f'[inventory: action="add" item="Torch" count="{read}"]')
    assert reply.ok and reply.record["count"] == read
    assert reply.notes == (f'read count="{count}" as {read}',)
    assert plain_canonical(new) == plain_canonical(plain)


@pytest.mark.parametrize("count", ["three", "2 or 3", "1.5", "1,000", "d6", "0 torches",
                                   "-2 torches", "2000000 arrows", "x 1234567890123456789"])
def test_issue_39_a_count_of_no_one_number_in_range_is_bad_count(count: str) -> None:
    state = party()
    reply = refused_unchanged(state, f'[inventory: action="add" item="Torch" count="{count}"]',
                              "bad-count")
    assert reply.text == f'count="{count}" is not a whole number from 1 to 1000000.'


def test_issue_39_a_set_reads_a_labelled_count_and_none_left() -> None:
    state = party()
    new, reply = one(state, '[inventory: action="set" item="Torch" count="2 torches" '
                            'who="Bram the Quiet"]')
    assert reply.ok and ("Torch", 2) in bag(new, "Bram the Quiet")
    gone, reply = one(new, '[inventory: action="set" item="Torch" count="0 left" '
                           'who="Bram the Quiet"]')
    assert reply.ok and reply.notes == ('read count="0 left" as 0',)
    assert "Torch" not in [name for name, _ in bag(gone, "Bram the Quiet")]


def test_issue_39_the_hosts_split_reads_a_labelled_count() -> None:
    state = party()
    new, reply = apply_event(HARROW, state, {"action": "split", "item": "Torch", "count": "x2"},
                             "Bram the Quiet", TurnContext("seed", (0, 0)))
    assert reply.ok and reply.notes == ('read count="x2" as 2',)
    assert [n for n, c in bag(new, "Bram the Quiet") if n == "Torch"] == ["Torch", "Torch"]


@pytest.mark.parametrize(("dc", "read"), [
    ("DC 10", "10"), ("10 (hard)", "10"), ("difficulty: 12", "12"), ("dc12", "12"),
])
def test_oq_chk_16_a_labelled_dc_is_its_number_with_a_note(dc: str, read: str) -> None:
    state = party()
    _, reply = one(state, f'[skill_check: skill="climb" dc="{dc}"]')
    _, plain = one(state, f'[skill_check: skill="climb" dc="{read}"]')
    assert reply.ok and reply.record == plain.record
    assert reply.notes == (f'read dc="{dc}" as {read}',)


@pytest.mark.parametrize("dc", ["hard", "10 or 12", "1d20", "1234567"])
def test_oq_chk_16_a_dc_of_no_one_number_is_no_dc_as_before(dc: str) -> None:
    reply = refused_unchanged(party(), f'[skill_check: skill="climb" dc="{dc}"]',
                              "missing-difficulty")
    assert reply.notes == ()


# --- fights: combatants by first words, foe numbering kept ---------------------------------------

SKIRMISH = load_ruleset(fixture_json("rulesets/skirmish.json"))
SKIRMISH_PARTY = fixture_json("parties/skirmish.json")


def fight(start: str) -> State:
    state, replies = answer(SKIRMISH, start_state(SKIRMISH, SKIRMISH_PARTY), start)
    assert all(reply.ok for reply in replies) and state.encounter is not None, replies
    return state


WOLF = fight('[combat: op="start" foe="Grey wolf" role="standard" tier="1"]')
GOBLINS = fight('[combat: op="start" foe="Goblin" role="standard" tier="1" count="2"]')


@pytest.mark.parametrize(("text", "notes"), [
    ('[attack: who="Ada" target="Grey"]', ('read target="Grey" as Grey wolf',)),
    ('[attack: who="Ada" target="grey wol"]', ('read target="grey wol" as Grey wolf',)),
    ('[attack: who="Bran" target="Grey"]',
     ('read who="Bran" as Brannoc', 'read target="Grey" as Grey wolf')),
    ('[attack: who="Grey" target="Ada"]', ('read who="Grey" as Grey wolf',)),
])
def test_issue_39_a_combatant_by_its_first_words(text: str, notes: tuple[str, ...]) -> None:
    new, reply = one(WOLF, text, SKIRMISH)
    whole = text.replace('"Grey"', '"Grey wolf"').replace('"grey wol"', '"Grey wolf"')
    exact, plain = one(WOLF, whole.replace('"Bran"', '"Brannoc"'), SKIRMISH)
    assert reply.ok and reply.text == plain.text and reply.notes == notes
    assert plain_canonical(new) == plain_canonical(exact)


def test_cmb_tpl_1_numbered_foes_stay_themselves_and_their_stem_is_refused() -> None:
    _, second = one(GOBLINS, '[attack: who="Brannoc" target="goblin 2"]', SKIRMISH)
    assert second.ok and second.notes == () and "Goblin 2" in second.text
    for written in ("Goblin", "gob"):
        reply = refused_unchanged(GOBLINS, f'[attack: who="Brannoc" target="{written}"]',
                                  "unknown-combatant", SKIRMISH)
        assert reply.text == (f'"{written}" could be Goblin 1 or Goblin 2: write the whole '
                              "name; nothing was done.")
    nobody = refused_unchanged(GOBLINS, '[attack: who="Brannoc" target="Goblin 3"]',
                               "unknown-combatant", SKIRMISH)
    assert nobody.text.startswith('Nobody called "Goblin 3" is in the fight')


def test_issue_39_a_fight_starts_with_a_labelled_tier_and_count() -> None:
    state, [reply] = answer(SKIRMISH, start_state(SKIRMISH, SKIRMISH_PARTY),
                            '[combat: op="start" foe="Goblin" role="standard" tier="tier 1" '
                            'count="2 goblins"]')
    assert reply.ok and reply.notes == ('read tier="tier 1" as 1', 'read count="2 goblins" as 2')
    assert plain_canonical(state) == plain_canonical(GOBLINS)


# --- determinism ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("game", "state", "text"), [
    (HARROW, "harrow", '[inventory: action="give" item="silver" count="x1" who="Ada" to="Bram"]'),
    (HARROW, "harrow", '[skill_check: skill="climb" dc="DC 9" who="bram"]'),
    (HARROW, "brams", '[inventory: action="add" item="Torch" who="Bram"]'),
    (SKIRMISH, "goblins", '[attack: who="Bran" target="Goblin"]'),
    (SKIRMISH, "wolf", '[attack: who="Bran" target="Grey"]'),
])
def test_issue_39_the_same_tag_gives_the_same_answer(game: Game, state: str, text: str) -> None:
    start: dict[str, Any] = {"harrow": holding("Silver lantern"), "brams": party(*BRAMS),
                             "goblins": GOBLINS, "wolf": WOLF}
    first, one_reply = one(start[state], text, game)
    again, other = one(start[state], text, game)
    assert one_reply.to_json() == other.to_json()
    assert plain_canonical(first) == plain_canonical(again)
