"""``[combat:]`` and ``[attack:]``: the fight's declarations and handlers, one module per job
(joining, arms, conditions, reactions, items used in a fight) and one per combat kind
(``formula``, ``pool``, ``narrative/``, ``outcome/``)."""
