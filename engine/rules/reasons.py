"""Reason codes of refused answers: the spec's strings, each next to the rule it comes from.

Codes the spec leaves to the engine ("any code is the Engine's own",
docs/rules/items.md#appendix-b-reason-codes) are marked *engine*. Each code is defined once, with
what it means: :data:`MEANINGS` is what ``docs/tags.md`` shows.
"""

MEANINGS: dict[str, str] = {}


def _code(code: str, meaning: str) -> str:
    MEANINGS[code] = meaning
    return code


MALFORMED = _code("malformed",
    "a tag that does not parse (or an event that is not a JSON object of a known shape) is "
    "answered refused (docs/design.md#tags)")
UNSUPPORTED = _code("unsupported", "engine: a tag kind or action this version does not answer yet")
UNKNOWN_ACTION = _code("unknown-action", "engine: an inventory action= that does not exist")
MISSING_ATTRIBUTE = _code("missing-attribute",
    "engine: a required attribute (item=, amount=) is absent")
BAD_COUNT = _code("bad-count", "engine: count= is not a whole number from 1 up")
UNKNOWN_CHARACTER = _code("unknown-character", "engine: who= names nobody in the party (OQ-CHK-5)")
SERVICE = _code("service", "ITM-SVC-3: a service is never put into a bag")
NOT_RULESET_ITEM = _code("not-ruleset-item",
    "the name is no item of this ruleset, and this ruleset takes no plain items (ITM-FREE-4, "
    "OQ-9)")
NOT_HELD = _code("not-held", "engine: remove of something the bag does not hold")
NOT_ENOUGH = _code("not-enough", "engine: remove of more than the bag holds (all or nothing)")
TOO_MANY_STACKS = _code("too-many-stacks", "engine, OQ-4: more stacks than one bag takes")
TOO_MANY_TAGS = _code("too-many-tags", "engine: past MAX_TAGS_PER_REPLY tags in one reply")
REPEATED_TAG = _code("repeated-tag", "engine: a tag written more than MAX_REPEATS times in one "
                     "reply, the same kind and attributes: a model in a loop, not a GM's intent")
TOO_MANY_THINGS = _code("too-many-things",
    "engine: an item= list of over MAX_LISTED things")
NOTHING_CARRIED = _code("nothing-carried", "ITM-CARRY-7: nobody could carry any of it")
CANNOT_AFFORD = _code("cannot-afford", "the purse cannot pay it (ITM-PAY-7, ITM-BUY-14)")
UNKNOWN_COIN = _code("unknown-coin", "amount= names no coin of this game (ITM-PAY-8, ITM-EARN-3)")
NO_CURRENCIES = _code("no-currencies", "this game has no coins (ITM-PAY-9, ITM-EARN-3)")
BAD_AMOUNT = _code("bad-amount", "engine: amount= is not a whole count and a coin (ITM-PAY-2)")
CURSED = _code("cursed", "ITM-BIND-3: a bound cursed item is not unequipped, given or removed")
NO_SLOTS = _code("no-slots", "ITM-CMD-1: equip/unequip in a ruleset without slots")
NO_BINDING = _code("no-binding", "ITM-CMD-2: bind/unbind in a ruleset without binding")
NOT_EQUIPPABLE = _code("not-equippable", "ITM-SLOT-1: the item takes no slots")
NOT_BINDABLE = _code("not-bindable", "ITM-BIND-1: the item has no binds")
SLOTS_FULL = _code("slots-full", "ITM-SLOT-1: the bearer does not have those slots free")
BINDING_FULL = _code("binding-full", "ITM-BIND-1: already binding.max items bound")
ALREADY = _code("already", "engine: equip an equipped item, bind a bound one, and so on")
NO_PROPOSALS = _code("no-proposals", "ITM-PROP-2, OQ-14: propose: false forbids inventing")
NO_LOOT_TABLES = _code("no-loot-tables",
    "engine: [loot:] in a ruleset without lootTables (ITM-LOOT-4)")
UNKNOWN_TABLE = _code("unknown-table", "engine, OQ-38: table= names no loot table")
NO_RESOLUTION = _code("no-resolution",
    "CHK-GEN-1: [skill_check:] in a ruleset without \"resolution\"")
UNKNOWN_SKILL = _code("unknown-skill", "engine, CHK-GEN-A1: skill= names no skill of the sheet")
UNKNOWN_SAVE = _code("unknown-save",
    "engine, CHK-GEN-A1, OQ-CHK-6: save= names no save of the sheet")
