"""What the GM reads of a fight: the COMBAT block, one module per combat kind."""
