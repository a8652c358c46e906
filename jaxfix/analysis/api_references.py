"""Which row of a table of JAX APIs a name refers to: what JF901 (deprecated-api) and JF902 (legacy-prng-key)
share, each reading its own rows of `jaxfix.facts.knowledge.deprecations` (the table looked up by qualified
name, the text screen, the docs' table and the hints' wording). Both read the references themselves from
`jaxfix.facts.module` (`FileFacts.references`, `stored`, `in_shim`), on `ast`."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Sequence

from jaxfix.facts.knowledge.deprecations import (
    ADDED_KEYWORDS, AT, HINT, HINT_REASONS, JIT, LEGACY_ROWS, MOVE, SHARD_MAP, TABLE, TIE_IN, TYPE, UNSAFE_RENAMES,
)  # fmt: skip


@dataclass(frozen=True)
class Api:
    old: str
    how: str
    new: str
    deprecated: str
    removed: str

    @property
    def module(self) -> bool:
        return self.old.endswith(".")

    @property
    def name(self) -> str:
        return self.old.rstrip(".")

    @property
    def status(self) -> str:
        if self.removed == "yes":
            return f"was deprecated in JAX {self.deprecated} and has since been removed"
        if self.removed:
            return f"was removed in JAX {self.removed}"
        if self.deprecated:
            return f"is deprecated since JAX {self.deprecated}"
        return "is a legacy API"


APIS: tuple[Api, ...] = tuple(Api(*row) for row in TABLE)


def _fewest_tests(groups: set[tuple[str, ...]]) -> tuple[tuple[str, ...], ...]:
    """Word groups that a text holds one of (every word of it) exactly when it holds one of `groups`, in the order
    a text screen tries them: short groups of short words first, which decide most real modules at once (`util`,
    `partial`), and none that holding another one implies (`("cache", "util")` holds `("util",)`, `("defjvp_all",)`
    holds `("defjvp",)`). A group is (a row's last name, its module's last name): the rarer word first. Over the
    1,401 real files the text screen cost 0.26 s trying every group, module name first; 0.09 s so."""
    kept: list[tuple[str, ...]] = []
    for group in sorted(groups, key=lambda g: (len(g), sum(map(len, g)), g)):
        if not any(all(any(word in mine for mine in group) for word in other) for other in kept):
            kept.append(group)
    return tuple(kept)


class ApiTable:
    """Some rows of the table, looked up by qualified name; each rule of this family reads its own rows."""

    def __init__(self, apis: Sequence[Api]) -> None:
        self.apis = tuple(apis)
        self.exact = {api.old: api for api in self.apis if not api.module}
        self.modules = sorted((api for api in self.apis if api.module), key=lambda a: -len(a.old))
        # A reference to a row spells the row's last name, and its module's last name unless that is `jax` (in
        # the reference or in the import that binds it), so a module missing one of these pairs has nothing to find.
        self.screen = _fewest_tests({tuple(p for p in api.name.split(".")[:-3:-1] if p != "jax") for api in self.apis})
        self._found: dict[str, tuple[Api, str] | None] = {}  # `lookup`'s answers
        self._reached: dict[str, bool] = {}  # `reaches`'s

    def lookup(self, qualified: str) -> tuple[Api, str] | None:
        """The row for `qualified` and the prefix of it that the row names (`jax.tree_map` of
        `jax.tree_map.__doc__`), remembered: the screens ask it of every name each module spells."""
        try:
            return self._found[qualified]
        except KeyError:
            found = self._found[qualified] = self._lookup(qualified)
            return found

    def _lookup(self, qualified: str) -> tuple[Api, str] | None:
        parts = qualified.split(".")
        for cut in range(len(parts), 0, -1):
            prefix = ".".join(parts[:cut])
            if prefix in self.exact:
                return self.exact[prefix], prefix
        for api in self.modules:
            if qualified == api.name or qualified.startswith(api.old):
                return api, api.name
        return None

    def reaches(self, imported: str) -> bool:
        """Whether a name spelled through an import of `imported` (it, or an attribute of it) may be a row: what
        `check` asks of every import before it resolves any name."""
        found = self._reached.get(imported)
        if found is None:
            found = self._reached[imported] = self.lookup(imported) is not None or any(
                api.name.startswith(imported + ".") for api in self.apis
            )
        return found

    def mapped(self, qualified: str) -> bool:
        """Whether an import of `qualified` imports an old API of the table (not a module that merely contains one)."""
        found = self.lookup(qualified)
        return found is not None and found[0].how != MOVE and found[1] == qualified


def descend(node: ast.AST, steps: int) -> ast.AST:
    """`node` less its last `steps` attributes (`jax.tree_map` of `jax.tree_map.__doc__`)."""
    for _ in range(steps):
        if not isinstance(node, ast.Attribute):
            break
        node = node.value
    return node


DEPRECATED = ApiTable([api for api in APIS if api.old not in LEGACY_ROWS])
LEGACY = ApiTable([api for api in APIS if api.old in LEGACY_ROWS])


# ---- what a rule of the family says and shows ---------------------------------------------------------------------


def hint_message(api: Api) -> str:
    """What a hint says: the old name, its status, what to consider instead, and why that is no fix."""
    shown = api.new if " " in api.new or "(" in api.new else f"`{api.new}`"
    message = f"`{api.name}` {api.status}; consider {shown}"
    reason = HINT_REASONS.get(api.old)
    return f"{message} ({reason})" if reason else message


def table_doc(table: ApiTable) -> str:
    """The `## APIs` section of a rule's docs: the rows of `table` it reports, with their fixes and versions."""
    lines = ["## APIs", "| API | Use instead | Fix | Deprecated in | Removed in |", "|---|---|---|---|---|"]
    for api in table.apis:
        new = f"`{api.new.rstrip('.')}`" if api.how != HINT else api.new.replace("*", "\\*")
        if api.how == AT:
            new = f"`x.at[idx].{api.new}(y)`"
        elif api.how == TIE_IN:
            new = "its second argument"
        elif api.old in ADDED_KEYWORDS:
            new += " with " + ", ".join(f"`{k}={v}`" for k, v in ADDED_KEYWORDS[api.old].items())
        unknown = {"yes": "yes (version unknown)", "": "not yet" if api.deprecated else "-"}
        removed = unknown.get(api.removed, api.removed)
        lines.append(f"| `{api.name}` | {new} | {_fix_kind(api)} | {api.deprecated or '-'} | {removed} |")
    return "\n".join(lines) + "\n"


