"""Reason codes of refused answers: the spec's strings, each next to the rule it comes from.

Codes the spec leaves to the engine ("any code is the Engine's own", items.md Appendix B) are
marked *engine*.
"""

MALFORMED = "malformed"  # DESIGN.md "Tags": a tag that does not parse is answered refused
UNSUPPORTED = "unsupported"  # engine: a tag kind or action this version does not answer yet
UNKNOWN_ACTION = "unknown-action"  # engine: an inventory action= that does not exist
MISSING_ATTRIBUTE = "missing-attribute"  # engine: a required attribute (item=, amount=) is absent
BAD_COUNT = "bad-count"  # engine: count= is not a whole number from 1 up
UNKNOWN_CHARACTER = "unknown-character"  # engine: who= names nobody in the party (OQ-CHK-5)
SERVICE = "service"  # ITM-SVC-3: a service is never put into a bag
NOT_RULESET_ITEM = "not-ruleset-item"  # ITM-FREE-4, OQ-9
NOT_HELD = "not-held"  # engine: remove of something the bag does not hold
NOT_ENOUGH = "not-enough"  # engine: remove of more than the bag holds (all or nothing)
TOO_MANY_STACKS = "too-many-stacks"  # engine, OQ-4: more stacks than one bag takes
TOO_MANY_TAGS = "too-many-tags"  # engine: past MAX_TAGS_PER_REPLY tags in one reply
TOO_MANY_THINGS = "too-many-things"  # engine, issue 28: an item= list of over MAX_LISTED things
NOTHING_CARRIED = "nothing-carried"  # ITM-CARRY-7: nobody could carry any of it
CANNOT_AFFORD = "cannot-afford"  # ITM-PAY-7, ITM-BUY-14
UNKNOWN_COIN = "unknown-coin"  # ITM-PAY-8, ITM-EARN-3
NO_CURRENCIES = "no-currencies"  # ITM-PAY-9, ITM-EARN-3
BAD_AMOUNT = "bad-amount"  # engine: amount= is not a whole count and a coin (ITM-PAY-2)
CURSED = "cursed"  # ITM-BIND-3: a bound cursed item is not unequipped, given or removed
NO_SLOTS = "no-slots"  # ITM-CMD-1: equip/unequip in a ruleset without slots
NO_BINDING = "no-binding"  # ITM-CMD-2: bind/unbind in a ruleset without binding
NOT_EQUIPPABLE = "not-equippable"  # ITM-SLOT-1: the item takes no slots
NOT_BINDABLE = "not-bindable"  # ITM-BIND-1: the item has no binds
SLOTS_FULL = "slots-full"  # ITM-SLOT-1: the bearer does not have those slots free
BINDING_FULL = "binding-full"  # ITM-BIND-1: already binding.max items bound
ALREADY = "already"  # engine: equip an equipped item, bind a bound one, and so on
NO_PROPOSALS = "no-proposals"  # ITM-PROP-2, OQ-14: propose: false forbids inventing
NO_LOOT_TABLES = "no-loot-tables"  # engine: [loot:] in a ruleset without lootTables (ITM-LOOT-4)
UNKNOWN_TABLE = "unknown-table"  # engine, OQ-38: table= names no loot table
NO_RESOLUTION = "no-resolution"  # CHK-GEN-1: [skill_check:] in a ruleset without "resolution"
UNKNOWN_SKILL = "unknown-skill"  # engine, CHK-GEN-A1: skill= names no skill of the sheet
UNKNOWN_SAVE = "unknown-save"  # engine, CHK-GEN-A1, OQ-CHK-6: save= names no save of the sheet
UNKNOWN_ABILITY = "unknown-ability"  # engine, CHK-GEN-A1, OQ-CHK-6: ability= names no ability
MISSING_DIFFICULTY = "missing-difficulty"  # OQ-CHK-10: a check with no dc= nor difficulty=
UNKNOWN_GEAR = "unknown-gear"  # engine: a starting gear id the ruleset lacks
BAD_SELECTION = "bad-selection"  # engine: choices/oneOf that do not pick an option (ITM-GEAR-5)
ALREADY_TAKEN = "already-taken"  # engine, ITM-GEAR-12: the group again without confirming
NOTHING_LEFT = "nothing-left"  # engine, ITM-GEAR-19: a layer took out everything
TOO_HEAVY = "too-heavy"  # engine, ITM-GEAR-16, OQ-42: past the bearer's carry limit
NO_MARKET = "no-market"  # engine, ITM-MKTV-3: buy/sell in a ruleset without items.market
UNKNOWN_SIZE = "unknown-size"  # engine, ITM-PLACE-3, OQ-45: a place size the market lacks
NO_PLACE = "no-place"  # ITM-BUY-8, ITM-SELL-4, OQ-46: no market place is in effect
UNKNOWN_LEVEL = "unknown-level"  # ITM-BUY-9: a price level the market does not have
UNKNOWN_ITEM = "unknown-item"  # ITM-BUY-9: an item the ruleset does not have
NOT_FOR_SALE = "not-for-sale"  # ITM-BUY-10, ITM-SELL-4, ITM-MKT-19..21: no price
NOT_HERE = "not-here"  # ITM-BUY-11: a place too small for the item
NO_SELLER = "no-seller"  # ITM-BUY-12, OQ-47: nobody here sells it (or an unknown seller)
NOT_TO_YOU = "not-to-you"  # ITM-BUY-13: the buyer does not meet the seller's only
SOLD_OUT = "sold-out"  # ITM-BUY-15, ITM-DAY-9: today's limited stock is sold
CANNOT_CARRY = "cannot-carry"  # engine, ITM-BUY-14, ITM-SELL-6, OQ-48: bought goods or coins
NOT_BOUGHT = "not-bought"  # ITM-SELL-4, ITM-DAY-14/15: nobody here buys it
PURSE_SPENT = "purse-spent"  # ITM-SELL-4, ITM-DAY-17, OQ-55: today's purse cannot pay it
NOT_WORN = "not-worn"  # ITM-OUT-9, ITM-USE-4: a slot or binding item used while not worn
NO_USE_LEFT = "no-use-left"  # ITM-OUT-9, ITM-CHG-1: not enough charges left for the use
NO_DIFFICULTY = "no-difficulty"  # ITM-GATE-4: the gate's difficulty stat is missing
NO_RESTS = "no-rests"  # engine, ITM-RCHG-3: [sheet: op="rest"] in a ruleset without rests
UNKNOWN_REST = "unknown-rest"  # engine, ITM-RCHG-1: rest= names no rest of the ruleset
NOTHING_TO_CHECK = "nothing-to-check"  # ITM-INSP-9: nothing could give it away, or no check can
HELD = "held"  # ITM-NOTICE-3: a companion noticed a fake before anyone paid
NOT_A_FAKE = "not-a-fake"  # engine, ITM-FAKE-11: reveal of an item that is what it seems
UNKNOWN_WAY = "unknown-way"  # engine, ITM-SEE-4, OQ-62: with= names no way of revealsFakes
ALREADY_INSPECTED = "already-inspected"  # engine, ITM-INSP-7: one attempt per character per item
UNKNOWN_STACK = "unknown-stack"  # engine, §0.6: stack= is no position of a stack in the bag
NOT_SAME_KIND = "not-same-kind"  # engine, ITM-STACK-1: merge of stacks of different things
NOT_LOOSE = "not-loose"  # engine, ITM-STACK-1..3: merge of an equipped/bound/charged/on stack
STACK_FULL = "stack-full"  # engine, ITM-STACK-1: merge into a stack already at its limit
NO_TOGGLE = "no-toggle"  # engine, ITM-TOG-1/3: toggle of an item that has no switch
