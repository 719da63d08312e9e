"""Lark grammars shipped as package data; tags.lark is the one definition of tag syntax."""
