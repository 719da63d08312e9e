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
NOTHING_CARRIED = "nothing-carried"  # ITM-CARRY-7: nobody could carry any of it
CANNOT_AFFORD = "cannot-afford"  # ITM-PAY-7, ITM-BUY-14
UNKNOWN_COIN = "unknown-coin"  # ITM-PAY-8, ITM-EARN-3
NO_CURRENCIES = "no-currencies"  # ITM-PAY-9, ITM-EARN-3
BAD_AMOUNT = "bad-amount"  # engine: amount= is not a whole count and a coin (ITM-PAY-2)
