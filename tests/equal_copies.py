"""Values equal to a given one but other objects, as values read back from a database are.

A test that builds its rows from the literals it compares them with would pass code that compares
identity (``is``) where it must compare equality: the interpreter shares equal string literals.
"""

from __future__ import annotations


def fresh(text: str) -> str:
    """An equal string that is another object, as one read from a database is (``is`` would tell them apart)."""
    return "".join(list(text))
