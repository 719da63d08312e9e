"""``gmtags report`` pages opened in headless Chromium (issue #16).

The report of a fixture chat is written by the installed command, opened from disk, and driven
like a reader would: click a turn, read the bag panel, open a swipe, open the charts. The bag
panel is checked against the engine's own state after the same message. Screenshots land in
tests/artifacts/ (git-ignored). Chromium is Debian's (``scripts/test`` installs it); Playwright
drives it through ``executable_path`` and never downloads a browser.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES, ROOT, system_program

import replay
from replay.report import report_html, stack_label

CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture(autouse=True)
def _chromium() -> None:
    system_program(str(CHROMIUM), "the report's browser tests drive it")


ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
GMTAGS = shutil.which("gmtags", path=str(Path(sys.executable).parent)) or "gmtags"
RULESET = FIXTURES / "rulesets/harrow.json"
PARTY = FIXTURES / "parties/harrow.json"
DEMO = FIXTURES / "chats/demo.jsonl"
ARTIFACTS = ROOT / "tests" / "artifacts"
LONG_TURNS = 2000


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield launched
        launched.close()


class Page:
    """An open report page that records every request and script error it sees."""

    def __init__(self, browser, path: Path):
        self.page = browser.new_page(viewport={"width": 1280, "height": 1000})
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.goto(path.as_uri())
        self.page.wait_for_selector("body[data-ready='1']")

    def bag(self, who: str) -> list[tuple[str, int, str]]:
        """(stack, count, change mark) for each row of ``who``'s bag in the state panel."""
        rows = self.page.eval_on_selector_all(
            f'#state section[data-character="{who}"] tr[data-stack]',
            "rows => rows.map(r => [r.dataset.stack, r.lastChild.lastChild.textContent,"
            " r.classList.contains('added') ? 'added' : r.classList.contains('changed')"
            " ? 'changed' : r.classList.contains('removed') ? 'removed' : ''])")
        return [(name, int(count), mark) for name, count, mark in rows]

    def click_message(self, index: int) -> None:
        self.page.click(f"#m{index} .head")
        self.page.wait_for_selector(f'#state[data-message="{index}"]')

    def close(self) -> None:
        self.page.close()


def write_report(chat: Path, out: Path) -> Path:
    result = subprocess.run([GMTAGS, "report", str(chat), "--ruleset", str(RULESET),
                             "--party", str(PARTY), "-o", str(out)],
                            capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    return out


def engine_bags(chat: Path) -> dict[int, dict[str, list[tuple[str, int]]]]:
    """The engine's bags after every message: what the panel must show."""
    game = replay.load_ruleset(RULESET)
    transcript = replay.read_transcript(chat)
    state = replay.load_party(game, PARTY, transcript.player_name)
    bags: dict[int, dict[str, list[tuple[str, int]]]] = {}

    def keep(index, after):
        bags[index] = {c.name: [(stack_label(s), s.count) for s in c.bag]
                       for c in after.characters}

    replay.replay(game, transcript, state, on_message=keep)
    return bags


def shown(rows: list[tuple[str, int, str]]) -> list[tuple[str, int]]:
    return [(name, count) for name, count, mark in rows if mark != "removed"]


def screenshot(page, name: str, full: bool = False) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name), full_page=full)


def only_local(requests: list[str]) -> bool:
    return all(url.startswith(("file:", "data:", "about:")) for url in requests)


def test_demo_report_click_a_turn_shows_the_bags_after_it(browser, tmp_path):
    page = Page(browser, write_report(DEMO, tmp_path / "demo.html"))
    # Message 4: Bram hands his three torches to Ada (the curly and single quotes repaired).
    page.click_message(4)
    assert page.bag("Ada") == [("Hand axe (equipped)", 1, ""), ("crowns", 1, ""),
                               ("pennies", 7, ""), ("Rope", 2, ""), ("Torch", 5, "changed")]
    assert page.bag("Bram the Quiet") == [("shillings", 4, ""), ("Torch", 0, "removed")]
    # Issue 29: a tag's repairs are one badge, each repair in its tooltip and list.
    badges = page.page.locator("#m4 li.answer .repairs summary").all_inner_texts()
    assert badges == ["repaired: curly-quotes ×4", "repaired: upper-case-name, single-quotes ×3"]
    assert page.page.locator("#m4 .repair-list li").count() == 8
    screenshot(page.page, "report-demo-turn-4.png")
    # Message 7: twelve poultices split at the stack limit of ten; a malformed tag is refused.
    page.click_message(7)
    assert page.bag("Bram the Quiet") == [("shillings", 4, ""), ("Poultice", 10, "added"),
                                          ("Poultice", 2, "added")]
    refused = page.page.locator("#m7 li.answer.refused .reason").all_inner_texts()
    assert refused == ["not-held", "malformed"]  # the lantern Ada never had; item=
    assert not page.errors and only_local(page.requests), (page.errors, page.requests)
    page.close()


