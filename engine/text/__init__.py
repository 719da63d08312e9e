"""The text floor: what the GM and the player read — the GM instructions, the state blocks,
the host's descriptions and the tag reference — written from declarations, records and state."""
