"""The figures of a model game, computed from what the stage returned.

Everything here reads the reply text as the player got it and the ``gmtags`` metadata beside
it; nothing asks the stage how it did. The one rule the figures borrow from gmtags is how an
answer part is written (``engine.answer_attrs`` and ``tagparse.render``, as
``replay/stage/answering.py`` ``answer_part`` writes it), so that "an answer part gmtags did not
write" means: not the very text gmtags writes for the answer its metadata reports.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import tagparse
from engine import Answer, answer_attrs

Json = Mapping[str, Any]

# The opening of an answer part wherever it is: ``ok=`` or ``answered=``, any case.
FRAGMENT = re.compile(r"(?<![\w-])(?:ok|answered)\s*=", re.IGNORECASE)
# A head shaped like a tag's: "[", a word (or up to three), ":". tags.lark reads one of its
# kinds in any case with spaces around; any other word is prose to gmtags.
HEAD = re.compile(r"\[\s*([A-Za-z][\w-]*(?: [A-Za-z][\w-]*){0,2})\s*:")
# What ends an answer part outside its quoted values.
PART_END = frozenset('|[]\n')
NAME_KEYS = frozenset({"who", "to", "target", "for"})  # attributes that name a character
ACTION_KEYS = frozenset({"action", "op"})  # read as the engine reads them: stripped, lower case
SNIPPET = 160  # characters of an answer part shown in a report


@dataclass(frozen=True)
class Party:
    """Who is at the table: the party's names and the player's character (the default who=)."""

    names: tuple[str, ...]
    player: str


@dataclass
class Turn:
    """One turn of play: the player's line, what the stage returned, and what it cost."""

    number: int  # 1-based
    player: str
    expect: list[dict[str, str]] | None  # the tags a rules-following GM writes; None: open
    stream: bool
    text: str = ""  # the reply's content as the client got it
    metadata: dict[str, Any] | None = None  # the response's ``gmtags`` object
    finish: str | None = None  # finish_reason
    seconds: float = 0.0
    first_byte: float | None = None  # streamed: seconds to the first content
    legs: list[dict[str, Any]] = field(default_factory=list)  # requests the model server got
    error: str | None = None

    @property
    def answers(self) -> list[Json]:
        answers = (self.metadata or {}).get("answers")
        return list(answers) if isinstance(answers, list) else []


@dataclass(frozen=True)
class Foreign:
    """An answer part in the reply that gmtags did not write."""

    at: int  # offset in the reply text
    part: str  # the part as the player sees it (shortened)
    where: str  # "read tag", "malformed tag", "unread head" or "prose"


# ---------------------------------------------------------------------------------------------
# answer parts


def written_by_gmtags(tag: tagparse.Tag, answer: Json | None) -> bool:
    """Whether ``tag`` is exactly what gmtags writes for ``answer``: a well-formed tag whose
    answer part is the one rendered from the answer (replay/stage/answering.py)."""
    if answer is None or tag.malformed is not None or tag.answer is None:
        return False
    try:
        rendered = tagparse.render(tag.kind, tag.attrs, answer_attrs(Answer.model_validate(answer)))
    except ValueError:
        return False
    return tag.raw == rendered


def paired(tags: Sequence[tagparse.Tag], answers: Sequence[Json]) -> list[Json | None]:
    """The metadata answer of each tag of the reply text: in order when the two lists agree
    kind by kind (the stage answers every tag it reads, in text order), else the first unused
    answer to a tag of the same kind and request attributes (raw text, for a malformed one)."""
    kinds = [str(a.get("tag", {}).get("kind")) for a in answers]
    if kinds == [t.kind for t in tags]:
        return list(answers)
    left = list(range(len(answers)))
    found: list[Json | None] = []
    for tag in tags:
        match = next((i for i in left if _same_request(tag, answers[i])), None)
        if match is not None:
            left.remove(match)
        found.append(None if match is None else answers[match])
    return found