def test_demo_report_every_turn_matches_the_engine(browser, tmp_path):
    page = Page(browser, write_report(DEMO, tmp_path / "demo.html"))
    expected = engine_bags(DEMO)
    for index in sorted(expected):
        page.click_message(index)
        for who, bag in expected[index].items():
            assert shown(page.bag(who)) == bag, (index, who)
    page.close()


def test_demo_report_unselected_swipe_opens_on_demand(browser, tmp_path):
    page = Page(browser, write_report(DEMO, tmp_path / "demo.html"))
    swipes = page.page.locator("#m2 details.swipes")
    assert "Silver lantern" not in page.page.inner_text("#m2")
    swipes.locator("summary").click()
    # The swipes are filled on the details' toggle event, which the browser fires after the
    # click returns: wait for them rather than race it.
    page.page.wait_for_selector("#m2 details.swipes[data-filled='1'] pre")
    assert "Silver lantern" in swipes.inner_text()
    assert page.page.locator("#m5 .badge.flag").inner_text() == "hidden: not counted"
    page.close()


def test_demo_report_a_tag_the_player_typed_is_marked_not_counted(browser, tmp_path):
    """Issue 29: the player's "Silver lantern" tag is shown struck out, with a badge."""
    page = Page(browser, write_report(DEMO, tmp_path / "demo.html"))
    assert page.page.locator("#m3 .badge.uncounted").inner_text() == "tag not counted (player)"
    assert "Silver lantern" in page.page.locator("#m3 mark.tag.uncounted").inner_text()
    assert page.page.locator("#m3 li.answer").count() == 0
    assert page.page.locator("#m3 .head").inner_text().startswith("message 3 (line 4)")
    page.close()


def test_demo_report_charts_are_inline_svg(browser, tmp_path):
    page = Page(browser, write_report(DEMO, tmp_path / "demo.html"))
    page.page.click("#tab-charts")
    assert page.page.locator("#chart-worth svg path").count() == 2  # Ada and Bram
    assert "Climb" in page.page.inner_text("#chart-checks")
    # Issue 29: as wide as the page, with round ticks on both axes, drawn at its own size.
    wide, box = page.page.evaluate(
        "[document.querySelector('#chart-worth svg').getBoundingClientRect().width,"
        " document.querySelector('#chart-worth').getBoundingClientRect().width]")
    assert wide == box and wide > 1000
    labels = page.page.locator("#chart-worth svg text").all_text_contents()
    assert {"0", "5", "10"} <= set(labels) and "message" in labels and "pennies" in labels
    screenshot(page.page, "report-demo-charts.png", full=True)
    assert not page.errors and only_local(page.requests)
    page.close()


# A 2,000-turn chat --------------------------------------------------------------------------

ITEMS = ("Torch", "Rope", "Arrow", "Poultice", "Hand axe", "Old boot", "Strange idol")
SKILLS = ("climb", "sneak", "barter", "ward")
PROSE = ("The road bends north.", "Rain drums on the shutters.", "Bram watches the trees.",
         "Lanterns sway above the stalls.", "Mud sucks at your boots.")


def gm_tag(rng: random.Random) -> str:
    who = rng.choice(["", ' who="Ada"', ' who="Bram the Quiet"'])
    roll = rng.random()
    if roll < 0.35:
        return (f'[inventory: action="{rng.choice(["add", "add", "remove"])}" '
                f'item="{rng.choice(ITEMS)}" count="{rng.randint(1, 4)}"{who}]')
    if roll < 0.55:
        coin = rng.choice(["pennies", "shillings"])
        return (f'[inventory: action="{rng.choice(["pay", "earn", "earn"])}" '
                f'amount="{rng.randint(1, 6)} {coin}"{who}]')
    if roll < 0.75:
        return f'[skill_check: skill="{rng.choice(SKILLS)}" dc="{rng.randint(5, 12)}"{who}]'
    if roll < 0.85:
        return '[loot: table="mill_cache"]'
    if roll < 0.9:
        return f'[place: name="{rng.choice(["Millbrook", "Greywater"])}" size="market town"]'
    return '[inventory: action="add" item=]'


