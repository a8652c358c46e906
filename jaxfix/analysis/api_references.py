"""Which row of a table of JAX APIs a name refers to: the references that JF901 (deprecated-api) and JF902
(legacy-prng-key) share, each reading its own rows of `jaxfix.facts.knowledge.deprecations`. On LibCST (a
dotted name resolved through the module's imports, whether it is assigned or sits in a compatibility shim) and,
for the display-only hints, on the `ast` alone (`hint_findings`). JF902 reads its references from
`jaxfix.facts.module` (`FileFacts.references`) and needs none of the LibCST half."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Sequence

import libcst as cst
from libcst.metadata import ImportAssignment

from jaxfix.analysis.screen import Screen, dotted, libcst_span, source_bytes
from jaxfix.analysis.syntax import dotted_name
from jaxfix.diagnostics import Diagnostic, Fix, Position, Safety
from jaxfix.facts.knowledge.deprecations import (
    ADDED_KEYWORDS, AT, HINT, HINT_REASONS, JIT, LEGACY_ROWS, MOVE, SHARD_MAP, TABLE, TIE_IN, TYPE, UNSAFE_RENAMES,
)  # fmt: skip

_MISSING = {"ImportError", "ModuleNotFoundError", "AttributeError"}  # what a missing API raises


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

    def mapped(self, qualified: str) -> bool:
        """Whether an import of `qualified` imports an old API of the table (not a module that merely contains one)."""
        found = self.lookup(qualified)
        return found is not None and found[0].how != MOVE and found[1] == qualified


DEPRECATED = ApiTable([api for api in APIS if api.old not in LEGACY_ROWS])
LEGACY = ApiTable([api for api in APIS if api.old in LEGACY_ROWS])


# ---- references on LibCST ----------------------------------------------------------------------------------------


def qualified_reference(context, node: cst.CSTNode) -> str | None:
    """The one imported name `node` refers to on every path (`Binder.imported`); None if it is local, unknown, or
    bound to several names (a shim)."""
    return context.names.imported(node)


def is_dotted(node: cst.CSTNode) -> bool:
    """`a`, `a.b.c`: names and attributes only."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name)


def descend(node, steps: int):
    """`node` less its last `steps` attributes (`jax.tree_map` of `jax.tree_map.__doc__`), on LibCST or `ast`."""
    for _ in range(steps):
        if not isinstance(node, (cst.Attribute, ast.Attribute)):
            break
        node = node.value
    return node


def stored(context, node: cst.CSTNode) -> bool:
    """Whether `node` is assigned or deleted (`jax.tree_map = ...`, `del x.y`, a `for` or `with` target)."""
    child, parent = node, context.parents.get(node)
    while isinstance(parent, (cst.Tuple, cst.List, cst.Element, cst.StarredElement)):
        child, parent = parent, context.parents.get(parent)
    if isinstance(parent, (cst.AssignTarget, cst.Del, cst.AsName)):
        return True
    if isinstance(parent, (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor, cst.NamedExpr)):
        return parent.target is child
    return False


def in_shim(context, node: cst.CSTNode) -> bool:
    """Inside a compatibility shim: a `try` catching ImportError/AttributeError or such a handler (the fallback
    for another JAX version), or an `if` on hasattr/version."""
    child, current = node, context.parents.get(node)
    while current is not None:
        in_try = isinstance(current, cst.Try) and child is current.body
        if in_try and any(_catches_missing(h) for h in current.handlers):
            return True
        if isinstance(current, cst.ExceptHandler) and child is current.body and _catches_missing(current):
            return True
        if isinstance(current, (cst.If, cst.IfExp, cst.While)) and child is not current.test:
            test = context.code_for(current.test)
            if "hasattr" in test or "version" in test.lower():
                return True
        child, current = current, context.parents.get(current)
    return False


def _catches_missing(handler: cst.ExceptHandler) -> bool:
    if handler.type is None:
        return False  # a bare `except:` guards anything; it does not mark a compatibility shim
    kinds = handler.type.elements if isinstance(handler.type, cst.Tuple) else [handler.type]
    for kind in kinds:
        expr = kind.value if isinstance(kind, cst.Element) else kind
        if is_dotted(expr) and dotted_name(expr).rsplit(".", 1)[-1] in _MISSING:
            return True
    return False


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


