"""Instructions models follow (issue 39): every tag the GM instructions show is a real tag of
the ruleset, filled from its catalog and the party's names — never a placeholder or a list of
alternatives, which a small model copies whole — and the instructions say which way money
moves, that the GM writes no answer part and that tags sit inside narration. They read the
ruleset and the party's names only, so they stay the same from turn to turn (a model server
caches the front of the prompt). Table-driven over every fixture ruleset with its party."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import FIXTURES, answer

import replay
import tagparse
from engine import Game, State, TurnContext, apply_reply
from engine.actions.examples import FOE_NAMES, Party, party_of
from engine.rules import reasons
from engine.rules.fight.formula import hero_health
from engine.text.fight.block import combat_block
from engine.text.prompt import (
    ANSWER_LINE,
    KIND_USES,
    MID_REPLY_LINE,
    NARRATE_LINE,
    example_reply,
    instructions,
    reply_reminder,
    state_context,
    tag_last,
)

RULESETS = sorted(p.stem for p in (FIXTURES / "rulesets").glob("*.json"))
TAG = re.compile(r"\[[^\[\]]*\]")

# Refusals that depend on what the party holds or did before, not on a wrong example: the
# examples name the ruleset's items, never a bag's (those change from turn to turn).
STATE_DEPENDENT = {reasons.NOT_HELD, reasons.ALREADY, reasons.CANNOT_AFFORD, reasons.NOT_WORN,
                   reasons.TARGET_DOWN, reasons.NO_PLACE}


def loaded(name: str) -> tuple[Game, State]:
    game = replay.load_ruleset(FIXTURES / "rulesets" / f"{name}.json")
    return game, replay.load_party(game, Path(FIXTURES / "parties" / f"{name}.json"))


def taught(game: Game, state: State) -> str:
    """The instructions and, once the example fight has begun, the fight's lines."""
    return instructions(game, party=party_of(state))


def example_fight(game: Game, state: State) -> State | None:
    """The state after the instructions' own fight example, or None without one."""
    start = next((t for t in tagparse.scan(taught(game, state)).tags
                  if t.kind == "combat" and t.get("op") == "start"), None)
    if start is None:
        return None
    fighting, answers = apply_reply(game, state, (start,), TurnContext(state.seed, (0, 0)))
    assert answers[0].ok, answers[0]
    return fighting


def sensible(game: Game, state: State, tag: tagparse.Tag, reason: str | None) -> bool:
    """Whether a refused example is refused for the state it met, not for what it says."""
    if reason in STATE_DEPENDENT:
        return True
    if reason == reasons.UNKNOWN_WEAPON:  # a ruleset weapon this hero does not carry
        return game.find_item(tag.get("with") or "") is not None
    if reason == reasons.UNKNOWN_COMBATANT:  # a template's foe, not in this fight
        combat = game.ruleset.combat
        foes = {(t.label or t.role.title()) for t in (combat.templates if combat else [])}
        return tag.get("who") in foes
    # a ruleset whose heroes have no hit points cannot be fought in (fixtures/wounds.json)
    return reason == reasons.UNSUPPORTED and hero_health(game, state, 0) is None


@pytest.mark.parametrize("name", RULESETS)
def test_no_placeholder_or_alternatives_inside_any_tag(name: str) -> None:
    """Issue 39: ``rank="<D|C|…>"`` gave S-rank wolves, ``tactics="poor|…"`` was copied."""
    game, state = loaded(name)
    fighting = example_fight(game, state)
    texts = [instructions(game, True, party_of(state)), state_context(game, state)]
    if fighting is not None:
        texts.append(combat_block(game, fighting))
    for text in texts:
        for tag in TAG.findall(text):
            assert "<" not in tag and "|" not in tag and "..." not in tag, tag


