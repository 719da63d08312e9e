"""Plays a game through SillyTavern's own web page in headless Chromium (Python Playwright).

Only what a player does: connect in the API panel, pick the GM's card, type and send, wait for
each streamed reply to finish, swipe right on the last reply, regenerate from the options menu,
then read what the page shows. What the stage streamed back for each generation is kept too
(the response the page received), to set the live answers beside the saved chat.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHROMIUM = Path("/usr/bin/chromium")
# Without the background-networking flags Chromium keeps calling out to a closed network.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
# where the page asks for a reply: Chat Completion's route, and Text Completion's
GENERATE = ("/api/backends/chat-completions/generate", "/api/backends/text-completions/generate")


@dataclass
class Step:
    """One thing the player did and how long the reply took."""

    kind: str  # "send", "swipe", "regenerate", "continue"
    text: str  # what the player typed ("" for a swipe or regenerate)
    seconds: float
    streamed: str | None = None  # the raw event stream the page got for it, when readable


@dataclass
class Played:
    steps: list[Step] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)  # what the page shows
    errors: list[str] = field(default_factory=list)  # script errors and toasts seen
    screenshot: Path | None = None


class Table:
    """An open SillyTavern page with the GM's card chosen and the API connected.

    Waits are the page's own (``wait_for_timeout``): Playwright's sync API delivers events
    (the responses counted here) only while one of its calls runs, never during ``sleep``.
    """

    def __init__(self, page: Any, reply_timeout: float, log: Any = print,
                 api: str = "openai") -> None:
        self.page = page
        self.api = api  # the API panel: "openai" (Chat Completion), "textgenerationwebui"
        self.reply_timeout = reply_timeout
        self.log = log
        self.responses: list[Any] = []
        self.errors: list[str] = []
        page.on("response", self._on_response)
        page.on("pageerror", lambda err: self.errors.append(f"page error: {err}"))

    def _on_response(self, response: Any) -> None:
        if any(route in response.url for route in GENERATE):
            self.responses.append(response)

    # -- setting up ------------------------------------------------------------------------

    def open(self, url: str) -> None:
        self.page.goto(url, wait_until="domcontentloaded", timeout=120_000)
        self.page.wait_for_selector("#send_textarea", state="visible", timeout=120_000)
        # The page loads its settings, characters and presets after the first paint.
        self.page.wait_for_selector("#rm_print_characters_block .character_select",
                                    state="attached", timeout=120_000)
        self._close_popups()

    def _close_popups(self) -> None:
        for selector in ("#dialogue_popup_ok", ".popup-button-ok", "#shadow_popup .menu_button"):
            button = self.page.locator(selector).first
            try:
                if button.is_visible():
                    button.click(timeout=2_000)
            except Exception:  # a popup that went away by itself is fine
                pass

    def connect(self) -> str:
        """Press Connect in the API panel; returns the status text the panel shows."""
        self.page.click("#API-status-top")
        button = f"#api_button_{self.api}"
        self.page.wait_for_selector(button, state="visible", timeout=30_000)
        self.page.click(button)
        status = self.page.locator(f"#{self.api}_api .online_status_text").first
        deadline = time.monotonic() + 60
        text = ""
        # A custom endpoint shows "Status check bypassed" at once, then "Valid" once the
        # model list came back through the stage; a Text Completion connection shows the
        # model's name.
        while time.monotonic() < deadline:
            text = status.inner_text().strip() if status.count() else ""
            if text == "Valid" or (self.api != "openai" and text and "connect" not in
                                   text.lower() and "bypass" not in text.lower()):
                break
            self.page.wait_for_timeout(500)
        self.page.click("#API-status-top")  # close the panel again
        return text

    def choose(self, name: str) -> None:
        """Open the character list and click the card called ``name``."""
        drawer = self.page.locator("#right-nav-panel")
        if not drawer.is_visible():
            self.page.click("#rightNavDrawerIcon")
        card = self.page.locator(".character_select", has=self.page.locator(
            ".ch_name", has_text=name)).first
        card.click(timeout=30_000)
        self.page.wait_for_selector("#chat .mes[mesid='0']", timeout=60_000)
        if drawer.is_visible():
            self.page.click("#rightNavDrawerIcon")
        self.page.wait_for_timeout(1000)

    # -- playing ---------------------------------------------------------------------------

    def _generating(self) -> bool:
        return bool(self.page.locator("#mes_stop").is_visible())

    def _wait_reply(self, before: int) -> float:
        """Wait until a generation started after ``before`` responses has finished."""
        start = time.monotonic()
        deadline = start + self.reply_timeout
        while len(self.responses) <= before and time.monotonic() < deadline:
            self.page.wait_for_timeout(200)
        while self._generating() and time.monotonic() < deadline:
            self.page.wait_for_timeout(500)
        if time.monotonic() >= deadline:
            raise TimeoutError(f"no reply after {self.reply_timeout:.0f} s")
        self.page.wait_for_timeout(1500)  # the page saves the chat right after the reply ends
        return time.monotonic() - start

    def _streamed(self, index: int) -> str | None:
        try:
            return str(self.responses[index].text())
        except Exception as err:  # reported, not fatal
            self.errors.append(f"stream {index} not readable: {err}")
            return None

    def send(self, text: str) -> Step:
        before = len(self.responses)
        self.page.fill("#send_textarea", text)
        self.page.click("#send_but")
        seconds = self._wait_reply(before)
        return Step("send", text, seconds, self._streamed(before))

    def swipe(self) -> Step:
        """Swipe right on the last reply: a new reply in its place."""
        before = len(self.responses)
        last = self.page.locator("#chat .last_mes")
        last.hover()
        last.locator(".swipe_right").click()
        seconds = self._wait_reply(before)
        return Step("swipe", "", seconds, self._streamed(before))

    def regenerate(self) -> Step:
        """Options menu, Regenerate: the last reply written again."""
        before = len(self.responses)
        self.page.click("#options_button")
        self.page.click("#option_regenerate")
        seconds = self._wait_reply(before)
        return Step("regenerate", "", seconds, self._streamed(before))

    def continue_reply(self) -> Step:
        """Options menu, Continue: the last reply written on."""
        before = len(self.responses)
        self.page.click("#options_button")
        self.page.click("#option_continue")
        seconds = self._wait_reply(before)
        return Step("continue", "", seconds, self._streamed(before))

    # -- reading ---------------------------------------------------------------------------

    def messages(self) -> list[dict[str, Any]]:
        """Every message the page shows: its index, who wrote it and its rendered text."""
        return list(self.page.eval_on_selector_all(
            "#chat .mes",
            """els => els.map(el => ({
                mesid: Number(el.getAttribute('mesid')),
                is_user: el.getAttribute('is_user') === 'true',
                is_system: el.getAttribute('is_system') === 'true',
                name: (el.querySelector('.name_text') || {}).innerText || '',
                swipe: (el.querySelector('.swipes-counter') || {}).innerText || '',
                text: (el.querySelector('.mes_text') || {}).innerText || '',
            }))""",
        ))

    def toasts(self) -> list[str]:
        return [t.strip() for t in self.page.locator("#toast-container .toast").all_inner_texts()]


def play(url: str, character: str, turns: list[str], *, swipe_after: int, regenerate_after: int,
         reply_timeout: float, workdir: Path, log: Any = print, continue_after: int = 0,
         api: str = "openai") -> Played:
    """Play ``turns``; swipe after turn ``swipe_after``, regenerate after ``regenerate_after``
    and continue the reply after ``continue_after`` (1-based; 0 for none)."""
    from playwright.sync_api import sync_playwright

    played = Played()
    profile = workdir / "chromium-profile"
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(profile), executable_path=str(CHROMIUM), args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 1000})
        page = context.pages[0] if context.pages else context.new_page()
        table = Table(page, reply_timeout, log, api)
        try:
            table.open(url)
            status = table.connect()
            log(f"  API status: {status!r}")
            table.choose(character)
            for number, text in enumerate(turns, 1):
                step = table.send(text)
                played.steps.append(step)
                log(f"  turn {number}: {step.seconds:.0f} s")
                if number == swipe_after:
                    step = table.swipe()
                    played.steps.append(step)
                    log(f"  swipe: {step.seconds:.0f} s")
                if number == regenerate_after:
                    step = table.regenerate()
                    played.steps.append(step)
                    log(f"  regenerate: {step.seconds:.0f} s")
                if number == continue_after:
                    step = table.continue_reply()
                    played.steps.append(step)
                    log(f"  continue: {step.seconds:.0f} s")
            page.wait_for_timeout(2000)
            played.messages = table.messages()
        finally:
            try:
                played.screenshot = workdir / "sillytavern.png"
                page.screenshot(path=str(played.screenshot), full_page=False)
                played.errors = table.errors + table.toasts()
                if not played.messages:
                    played.messages = table.messages()
            except Exception as err:
                played.errors.append(f"could not read the page at the end: {err}")
            context.close()
    return played