def _same_request(tag: tagparse.Tag, answer: Json) -> bool:
    ref = answer.get("tag", {})
    if ref.get("kind") != tag.kind:
        return False
    if tag.malformed is not None:
        return bool(ref.get("raw") == tag.raw)
    return bool(ref.get("attrs") == dict(tag.attrs))


def foreign_parts(text: str, answers: Sequence[Json]) -> list[Foreign]:
    """Every answer part in ``text`` that gmtags did not write.

    An answer part is the ``| ok=... text=...`` of a tag, or any ``ok=``/``answered=``
    fragment anywhere (in prose, in a bracket gmtags does not read, in a malformed tag, in a
    tag's request part). The answer part of a tag that is exactly what gmtags writes for its
    answer in ``answers`` is gmtags'; every other one counts once: each ``ok=`` begins one,
    and an ``answered=`` is one unless it follows an ``ok=`` in the same part (no ``|``, ``[``,
    ``]`` or line end outside quotes between them)."""
    scanned = tagparse.scan(text)
    kept: list[tuple[int, int]] = []  # spans not searched for fragments
    found: list[Foreign] = []
    for tag, answer in zip(scanned.tags, paired(scanned.tags, answers), strict=True):
        if tag.malformed is not None or tag.answer is None:
            continue
        if written_by_gmtags(tag, answer):
            # only its answer part is gmtags'; its request part is the model's words
            request = len(tagparse.render(tag.kind, tag.attrs)) - 1
            kept.append((tag.start + request, tag.end))
        else:
            kept.append((tag.start, tag.end))
            found.append(Foreign(tag.start, _shorten(tag.raw), "read tag"))
    opened: int | None = None  # where the last answer part (its ``ok=``) began
    for match in FRAGMENT.finditer(text):
        at = match.start()
        if any(start <= at < end for start, end in kept):
            continue
        mark = match.group().lower().startswith("answered")
        if mark and opened is not None and not _part_ends(text, opened, at, kept):
            continue  # the mark of the part before it
        found.append(Foreign(at, _part(text, at), _where(text, at, scanned.tags)))
        opened = None if mark else at
    return sorted(found, key=lambda f: f.at)


def _unquoted(text: str, start: int, stop: int) -> Iterator[tuple[int, bool]]:
    """Each index from ``start`` to ``stop`` and whether its character stands outside quoted
    values and is not escaped (``\\`` escapes the next character)."""
    quoted = escaped = False
    for index in range(start, min(stop, len(text))):
        char = text[index]
        yield index, not quoted and not escaped
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == '"':
            quoted = not quoted


def _part_ends(text: str, since: int, at: int, kept: Sequence[tuple[int, int]]) -> bool:
    """Whether an answer part that began at ``since`` has ended before ``at``."""
    if any(since < start < at for start, _ in kept):
        return True
    return any(plain and text[index] in PART_END for index, plain in _unquoted(text, since, at))


def _part(text: str, at: int) -> str:
    """The answer part that starts at ``at``, as far as its end (outside quotes) or the next
    part's ``ok=`` (a model's copy often leaves a quote open)."""
    start = at - 2 if text[max(0, at - 2):at] == "| " else at
    end = min(len(text), at + SNIPPET)
    for index, plain in _unquoted(text, at, at + SNIPPET):
        if index > at and text[index] in "oO" and (
                next_part := FRAGMENT.match(text, index)) is not None \
                and next_part.group().lower().startswith("ok"):
            return _shorten(text[start:index].rstrip(" |"))
        if plain and text[index] in PART_END:
            end = index
            break
    return _shorten(text[start:end])


def _where(text: str, at: int, tags: Sequence[tagparse.Tag]) -> str:
    """What holds the fragment at ``at``: a tag gmtags read (its request part), a malformed
    tag, a bracket whose head gmtags does not read, or prose."""
    for tag in tags:
        if tag.start <= at < tag.end:
            return "malformed tag" if tag.malformed is not None else "read tag"
    line_start = text.rfind("\n", 0, at) + 1
    opened = text.rfind("[", line_start, at)
    if opened >= 0 and "]" not in text[opened:at]:
        head = HEAD.match(text, opened)
        if head is not None and head.group(1).lower() not in tagparse.TAG_KINDS:
            return "unread head"
    return "prose"


