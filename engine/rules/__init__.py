"""The rules floor: pure questions and transformations of state and ruleset values (what a bag
weighs, how change is made, what a check adds). No tags, no sentences."""