@pytest.mark.parametrize("name", RULESETS)
def test_every_example_tag_reads_and_is_answered(name: str) -> None:
    """Each example, answered in order from the party's start (the fight's lines once the
    example fight is on), is answered ok or refused only for what the party holds."""
    game, state = loaded(name)
    text = taught(game, state)
    scanned = tagparse.scan(text)
    assert not scanned.diagnostics and len(scanned.tags) == text.count("[") > 0
    oks = 0
    for turn, tag in enumerate(scanned.tags):
        after, answers = apply_reply(game, state, (tag,), TurnContext(state.seed, (0, turn)))
        assert answers[0].ok or sensible(game, state, tag, answers[0].reason), (tag.raw,
                                                                               answers[0])
        oks += answers[0].ok
        state = after if answers[0].ok else state
    assert oks * 2 > len(scanned.tags)  # most examples work as they stand
    if state.encounter is None:
        return
    block = combat_block(game, state)
    lines = block[block.index("How to fight"):]
    fight_tags = tagparse.scan(lines)
    assert not fight_tags.diagnostics and len(fight_tags.tags) == lines.count("[")
    for turn, tag in enumerate(fight_tags.tags, 100):
        after, answers = apply_reply(game, state, (tag,), TurnContext(state.seed, (0, turn)))
        assert answers[0].ok or sensible(game, state, tag, answers[0].reason), (tag.raw,
                                                                               answers[0])
        state = after if answers[0].ok else state


@pytest.mark.parametrize("name", RULESETS)
def test_the_instructions_say_how_to_write_tags(name: str) -> None:
    game, state = loaded(name)
    text = taught(game, state)
    assert NARRATE_LINE in text and ANSWER_LINE in text and MID_REPLY_LINE not in text
    assert MID_REPLY_LINE in instructions(game, True, party_of(state))
    assert "a reply of tags alone" in NARRATE_LINE or "never tags alone" in NARRATE_LINE
    # the answer part's syntax is never shown, not even as a warning: a small model copies it
    assert "ok=" not in text and "answered=" not in text and "| " not in text
    assert "ok=" not in MID_REPLY_LINE and "answered=" not in MID_REPLY_LINE
    if game.coins:  # which way the money moves, each with its example
        gets = next(line for line in text.splitlines() if 'action="earn"' in line)
        gives = next(line for line in text.splitlines() if 'action="pay"' in line)
        assert gets.startswith("- The party gets money (a reward")
        assert gives.startswith("- The party gives money (buying")


@pytest.mark.parametrize("name", RULESETS)
def test_the_instructions_do_not_change_from_turn_to_turn(name: str) -> None:
    """Bags, purses, places and checks change the state, never the instructions; a fight's
    lines stay the same from round to round."""
    game, state = loaded(name)
    text = taught(game, state)
    later, _ = answer(game, state, " ".join(t.raw for t in tagparse.scan(text).tags
                                            if t.kind != "combat"))
    assert later != state
    assert state_context(game, later).startswith(text + "\n\n")
    assert state_context(game, state).startswith(text + "\n\n")
    assert instructions(game, party=party_of(later)) == text == taught(game, state)
    fighting = example_fight(game, state)
    if fighting is None or not combat_block(game, fighting):
        return
    hero = party_of(state).hero
    struck, _ = answer(game, fighting, f'[attack: who="{hero}" target="{FOE_NAMES[0]}"]', (1, 0))
    lines = combat_block(game, fighting)
    assert lines[lines.index("How to fight"):] in combat_block(game, struck)


def test_the_examples_name_the_party_and_the_lowest_rank_for_a_wolf() -> None:
    """Harrow Vale: real members, a real catalog item, coin, table, skill and save; a wolf
    is rank D and tier 1, the other ranks listed beside the example."""
    game, state = loaded("harrow")
    text = taught(game, state)
    for shown in ('[inventory: action="add" item="Rope" count="2" who="Ada"]',
                  '[inventory: action="give" item="Rope" who="Ada" to="Bram the Quiet"]',
                  '[inventory: action="earn" amount="5 pennies" who="Ada"]',
                  '[loot: table="mill_cache"]',
                  '(save="Steel" or ability="Brawn" instead of skill=): '
                  '[skill_check: skill="Sneak" dc="9" who="Ada"]',
                  "(an ordinary animal or common thug is rank D, tier 1;",
                  '[combat: op="start" foe="Wolf" rank="D" tier="1" count="2"]',
                  "(D, C, B, A, S, SS, SSS; X, XX for world beings)"):
        assert shown in text, shown
    assert instructions(game) != text and 'who="' not in instructions(game).split(
        "[loot:")[0]  # without a party, who= is left out (the player's character)
    assert Party(("Ada",)).other is None


