"""What the GM is told before it writes its next reply: instructions for the commands this
ruleset has, and the state blocks (INVENTORY, ...) read from the state at that moment."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..actions import use
from ..actions.answers import Answer
from ..actions.describe import attack_line, charges_text, effect_text, item_line, use_text
from ..actions.examples import Party, example, party_of, plain_item
from ..actions.fight import teach_fight
from ..actions.market import market_block
from ..actions.money import cost_text, purse_line
from ..actions.placing import weight_text
from ..actions.reply import ACTIONS
from ..rules.bags import item_of
from ..rules.carry import load, thresholds
from ..rules.game import Game
from ..rules.gear import binding_max, slots_in_use
from ..rules.items import effect_part
from ..rules.memo import IdentityMemo, reuse_ends, shared_ends
from ..rules.state import Character, Stack, State
from ..rules.tracks import penalty_for, track_max, track_value
from ..ruleset import Item
from .fight.block import combat_block

# Said when the stage answers each tag as the model finishes it (the game option
# "resolve": "mid-reply"). Kept generic: how the stage shows an answer to the model may change.
MID_REPLY_LINE = (
    "Each tag is answered the moment you close its bracket: go on with the story from the "
    "result gmtags wrote into it and narrate what it says, never the result you expected. "
    "Write a place tag only as the first tag of a reply.")

# What a small model got wrong with instructions written for strong ones: it copies what it
# is shown (an answer part, a list of alternatives, whatever follows a tag on its line), writes
# tags alone, and puts any words in square brackets.
OPENING = ("You are the game master. Tell the story in prose; when something in the game "
           "changes, write one tag for it inside the story: gmtags answers the tag with the "
           "rules and dice.")
NARRATE_LINE = ("- Write a sentence or two of story around every tag, never tags alone; no tag "
                "when nothing changes.")
# Never the answer part's syntax: a small model copies what it is shown, even as a warning.
ANSWER_LINE = ("- Write each tag in square brackets exactly as the examples show and nothing "
               "more: gmtags writes the result into the tag itself.")
# The kinds by name alone: ``[inventory:]`` is a tag a model would copy as it stands.
ONLY_TAGS_LINE = ("- Only these tags exist: {kinds}. Never put other words in square "
                  "brackets.")

# What each tag is for, in the words of the reminder a model reads right before it replies.
KIND_USES = {
    "place": "a place with a market",
    "inventory": "items and money",
    "loot": "searching a body or cache",
    "skill_check": "a risky act",
    "combat": "a fight's start or end",
    "attack": "a blow in a fight",
}

_EXAMPLE_TAG = re.compile(r"\[[a-z_]+: [^\]\n]*\]")


def tag_last(line: str) -> str:
    """An instruction line laid out with its example tag last: what the words after a tag
    say goes before it. A small model that copies an example tag goes on with whatever follows
    it on its line — ``(save="Steel" or ability="Brawn" instead of skill=)`` after a check,
    the rank ladder after a fight's start — so nothing may follow it. A line without a tag,
    or ending with one, is as it was (but for a full stop after it)."""
    found = _EXAMPLE_TAG.search(line)
    if found is None:
        return line
    head, tail = line[:found.start()], line[found.end():]
    tail = tail.strip().lstrip(":;,").strip().rstrip(".").strip()
    if tail.startswith("(") and tail.endswith(")") and tail.count("(") == 1:
        tail = tail[1:-1]
    if not tail:
        return line[:found.end()]
    return f"{head.rstrip().rstrip(':').rstrip()} ({tail}): {found.group()}"


def example_reply(game: Game, party: Party) -> list[str]:
    """One reply as it should read, story around its tag, filled with an everyday item of
    the catalog (:func:`~engine.actions.examples.plain_item`): a small model writes the way
    it is shown a reply written far more readily than the way it is told to. None without
    such an item."""
    item = plain_item(game)
    if item is None:
        return []
    tag = example("inventory", action="add", item=item.label, who=party.hero)
    # Nothing after the tag: a small model copies an example's words too, and what follows a
    # tag is the story of its result, which the example cannot know.
    return [f"- A reply looks like this: A {item.label.casefold()} lies by the door, worn "
            f"but sound. {tag}"]


def taught_kinds(lines: Sequence[str]) -> list[str]:
    """The tag kinds the instruction ``lines`` show, in the order they first appear."""
    kinds: list[str] = []
    for line in lines:
        for found in _EXAMPLE_TAG.finditer(line):
            kind = found.group()[1:found.group().index(":")]
            if kind not in kinds:
                kinds.append(kind)
    return kinds


def taught_lines(game: Game, party: Party, fighting: bool = False) -> list[str]:
    """The line each declared action teaches, only for the commands this ruleset answers
    (ITM-CMD-3, ITM-MONEY-10), each with an example tag filled from the ruleset and
    ``party``'s names (:func:`~engine.actions.examples.party_of`), laid out with the tag last
    (:func:`tag_last`); with ``fighting``, how to fight
    (:func:`~engine.actions.fight.teach_fight`) after them."""
    taught: list[str] = []
    for declared in ACTIONS.values():
        if declared.teach is not None and (declared.needs is None or declared.needs.test(game)):
            taught += declared.teach(game, party)
    return [tag_last(line) for line in (taught + teach_fight(game, party) if fighting
                                        else taught)]


def instructions(game: Game, mid_reply: bool = False, party: Party | None = None,
                 fighting: bool = False) -> str:
    """The GM instructions: how to write tags, one reply as it should read
    (:func:`example_reply`), the kinds of tag there are, then :func:`taught_lines`; with
    ``mid_reply``, that each tag's answer appears right after it (:data:`MID_REPLY_LINE`).
    Names and ruleset only, never a bag: the text stays the same from turn to turn."""
    party = party if party is not None else Party()
    # The kinds line is the same in a fight and out of one, so that a fight's start only
    # adds lines at the end and a model server keeps the prompt before them.
    taught = taught_lines(game, party)
    fight = [tag_last(line) for line in teach_fight(game, party)]
    peace = taught_kinds(taught)
    more = [k for k in taught_kinds(fight) if k not in peace]
    kinds = ", ".join(peace) + (f" and, in a fight, {', '.join(more)}" if more else "")
    lines = [OPENING, NARRATE_LINE, *example_reply(game, party), ANSWER_LINE,
             ONLY_TAGS_LINE.format(kinds=kinds)]
    if mid_reply:
        lines.append(MID_REPLY_LINE)
    return "\n".join(lines + taught + (fight if fighting else []))


def reply_reminder(game: Game, state: State) -> str:
    """The last line before the player's message, where a small model looks most: what a
    reply is and, for each kind of tag the instructions teach at this point of the game, its
    first example tag and what it is for (:data:`KIND_USES`) — a small model writes the tags
    it sees written, not the ones it is told about; without them here it writes story alone.
    Names and ruleset only, like the instructions."""
    first: dict[str, str] = {}
    for line in taught_lines(game, party_of(state), state.encounter is not None):
        for found in _EXAMPLE_TAG.finditer(line):
            kind = found.group()[1:found.group().index(":")]
            if kind in KIND_USES:
                first.setdefault(kind, found.group())
    uses = "; ".join(f"{tag} for {KIND_USES[kind]}" for kind, tag in first.items())
    return ("Now reply to the player: a few sentences of story, and where the game changes, "
            f"the one tag that fits ({uses}). Never repeat these blocks.")


def stack_line(game: Game, state: State, stack: Stack) -> str:
    """One stack as the GM sees it: the item line, count, what it does, charges, cost."""
    item = item_of(game, state, stack.item)
    if item is None:
        return f"- {stack.name} ×{stack.count}"
    shown = item_of(game, state, stack.shows_as) if stack.shows_as is not None else None
    parts = [f"- {item_line(game, stack.name, shown or item)} ×{stack.count}"]
    marks = [word for word, on in (("equipped", stack.equipped), ("bound", stack.bound),
                                   ("on", stack.toggled)) if on]
    extras = [", ".join(marks)] if marks else []
    if shown is not None:  # ITM-FAKE-10: the truth, and the name to keep using
        entry = game.items.get(stack.item or "")
        really = entry.label if entry is not None else stack.item
        extras.append(f"FAKE: really {really}; keep calling it {stack.name}")
    if stack.suspected_by:  # ITM-INSP-4
        extras.append(" and ".join(stack.suspected_by)
                      + (" thinks" if len(stack.suspected_by) == 1 else " think")
                      + " it's a fake")
    for which in ("worn", "carried"):  # ITM-SHOW-4
        text = effect_text(game, effect_part(item, which))
        if text:
            extras.append(f"{which}: {text}")
    attack = attack_line(game, item)  # ITM-WPN-31
    if attack:
        extras.append(attack)
    used = use_text(game, item)  # ITM-USE-25
    if used:
        extras.append(f"use {used}")
    charges = charges_text(item, stack)
    if charges:
        extras.append(charges)
    if item.cost is not None and item.cost.unit in game.coins:  # ITM-MONEY-7
        extras.append(cost_text(game, item.cost))
    return parts[0] + (f" ({'; '.join(extras)})" if extras else "")


def bearer_lines(game: Game, state: State, character: Character) -> list[str]:
    """ITM-CMD-4: a character's load, slots in use and bound items."""
    block = game.ruleset.items
    lines: list[str] = []
    if block is None:
        return lines
    if block.carry is not None:  # ITM-CARRY-2/3, ITM-BLOCK-20
        above, limit = thresholds(game, character)
        carried = load(game, state, character)
        text = f"  load {weight_text(game, carried)}"
        if above is not None:
            text += f", encumbered above {weight_text(game, above)}"
        if limit is not None:
            text += f", limit {weight_text(game, limit)}"
        if above is not None and carried > above:
            text += " (encumbered)"
        lines.append(text)
    if block.slots:  # ITM-SLOT-3
        used = slots_in_use(game, state, character)
        lines.append("  slots: " + ", ".join(f"{s.label} {used.get(s.id, 0)}/{s.count}"
                                             for s in block.slots))
    if block.binding is not None:  # ITM-BIND-1
        bound = [s.name for s in character.bag if s.bound]
        lines.append(f"  {block.binding.label}: {len(bound)} of {binding_max(game, character)}"
                     + (f" ({', '.join(bound)})" if bound else ""))
    return lines


