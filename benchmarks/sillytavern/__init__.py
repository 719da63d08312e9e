"""The SillyTavern real-client check (benchmarks/sillytavern_check.py): its parts."""