@pytest.mark.parametrize("name", RULESETS)
def test_no_instruction_line_goes_on_after_its_tag(name: str) -> None:
    """A small model that copies an example tag copies whatever follows it on its line (the
    alternatives after a check, the rank ladder after a fight's start): each line's example
    tag is the last thing on it, in a fight too."""
    game, state = loaded(name)
    fighting = example_fight(game, state) or state
    text = instructions(game, party=party_of(state), fighting=fighting is not state)
    for line in text.splitlines():
        tags = TAG.findall(line)
        if tags and "looks like this" not in line:
            assert line.rstrip().endswith(tags[-1]), line


def test_tag_last_moves_what_follows_a_tag_before_it() -> None:
    assert tag_last('- Loot: [loot: table="a"] (shared out; who="Ada" for one hero).') == \
        '- Loot (shared out; who="Ada" for one hero): [loot: table="a"]'
    assert tag_last('- A fight: [combat: op="start"]: tier 1; roles: a, b.') == \
        '- A fight (tier 1; roles: a, b): [combat: op="start"]'
    assert tag_last('- Gear: [inventory: action="equip"]; unequip takes it off') == \
        '- Gear (unequip takes it off): [inventory: action="equip"]'
    for same in ('- Lost: [inventory: action="remove"]', "  Skills: Sneak.", "plain words"):
        assert tag_last(same) == same


@pytest.mark.parametrize("name", RULESETS)
def test_a_reply_is_shown_as_story_around_a_real_tag(name: str) -> None:
    """The one example reply: words of story before a tag that the ruleset answers ok from
    the party's start (an everyday item of its catalog), and no tag kind named in brackets
    where the kinds are listed."""
    game, state = loaded(name)
    shown = [line for line in example_reply(game, party_of(state))]
    assert len(shown) <= 1
    for line in shown:
        tags = tagparse.scan(line).tags
        assert len(tags) == 1 and line.index("[") > 30
        assert answer(game, state, tags[0].raw)[1][0].ok
    only = next(line for line in instructions(game, party=party_of(state)).splitlines()
                if line.startswith("- Only these tags exist:"))
    assert "[" not in only and "inventory" in only


@pytest.mark.parametrize("name", RULESETS)
def test_the_reminder_shows_each_taught_kind_with_what_it_is_for(name: str) -> None:
    """The reminder right before the player's message shows, for each kind the instructions
    teach at that point (attack only in a fight, unless a ruleset teaches it outside), the
    instructions' first tag of that kind and what it is for."""
    game, state = loaded(name)
    for now in (state, example_fight(game, state)):
        if now is None:
            continue
        fighting = now.encounter is not None
        reminder = reply_reminder(game, now)
        taught = instructions(game, party=party_of(state), fighting=fighting)
        lines = taught.splitlines()[taught.splitlines().index(
            next(line for line in taught.splitlines() if line.startswith("- Only these"))) + 1:]
        firsts = {}
        for tag in tagparse.scan("\n".join(lines)).tags:
            firsts.setdefault(tag.kind, tag.raw)
        shown = [(t.kind, t.raw) for t in tagparse.scan(reminder).tags]
        assert shown == [(k, v) for k, v in firsts.items() if k in KIND_USES]
        for kind, _ in shown:
            assert f"for {KIND_USES[kind]}" in reminder
        assert ("attack" in dict(shown)) <= (fighting or "[attack:" in instructions(
            game, party=party_of(state)))
