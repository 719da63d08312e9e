"""Tags a model wrote under a wrong head are read as the tags they stand for, and nothing else
is (tagparse.heads). The rows are what Qwen2.5-Coder-1.5B wrote through the stage."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_imitation import fed_in_steps

from engine import VOCABULARY
from replay.stage.answering import TakeOut
from tagparse import scan
from tagparse.heads import Vocabulary, mend

SMALL = Vocabulary(
    reads={("inventory", "add"): frozenset({"action", "item", "count", "who"}),
           ("inventory", "give"): frozenset({"action", "item", "who", "to"}),
           ("inventory", "pay"): frozenset({"action", "amount", "who"}),
           ("inventory", "earn"): frozenset({"action", "amount", "who"}),
           ("inventory", "equip"): frozenset({"action", "item", "who"}),
           ("combat", "start"): frozenset({"op", "foe", "rank", "tier", "count"}),
           ("combat", "end"): frozenset({"op", "outcome"}),
           ("loot", None): frozenset({"table", "who"}),
           ("attack", None): frozenset({"who", "target", "with"})},
    selector={"inventory": "action", "combat": "op"})

READ = [
    ('[RInventory: action="add" item="Silver lantern" count="1" who="Ada"]',
     '[inventory: action="add" item="Silver lantern" count="1" who="Ada"]'),
    ('[Agive: who="Ada" to="Bram the Quiet" item="Rope"]',
     '[inventory: action="give" who="Ada" to="Bram the Quiet" item="Rope"]'),
    ('[BPay: amount="2 pennies" who="Ada"]', '[inventory: action="pay" amount="2 pennies" '
     'who="Ada"]'),
    ('[Pay: amount="2 pennies" who="Bram"]', '[inventory: action="pay" amount="2 pennies" '
     'who="Bram"]'),
    ('[A: action="equip" item="Rope" who="Bram the Quiet"]',
     '[inventory: action="equip" item="Rope" who="Bram the Quiet"]'),
    ('[Battle: op="start" foe="watchdog" rank="D" tier="1"]',
     '[combat: op="start" foe="watchdog" rank="D" tier="1"]'),
    ('[Aloot: table="mill_cache"]', '[loot: table="mill_cache"]'),
    # an attribute written twice: read as the tag reads it (the scanner's rule), not refused here
    ('[Agive: who="Ada" to="Bram" item="Torch" who="Ada"]',
     '[inventory: action="give" who="Ada" to="Bram" item="Torch" who="Ada"]'),
    ('[B Equip: item="Leather coat" who="Ada"]',
     '[inventory: action="equip" item="Leather coat" who="Ada"]'),
]

LEFT = [
    "[A wolf: Grit 10/10; Resolve 4/4]",  # a state line, not attributes
    "[Bram the Quiet: Grit 10/10]",
    "[Choose: fight | flee]",  # prose
    "[terrain: gmtags rolls a dice, and the result is: Mountains]",
    '[Forgive: item="Rope"]',  # more than a couple of letters before an action's name
    '[Pay: action="earn" amount="1 penny"]',  # the head and the attribute disagree
    '[give: item="Rope" to="Bram" colour="red"]',  # an attribute give does not read
    '[sneak: dc="10"]',  # no action or kind of that name
    '[Inventory: action="add" item="Rope"]',  # a known kind: the scanner reads it already
    '[inventory: action="add" item="Rope"]',
    '[Agive: who="Ada" item="Rope]',  # a quote left open
    '[A: action="dance"]',  # no such action
    '[Old Pay: amount="1 penny"]',  # a word before the action's name
    # in a tag's quoted value (escaped, as the tag syntax writes a bracket there)
    '[inventory: action="add" item="Note" summary="reads \\[Agive: item=Rope\\]"]',
]


@pytest.mark.parametrize(("wrote", "read"), READ)
def test_a_tag_under_a_wrong_head_is_read_as_the_tag_it_stands_for(wrote: str,
                                                                   read: str) -> None:
    text = f"Story before. {wrote} Story after."
    mended, mends = mend(text, SMALL)
    assert mended == f"Story before. {read} Story after."
    assert [(m.wrote, m.read) for m in mends] == [(wrote, read)]
    assert text[mends[0].start:mends[0].end] == wrote
    tags = scan(mended).tags
    assert len(tags) == 1 and tags[0].malformed is None


@pytest.mark.parametrize("text", LEFT)
def test_anything_else_in_brackets_is_left_as_it_is(text: str) -> None:
    assert mend(f"A {text} B", SMALL) == (f"A {text} B", [])


def test_the_engines_vocabulary_reads_its_own_actions() -> None:
    """The stage's vocabulary is the engine's declarations: an action of one kind only is
    read from its name (use is inventory's; attack's use= is an attribute, not an action)."""
    assert mend('[Use: item="Poultice" who="Ada"]', VOCABULARY)[0] == \
        '[inventory: action="use" item="Poultice" who="Ada"]'
    assert mend('[Defend: who="Ada"]', VOCABULARY)[0].startswith('[combat: op="defend"')
    assert mend('[Rest: who="Ada"]', VOCABULARY)[0].startswith('[sheet: op="rest"')


BRACKETS = st.sampled_from([w for w, _ in READ] + LEFT)
PROSE = st.text(alphabet=st.characters(blacklist_characters="[]"), max_size=12)


@given(st.lists(st.tuples(PROSE, BRACKETS), max_size=6), PROSE)
def test_mending_is_idempotent_and_touches_nothing_outside_what_it_reads(
        parts: list[tuple[str, str]], tail: str) -> None:
    text = "".join(prose + bracket for prose, bracket in parts) + tail
    mended, mends = mend(text, SMALL)
    assert mend(mended, SMALL) == (mended, [])
    rebuilt, at = [], 0
    for m in mends:
        rebuilt += [text[at:m.start], m.read]
        at = m.end
    assert "".join(rebuilt) + text[at:] == mended
    assert len(scan(mended).tags) == len(scan(text).tags) + len(mends)


PIECES = st.sampled_from([
    "[", "]", "|", " | ", '"', "\n", " ", ' ok="true"', "[Agive:", "[BPay:", "[A:", "[Battle:",
    ' who="Ada"', ' to="Bram the Quiet"', ' item="Rope"', ' amount="2 pennies"', ' op="start"',
    ' action="equip"', "[loot:", ' table="mill_cache"', "x", "[A wolf: Grit 10/10]", "Story ",
])


@settings(max_examples=300, deadline=None)
@given(st.lists(PIECES, max_size=30), st.lists(st.integers(1, 9), min_size=1, max_size=40))
def test_the_stage_reads_a_streamed_reply_as_it_reads_the_whole(
        parts: list[str], steps: list[int]) -> None:
    """The stage's cleaner (answer parts out, then heads mended) gives the same text whatever
    pieces the reply arrives in: a bracket is mended only once it is whole."""
    text = "".join(parts)
    take, whole = TakeOut("", SMALL), TakeOut("", SMALL)
    assert fed_in_steps(take, text, steps) == whole.feed(text, final=True)
    assert take.mended == whole.mended