def sheet_block(game: Game, state: State) -> str:
    """The SHEET block: each character's live sheet as the GM should narrate it
    (:func:`live_sheet`) and their conditions. Empty for a ruleset with no pools or tracks
    whose characters have no conditions."""
    conditions = {c.id: c.label for c in game.ruleset.conditions}
    lines = []
    for character in state.characters:
        parts = live_sheet(game, state, character)
        if character.conditions:
            parts.append("conditions: " + ", ".join(
                conditions.get(c, c) for c in dict.fromkeys(character.conditions)))
        if parts:
            lines.append(f"{character.name}: " + "; ".join(parts))
    return "\n".join(["SHEET", *lines]) if lines else ""


def live_sheet(game: Game, state: State, character: Character) -> list[str]:
    """A character's pools (``Grit 6/11 (+2 temporary)``, ITM-OUT-4) and health and wound
    tracks with the penalty their marks give (``Wounds 2/5 (-1 on checks; -1 on saves)``,
    ITM-OUT-3, ITM-OUT-11; gmtags applies it to every check itself), as the GM and the
    report show them."""
    live = game.ruleset.live
    parts = [_pool_text(game, state, character, pool.id, pool.label) for pool in live.pools]
    for track in live.tracks:
        now = track_value(game, character, state, track)
        text = f"{track.label} {now}/{track_max(game, character, state, track)}"
        penalty = penalty_for(track, now) if track.kind == "wounds" else None
        if penalty is not None:
            dumped = penalty.model_dump(mode="json", by_alias=True, exclude_none=True)
            text += f" ({effect_text(game, dumped)})"
        parts.append(text)
    return parts