def _shorten(text: str) -> str:
    return text if len(text) <= SNIPPET else text[:SNIPPET - 1] + "…"


# ---------------------------------------------------------------------------------------------
# tags


def unread_heads(text: str) -> list[str]:
    """The words of the tag-like heads (``[Word:``) gmtags does not read, in text order."""
    return [m.group(1) for m in HEAD.finditer(text) if m.group(1).lower() not in tagparse.TAG_KINDS]


def tag_key(tag: tagparse.Tag) -> tuple[str, ...]:
    """What makes two tags the same tag: kind and request attributes (a malformed one: its
    text up to its first ``|``)."""
    if tag.malformed is not None:
        return (tag.kind, "malformed", tag.raw.split("|", 1)[0].strip())
    return (tag.kind, *(f"{key}={value}" for key, value in sorted(tag.attrs)))


def most_repeated(text: str) -> int:
    """How many times the reply's most repeated tag occurs in it (0: no tag)."""
    counts = Counter(tag_key(tag) for tag in tagparse.scan(text).tags)
    return max(counts.values(), default=0)


# ---------------------------------------------------------------------------------------------
# intent


def names_match(written: str, expected: str, party: Party) -> bool:
    """Whether a name the model wrote names ``expected``: the same name in any case, or a
    unique start of one name or of one of its words among the party (and ``expected``)
    ("Bram" and "quiet" for "Bram the Quiet", when no one else's name starts so)."""
    wrote = " ".join(written.split()).casefold()
    wanted = expected.casefold()
    if wrote == wanted:
        return True
    if not wrote:
        return False
    candidates = {n.casefold() for n in party.names} | {wanted}
    hits = [n for n in candidates if n.startswith(wrote)
            or any(word.startswith(wrote) for word in n.split())]
    return hits == [wanted]


def tag_matches(want: Mapping[str, str], tag: tagparse.Tag, party: Party) -> bool:
    """Whether ``tag`` is the tag ``want`` describes: its kind; action/op as the engine reads
    them; names as :func:`names_match` reads them (a missing who= is the player's character,
    as the engine defaults it); an amount's coin singular or plural; every other listed
    attribute equal in any case."""
    if tag.malformed is not None or tag.kind != want.get("kind"):
        return False
    attrs = dict(tag.attrs)
    for key, value in want.items():
        if key == "kind":
            continue
        got = attrs.get(key)
        if got is None:
            if key == "who" and value.casefold() == party.player.casefold():
                continue
            return False
        if key in ACTION_KEYS:
            ok = got.strip().lower() == value.lower()
        elif key in NAME_KEYS:
            ok = names_match(got, value, party)
        elif key == "amount":
            ok = _amount(got) == _amount(value)
        else:
            ok = " ".join(got.split()).casefold() == value.casefold()
        if not ok:
            return False
    return True


def _amount(text: str) -> tuple[str, ...]:
    """An amount as a person reads it: its words in any case, a coin singular or plural
    ("1 shillings" is "1 shilling")."""
    return tuple(word.removesuffix("s") for word in text.casefold().split())


def intent_met(expected: Sequence[Mapping[str, str]], text: str, party: Party) -> bool:
    """Whether the reply holds every expected tag, each matched by a tag of its own."""
    tags = list(tagparse.scan(text).tags)
    used: set[int] = set()
    for want in expected:
        hit = next((i for i, tag in enumerate(tags)
                    if i not in used and tag_matches(want, tag, party)), None)
        if hit is None:
            return False
        used.add(hit)
    return True


# ---------------------------------------------------------------------------------------------
# live against replay


def answer_key(answer: Json) -> tuple[Any, ...]:
    """What an answer says: the tag kind, ok, reason and text."""
    return (answer.get("tag", {}).get("kind"), answer.get("ok"), answer.get("reason"),
            answer.get("text"))


