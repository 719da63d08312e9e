# The scanner's canonical shortcut in C (tagparse/_scan.c).
from tagparse.model import Tag

def scan_canonical(
    text: str,
    position: int,
    tags: list[Tag],
    tag_type: type[Tag],
    kinds: tuple[str, ...],
    maybe: bytes,
    /,
) -> int: ...
