"""``apply_reply``: the reducer that answers every tag of one GM reply (docs/design.md#data-flow).

Each capability declares the tag actions it answers (:mod:`engine.actions.declare`);
:data:`ACTIONS` is their table, so answering a tag is a lookup, not an if-chain.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import itemgetter

from tagparse import Tag
from tagparse.heads import Vocabulary

from ..rules import reasons
from ..rules.context import TurnContext
from ..rules.fakes import settle_fakes
from ..rules.game import Game
from ..rules.state import State
from . import bags, checks, fakes, fight, gear, loot, market, money, rest, use
from .answers import ANSWERED, Answer, refused
from .declare import FIRST, LAST, ROUND, Action, Request, table

# The most tags one reply gets answered; the rest are refused unapplied, so a reply of 100,000
# tags costs linear time, not 100,000 state changes.
MAX_TAGS_PER_REPLY = 500

# The most times one reply gets the same tag answered (its kind and attributes, in any order):
# a GM may mean the same thing two or three times in a reply (two arrows, three torches), a
# small model in a loop writes it dozens of times. Later copies are refused unapplied, and the
# stage ends a reply at the first of them, so the saved chat never holds one. Not [attack:]:
# a hero with four attacks writes one tag four times, and the round's attacks bound them
# (CMB-TURN-9/10: a strike past them is refused no-time).
MAX_REPEATS = 3
REPEATS_BOUNDED_ELSEWHERE = frozenset({"attack"})

# The declared actions, in the order the GM is taught them (engine.text.prompt.instructions).
ACTIONS: dict[tuple[str, str | None], Action] = table(
    bags.add, bags.remove, money.pay, money.earn, gear.set_count, gear.give, gear.equip,
    gear.unequip, gear.bind, gear.unbind, loot.roll_tag, checks.skill_check, market.place,
    market.buy, market.sell, use.use_tag, rest.rest_tag, fakes.reveal, fakes.inspect,
    *fight.ACTIONS,
)

# The step of a reply that applies an action declared with each phase (see _phase).
PHASE_STEP: dict[str | None, int] = {FIRST: 1, ROUND: 2, LAST: 4}

# The attribute that names the action of a tag kind that has several.
ACTION_ATTRIBUTE = {"inventory": "action", "sheet": "op", "combat": "op"}
# A tag kind without such an attribute whose one other action is the tag with this attribute
# written: [attack: use="Fire Bolt"] is a sheet ability's use, not a weapon's strike.
SELECTED_BY = {"attack": "use"}

# The actions each tag kind has; an action that exists but is not answered would be refused
# "unsupported" rather than "unknown-action", so the GM is not told a real command is wrong.
KNOWN_ACTIONS: dict[str, frozenset[str]] = {
    kind: frozenset(name for (k, name) in ACTIONS if k == kind and name is not None)
    for kind in ACTION_ATTRIBUTE
}

# Attributes only the engine writes (results): ignored when a model writes them in a request.
ENGINE_ONLY = frozenset({
    "ok", "reason", "text", "outcome", "rolls", "total", "success", "price", "dc_met",
    "net", "successes", "critical", "record", "result", "roll", "hit", "damage", "hp",
})

# The attributes each (kind, action) reads with each of its requests (an [attack:] reads its
# kind of combat's), and the attribute naming the action; anything else is ignored and reported.
READS: dict[tuple[tuple[str, str | None], type[Request]], frozenset[str]] = {
    (key, request): declared.reads(request) | {ACTION_ATTRIBUTE.get(key[0], key[0])}
    for key, declared in ACTIONS.items() for _, request in declared.requests()
}

# The tags there are, for reading a tag a model wrote under a wrong head (tagparse.heads):
# what a (kind, action) reads with any of its requests.
VOCABULARY = Vocabulary(
    {key: frozenset().union(*(reads for (k, _), reads in READS.items() if k == key))
     for key in ACTIONS}, ACTION_ATTRIBUTE)

# The reads with no engine-only attribute among them: a tag naming only these needs no note.
PLAIN_READS = {key: reads for key, reads in READS.items() if ENGINE_ONLY.isdisjoint(reads)}


def _key(tag: Tag) -> tuple[str, str | None]:
    attribute = ACTION_ATTRIBUTE.get(tag.kind)
    if attribute is None:
        selector = SELECTED_BY.get(tag.kind)
        if selector is not None and (tag.get(selector) or "").strip():
            return (tag.kind, selector)
        return (tag.kind, None)
    action = (tag.get(attribute) or "").strip().lower()
    if not action and tag.kind == "inventory" and tag.get("items") is not None:
        return ("inventory", "add")  # models write [inventory: items="Bronze Key, Map"] to add them
    if not action and tag.kind == "combat" and any(
            (tag.get(name) or "").strip() for name in fight.LEGACY_FOES):
        return ("combat", "start")  # models write [combat: enemies="Goblin, Skeleton"] to start
    return (tag.kind, action)


def _unknown_action(tag: Tag, kind: str, attribute: str, action: str) -> Answer:
    """An action that does not exist, or the instructions' template copied as it stands
    (``action="add | remove"``, as models do): refused, saying which and what to write."""
    known = KNOWN_ACTIONS[kind]
    choices = [part.strip() for part in action.replace("/", "|").split("|")]
    if len(choices) > 1 and all(choice in known for choice in choices):
        return refused(tag, reasons.UNKNOWN_ACTION,
                       f'{attribute}="{action[:40]}" is the template, not an {attribute}: write '
                       f'one of them, e.g. [{kind}: {attribute}="{choices[0]}" ...] with real '
                       "values; nothing was done.")
    return refused(tag, reasons.UNKNOWN_ACTION,
                   f'{attribute}="{action[:40]}" is not an {attribute} of [{kind}:] '
                   f"(use one of: {', '.join(sorted(known))}).")


def _notes(tag: Tag, key: tuple[str, str | None], request: type[Request]) -> tuple[str, ...]:
    """What the answer says of each attribute written that ``request`` does not read."""
    plain = PLAIN_READS.get((key, request))
    if plain is not None and plain.issuperset(map(itemgetter(0), tag.attrs)):
        return ()  # the common case: every attribute is one the handler reads
    reads = READS.get((key, request))
    notes = []
    for name, _ in tag.attrs:
        if reads is not None and name in reads:
            continue  # an attribute the action reads is the GM's to write (outcome= of an end)
        if name in ENGINE_ONLY:
            notes.append(f'ignored "{name}": the engine works that out itself')
        elif reads is not None and name not in reads:
            notes.append(f'ignored unknown attribute "{name}"')
    return tuple(dict.fromkeys(notes))


def action_of(tag: Tag) -> Action | None:
    """The declared action a tag asks for, or None when there is none."""
    return ACTIONS.get(_key(tag))


def answer_tag(game: Game, state: State, tag: Tag, ctx: TurnContext) -> tuple[State, Answer]:
    """Answer one tag: malformed, unknown or not yet supported tags are refused, not raised."""
    if tag.malformed is not None:
        return state, refused(tag, reasons.MALFORMED,
                              f"This tag could not be read ({tag.malformed}); nothing was done.")
    key = _key(tag)
    declared = ACTIONS.get(key)
    if declared is None:
        kind, action = key
        attribute = ACTION_ATTRIBUTE.get(kind)
        if attribute is not None and action not in KNOWN_ACTIONS.get(kind, frozenset()):
            return state, _unknown_action(tag, kind, attribute, action or "")
        what = f"{kind} {attribute}={action!s}" if attribute else kind
        return state, refused(tag, reasons.UNSUPPORTED,
                              f"[{what}] is not answered by this version of gmtags; "
                              "nothing was done.")
    new_state, answer = declared.answer(game, state, tag, ctx)
    if new_state is not state:
        # ITM-FAKE-12/18: after an inventory change a bound fake, or one the sheet gives
        # away, is found out.
        new_state = settle_fakes(game, new_state, ctx, before=state)
    notes = _notes(tag, key, declared.request_of(game))
    if notes:
        answer = answer.model_copy(update={"notes": answer.notes + notes})
    return new_state, answer


def _phase(tag: Tag) -> int:
    """Which step of the reply applies the tag (docs/design.md#rounds-and-order) — 0 ``[place:]``,
    then as its action is declared (:data:`PHASE_STEP`): 1 ``phase="first"``, 2 ``"round"``, 3 every
    other tag, 4 ``"last"``."""
    if tag.kind == "place":
        return 0
    declared = ACTIONS.get(_key(tag))
    return PHASE_STEP.get(declared.phase if declared is not None else None, 3)


# The answer part's mark of a tag answered before the rest of its reply was written (the stage's
# mid-reply answers): ``[skill_check: ... | ok="true" text="..." answered="mid-reply"]``. The model
# read that answer and wrote on from it, so the fold answers the tags up to it before the tags after
# it (see :func:`apply_reply`).
MID_REPLY = (ANSWERED, "mid-reply")
FIGHT_KINDS = frozenset({"combat", "attack"})  # answered as one round


def may_stop(tags: Sequence[Tag], index: int) -> bool:
    """Whether ``tags[index]`` may be answered before the rest of its reply is written, the answer
    the same whatever follows (docs/design.md#rounds-and-order): a tag the engine answers, not a
    fight tag (a round is answered whole), not after the reply's first fight tag, and a ``[place:]``
    only as the reply's first tag (a later one is resolved before the tags before it)."""
    tag = tags[index]
    if tag.malformed is not None or tag.kind in FIGHT_KINDS or action_of(tag) is None:
        return False
    if index >= MAX_REPEATS and index in repeats(tags[:index + 1]):
        return False
    if any(earlier.kind in FIGHT_KINDS for earlier in tags[:index]):
        return False
    return tag.kind != "place" or index == 0


def same_tag(tag: Tag) -> tuple[str, tuple[tuple[str, str], ...] | str]:
    """What makes two tags of a reply the same tag (:data:`MAX_REPEATS`): the kind and the
    attributes in any order; a malformed tag by its text."""
    if tag.malformed is not None:
        return tag.kind, tag.raw
    return tag.kind, tuple(sorted(tag.attrs))


def repeats(tags: Sequence[Tag]) -> frozenset[int]:
    """The tags of a reply written after the same tag was written :data:`MAX_REPEATS` times."""
    if len(tags) <= MAX_REPEATS:
        return frozenset()
    seen: dict[tuple[str, tuple[tuple[str, str], ...] | str], int] = {}
    over = []
    for index, tag in enumerate(tags):
        if tag.kind in REPEATS_BOUNDED_ELSEWHERE:
            continue
        key = same_tag(tag)
        seen[key] = seen.get(key, 0) + 1
        if seen[key] > MAX_REPEATS:
            over.append(index)
    return frozenset(over)


def repeat_refusal(tag: Tag) -> Answer:
    """The answer to a tag past :data:`MAX_REPEATS` copies in its reply: nothing is done."""
    return refused(tag, reasons.REPEATED_TAG,
                   f"The same tag was already answered {MAX_REPEATS} times in this reply; this "
                   "copy was not applied. Write a tag once for each thing that happens.")


def settled(tags: Sequence[Tag]) -> tuple[int, ...]:
    """The tags a reply's text marks as answered mid-reply (:data:`MID_REPLY` in their answer
    part) where a reply may be stopped; a mark anywhere else (a fight tag, a model copying
    the mark) is read as no mark."""
    return tuple(index for index, tag in enumerate(tags)
                 if tag.answer is not None and MID_REPLY in tag.answer and may_stop(tags, index))


def _segments(count: int, stops: Sequence[int]) -> list[range]:
    """``range(count)`` cut after each stop."""
    cuts = sorted({stop + 1 for stop in stops if 0 <= stop < count - 1})
    return [range(start, end) for start, end in zip([0, *cuts], [*cuts, count], strict=True)]


def mark_mid_reply(answer: Answer) -> Answer:
    """The answer of a tag answered mid-reply: its record says so, and so its answer part."""
    return answer.model_copy(update={"record": {**answer.record, MID_REPLY[0]: MID_REPLY[1]}})


def apply_reply(game: Game, state: State, tags: Sequence[Tag], ctx: TurnContext,
                stops: Sequence[int] | None = None) -> tuple[State, list[Answer]]:
    """Answer one GM reply's tags against the state at the start of the turn.

    ``[place:]`` tags are resolved first (buy and sell price at the place that holds at the end of
    the reply); then ``[combat:]`` start/join/condition/defend, in text order; then the
    ``[attack:]`` tags in the initiative order of their attackers (CMB-TURN-6..8/14; one attacker's
    attacks in text order), and with them, in a formula fight, each ``[inventory: action="use"]``
    that acts in it by its user's place (docs/rules/items.md#13-using-items-in-combat); then every
    other tag in text order; then ``[combat: op="end"]`` (docs/design.md#rounds-and-order). Returns
    the new state and one answer per tag, in the order of ``tags``. Pure: the input state is never
    mutated.

    A reply answered mid-reply is answered in parts: the tags up to each tag it was stopped at, in
    the order above, before the tags after it — the model wrote what follows knowing that answer, so
    a ``[place:]`` or a fight written later does not move before it. ``stops`` are those tags (the
    stage knows them); None reads them from the text (:func:`settled`). A stop's answer carries
    :data:`MID_REPLY`. Only a tag :func:`may_stop` allows is a stop, so a round is never cut.
    """
    if stops is None:
        stops = settled(tags) if any(tag.answer is not None for tag in tags) else ()
    else:
        stops = [stop for stop in stops if 0 <= stop < len(tags) and may_stop(tags, stop)]
    if len(tags) == 1:  # the common reply: one tag, nothing to order
        after, answer = answer_tag(game, state, tags[0], ctx.for_tag(0))
        answer = mark_mid_reply(answer) if stops else answer
        return fight.end_of_round(game, state, after, [answer], ctx)
    before = state
    over = repeats(tags)
    answers: list[Answer | None] = [None] * len(tags)
    ordinals: dict[str, int] = {}
    position = 0
    for segment in _segments(len(tags), stops):
        phases: list[list[int]] = [[], [], [], [], []]
        for index in segment:
            phases[_phase(tags[index])].append(index)
        for phase, indexes in enumerate(phases):
            if phase == 2 and fight.uses_in_round(game, state):
                # ITM-USE: in a formula fight a use aimed at the other side or at target= acts in
                # the round, among the attacks by its user's initiative (engine/actions/use.py)
                used = [i for i in phases[3] if _key(tags[i]) == ("inventory", "use")
                        and use.acts_in_fight(game, state, tags[i])]
                phases[3] = [i for i in phases[3] if i not in used]
                indexes = sorted([*indexes, *used])
            if phase == 2 and len(indexes) > 1:  # the encounter as start and join left it
                ranks = {i: fight.attacker_rank(game, state, tags[i]) for i in indexes}
                indexes = sorted(indexes, key=lambda i: (ranks[i], i))
            for index in indexes:
                tag = tags[index]
                if index in over:
                    answers[index] = repeat_refusal(tag)
                elif position >= MAX_TAGS_PER_REPLY:
                    answers[index] = refused(tag, reasons.TOO_MANY_TAGS,
                                             f"Only the first {MAX_TAGS_PER_REPLY} tags of a "
                                             "reply are answered; this one was not applied.")
                else:
                    ordinal = ordinals.get(tag.kind, 0)
                    ordinals[tag.kind] = ordinal + 1
                    state, answers[index] = answer_tag(game, state, tag, ctx.for_tag(ordinal))
                position += 1
    for stop in stops:
        stopped = answers[stop]
        assert stopped is not None
        answers[stop] = mark_mid_reply(stopped)
    return fight.end_of_round(game, before, state, [a for a in answers if a is not None], ctx)
