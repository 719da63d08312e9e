"""Narrative d100 combat: strikes graded by the GM, defences, bleeding, spoils, items used."""
