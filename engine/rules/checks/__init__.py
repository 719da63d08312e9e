"""What a check reads off the roller's sheet and what modifies it (checks.md, items.md §7)."""