def replayed_per_reply(replay: Json, replies: Sequence[int]) -> list[list[Json]]:
    """The answers of a ``gmtags replay --format json`` document, one list per GM reply, for
    the replies at flattened message indexes ``replies``."""
    by_message: dict[int, list[Json]] = {}
    for answer in replay.get("answers", []):
        by_message.setdefault(int(answer.get("message", -1)), []).append(answer)
    return [by_message.get(index, []) for index in replies]


def differences(numbers: Sequence[int], live: Sequence[Sequence[Json]],
                replayed: Sequence[Sequence[Json]]) -> list[dict[str, Any]]:
    """The replies whose live answers are not the replay's: the turn's number (``numbers``,
    one per reply), both answer lists (kind, ok, reason, text)."""
    found = []
    for number, now, then in zip(numbers, live, replayed, strict=True):
        shown, again = [answer_key(a) for a in now], [answer_key(a) for a in then]
        if shown != again:
            found.append({"turn": number, "live": [list(k) for k in shown],
                          "replay": [list(k) for k in again]})
    return found


# ---------------------------------------------------------------------------------------------
# prompt tokens


def leg_tokens(legs: Sequence[Json], key: str) -> int | None:
    """``prompt_n`` or ``cache_n`` summed over the requests of a turn (a mid-reply turn is
    several), from each request's last ``timings``; None when no request reported them."""
    values = [leg["timings"][key] for leg in legs
              if isinstance(leg.get("timings"), Mapping) and key in leg["timings"]]
    return sum(int(v) for v in values) if values else None


GROWTH_TURNS = 10  # the fewest turns whose last 4 come after turns 3-6


def growth(per_turn: Sequence[int | None]) -> tuple[float | None, float | None, float | None]:
    """Mean of turns 3-6, mean of the last 4 turns, and their ratio (last ÷ early): how the
    prompt a turn costs grows with the chat. The ratio only when the two do not overlap (10
    turns or more): in a shorter game the last 4 hold the first turn, whose prompt nothing
    was cached for."""
    early = [v for v in per_turn[2:6] if v is not None]
    late = [v for v in per_turn[-4:] if v is not None]
    early_mean = statistics.fmean(early) if early else None
    late_mean = statistics.fmean(late) if late else None
    ratio = late_mean / early_mean if early_mean and late_mean is not None and len(
        per_turn) >= GROWTH_TURNS else None
    return early_mean, late_mean, ratio


# ---------------------------------------------------------------------------------------------
# a turn, a run, all runs


def turn_figures(turn: Turn, party: Party) -> dict[str, Any]:
    """Every figure of one turn."""
    answers = turn.answers
    refused = Counter(str(a.get("reason")) for a in answers if not a.get("ok"))
    taken = (turn.metadata or {}).get("takenOut")
    cut = (turn.metadata or {}).get("cut")
    foreign = foreign_parts(turn.text, answers)
    return {
        "read": len(answers),
        "ok": sum(1 for a in answers if a.get("ok")),
        "refused": dict(sorted(refused.items())),
        "malformed": refused.get("malformed", 0),
        "unreadHeads": unread_heads(turn.text),
        "foreign": [{"at": f.at, "part": f.part, "where": f.where} for f in foreign],
        "mostRepeated": most_repeated(turn.text),
        "intent": None if turn.expect is None else intent_met(turn.expect, turn.text, party),
        "takenOut": len(taken) if isinstance(taken, list) else None,
        "cut": isinstance(cut, Mapping),
        "finish": turn.finish,
        "promptN": leg_tokens(turn.legs, "prompt_n"),
        "cacheN": leg_tokens(turn.legs, "cache_n"),
        "requests": len(turn.legs),
        "seconds": round(turn.seconds, 3),
        "error": turn.error,
    }


