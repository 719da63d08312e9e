"""What a check reads off the roller's sheet and what modifies it (docs/rules/checks.md,
docs/rules/items.md#7-checks-outside-combat)."""