UNKNOWN_ABILITY = _code("unknown-ability",
    "engine, CHK-GEN-A1, OQ-CHK-6: ability= names no ability")
MISSING_DIFFICULTY = _code("missing-difficulty", "OQ-CHK-10: a check with no dc= nor difficulty=")
UNKNOWN_GEAR = _code("unknown-gear", "engine: a starting gear id the ruleset lacks")
BAD_SELECTION = _code("bad-selection",
    "engine: choices/oneOf that do not pick an option (ITM-GEAR-5)")
ALREADY_TAKEN = _code("already-taken", "engine, ITM-GEAR-12: the group again without confirming")
NOTHING_LEFT = _code("nothing-left", "engine, ITM-GEAR-19: a layer took out everything")
TOO_HEAVY = _code("too-heavy", "engine, ITM-GEAR-16, OQ-42: past the bearer's carry limit")
NO_MARKET = _code("no-market", "engine, ITM-MKTV-3: buy/sell in a ruleset without items.market")
UNKNOWN_SIZE = _code("unknown-size", "engine, ITM-PLACE-3, OQ-45: a place size the market lacks")
NO_PLACE = _code("no-place", "ITM-BUY-8, ITM-SELL-4, OQ-46: no market place is in effect")
UNKNOWN_LEVEL = _code("unknown-level", "ITM-BUY-9: a price level the market does not have")
UNKNOWN_ITEM = _code("unknown-item", "ITM-BUY-9: an item the ruleset does not have")
NOT_FOR_SALE = _code("not-for-sale", "ITM-BUY-10, ITM-SELL-4, ITM-MKT-19..21: no price")
NOT_HERE = _code("not-here", "ITM-BUY-11: a place too small for the item")
NO_SELLER = _code("no-seller", "ITM-BUY-12, OQ-47: nobody here sells it (or an unknown seller)")
NOT_TO_YOU = _code("not-to-you", "ITM-BUY-13: the buyer does not meet the seller's only")
SOLD_OUT = _code("sold-out", "ITM-BUY-15, ITM-DAY-9: today's limited stock is sold")
CANNOT_CARRY = _code("cannot-carry", "engine, ITM-BUY-14, ITM-SELL-6, OQ-48: bought goods or coins")
NOT_BOUGHT = _code("not-bought", "ITM-SELL-4, ITM-DAY-14/15: nobody here buys it")
PURSE_SPENT = _code("purse-spent", "ITM-SELL-4, ITM-DAY-17, OQ-55: today's purse cannot pay it")
NOT_WORN = _code("not-worn", "ITM-OUT-9, ITM-USE-4: a slot or binding item used while not worn")
NO_USE_LEFT = _code("no-use-left", "ITM-OUT-9, ITM-CHG-1: not enough charges left for the use")
NO_DIFFICULTY = _code("no-difficulty", "ITM-GATE-4: the gate's difficulty stat is missing")
NO_RESTS = _code("no-rests", "engine, ITM-RCHG-3: [sheet: op=\"rest\"] in a ruleset without rests")
UNKNOWN_REST = _code("unknown-rest", "engine, ITM-RCHG-1: rest= names no rest of the ruleset")
NOTHING_TO_CHECK = _code("nothing-to-check",
    "ITM-INSP-9: nothing could give it away, or no check can")
HELD = _code("held", "ITM-NOTICE-3: a companion noticed a fake before anyone paid")
NOT_A_FAKE = _code("not-a-fake", "engine, ITM-FAKE-11: reveal of an item that is what it seems")
UNKNOWN_WAY = _code("unknown-way", "engine, ITM-SEE-4, OQ-62: with= names no way of revealsFakes")
ALREADY_INSPECTED = _code("already-inspected",
    "engine, ITM-INSP-7: one attempt per character per item")
UNKNOWN_STACK = _code("unknown-stack", "engine: stack= is no position of a stack in the bag")
NOT_SAME_KIND = _code("not-same-kind", "engine, ITM-STACK-1: merge of stacks of different things")
NOT_LOOSE = _code("not-loose",
    "engine, ITM-STACK-1..3: merge of an equipped/bound/charged/on stack")
STACK_FULL = _code("stack-full", "engine, ITM-STACK-1: merge into a stack already at its limit")
NO_TOGGLE = _code("no-toggle", "engine, ITM-TOG-1/3: toggle of an item that has no switch")

# Combat (docs/design.md#combat-reasons, docs/rules/combat.md#part-a--fights-under-a-ruleset)
NO_COMBAT = _code("no-combat",
    'engine: the ruleset turns fights off ("kind": "none") or gives no '
    "enemy templates for a foe to join from (CMB-TPL-1)")
