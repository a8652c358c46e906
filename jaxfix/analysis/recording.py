"""What a recorded run says about the arguments of the project's functions, as evidence for the rules.

`jaxfix record -- COMMAND` keeps, per function, the distinct signatures it was called with in
`.jaxfix/signatures.json` at the project root (jaxfix/verify/record.py; specs as in verify/strategies.py). For the
rules, one fact of them matters: which parameters held one array in every recorded call, and of which rank. A run
is evidence, not proof (another caller may pass a tuple), so a fix that relies on it is an unsafe one and says so;
`jaxfix apply --verify` checks it against inputs drawn from the same record. The index reads the record
(project_io.read_record): nothing here reads a file.
"""

from __future__ import annotations

from typing import NamedTuple

from jaxfix.facts.arrays import VARYING  # noqa: F401 (one copy, in facts/arrays.py, with `describe`; read from here)


class Recorded(NamedTuple):
    """One function's recorded calls: how many distinct signatures, and per positional parameter (by position,
    as the recorder lists them) and keyword-only one (by name), the rank of the array it held in every one of
    them (VARYING when the ranks differ), or None when some call passed anything but one array."""

    calls: int
    positional: tuple[int | None, ...]
    keywords: dict[str, int | None]


def summarize(calls: list) -> Recorded | None:
    """What every one of `calls` ({"args": [spec, ...], "kwargs": {name: spec}}) agrees on; None when they do not
    list the same positional parameters (the record is of another version of the function) or are malformed."""
    if not calls or not all(isinstance(c, dict) and isinstance(c.get("args", []), list) for c in calls):
        return None
    lengths = {len(c.get("args", [])) for c in calls}
    if len(lengths) != 1:
        return None
    (length,) = lengths
    positional = tuple(_agreed([c["args"][i] if "args" in c else None for c in calls]) for i in range(length))
    names = set()
    for call in calls:
        kwargs = call.get("kwargs", {})
        if not isinstance(kwargs, dict):
            return None
        names |= set(kwargs)
    keywords = {name: _agreed([c.get("kwargs", {}).get(name) for c in calls]) for name in sorted(names)}
    return Recorded(len(calls), positional, keywords)


def _agreed(specs: list) -> int | None:
    """The rank of the array every spec describes, VARYING if the ranks differ, None if some spec is no array."""
    ranks = set()
    for spec in specs:
        if not isinstance(spec, dict) or spec.get("kind") != "array" or not isinstance(spec.get("shape"), list):
            return None
        ranks.add(len(spec["shape"]))
    if not ranks:
        return None
    return ranks.pop() if len(ranks) == 1 else VARYING
