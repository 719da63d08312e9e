"""``[loot: table=... who=...]``: a table's drops arrive like adds (ITM-LOOT-14..19)."""

from __future__ import annotations

from ..rules import reasons
from ..rules.context import TurnContext
from ..rules.game import Game
from ..rules.loot import find_table
from ..rules.state import JournalEntry, State
from ..ruleset.loot import LootTable
from . import fight
from .answers import Answer, accepted
from .attrs import WHO_OR_PARTY
from .declare import Needs, Reader, Refusal, Request, action, attr, request
from .drops import drop_table
from .examples import Party, example
from .placing import added_text


def _tables(game: Game) -> list[LootTable]:
    return game.ruleset.items.loot_tables if game.ruleset.items else []


def _table(raw: str | None, game: Game, state: State) -> LootTable | Refusal:
    """OQ-38: a table by id or label (the only one when none is named); else nothing drops,
    and the answer names the tables that exist."""
    table = find_table(game, raw)
    if table is not None:
        return table
    known = ", ".join(f'"{t.id}" ({t.label})' for t in _tables(game))
    asked = (raw or "").strip()[:60]
    reason = reasons.UNKNOWN_TABLE if asked else reasons.MISSING_ATTRIBUTE
    said = f'There is no loot table "{asked}"' if asked else "Name the loot table"
    return Refusal(reason, f"{said}; the tables are {known}.")


TABLE = Reader("loot table", _table, {"type": "string"},
               (reasons.UNKNOWN_TABLE, reasons.MISSING_ATTRIBUTE))
"""``table=``: a loot table by id or label; the only one when the ruleset has one."""


@request
class Loot(Request):
    """Roll a loot table; each drop arrives like an add (ITM-LOOT-14..19)."""

    table: LootTable = attr(TABLE, "the loot table, by id or label",
                            shown="the only table, when there is one")
    who: int | None = attr(WHO_OR_PARTY, "whose bag; without who=, the party shares it out",
                           shown="the party")


def _teach_loot(game: Game, party: Party) -> list[str]:  # ITM-LOOT-19
    tables = _tables(game)
    listed = ", ".join(f"{t.id} ({t.label})" for t in tables)
    one = f'; who="{party.hero}" for one hero' if party.hero is not None else ""
    return ["- Loot a body or a cache: "
            + example("loot", table=tables[0].id) + f" (shared out{one}).",
            f"  Tables: {listed}."]


@action("loot", None, Loot, teach=_teach_loot,
        needs=Needs(lambda game: bool(_tables(game)), reasons.NO_LOOT_TABLES,
                    "This ruleset has no loot tables."),
        record={"table": "the table's id", "rolls": "how many draws",
                "draws": "each draw: its row, what and how many",
                "rollsDice": "the dice of a rolled number of draws",
                "drops": "what dropped, and to whom"})
def roll_tag(game: Game, state: State, request: Loot, ctx: TurnContext) -> tuple[State, Answer]:
    """``[loot: table="<id>" who="<name>"]`` (ITM-LOOT-16..19)."""
    tag, table = request.tag, request.table
    heroes = fight.sharers(game, state, ctx) if request.who is None else ()
    if heroes:  # D100-PARTY-10: a narrative victory's coins split, named items to want/pass
        state, record, parts = fight.shared_loot(game, state, table, ctx, heroes)
        text = f"{table.label}: " + ("; ".join(parts) if parts else "nothing dropped") + "."
    else:
        state, record, parts = drop_table(game, state, table, ctx.stream("loot", "draws"),
                                          request.who)
        text = f"{table.label}: " + (_as_adds(record) or "nothing dropped.")
    journal = JournalEntry(turn=ctx.turn_label, text=f"Loot ({table.label}): "
                           + ("; ".join(parts) if parts else "nothing"))
    state = state.model_copy(update={"journal": (*state.journal, journal)})
    return state, accepted(tag, text, record)


def _as_adds(record: dict[str, object]) -> str:
    """ITM-LOOT-18: each drop answered as ``[inventory: action="add"]`` answers it — where it
    went and what stayed behind, in the add's own sentence."""
    drops = record.get("drops")
    sentences = []
    for drop in drops if isinstance(drops, list) else ():
        placed = [(str(p["who"]), int(p["count"])) for p in drop["to"]]
        sentences.append(added_text(str(drop["name"]), placed, int(drop["left"])))
    return " ".join(sentences)
