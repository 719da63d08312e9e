"""Items the GM invents in the ruleset's terms (docs/rules/items.md#510-items-the-gm-invents,
ITM-PROP-1..22; weapons: docs/rules/items.md#94-invented-weapons).

``[inventory: action="add" item="Ember brooch" like="Lucky charm" rarity="storied"
worn="+1 Sway"]`` builds a new ruleset item from the description, keeps only what the item
block has (unknown parts dropped, numbers clamped to their range and then to ``rarityCaps``,
worn and carried bonuses to the rarity's ``bonus``), tells the GM every change (never a stat
it may not see, ITM-BLOCK-11), and stores the item in ``State.invented`` so its name is that
item for the rest of the game (ITM-PROP-20). :func:`engine.rules.session.new_session` forgets
the invented items nobody owns any more (ITM-PROP-21).

Decisions on the open questions of docs/rules/items.md#510-items-the-gm-invents: OQ-14 is not
followed — ``propose: false`` refuses the add (``no-proposals``), so the GM learns that it must add
one of the ruleset's items; OQ-15 ``like=`` copies the wearing and using keys (``requires``,
``toggle``, ``stack`` too) but never ``cost``, ``sold``, ``service`` or the fake keys; OQ-16 any
description attribute makes a proposal; OQ-17 commas or semicolons separate parts, ``id=value`` (or
``id: value``) inside ``stats=``/``slots=``; OQ-18 no category: a plain item under ``native: true``,
``not-ruleset-item`` otherwise; OQ-19 skill or save first, then ability, then the defence; OQ-20 a
worn defence change is dropped only when the same proposal sets a stat the defence counts; OQ-21 no
rarity: capped as the lowest rarity without getting it; OQ-22 ability changes are never capped;
OQ-23 the stored item wins over a new description; OQ-27/28 the most similar weapon by shared words,
only its stats taken over (never its slots).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from tagparse import Tag

from ..dice import parse_dice
from ..rules import reasons
from ..rules.bags import Thing, find_thing, item_of, stack_limit
from ..rules.game import DEFAULT_STACK, Game
from ..rules.state import InventedItem, State
from ..ruleset import Item
from ..ruleset.items import ItemBlock, Stat
from .answers import Answer, refused
from .describe import effect_text, item_line
from .examples import example, new_name, plain_item
from .placing import add_thing

# ITM-PROP-3, OQ-16: an add carrying any of these attributes describes a new item.
DESCRIPTION = ("like", "category", "rarity", "tags", "stats", "slots", "binds", "worn",
               "carried", "summary")

# What one proposal may hold at most: anything past it is dropped (nothing a model writes
# allocates without bound; the item block's own limits are smaller still).
MAX_PARTS = 48
MAX_CHANGES = 24
MAX_NAME = 120
MAX_SUMMARY = 400
MAX_TEXT_STAT = 120
MAX_FLAT = 100  # Modifier.flat's range
MAX_PIECE = 400  # one part of stats=/slots= or one worn change, read at most this long

# OQ-15: what like= never copies (market and fake keys).
NOT_COPIED = frozenset({"cost", "sold", "service", "passes_for", "risky", "tells",
                        "fools_reveal"})
ATTACK_WORDS = frozenset({"attack", "attacks", "attack roll", "attack rolls", "to hit", "hit",
                          "hits", "attacking"})
DEFENCE_WORDS = frozenset({"defence", "defense"})
FILLER = ("bonus", "rolls", "roll", "checks", "check", "throws", "throw", "saves", "save")


@dataclass
class Draft:
    """The item being built, and every change the GM is told about (ITM-PROP-18)."""

    game: Game
    block: ItemBlock
    values: dict[str, Any] = field(default_factory=dict)
    changes: list[str] = field(default_factory=list)
    inferred: list[str] = field(default_factory=list)
    every_change: list[str] = field(default_factory=list)
    """ITM-PROP-19: the player sees every change, hidden stats included."""

    def stat(self, stat_id: str) -> Stat | None:
        return next((s for s in self.block.stats if s.id == stat_id), None)

    def visible(self, stat_id: str) -> bool:
        """ITM-BLOCK-11: whether the GM may hear about this stat at all."""
        stat = self.stat(stat_id)
        return stat is None or stat.prompt_visible

    def note(self, text: str, stat_id: str | None = None) -> None:
        self.every_change.append(text)
        if stat_id is None or self.visible(stat_id):
            self.changes.append(text)


def _fold(text: str) -> str:
    return " ".join(text.replace("_", " ").replace("-", " ").split()).casefold()


def _find(rows: Sequence[Any], word: str) -> str | None:
    """ITM-PROP-4: an id or a label, any case (``two-handed``, ``Two handed``, ``two_handed``)."""
    wanted = _fold(word)
    for row in rows:
        if _fold(row.id) == wanted or _fold(row.label) == wanted:
            return str(row.id)
    return None


def _short(text: str, length: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= length else text[: length - 1] + "…"


def split_list(text: str) -> list[str]:
    """OQ-17, ITM-PROP-10: parts separated by commas or semicolons; ``none`` is no part."""
    parts = [p.strip() for p in re.split(r"[,;]", text)]
    parts = [p for p in parts if p]
    if len(parts) == 1 and parts[0].casefold() in ("none", "-", "no"):
        return []
    return parts[:MAX_PARTS]


def _pairs(text: str, continued: frozenset[str]) -> list[tuple[str, str]]:
    """``stats=``/``slots=`` as (key, value) pairs: ``id=value``, ``id: value`` or ``id value``.

    A part without a key that follows a key in ``continued`` (``worn`` written inside
    ``stats=``) belongs to it, so ``worn=+1 Sneak; -1 Sway`` inside ``stats=`` stays whole.
    """
    pairs: list[tuple[str, str]] = []
    for part in re.split(r"([,;])", text):
        if part in (",", ";"):
            if pairs and pairs[-1][0].casefold() in continued:
                pairs[-1] = (pairs[-1][0], pairs[-1][1] + part)
            continue
        piece = part.strip()[:MAX_PIECE]
        if not piece:
            continue
        match = re.fullmatch(r"([^=:]+?)\s*[=:]\s*(.*)", piece, flags=re.S)
        if match is None and pairs and pairs[-1][0].casefold() in continued:
            pairs[-1] = (pairs[-1][0], pairs[-1][1] + " " + piece)
            continue
        if match is None:
            spaced = re.fullmatch(r"(.+?)\s+([+-]?\d+(?:\.\d+)?|\S+)", piece)
            if spaced is None:
                pairs.append((piece, ""))
                continue
            match = spaced
        pairs.append((match.group(1).strip(), match.group(2).strip()))
        if len(pairs) >= MAX_PARTS:
            break
    return [(k, v.strip(" ,;")) for k, v in pairs]


def _number(text: str) -> float | None:
    try:
        value = float(text.strip().replace(" ", ""))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _stat_value(draft: Draft, stat: Stat, raw: str) -> Any:
    """ITM-PROP-13: the value a stat can take, or None (dropped, and the GM is told)."""
    text = raw.strip()
    if stat.type == "number":
        return _number(text)
    if stat.type == "boolean":
        word = text.casefold()
        if word in ("yes", "true", "1", "on"):
            return True
        if word in ("no", "false", "0", "off"):
            return False
        return None
    if stat.type == "enum":
        return next((v for v in stat.values or () if _fold(v) == _fold(text)), None)
    if stat.type == "dice":
        return text if text and not isinstance(parse_dice(text), str) else None
    return text[:MAX_TEXT_STAT] if text else None


def _caps(draft: Draft) -> tuple[str | None, dict[str, float], int | None]:
    """The rarity whose caps apply (OQ-21: the lowest when the item has none), its stat caps
    and its bonus (ITM-CAPS-2/3)."""
    rarity = draft.values.get("rarity")
    if rarity is None and draft.block.rarities:
        rarity = draft.block.rarities[0].id
    cap = next((c for c in draft.block.rarity_caps if c.rarity == rarity), None)
    if cap is None:
        return rarity, {}, None
    return rarity, dict(cap.stats), cap.bonus


def _rarity_label(draft: Draft, rarity: str | None) -> str:
    return next((r.label for r in draft.block.rarities if r.id == rarity), rarity or "")


def _clamp_stats(draft: Draft) -> None:
    """ITM-PROP-15: a number to its stat's range, then to the rarity's cap; whole where the
    stat takes whole numbers (rounded down, so a clamp never gives more than was written)."""
    rarity, caps, _ = _caps(draft)
    stats: dict[str, Any] = draft.values.get("stats", {})
    for stat_id, value in list(stats.items()):
        stat = draft.stat(stat_id)
        if stat is None or stat.type != "number" or isinstance(value, bool):
            continue
        number = float(value)
        label = stat.label
        if stat.min is not None and number < stat.min:
            draft.note(f"{label} {_num(number)} raised to {_num(stat.min)} (its range)", stat_id)
            number = stat.min
        if stat.max is not None and number > stat.max:
            draft.note(f"{label} {_num(number)} lowered to {_num(stat.max)} (its range)",
                       stat_id)
            number = stat.max
        if stat_id in caps and number > caps[stat_id]:
            draft.note(f"{label} {_num(number)} capped to {_num(caps[stat_id])} "
                       f"({_rarity_label(draft, rarity)} items)", stat_id)
            number = caps[stat_id]
        if stat.integer and not float(number).is_integer():
            draft.note(f"{label} {_num(number)} rounded down to {math.floor(number)}", stat_id)
            number = math.floor(number)
        stats[stat_id] = int(number) if float(number).is_integer() else number


def _num(number: float) -> str:
    """A number as the model should read it back: whole numbers in full up to 10**15."""
    if float(number).is_integer() and abs(number) < 10**15:
        return str(int(number))
    return f"{number:g}"


# -- worn= / carried= -------------------------------------------------------------------------

@dataclass(frozen=True)
class Target:
    kind: str  # "checks", "saves", "skill", "save", "ability", "attacks", "defence"
    ident: str | None = None


def defence_reads(game: Game) -> tuple[set[str], set[str]]:
    """The ruleset's words for its defence, and the item stats that defence already counts
    (ITM-PROP-8/9): a sheet derived value that sums a worn ``itemStat`` (Ember Roads' Guard)."""
    words = set(DEFENCE_WORDS)
    counted: set[str] = set()
    for row in game.ruleset.sheet.derived:
        reads = [ref.item_stat for ref in row.of if ref.item_stat is not None]
        stats = {str(spec.get("stat")) for spec in reads
                 if spec.get("stat") is not None and spec.get("from", "all") in ("worn", "all")}
        if stats:
            words |= {_fold(row.id), _fold(row.label)}
            counted |= stats
    return words, counted


def _target(draft: Draft, words: str, has_fights: bool) -> Target | None:
    """What a change names (OQ-19: skill or save, then ability, then attacks or defence)."""
    sheet = draft.game.ruleset.sheet
    text = _fold(words)
    text = re.sub(r"^(on|to|for|vs|against)\s+", "", text)
    text = re.sub(r"^(all|every)\s+", "", text)
    if text in ("checks", "check", "skill checks", "skills", "ability checks"):
        return Target("checks")
    if text in ("saves", "save", "saving throws", "saving throw"):
        return Target("saves")
    defence, _ = defence_reads(draft.game)
    candidates = [text]
    stripped = text
    while True:
        parts = stripped.rsplit(" ", 1)
        if len(parts) < 2 or parts[1] not in FILLER:
            break
        stripped = parts[0]
        candidates.append(stripped)
    save_hint = any(w in text.split() for w in ("save", "saves", "throw", "throws"))
    for candidate in candidates:
        skill = _find(sheet.skills, candidate)
        save = _find(sheet.saves, candidate)
        if save is not None and (save_hint or skill is None):
            return Target("save", save)
        if skill is not None:
            return Target("skill", skill)
        ability = _find(sheet.abilities, candidate)
        if ability is not None:
            return Target("ability", ability)
        if has_fights and candidate in ATTACK_WORDS:
            return Target("attacks")
        if has_fights and candidate in defence:
            return Target("defence")
    return None


_AMOUNT = r"[+-]\s*\d+(?:d\d+)?"
_MODE = r"advantage|disadvantage|adv|dis"


def _read_change(draft: Draft, raw: str, has_fights: bool) -> tuple[str, Target] | None:
    """One change as (amount, target): ``+1 Sneak``, ``Brawn +1`` (ITM-PROP-10),
    ``disadvantage on Sway checks``, ``fails Steel``, ``+1 attack roll bonus``."""
    text = " ".join(raw.split())
    for pattern in (rf"({_AMOUNT})\s+(.+)", rf"(.+?)\s+({_AMOUNT})",
                    rf"({_MODE})\s+(.+)", rf"(.+?)\s+(?:at |with |has )?({_MODE})",
                    r"(fails?)\s+(.+)", r"(.+?)\s+(fails?)"):
        match = re.fullmatch(pattern, text, flags=re.I)
        if match is None:
            continue
        first, second = match.groups()
        amount, words = ((first, second) if re.fullmatch(rf"{_AMOUNT}|{_MODE}|fails?", first,
                                                         flags=re.I) else (second, first))
        target = _target(draft, words, has_fights)
        if target is None:
            return None
        amount = amount.replace(" ", "").casefold()
        amount = {"adv": "advantage", "dis": "disadvantage", "fail": "fails"}.get(amount,
                                                                                 amount)
        return amount, target
    return None


def read_effects(draft: Draft, which: str, text: str) -> dict[str, Any]:
    """ITM-PROP-7/8: ``worn=``/``carried=`` as the item's ``worn``/``carried`` part."""
    has_fights = draft.game.ruleset.combat is not None
    part: dict[str, Any] = {"modifiers": [], "failsSaves": [], "abilities": {}}
    changes = [c.strip() for c in re.split(r"[;\n]", text) if c.strip()]
    if len(changes) == 1 and changes[0].casefold() in ("none", "no", "-", "nothing"):
        return {}
    for raw in changes[:MAX_CHANGES]:
        read = _read_change(draft, raw, has_fights) if len(raw) <= MAX_PIECE else None
        if read is None:
            what = "skill, save, ability, attack or defence" if has_fights else \
                "skill, save or ability"
            draft.note(f'{which} "{_short(raw)}" dropped (no such {what})')
            continue
        amount, target = read
        if not _apply_change(part, amount, target):
            draft.note(f'{which} "{_short(raw)}" dropped (not a change that can be made to '
                       "that)")
    return {key: value for key, value in part.items() if value}


def _apply_change(part: dict[str, Any], amount: str, target: Target) -> bool:
    modifier: dict[str, Any] = {}
    if amount == "fails":
        if target.kind != "save":
            return False
        if target.ident not in part["failsSaves"]:
            part["failsSaves"].append(target.ident)
        return True
    if target.kind == "ability":
        if amount in ("advantage", "disadvantage") or "d" in amount:
            return False
        change = part["abilities"].setdefault(target.ident, {"add": 0})
        change["add"] = max(-MAX_FLAT, min(MAX_FLAT, change["add"] + int(amount)))
        return True
    if amount in ("advantage", "disadvantage"):
        if target.kind == "defence":
            return False
        modifier["mode"] = amount
    elif "d" in amount:
        modifier["dice"] = amount.lstrip("+-")
        modifier["minus"] = amount.startswith("-")
    else:
        modifier["flat"] = max(-MAX_FLAT, min(MAX_FLAT, int(amount)))
    to = {"skill": "checks", "save": "saves"}.get(target.kind, target.kind)
    modifier = {"to": to, **modifier}
    if target.kind == "skill":
        modifier["skills"] = [target.ident]
    elif target.kind == "save":
        modifier["saves"] = [target.ident]
    if len(part["modifiers"]) < MAX_CHANGES:
        part["modifiers"].append(modifier)
    return True


def _bonus_text(draft: Draft, modifier: Mapping[str, Any]) -> str:
    return effect_text(draft.game, {"modifiers": [modifier]})


def _cap_bonuses(draft: Draft) -> None:
    """ITM-PROP-16, ITM-CAPS-3..5: each worn/carried bonus to the rarity's ``bonus`` — also
    what ``like=`` brought; a dice bonus dropped where there is a cap; penalties kept."""
    rarity, _, bonus = _caps(draft)
    if bonus is None:
        return
    for which in ("worn", "carried"):
        part = draft.values.get(which)
        if not isinstance(part, dict):
            continue
        kept = []
        for modifier in part.get("modifiers") or ():
            modifier = dict(modifier)
            before = _bonus_text(draft, modifier)
            if modifier.get("dice") and not modifier.get("minus"):  # ITM-CAPS-4
                modifier.pop("dice")
                modifier.pop("minus", None)
                if modifier.get("flat") is None and modifier.get("mode") is None:
                    draft.note(f"{which} {before} dropped (a dice bonus cannot be capped)")
                    continue
                draft.note(f"{which} {before}: the dice dropped (a dice bonus cannot be "
                           "capped)")
            flat = modifier.get("flat")
            if isinstance(flat, int) and flat > bonus:  # ITM-CAPS-5: penalties never capped
                modifier["flat"] = bonus
                draft.note(f"{which} {before} capped to +{bonus} "
                           f"({_rarity_label(draft, rarity)} items)")
            kept.append(modifier)
        part["modifiers"] = kept


def _stat_label(draft: Draft, stat_id: str) -> str:
    stat = draft.stat(stat_id)
    return stat.label if stat is not None else stat_id


def _drop_counted_defence(draft: Draft, worn_written: bool, stats_written: set[str]) -> None:
    """ITM-PROP-9, OQ-20: a stat the defence already counts, set in this proposal, is how the
    item raises that defence; a worn defence change written next to it is dropped."""
    _, counted = defence_reads(draft.game)
    given = sorted(counted & stats_written)
    part = draft.values.get("worn")
    if not given or not worn_written or not isinstance(part, dict):
        return
    kept = [m for m in part.get("modifiers") or () if m.get("to") != "defence"]
    if len(kept) == len(part.get("modifiers") or ()):
        return
    part["modifiers"] = kept
    labels = ", ".join(_stat_label(draft, s) for s in given)
    if all(draft.visible(s) for s in given):
        draft.note(f"worn defence change dropped: {labels} already adds to the defence")
    else:
        draft.note("worn defence change dropped: an item stat already adds to the defence")


# -- the proposal -----------------------------------------------------------------------------

def _like(draft: Draft, state: State, text: str) -> None:
    """ITM-PROP-5, OQ-15: start from a ruleset item (catalog or invented)."""
    found = find_thing(draft.game, text, state)
    base = item_of(draft.game, state, found.item) if found is not None else None
    if base is None or found is None:
        draft.note(f'like "{_short(text)}" dropped (not an item of this game)')
        return
    dumped = base.model_dump(exclude_none=True)
    draft.values.update({k: v for k, v in dumped.items() if k not in NOT_COPIED})
    draft.values["like"] = found.name


def _tags(draft: Draft, text: str) -> None:
    tags: list[str] = []
    for word in split_list(text):
        found = _find(draft.block.tags, word)
        if found is None:
            draft.note(f'tag "{_short(word)}" dropped (not a tag here)')
        elif found not in tags:
            tags.append(found)
    draft.values["tags"] = tags


def _stats(draft: Draft, text: str, moved: dict[str, str]) -> set[str]:
    """``stats=``; ``worn=``/``carried=``/``summary=`` inside it when the block has no stat of
    that name are read as those attributes (ITM-PROP-10). Returns the stats it set."""
    stats: dict[str, Any] = dict(draft.values.get("stats", {}))
    written: set[str] = set()
    if text.strip().casefold() in ("none", "-", ""):
        draft.values["stats"] = {}
        return written
    for key, raw in _pairs(text, frozenset({"worn", "carried", "summary"})):
        stat_id = _find(draft.block.stats, key)
        if stat_id is None and _fold(key) in ("worn", "carried", "summary"):
            moved.setdefault(_fold(key), raw)
            draft.inferred.append(f"{_fold(key)}= read from stats=")
            continue
        stat = draft.stat(stat_id) if stat_id is not None else None
        if stat is None:
            draft.note(f'stat "{_short(key)}" dropped (not a stat here)')
            continue
        value = _stat_value(draft, stat, raw)
        if value is None:
            draft.note(f'{stat.label} "{_short(raw)}" dropped (not a value {stat.label} '
                       "takes)", stat.id)
            continue
        stats[stat.id] = value
        written.add(stat.id)
    draft.values["stats"] = stats
    return written


def _slots(draft: Draft, text: str) -> None:
    slots: dict[str, int] = {}
    if text.strip().casefold() not in ("none", "-", ""):
        for key, raw in _pairs(text, frozenset()):
            slot_id = _find(draft.block.slots, key)
            slot = next((s for s in draft.block.slots if s.id == slot_id), None)
            if slot is None:
                draft.note(f'slot "{_short(key)}" dropped (not a slot here)')
                continue
            number = _number(raw) if raw else 1.0
            if number is None or number < 1:
                draft.note(f'{slot.label} "{_short(raw)}" dropped (not a number of slots)')
                continue
            count = min(int(number), slot.count)
            if count != number:
                draft.note(f"{slot.label} {_num(number)} lowered to {count} (a character has "
                           f"{slot.count})")
            slots[slot.id] = count
    draft.values["slots"] = slots


def _binds(draft: Draft, text: str) -> None:
    word = text.strip().casefold()
    if draft.block.binding is None:
        draft.note("binds dropped (this ruleset has no binding)")
        return
    if word in ("yes", "true", "bound", "binds"):
        draft.values["binds"] = {"cursed": False}
    elif word == "cursed":
        draft.values["binds"] = {"cursed": True}
    elif word in ("no", "none", "false"):
        draft.values.pop("binds", None)
    else:
        draft.note(f'binds "{_short(text)}" dropped (write yes, cursed or no)')


def _words(text: str) -> list[str]:
    return [w for w in re.split(r"[^a-z0-9]+", text.casefold()) if w]


def similar_weapon(game: Game, name: str, category: str) -> tuple[str, Item] | None:
    """ITM-WPN-25, OQ-27: the weapon of ``category`` whose name shares most words with
    ``name`` (a word inside another counts, so a crossbow is like a bow), else the first."""
    weapons = [(entry.label, entry.item) for entry in game.items.values()
               if entry.item.category == category and entry.item.attack is not None]
    if not weapons:
        return None
    mine = _words(name)

    def score(label: str) -> int:
        theirs = _words(label)
        return sum(1 for w in mine if any(w in t or t in w for t in theirs))

    best = max(weapons, key=lambda w: score(w[0]))  # max keeps the first of equal scores
    return best if score(best[0]) > 0 else weapons[0]


def _stat_reads(value: Any) -> Iterator[str]:
    """Every item stat an ``attack`` reads with ``{"stat": ...}`` (ITM-WPN-21)."""
    if isinstance(value, Mapping):
        if set(value) == {"stat"}:
            yield str(value["stat"])
        for inner in value.values():
            yield from _stat_reads(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _stat_reads(inner)


def _weapon(draft: Draft, name: str, stats_written: set[str]) -> None:
    """ITM-WPN-23..25: a weapon's attack for the invented item, or none when never worn."""
    values = draft.values
    if values.get("attack") is None and "like" not in values and values.get("category"):
        template = similar_weapon(draft.game, name, values["category"])
        if template is not None:
            label, base = template
            assert base.attack is not None
            attack = base.attack.model_dump(exclude_none=True)
            stats = values.setdefault("stats", {})
            for stat_id in _stat_reads(base.attack.model_dump(mode="json", by_alias=True)):
                if stat_id not in stats and stat_id in base.stats:
                    stats[stat_id] = base.stats[stat_id]
            values["attack"] = attack
            draft.inferred.append(f"It fights as {label} does.")
    if values.get("attack") is not None and not values.get("slots") and not values.get("binds"):
        values.pop("attack")  # ITM-WPN-24
        draft.note("no attack (no slot and no binding: it is never held)")


def build(game: Game, state: State, description: Mapping[str, str],
          name: str) -> tuple[Item | None, str | None, Draft]:
    """The invented item ``description`` describes (its attributes by name; None without a
    category, OQ-18), its summary, and what was changed on the way (ITM-PROP-11..18)."""
    block = game.ruleset.items
    assert block is not None
    draft = Draft(game, block)
    like = description.get("like")
    if like is not None and like.strip():
        _like(draft, state, like)
    moved: dict[str, str] = {}
    stats_written: set[str] = set()
    category = description.get("category")
    if category is not None:
        found = _find(block.categories, category)
        if found is None:
            draft.note(f'category "{_short(category)}" dropped (not a category here)')
        else:
            draft.values["category"] = found
    rarity = description.get("rarity")
    if rarity is not None and block.rarities:
        found = _find(block.rarities, rarity)
        if found is None:  # ITM-PROP-14
            found = block.rarities[0].id
            draft.note(f'rarity "{_short(rarity)}" replaced by {block.rarities[0].label} '
                       "(not a rarity here)")
        draft.values["rarity"] = found
    elif rarity is not None:
        draft.note("rarity dropped (this ruleset has no rarities)")
    if description.get("tags") is not None:
        _tags(draft, description.get("tags") or "")
    if description.get("stats") is not None:
        stats_written = _stats(draft, description.get("stats") or "", moved)
    if description.get("slots") is not None:
        _slots(draft, description.get("slots") or "")
    if description.get("binds") is not None:
        _binds(draft, description.get("binds") or "")
    worn_written = False
    for which in ("worn", "carried"):
        text = description.get(which)
        if text is None:
            text = moved.get(which)
        if text is not None:
            draft.values[which] = read_effects(draft, which, text)
            worn_written = worn_written or which == "worn"
    summary = description.get("summary")
    if summary is None:
        summary = moved.get("summary")
    if not draft.values.get("category"):
        return None, None, draft
    _weapon(draft, name, stats_written)
    _clamp_stats(draft)
    _cap_bonuses(draft)
    _drop_counted_defence(draft, worn_written, stats_written)
    values = {k: v for k, v in draft.values.items() if k != "like" and v not in ({}, [])}
    try:
        item = Item.model_validate(values)
    except ValidationError:  # a like= part that no longer fits: keep the core of the item
        core = {k: values[k] for k in ("category", "rarity", "tags", "stats", "slots", "binds")
                if k in values}
        draft.note("what it does when worn, carried or used dropped (it did not fit)")
        item = Item.model_validate(core)
    text = " ".join(summary.split())[:MAX_SUMMARY] if summary else None
    return item, text or None, draft


def _ref(game: Game, state: State) -> str:
    """A reference no catalog item and no earlier invented item has."""
    used = {i.ref for i in state.invented}
    number = len(state.invented) + 1
    while f"invented/{number}" in used or f"invented/{number}" in game.items:
        number += 1
    return f"invented/{number}"


def propose(game: Game, state: State, tag: Tag, name: str, count: int, who: int | None,
            found: Thing | None, description: Mapping[str, str]) -> tuple[State, Answer]:
    """``[inventory: action="add" item=... like=... stats=...]``: a new item, or why not.
    ``description`` holds the description attributes written, in :data:`DESCRIPTION` order."""
    described = list(description)
    if found is not None:  # ITM-PROP-17, OQ-23: the name is that item; the description is not
        new_state, answer = add_thing(game, state, tag, found, count, who)
        if answer.ok:
            note = (f"{found.name} is already an item of this game, so the description "
                    f"({', '.join(described)}) was not applied")
            answer = answer.model_copy(update={"notes": (*answer.notes, note)})
        return new_state, answer
    block = game.ruleset.items
    if block is None or not block.propose:  # ITM-PROP-2; a refusal, not OQ-14's plain add
        return state, refused(tag, reasons.NO_PROPOSALS,
                              "This ruleset does not let the GM invent items; add one of its "
                              "items by name instead. Nothing was added.")
    name = " ".join(name.split())[:MAX_NAME]
    item, summary, draft = build(game, state, description, name)
    if item is None:  # OQ-18
        if not block.native:
            return state, refused(tag, reasons.NOT_RULESET_ITEM,
                                  f'"{_short(name, 80)}" has no category of this ruleset, so it '
                                  "cannot be invented; give category= or like=. Nothing was "
                                  "added.")
        plain = Thing(name, None, None, DEFAULT_STACK)
        new_state, answer = add_thing(game, state, tag, plain, count, who)
        if answer.ok:
            note = ("no category of this ruleset was given, so it is a plain item without "
                    "rules")
            answer = answer.model_copy(update={"notes": (*answer.notes, note,
                                                         *draft.changes)})
        return new_state, answer
    invented = InventedItem(name=name, ref=_ref(game, state), item=item, summary=summary,
                            changes=(*draft.inferred, *draft.every_change))
    with_item = state.model_copy(update={"invented": (*state.invented, invented)})
    thing = Thing(name, invented.ref, None, stack_limit(item))
    report = report_text(game, invented, draft)
    new_state, answer = add_thing(game, with_item, tag, thing, count, who,
                                  {"invented": name, "changes": list(draft.changes)})
    if not answer.ok:
        return state, answer  # all or nothing: the item is not kept either
    return new_state, answer.model_copy(update={"text": f"{report} {answer.text}"})


def report_text(game: Game, invented: InventedItem, draft: Draft) -> str:
    """ITM-PROP-18: the item as the GM sees it, and every change made to the proposal."""
    text = f"Invented {item_line(game, invented.name, invented.item)}"
    effects = []
    for which in ("worn", "carried"):
        part = getattr(invented.item, which)
        words = effect_text(game, part.model_dump(by_alias=True, exclude_none=True)) if part \
            else ""
        if words:
            effects.append(f"{which}: {words}")
    if invented.item.binds is not None:
        effects.append("binds, cursed" if invented.item.binds.cursed else "binds")
    if effects:
        text += f" ({'; '.join(effects)})"
    text += "."
    if draft.inferred:
        text += " " + " ".join(s if s.endswith(".") else s + "." for s in draft.inferred)
    if draft.changes:
        text += " Changed: " + "; ".join(draft.changes) + "."
    return text


def instructions(game: Game) -> list[str]:
    """The GM's lines on inventing items (ITM-PROP-1..3, ITM-WPN-26), only where the ruleset
    lets it (ITM-CMD-3): a small example (a category and a line about it, a model
    copies every attribute an example shows), the other attributes as optional, this ruleset's
    words for them, and what is kept."""
    block = game.ruleset.items
    if block is None or not block.propose:
        return []
    like = plain_item(game)
    category = next((c.label for c in block.categories
                     if like is not None and c.id == like.item.category),
                    block.categories[0].label if block.categories else None)
    tag = example("inventory", action="add", item=new_name(game), category=category,
                  summary="A carved flute.")
    lines = [f"- Invent only what this ruleset lacks: {tag}; like= (works like an "
             "item), rarity=, tags=, stats=, slots=, worn=, carried="
             + (", binds=" if block.binding is not None else "") + " are optional."]
    words = [("Categories", [c.label for c in block.categories]),
             ("Rarities", [r.label for r in block.rarities]),
             ("Tags", [t.label for t in block.tags]),
             ("Stats", [s.label for s in block.stats if s.prompt_visible]),  # ITM-BLOCK-11
             ("Slots", [s.label for s in block.slots])]
    lines += [f"  {name}: {', '.join(found)}." for name, found in words if found]
    lines.append("  An item invented like= a weapon fights like it.")
    return lines