def _pool_text(game: Game, state: State, character: Character, pool: str, label: str) -> str:
    most = use.pool_max(game, character, state, pool)
    text = f"{label} {character.pools.get(pool, most)}/{most}"
    temporary = character.pools.get(f"{pool}:temporary", 0)  # ITM-OUT-4
    return text + (f" (+{temporary} temporary)" if temporary else "")


BAGS_PER_FIRST_STACK = 4  # bags remembered per first stack: chats of one game share theirs


class StackLines:
    """:func:`stack_line`, remembered per stack for a caller that renders the same state many
    times over (the stage, once per request). A stack's line depends only on the game, the
    stack and the items its ``item`` and ``shows_as`` name, all immutable, so a line is reused
    only when those are the very same objects — found without looking the items up while the
    state's invented items are the very tuple the line was written with (the catalog is the
    game's). At most ``size`` lines; then it starts over."""

    def __init__(self, size: int = 16_384) -> None:
        self.size = size
        self._lines: dict[int, tuple[Game, Stack, Item | None, Item | None, object, str]] = {}
        # first stack -> the last bags rendered that began with it, newest last: (game, invented
        # items, the bag, the line of each of its stacks, "" for a coin); see :meth:`bag_lines`
        self._bags: IdentityMemo[list[tuple[Game, object, tuple[Stack, ...], list[str]]]] = (
            IdentityMemo(256))

    def __call__(self, game: Game, state: State, stack: Stack) -> str:
        found = self._lines.get(id(stack))
        if found is not None and (found[1] is not stack or found[0] is not game):
            found = None  # another stack or game that had this id
        if found is not None and found[4] is state.invented:
            return found[5]  # the same items, without looking them up again
        item = item_of(game, state, stack.item)
        shown = item_of(game, state, stack.shows_as) if stack.shows_as is not None else None
        if found is not None and found[2] is item and found[3] is shown:
            line = found[5]
        else:
            line = stack_line(game, state, stack)
        if len(self._lines) >= self.size:
            self._lines.clear()
        self._lines[id(stack)] = (game, stack, item, shown, state.invented, line)
        return line

    def bag_lines(self, game: Game, state: State, bag: tuple[Stack, ...]) -> list[str]:
        """The line of each stack of ``bag`` that is not a coin, in bag order. A changed bag
        shares most stacks with a bag rendered before that began with the same stack: the runs
        it shares at both ends keep their lines (found by identity in C loops),
        while the game and the state's invented items are the same. The chats of one game
        begin with the same stacks (the party's), so the last :data:`BAGS_PER_FIRST_STACK`
        such bags are kept and the one sharing the most stacks at its ends is used."""
        if not bag:
            return []
        recent = self._bags.get((bag[0],)) or []
        base: tuple[Game, object, tuple[Stack, ...], list[str]] | None = None
        shared = -1
        for entry in recent:
            if entry[0] is game and entry[1] is state.invented:
                ends = sum(shared_ends(entry[2], bag))
                if ends > shared:
                    base, shared = entry, ends
        if base is not None:
            lines = reuse_ends(base[2], base[3], bag,
                               lambda stack: self._line_or_coin(game, state, stack))
        else:
            lines = [self._line_or_coin(game, state, s) for s in bag]
        # The bag this one changed (they share at least half their stacks) is superseded; a
        # bag of another chat that only begins the same way is kept for that chat.
        superseded = base if base is not None and 2 * shared >= len(bag) else None
        kept = [entry for entry in recent if entry is not superseded]
        kept = kept[max(0, len(kept) + 1 - BAGS_PER_FIRST_STACK):]
        self._bags.put((bag[0],), [*kept, (game, state.invented, bag, lines)])
        return list(filter(None, lines))

    def _line_or_coin(self, game: Game, state: State, stack: Stack) -> str:
        return "" if stack.coin is not None else self(game, state, stack)