def long_chat(path: Path, turns: int = LONG_TURNS, seed: int = 16) -> Path:
    """``turns`` player messages and GM replies, with swipes, sessions and malformed tags."""
    rng = random.Random(seed)
    lines: list[dict[str, Any]] = []
    for turn in range(turns):
        player: dict[str, Any] = {"role": "player", "name": "Ada", "text": "We go on."}
        if turn and turn % 500 == 0:
            player["new_session"] = True
        reply = " ".join([rng.choice(PROSE), *(gm_tag(rng) for _ in range(rng.randint(0, 3)))])
        gm: dict[str, Any] = {"role": "gm", "text": reply}
        if rng.random() < 0.1:
            gm = {"role": "gm", "swipes": [rng.choice(PROSE) + " " + gm_tag(rng), reply],
                  "swipe": 1}
        lines += [player, gm]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


def test_long_report_first_paint_and_a_late_turn(browser, tmp_path):
    chat = long_chat(tmp_path / "long.jsonl")
    page = Page(browser, write_report(chat, tmp_path / "long.html"))
    page.page.wait_for_function("performance.getEntriesByName('report-painted').length")
    # The browser records the first paint's entry a little after the paint: wait for it too
    # (read at once, it was missing on a loaded machine).
    page.page.wait_for_function(
        "performance.getEntriesByName('first-contentful-paint').length")
    paint = page.page.evaluate(
        "performance.getEntriesByName('first-contentful-paint').map(e => e.startTime)[0]")
    ready, painted = page.page.evaluate(
        "['report-ready', 'report-painted'].map(n => performance.getEntriesByName(n)[0].startTime)")
    size = (tmp_path / "long.html").stat().st_size
    print(f"\n2,000-turn report ({2 * LONG_TURNS} messages, {size:,} bytes): first contentful "
          f"paint {paint:.0f} ms after navigation start; first page of the chat and the bag "
          f"panel built at {ready:.0f} ms, painted by {painted:.0f} ms")
    assert page.page.locator("#messages .msg").count() == 50  # one page, not 4,000 nodes
    expected = engine_bags(chat)
    for index in (3001, 3999, 1):  # jump across pages, backwards too
        page.page.fill("#pager-top input", str(index))
        page.page.dispatch_event("#pager-top input", "change")
        page.page.wait_for_selector(f'#state[data-message="{index}"]')
        for who, bag in expected[index].items():
            assert shown(page.bag(who)) == bag, (index, who)
    page.click_message(1)
    screenshot(page.page, "report-long-turn-1.png")
    page.page.click("#tab-charts")
    assert page.page.locator("#chart-checks svg rect").count() >= len(SKILLS)
    screenshot(page.page, "report-long-charts.png", full=True)
    assert not page.errors and only_local(page.requests), page.errors
    page.close()


# A fight (issue 24) ----------------------------------------------------------------------------

def test_fight_report_shows_each_round_with_its_dice_and_hit_points(browser, tmp_path):
    """The report's Fights fold-out: a round per answered reply, its order with initiative,
    each attack's dice, modifier, total against defence, result and damage dice, NO TIME
    listed, hit points after the round (fixtures/chats/skirmish-fight.jsonl)."""
    game = replay.load_ruleset(FIXTURES / "rulesets/skirmish.json")
    transcript = replay.read_transcript(FIXTURES / "chats/skirmish-fight.jsonl")
    state = replay.load_party(game, FIXTURES / "parties/skirmish.json", transcript.player_name)
    out = tmp_path / "fight.html"
    out.write_text(report_html(game, transcript, state), encoding="utf-8")
    page = Page(browser, out)
    page.page.click("#tab-charts")
    fight = page.page.locator('#chart-fights details.fight[data-fight="0"]')
    assert fight.locator("summary").inner_text() == \
        "Fight 1: from message 2 (line 3), still on · 4 rounds"
    fight.locator("summary").click()
    page.page.wait_for_selector("#chart-fights details.fight[data-filled='1'] .round")
    rounds = fight.locator(".round")
    assert rounds.count() == 4
    second = fight.locator('.round[data-round="2"]')
    assert second.locator(".order").inner_text() == \
        "Order: Ada 16, Goblin 15, Brannoc 9, Rat 2 3, Rat 1 2"
    rows = second.locator("tr").all_inner_texts()
    assert rows[1].startswith("Ada → Rat 2")  # CMB-TURN-14: in the order they landed
    assert rows[2].split("\t") == ["Brannoc → Goblin", "Longsword", "14", "+ 5", "19", "13",
                                   "hit", "(7)", "10", "4/14"]
    assert rows[3].split("\t") == ["Brannoc → Goblin", "no-time"]
    assert second.locator(".hp").inner_text() == (
        "Hit points after: Ada 9/12 · Goblin 4/14 · Brannoc 12/12 · Rat 2 1/1 · Rat 1 1/1")
    screenshot(page.page, "report-fight.png", full=True)
    assert not page.errors and only_local(page.requests), (page.errors, page.requests)
    page.close()
