"""Outcome-based combat: a hero's action read through outcome tiers, both ways."""