def may_reference(screen: Screen, table: ApiTable) -> bool:
    """The `ast` screen. Everything a rule of this family reports starts from `lookup` of an import statement's
    name, or of the qualified name of a name node, which LibCST derives from an import of its first part: so some
    import must name a row, or some name spelled in the module must resolve through some import to one."""
    if any(table.lookup(name) for name in screen.imported_names()):
        return True
    return any(table.lookup(qualified) for qualified in screen.spelled_names)


def hint_findings(screen: Screen, table: ApiTable, code: str, name: str) -> list[Diagnostic] | None:
    """The display-only hints of rule `code` (`jax.random.PRNGKey`, `jax.device_put_replicated`, ...) about
    the rows of `table`, from the `ast` alone,
    where the module is plain enough to be sure of the LibCST run's answer (see `_hints`); None otherwise.
    Nearly all of JF901's and JF902's findings in real code are hints, and a module whose only findings are hints
    then skips LibCST altogether."""
    spots = _hints(screen, table)
    if spots is None:
        return None
    found = []
    for spot, api in spots:
        start, end = libcst_span(screen, spot)
        fix = Fix(Safety.DISPLAY_ONLY, f"Consider {api.new}", ())
        found.append(Diagnostic(code, name, hint_message(api), Position(*start), Position(*end), fix))
    return found


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


