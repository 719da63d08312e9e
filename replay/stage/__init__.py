"""The pipeline stage: an OpenAI-compatible proxy that answers the GM's tags."""