def _fix_kind(api: Api) -> str:
    """The docs table's Fix column for a row."""
    if api.how == HINT:
        return "hint"
    if api.how == MOVE:
        return "safe (imports)"
    if api.how == SHARD_MAP or api.old in UNSAFE_RENAMES:
        return "unsafe"
    if api.how == TYPE:
        return "safe in annotations, else unsafe"
    if api.how == TIE_IN:
        return "safe, unsafe if the first argument calls"
    if api.how == JIT:
        return "safe with `Sharding` objects; unsafe under `with mesh:`; none with `PartitionSpec`s"
    return "safe"


def may_mention(text: str, table: ApiTable) -> bool:
    """The text screen: False only when `text` cannot refer to a row of `table` (see `ApiTable.screen`)."""
    return any(all(word in text for word in words) for words in table.screen)


class ReadsApiTable:
    """What JF901 and JF902 share as readers of one table, mixed into their Codemod classes (neither imports the
    other): the text screen and the docs' table of rows."""

    table: ApiTable

    @classmethod
    def docs(cls) -> str:
        """The docstring, then the table of the APIs this rule reports (built from the rows it reads)."""
        return super().docs() + "\n\n" + table_doc(cls.table)

    @classmethod
    def may_match(cls, text: str) -> bool:
        return may_mention(text, cls.table)
