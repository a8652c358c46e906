"""What Python's builtins and containers do, as the purity fact reads it (`jaxfix.facts.purity`): which builtins
do I/O, which compute without effects, which call a function they are given, which methods read or change their
receiver."""

from __future__ import annotations

# Builtins that talk to the outside world.
IO_BUILTINS = frozenset({"print", "open", "input", "breakpoint", "help"})
# Builtins that compute a value and change nothing (those that call a function they are given call it).
PURE_BUILTINS = frozenset(
    """
    abs all any ascii bin bool callable chr complex dict divmod enumerate filter float format frozenset getattr
    hasattr hash hex id int isinstance issubclass len list map max min oct ord pow range repr reversed round set
    slice sorted str sum tuple type zip
    """.split()
)
# Builtins that call a function they are given: (positions, keywords) of the function arguments.
HIGHER_ORDER_BUILTINS: dict[str, tuple[tuple[int, ...], tuple[str, ...]]] = {
    "map": ((0,), ()),
    "filter": ((0,), ()),
    "sorted": ((), ("key",)),
    "max": ((), ("key",)),
    "min": ((), ("key",)),
    "functools.partial": ((0,), ("func",)),
}
# Methods that read a container without changing it (dict, list, tuple, str).
READING_METHODS = frozenset({"get", "items", "keys", "values", "index", "count", "copy", "format", "join", "split"})
# Methods that change their receiver (containers, arrays of NumPy, files, generators).
MUTATING_METHODS = frozenset(
    """
    append extend insert pop remove clear update setdefault popitem add discard sort reverse fill put resize
    itemset __setitem__ __delitem__ write writelines send
    """.split()
)
# The mutating methods that add per-step results to a list (what `lax.scan` collects instead).
COLLECTING_METHODS = frozenset({"append", "extend", "insert"})
# Builtins that make a new, empty or copied, container nobody else holds.
FRESH_CONTAINER_CALLS = frozenset({"list", "dict", "set"})
