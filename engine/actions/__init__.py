"""The actions floor: every tag action and host event declared once, and the reducer that answers a
reply's tags with them (docs/design.md#actions-one-declaration-each)."""