def run_figures(turns: Sequence[dict[str, Any]],
                differ: Sequence[Mapping[str, Any]] | None) -> dict[str, Any]:
    """A run's figures from its turns' (:func:`turn_figures`) and the replies whose live
    answers differ from the replay's (None: the replay did not run)."""
    refused: Counter[str] = Counter()
    heads: Counter[str] = Counter()
    for turn in turns:
        refused.update(turn["refused"])
        heads.update(turn["unreadHeads"])
    intents = [t["intent"] for t in turns if t["intent"] is not None]
    prompt = [t["promptN"] for t in turns]
    early, late, ratio = growth(prompt)
    seconds = [t["seconds"] for t in turns]
    taken = [t["takenOut"] for t in turns if t["takenOut"] is not None]
    return {
        "turns": len(turns),
        "read": sum(t["read"] for t in turns),
        "ok": sum(t["ok"] for t in turns),
        "refused": sum(refused.values()),
        "refusedBy": dict(sorted(refused.items())),
        "malformed": sum(t["malformed"] for t in turns),
        "unreadHeads": sum(heads.values()),
        "unreadHeadWords": dict(heads.most_common()),
        "foreign": sum(len(t["foreign"]) for t in turns),
        "foreignReplies": sum(1 for t in turns if t["foreign"]),
        "takenOut": sum(taken) if taken else None,
        "cut": sum(1 for t in turns if t["cut"]),
        "mostRepeated": max((t["mostRepeated"] for t in turns), default=0),
        "repliesOver3": [n for n, t in enumerate(turns, start=1) if t["mostRepeated"] > 3],
        "intentMatched": sum(1 for i in intents if i),
        "intentTurns": len(intents),
        "intentPercent": round(100 * sum(1 for i in intents if i) / len(intents), 1)
        if intents else None,
        "replayDiffers": None if differ is None else len(differ),
        "promptN": sum(p for p in prompt if p is not None) if any(
            p is not None for p in prompt) else None,
        "cacheN": sum(t["cacheN"] for t in turns if t["cacheN"] is not None) if any(
            t["cacheN"] is not None for t in turns) else None,
        "promptTurns3to6": _round(early),
        "promptLast4": _round(late),
        "promptGrowth": _round(ratio, 2),
        "seconds": round(sum(seconds), 1),
        "secondsPerTurn": round(statistics.fmean(seconds), 2) if seconds else None,
        "length": sum(1 for t in turns if t["finish"] == "length"),
        "errors": sum(1 for t in turns if t["error"]),
    }


def total_figures(runs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The runs' figures added up (the growth ratio: the worst run's)."""
    def added(key: str) -> int | None:
        values = [r[key] for r in runs if r.get(key) is not None]
        return sum(values) if values else None

    refused: Counter[str] = Counter()
    heads: Counter[str] = Counter()
    for run in runs:
        refused.update(run["refusedBy"])
        heads.update(run["unreadHeadWords"])
    matched, turns = added("intentMatched") or 0, added("intentTurns") or 0
    ratios = [r["promptGrowth"] for r in runs if r.get("promptGrowth") is not None]
    seconds = added("seconds")
    played = added("turns") or 0
    return {
        "runs": len(runs),
        "turns": played,
        **{key: added(key) for key in ("read", "ok", "refused", "malformed", "unreadHeads",
                                       "foreign", "foreignReplies", "takenOut", "cut",
                                       "replayDiffers", "promptN", "cacheN", "length",
                                       "errors")},
        "refusedBy": dict(sorted(refused.items())),
        "unreadHeadWords": dict(heads.most_common()),
        "mostRepeated": max((r["mostRepeated"] for r in runs), default=0),
        "repliesOver3": sum(len(r["repliesOver3"]) for r in runs),
        "intentMatched": matched,
        "intentTurns": turns,
        "intentPercent": round(100 * matched / turns, 1) if turns else None,
        "promptGrowth": max(ratios) if ratios else None,
        "seconds": round(seconds, 1) if seconds is not None else None,
        "secondsPerTurn": round(seconds / played, 2) if seconds and played else None,
    }


def _round(value: float | None, digits: int = 0) -> float | None:
    return None if value is None else round(value, digits)