def inventory_block(game: Game, state: State, lines_of: StackLines | None = None) -> str:
    """The INVENTORY block: every bag (the player's always listed), stacks and purse."""
    lines = ["INVENTORY"]
    for character in state.characters:
        lines.append(f"{character.name} ({purse_line(game, character, state)}):")
        lines += bearer_lines(game, state, character)
        if lines_of is not None:
            stacks = lines_of.bag_lines(game, state, character.bag)
        else:
            stacks = [stack_line(game, state, s) for s in character.bag if s.coin is None]
        lines += stacks or ["- nothing"]
    return "\n".join(lines)


def last_answers_block(answers: Sequence[Answer]) -> str:
    """What the engine answered to the tags of the GM's previous reply."""
    if not answers:
        return ""
    lines = ["LAST ANSWERS"]
    for answer in answers:
        status = "ok" if answer.ok else f"refused ({answer.reason})"
        lines.append(f"- [{answer.tag.kind}] {status}: {answer.text}")
    return "\n".join(lines)


def state_context(game: Game, state: State, lines_of: StackLines | None = None,
                  mid_reply: bool = False) -> str:
    """The GM section's blocks that depend on the state alone: instructions, inventory, sheet,
    market and, in a fight, COMBAT (:func:`~engine.text.fight.combat_block`, with the combat
    lines of the instructions), separated by blank lines (``lines_of``: remembered stack
    lines to reuse, see :class:`StackLines`; ``mid_reply``: see :func:`instructions`)."""
    blocks = [instructions(game, mid_reply, party_of(state)),
              inventory_block(game, state, lines_of), sheet_block(game, state),
              market_block(game, state), combat_block(game, state)]
    return "\n\n".join(block for block in blocks if block)


def front_context(game: Game, state: State, mid_reply: bool = False) -> str:
    """The part of the GM section that changes rarely: the instructions and, while a fight is
    on, how to fight (:func:`~engine.actions.fight.teach_fight`). Between a fight's start and
    its end it reads the same on every turn, so a model server can keep the prompt up to it."""
    return instructions(game, mid_reply, party_of(state), state.encounter is not None)


def turn_context(game: Game, state: State, lines_of: StackLines | None = None) -> str:
    """The part of the GM section that changes from turn to turn: INVENTORY, SHEET, MARKET and
    the COMBAT block without its instruction lines (those are in :func:`front_context`)."""
    blocks = [inventory_block(game, state, lines_of), sheet_block(game, state),
              market_block(game, state), combat_block(game, state, teach=False)]
    return "\n\n".join(block for block in blocks if block)


def gm_context(game: Game, state: State, last_answers: Sequence[Answer] = (),
               lines_of: StackLines | None = None) -> str:
    """The whole GM section for the next prompt: :func:`state_context`, then what the engine
    answered to the GM's previous reply."""
    return with_last_answers(state_context(game, state, lines_of), last_answers)


def with_last_answers(state_text: str, last_answers: Sequence[Answer]) -> str:
    """A state's blocks (never empty: the instructions) and the LAST ANSWERS block after them."""
    answers = last_answers_block(last_answers)
    return f"{state_text}\n\n{answers}" if answers else state_text
