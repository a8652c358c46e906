"""The one table of codemods: found by importing every module of `jaxfix.codemods`, selected by code or name."""

from __future__ import annotations

import functools
import importlib
import pkgutil
from typing import Iterable

from jaxfix.codemod import Codemod


class UnknownSelector(ValueError):
    """A --select/--ignore entry that names no codemod: an error, since a typo would silently select nothing."""


@functools.lru_cache(maxsize=1)
def all_codemods() -> tuple[type[Codemod], ...]:
    """Every codemod class, sorted by code; each module of jaxfix.codemods defines exactly one."""
    import jaxfix.codemods as package

    found: list[type[Codemod]] = []
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        classes = [
            obj
            for obj in vars(module).values()
            if isinstance(obj, type) and issubclass(obj, Codemod) and obj is not Codemod and obj.__module__ == module.__name__
        ]
        if len(classes) != 1:
            raise RuntimeError(f"{module.__name__} must define exactly one Codemod, found {len(classes)}")
        found.extend(classes)
    return tuple(sorted(found, key=lambda c: c.code))


def by_code(code: str) -> type[Codemod] | None:
    wanted = code.strip().lower()
    for codemod in all_codemods():
        if codemod.code.lower() == wanted or codemod.name == wanted:
            return codemod
    return None


def _covers(codemod: type[Codemod], selector: str) -> bool:
    """Whether `selector` (a code, a code prefix, a name or ALL) names `codemod`, opt-in or not: what `--ignore`
    removes."""
    selector = selector.strip()
    return selector.upper() == "ALL" or codemod.code.upper().startswith(selector.upper()) or codemod.name == selector.lower()


def _matches(codemod: type[Codemod], selector: str) -> bool:
    """Whether `selector` selects `codemod`: as `_covers`, but an opt-in codemod only by its exact code or name."""
    if codemod.opt_in:
        return codemod.code.upper() == selector.strip().upper() or codemod.name == selector.strip().lower()
    return _covers(codemod, selector)


def _names_some(selector: str) -> bool:
    """Whether `selector` names any codemod at all: a typo is an error, since it would silently select nothing."""
    return any(_covers(c, selector) for c in all_codemods())


def select(
    selectors: Iterable[str] | None = None, ignore: Iterable[str] | None = None, extend: Iterable[str] | None = None
) -> tuple[type[Codemod], ...]:
    """Codemods chosen by codes, code prefixes (`JF1`) or names; none given means every codemod that is not
    opt-in. `extend` adds to that choice (`--extend-select`); `ignore` removes from it."""
    selectors = [s for s in (selectors or []) if s.strip()]
    ignore = [s for s in (ignore or []) if s.strip()]
    extend = [s for s in (extend or []) if s.strip()]
    for selector in [*selectors, *ignore, *extend]:
        if not _names_some(selector):
            raise UnknownSelector(f"'{selector}' matches no codemod (see `jaxfix rules`)")
    chosen = [
        c
        for c in all_codemods()
        if (any(_matches(c, s) for s in selectors) if selectors else not c.opt_in) or any(_matches(c, s) for s in extend)
    ]
    return tuple(c for c in chosen if not any(_covers(c, s) for s in ignore))
