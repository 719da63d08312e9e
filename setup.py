"""The C part of gmtags: the tag scanner's canonical shortcut (tagparse/_scan.c).

Everything else is declared in pyproject.toml. The extension is optional: where it cannot be
built (no C compiler), tagparse scans with its regex alone, with the same results.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "tagparse._scan",
            ["tagparse/_scan.c"],
            depends=["tagparse/_scan_reader.h"],
            optional=True,
        )
    ]
)
