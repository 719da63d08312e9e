"""The fight's pure rules: no tags and no sentences, one module per combat kind and per job."""
