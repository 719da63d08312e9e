"""Read the bracket tags a GM writes in prose, e.g. ``[inventory: action="add" item="Rope"]``.

Syntax only: the grammar is grammars/tags.lark; the engine decides what a tag means.
"""

from tagparse.canonical import render, render_tag
from tagparse.grammar import TAG_KINDS
from tagparse.imitation import requests_only
from tagparse.model import Diagnostic, ScanResult, Tag
from tagparse.scanner import scan
from tagparse.streaming import unfinished_tag

__all__ = ["TAG_KINDS", "Diagnostic", "ScanResult", "Tag", "render", "render_tag",
           "requests_only", "scan", "unfinished_tag"]