NO_ENCOUNTER = _code("no-encounter",
    'engine: an attack, join, condition or end while no fight is on')
UNKNOWN_COMBATANT = _code("unknown-combatant",
    'engine: target= (or who=) names nobody in the fight, or a hero joins twice')
TARGET_DOWN = _code("target-down", 'engine: the target is already at 0 hit points')
DOWNED = _code("downed",
    "CMB-TURN-8: the attacker is at 0 hit points (downed earlier, in this round too) and does "
    "not act; a hero healed above 0 acts again")
NOT_BLEEDING = _code("not-bleeding",
    'D100-PARTY-7: op="defend" how="tend" for= an ally that stands, bled out or '
    "had its bleeding stopped already")
UNKNOWN_WEAPON = _code("unknown-weapon",
    'engine: with= names no weapon the attacker has (ITM-WPN-1)')
UNKNOWN_BUDGET = _code("unknown-budget",
    'engine: action= names no turn action (CMB-TURN-16, ITM-WPN-5)')
CANNOT_ACT = _code("cannot-act",
    "CMB-TYPE-2: the attacker is under a condition with noActions")
COMBAT_ONLY = _code("combat-only",
    "CMB-ATK-2: a [skill_check:] naming the attack or initiative check, which only a fight rolls")
PLAYERS_ROLL = _code("players-roll",
    "CMB-OUTC-1: in an outcome fight only heroes roll; what a foe does comes back through the "
    "hero's roll")
NO_TIME = _code("no-time",
    "CMB-TURN-12: an attack past the action budget of the round is stamped NO TIME")
OUT_OF_REACH = _code("out-of-reach",
    'ITM-WPN-16..18, CMB-GRID-3: range="far" with a weapon that has no range (a melee '
    "weapon reaches its reach, one with neither reach nor range and unarmed one cell)")
UNKNOWN_OUTCOME = _code("unknown-outcome",
    'engine: op="end" outcome= is not victory, defeat, fled or truce')
UNKNOWN_CONDITION = _code("unknown-condition",
    'engine: op="condition" add= or remove= names no condition of the ruleset')
NO_CONDITION = _code("no-condition",
    'engine: op="condition" remove= names a condition the combatant does not bear')
CONDITION_IMMUNE = _code("condition-immune",
    "ITM-DEF-3, ITM-ARM-5: the combatant is immune to the condition, which is never applied")
NO_AMMO = _code("no-ammo",
    "ITM-AMMO-4, ITM-CLIP-5: the attacker carries too little of what the weapon shoots for one "
    "attack, or nothing to load a reload with")
NOT_LOADED = _code("not-loaded",
    "ITM-CLIP-4: a weapon with a clip holds too little loaded for one attack")
UNKNOWN_MODE = _code("unknown-mode", "ITM-MODE-2: mode= names no mode of the weapon")
NO_CLIP = _code("no-clip",
    'engine, ITM-CLIP-5: op="reload" of a weapon that keeps no loaded count (no clip)')
# Sheet abilities and spells in a fight (docs/rules/combat.md#a8-reactions,
# docs/rules/combat.md#a11-abilities-against-foes-and-the-bestiary)
UNKNOWN_ENTRY = _code("unknown-entry", "CMB-ABIL-1: use= names no entry the hero chose that a "
                      "fight can use (its mechanics have no fight keys)")
REACTION_ONLY = _code("reaction-only", "CMB-REACT-5: a reaction is never one of the turn's "
                      "actions; it fires from a standing order")
TOO_MANY_TARGETS = _code("too-many-targets",
                         "engine: target= names more than the ability's targetCount, a foe's "
                         "ability's targets, or a weapon mode's targets (ITM-MODE-6; one "
                         "without a mode)")
USED_UP = _code("used-up", "engine, CMB-ABIL-4: a foe's ability has no uses left this fight "
                "(its template's uses)")
CANNOT_PAY = _code("cannot-pay", "engine: the hero's pools cannot pay the ability's cost "
                   "(a spell slot, mana)")
# Narrative fights: a foe's technique (D100-DEF-8), a won fight's loot record (D100-PARTY-10)
UNKNOWN_TECHNIQUE = _code("unknown-technique", "D100-DEF-8: technique= names none of the "
                          "techniques of the foe's template (or a hero wrote it)")
NO_SPOILS = _code("no-spoils", "D100-PARTY-10: want/pass names no item of a won narrative "
                  "fight's loot record, or a hero who did not stand at the victory")
