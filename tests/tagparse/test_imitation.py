"""Answer parts a model wrote, found by their shape (tagparse.imitation; DESIGN.md "Tags":
answered tags, and "Interfaces": the model never supplies an answer).

Table rows are what Qwen2.5-Coder-1.5B wrote through the stage; the properties pin what a
streamed reply relies on: the text read in pieces gives what the whole text gives.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replay.stage.answering import TakeOut
from tagparse import requests_only
from tagparse.imitation import imitations

ROWS = [
    # in a tag gmtags reads, with a second answer part
    ('[inventory: action="give" item="waterskin" who="Ada" to="Bram" | ok="true" text="Given '
     'waterskin ×1 to Bram." | ok="true" text="Bram: Water 1/1 to his bag."] She smiles.',
     '[inventory: action="give" item="waterskin" who="Ada" to="Bram"] She smiles.'),
    # a broken quote in the copied part
    ('[skill_check: skill="Sneak" dc="10" who="Ada" | ok="true" text="Ada tries to sneak. | '
     'ok="true" text="Ada has a sneak check of 10 (DC 10)."] ok',
     '[skill_check: skill="Sneak" dc="10" who="Ada"] ok'),
    # a bracket gmtags does not read, with the mid-reply mark
    ('[Battle: op="start" foe="watchdog" | ok="false" text="A fight begins." '
     'answered="mid-reply"] The dog growls.',
     '[Battle: op="start" foe="watchdog"] The dog growls.'),
    ('[Pay: amount="2 pennies" who="Bram" | ok="true" text="Ada pays Bram 2 pennies." '
     'answered="mid-reply"]', '[Pay: amount="2 pennies" who="Bram"]'),
    # loose after a tag, twice, up to the line's end
    ('Ada swings. [attack: who="Ada"] | ok="true" text="Ada: Poor 1d6+5 → 3 vs 30: failure." | '
     'ok="true" text="x"\nNext line.', 'Ada swings. [attack: who="Ada"]\nNext line.'),
    # an answer's bracket inside its text, escaped as gmtags writes it, or not
    ('[loot: table="x" | ok="true" text="Ada finds \\[Lantern\\] and rope."] then',
     '[loot: table="x"] then'),
    ('[loot: table="x" | ok="true" text="Ada finds [Lantern] and rope."] then',
     '[loot: table="x"] then'),
    # no "]" before the line ends: the bracket is closed again
    ('[skill_check: skill="Sneak" | ok="true" text="broken\nnext',
     '[skill_check: skill="Sneak"]\nnext'),
    # two brackets on a line
    ('[loot: table="x" | ok="true"] and [place: name="A" | ok="true" text="At A."] x',
     '[loot: table="x"] and [place: name="A"] x'),
    # what a model made of the mid-reply line: a mark with words, no quotes
    (' picked up the lantern. | answered=I picked up the silver lantern.\nNext.',
     " picked up the lantern.\nNext."),
    ('Done | text=You found it | ok=true then', "Done"),
    # prose: no part
    ("A table | ok | no.", "A table | ok | no."),
    ("[Choose: fight | flee] or [note: a | b]", "[Choose: fight | flee] or [note: a | b]"),
    ('She says "ok" | then leaves.', 'She says "ok" | then leaves.'),
    ('[inventory: action="add" item="Rope | Twine"] fine',
     '[inventory: action="add" item="Rope | Twine"] fine'),
]


@pytest.mark.parametrize(("written", "shown"), ROWS)
def test_each_answer_part_the_model_wrote_is_taken_out(written: str, shown: str) -> None:
    assert imitations(written).apply(written) == shown


@pytest.mark.parametrize(("written", "shown"), ROWS)
def test_read_in_pieces_it_gives_what_the_whole_text_gives(written: str, shown: str) -> None:
    for seed in range(60):
        rng = random.Random(seed)
        take, out, at = TakeOut(), "", 0
        while at < len(written):
            step = rng.randint(1, 7)
            out += take.feed(written[at:at + step])
            at += step
        assert out + take.feed("", final=True) == shown, seed


FRAGMENTS = st.sampled_from([
    "[", "]", "|", " | ", '"', "“", "”", "\\", "\n", " ", "ok=", ' ok="true"', ' text="t"',
    "| answered=I did it", "text=", " ans", "| t", "a b c",
    "[loot:", "[inventory: action=\"add\" item=\"Rope\"", "[Battle:", "answered=", "x",
    'a="b"', "\\]", "[Note: a", "|ok=", "] ", "dc=9",
])


@settings(max_examples=300, deadline=None)
@given(st.lists(FRAGMENTS, max_size=30), st.lists(st.integers(1, 9), min_size=1, max_size=40))
def test_any_text_in_any_pieces_gives_the_whole_texts_reading(
        parts: list[str], steps: list[int]) -> None:
    text = "".join(parts)
    assert fed_in_steps(TakeOut(), text, steps) == imitations(text).apply(text)


def fed_in_steps(take: TakeOut, text: str, steps: list[int]) -> str:
    """What ``take`` lets through of ``text`` fed to it in pieces of the ``steps``' lengths
    (in turn, over and over), then finished."""
    out, at, index = "", 0, 0
    while at < len(text):
        step = steps[index % len(steps)]
        index += 1
        out += take.feed(text[at:at + step])
        at += step
    return out + take.feed("", final=True)


@settings(max_examples=300, deadline=None)
@given(st.lists(FRAGMENTS, max_size=30))
def test_parts_never_overlap_and_stay_inside_the_text(parts: list[str]) -> None:
    text = "".join(parts)
    found = imitations(text)
    end = 0
    for part in found.found:
        assert end <= part.start < part.end <= len(text)
        assert part.replacement in ("", "]")
        end = part.end
    assert found.settled == len(text)


def test_a_long_unfinished_bracket_is_let_through_after_the_hold_bound() -> None:
    take = TakeOut()
    sent = take.feed("[loot: " + "x" * 10_000)
    assert len(sent) > 4096  # not held without bound


def test_the_history_the_model_reads_has_no_answer_parts() -> None:
    text = ('Found. [inventory: action="add" item="Torch" | ok="true" text="Added."] and '
            '[skill_check: skill="climb" dc="9"] and [bad: x | ok="true"] [loot: table="x" |')
    assert requests_only(text) == ('Found. [inventory: action="add" item="Torch"] and '
                                   '[skill_check: skill="climb" dc="9"] and [bad: x | ok="true"] '
                                   '[loot: table="x" |')
    assert requests_only("no tags | here") == "no tags | here"