class VisitsApiTable(ReadsApiTable):
    """A reader of a table that still runs on LibCST where `check` cannot decide (JF901): `check` answers the
    display-only hints from the `ast` where the module is plain enough (`hint_findings`), and the visit of each
    outermost dotted name that resolves to a row of `table` hands it to the rule's `referenced(node, target, api,
    qualified)` (`target`: the part of `node` that the row names, `jax.tree_map` of `jax.tree_map.__doc__`)."""

    looks_at = ("Name", "Attribute")

    @classmethod
    def check(cls, facts) -> list[Diagnostic] | None:
        """Nothing where no import or spelled name can reach a row (`may_reference`: the ast screen, as an early
        exit); the hints where `hint_findings` is sure of them; else None: the visitor decides."""
        screen = facts.screen if facts.screen is not None else Screen(facts.text, facts.tree, facts.project)
        if not may_reference(screen, cls.table):
            return []
        return hint_findings(screen, cls.table, cls.code, cls.name)

    def __init__(self, context) -> None:
        super().__init__(context)
        self._inner: set[cst.CSTNode] = set()  # the `.value` of an Attribute (`jax` in `jax.tree_map`)

    def visit_Name(self, node: cst.Name) -> None:
        self._reference(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._inner.add(node.value)  # visited before its children: they learn that they are not outermost
        self._reference(node)

    def _reference(self, node: cst.Name | cst.Attribute) -> None:
        if node in self._inner:
            return  # the outermost dotted name decides
        if not is_dotted(node):
            return  # `jax.tree_map(f, x).foo` has a misleading qualified name
        qualified = qualified_reference(self.context, node)
        if qualified is None:
            return
        found = self.table.lookup(qualified)
        if found is None:
            return
        api, prefix = found
        self.referenced(node, descend(node, qualified.count(".") - prefix.count(".")), api, qualified)


# ---- the hints from the `ast` (hint_findings) ----------------------------------------------------------------------

_SHIM_WORDS = (b"hasattr", b"version")  # what `in_shim` looks for in a test


class _Undecided(Exception):
    """The module has something `_hints` does not model: the LibCST run decides."""


def _hints(screen: Screen, table: ApiTable) -> list[tuple[ast.expr, Api]] | None:
    """The expressions the LibCST run reports as hints (rows without an exact replacement), with their rows, or
    None where the module may hold any other finding of this rule or anything that makes the answer less than
    plain:
    - every import that names a row of the table is `from jax.random import PRNGKey [as x]` (the LibCST run
      reports nothing else of it) or sits in a shim (`_guards`); no import's module path runs through a row;
    - a dotted name resolves as the binder says (`Binder.imported`: the one import it names on every path),
      which the LibCST run reads too;
    - a reference that resolves to a row other than a hint or a moved module (whose references the LibCST run
      leaves alone: it rewrites their imports), that is assigned or deleted, sits in an f-string, or
      sits under an `if`/`while`/conditional expression whose header mentions hasattr or version (`in_shim`'s
      shims, judged on a wider text than the test's own) is undecided, unless it sits in a shim that `_guards`
      is sure of: there the LibCST run reports nothing (`_guarded`), and neither does this.
    tests/test_tree_findings.py compares the answer with the LibCST run on the corpus, examples and probes."""
    try:
        guards, doubtful = _guards(screen)
        _check_imports(screen, table, guards)
        if not screen.binder.imported_names:
            return []
        return _hint_references(screen, table, guards, doubtful)
    except _Undecided:
        return None


def _guards(screen: Screen) -> tuple[list[tuple[ast.AST, ast.AST]], list[ast.AST]]:
    """The shims where `in_shim` surely holds, as (first, last) nodes: the body of a `try` that
    catches a missing API and such a handler's body; the body and `else` of an `if`/`while` and the branches of a
    conditional expression whose test's own text has `hasattr` or (in any case) `version` (LibCST's code of the
    test holds that text and maybe its parentheses). Beside them, what may be a shim or hides positions: tests
    whose header's wider text names a shim word (comments included), and f-strings."""
    guards: list[tuple[ast.AST, ast.AST]] = []
    doubtful: list[ast.AST] = []
    for node in screen.nodes_of(ast.Try, ast.If, ast.While, ast.IfExp, ast.JoinedStr):
        kind = type(node)
        if kind is ast.Try:
            catching = [h for h in node.handlers if _catches_missing_ast(h)]
            if catching:
                guards.append((node.body[0], node.body[-1]))
                guards.extend((h.body[0], h.body[-1]) for h in catching)
        elif kind is ast.JoinedStr:
            doubtful.append(node)  # `ast` positions inside f-strings are not LibCST's in every Python this runs on
        elif _mentions_shim(screen, node):
            doubtful.append(node)
            test = node.test
            text = source_bytes(screen, (test.lineno, test.col_offset), (test.end_lineno, test.end_col_offset))
            if b"hasattr" in text or b"version" in text.lower():
                if kind is ast.IfExp:
                    guards.extend(((node.body, node.body), (node.orelse, node.orelse)))
                else:
                    guards.extend((block[0], block[-1]) for block in (node.body, node.orelse) if block)
    return guards, doubtful


def _check_imports(screen: Screen, table: ApiTable, guards) -> None:
    """Undecided where an import outside the `guards` names a row of the table (other than `from jax.random
    import PRNGKey`): the LibCST run reports nothing of an import in a shim."""
    for statement, _ in screen.statements:
        if isinstance(statement, ast.Import):
            if any(table.lookup(a.name) for a in statement.names) and not _guarded(statement, guards):
                raise _Undecided  # `import jax.random.PRNGKey`: the LibCST run resolves the alias itself
        elif isinstance(statement, ast.ImportFrom) and statement.module and not statement.level:
            if table.lookup(statement.module) and not _guarded(statement, guards):
                raise _Undecided
            for alias in statement.names:
                found = table.lookup(f"{statement.module}.{alias.name}") if alias.name != "*" else None
                if found is not None and (found[0].old != "jax.random.PRNGKey" or statement.module != "jax.random"):
                    if not _guarded(statement, guards):
                        raise _Undecided  # another row: its own reports (moved modules, unused removed names, ...)


def _guarded(node: ast.AST, guards) -> bool:
    return any(_within(node, guard) for guard in guards)


def _hint_references(screen: Screen, table: ApiTable, guards, doubtful) -> list[tuple[ast.expr, Api]]:
    """What `DeprecatedApi._reference` (and JF902's) reports as hints: each outermost dotted name (not the `.value` of an
    attribute) that resolves to a hint's row, cut to the row's own name (`jax.random.PRNGKey` of `...PRNGKey.__doc__`).
    Which constructs enclose a reference is read from positions (`ast` spans nest), not from a walk with a stack;
    only for the names that resolve to a row (most resolve to none)."""
    inner: set[int] = set()
    named: list[ast.expr] = []
    for node in screen.nodes_of(ast.Attribute, ast.Name):
        if type(node) is ast.Attribute:
            inner.add(id(node.value))
        named.append(node)
    fstrings = [span for span in doubtful if type(span) is ast.JoinedStr]
    found = []
    for node in named:
        if id(node) in inner:
            continue
        try:
            hint = _hint_target(screen, node, table)
        except _Undecided:
            hint = _Undecided
        if hint is None:
            continue
        if _guarded(node, guards) and not _guarded(node, fstrings):
            continue  # `_guarded`: the LibCST run reports nothing of any row here
        if hint is _Undecided or _guarded(node, doubtful):
            raise _Undecided
        found.append(hint)
    return found


def _hint_target(screen: Screen, node: ast.expr, table: ApiTable) -> tuple[ast.expr, Api] | None:
    """The expression to report and its row if `node` resolves to a hint (the binder's `imported`, which the LibCST
    run reads too); None if it resolves to no row or to a moved module (the LibCST run reports the import, not the
    references)."""
    qualified = screen.binder.imported(node)
    if qualified is None:
        return None
    found = table.lookup(qualified)
    if found is None:
        return None
    api, prefix = found
    if api.how == MOVE:
        return None
    if api.how != HINT or not isinstance(node.ctx, ast.Load):
        raise _Undecided
    for _ in range(qualified.count(".") - prefix.count(".")):
        node = node.value
    return node, api


def _within(node: ast.AST, span) -> bool:
    """Whether `node` lies inside `span`: a node, or (first, last) nodes."""
    first, last = span if isinstance(span, tuple) else (span, span)
    start, end = (node.lineno, node.col_offset), (node.end_lineno, node.end_col_offset)
    return (first.lineno, first.col_offset) <= start and end <= (last.end_lineno, last.end_col_offset)


def _mentions_shim(screen: Screen, node: ast.If | ast.While | ast.IfExp) -> bool:
    """Whether the text of the header (from the keyword to the body, or the whole conditional expression) names
    what `_guarded` looks for in the test's code."""
    if isinstance(node, ast.IfExp):
        end = (node.end_lineno, node.end_col_offset)
    else:
        end = (node.body[0].lineno, node.body[0].col_offset)
    text = source_bytes(screen, (node.lineno, node.col_offset), end).lower()
    return any(word in text for word in _SHIM_WORDS)


def _catches_missing_ast(handler: ast.ExceptHandler) -> bool:
    """`_catches_missing` on the `ast`."""
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any((parts := dotted(kind)) is not None and parts[-1] in _MISSING for kind in kinds if kind is not None)


def import_bindings(scopes, reference: cst.CSTNode) -> list[tuple[cst.Import | cst.ImportFrom, cst.ImportAlias, str]]:
    """The imports that bind `reference`'s leftmost name: (statement, alias, the full name the alias imports).
    `scopes`: ScopeProvider's map of the module."""
    base = reference
    while isinstance(base, cst.Attribute):
        base = base.value
    if not isinstance(base, cst.Name):
        return []
    scope = scopes.get(base)
    if scope is None:
        return []
    found = []
    for assignment in scope[base.value]:
        if not isinstance(assignment, ImportAssignment):
            continue
        statement = assignment.node
        if isinstance(statement, cst.ImportFrom):
            if statement.relative or statement.module is None or isinstance(statement.names, cst.ImportStar):
                continue
            module = dotted_name(statement.module)
            for alias in statement.names:
                if (alias.evaluated_alias or alias.evaluated_name) == base.value:
                    found.append((statement, alias, f"{module}.{alias.evaluated_name}"))
        elif isinstance(statement, cst.Import):
            for alias in statement.names:
                if alias.evaluated_alias == base.value:
                    found.append((statement, alias, alias.evaluated_name))
    return found


def import_is_referenced(scopes, statement: cst.CSTNode, local: str) -> bool:
    """Whether the name `local` that the import `statement` binds is read anywhere (True where its scope is unknown).
    `scopes`: ScopeProvider's map of the module."""
    scope = scopes.get(statement)
    if scope is None:
        return True
    for assignment in scope.assignments[local]:
        if isinstance(assignment, ImportAssignment) and assignment.node is statement and assignment.references:
            return True
    return False
