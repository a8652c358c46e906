"""The base class of every codemod: one class holds a rule's metadata, docs, examples, matcher and fix.

A rule answers in one of two ways. On `ast` (the target, DESIGN.md): `check(facts)`, a classmethod that reads a
`jaxfix.facts.module.FileFacts` and returns its findings, each with a fix plan where it has a fix, and
`fix_finding(finding, bridge)`, which builds that fix on LibCST only where fixes are wanted. Or, until it moves,
as a LibCST batchable visitor: the engine runs all such codemods over a module in one traversal; each reads shared
facts from `self.context` (a `jaxfix.analysis.ModuleContext`) and calls `self.report(...)` for each finding.

Before that, the engine screens each file, because LibCST is what costs: parsing is ~10x slower than `ast`, and
each metadata provider (scopes, qualified names, parents, positions) is another full traversal, ~30x an `ast`
parse. A codemod answers in two stages, each only asked when the one before said "may match":
- `may_match(text)`: substrings, a regular expression; no parse at all;
- `may_match_tree(screen)`: the module's `ast` (parsed once per file, by the engine's syntax check or on first
  use) and coarse facts over it from `jaxfix.analysis.screen` (what imports may bind, which names may hold
  arrays, whether anything may trace).
A screen must be a sound over-approximation of the codemod: "False" promises that the full codemod reports
nothing for this file. tests/test_screens.py checks that it passes every example and corpus case.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from typing import Any, ClassVar, Mapping, Sequence

import libcst as cst
from libcst._metadata_dependent import LazyValue
from jaxfix.analysis.context import ModuleContext
from jaxfix.analysis.screen import Screen
from jaxfix.diagnostics import Decision, Diagnostic, Fix, Position, Safety
from jaxfix.facts.module import FileFacts

_NO_DEFAULT = object()
DOC_SECTIONS = ("What it does", "Why is this bad", "Example", "Use instead", "Fix safety", "When it stays quiet")


@dataclass(frozen=True)
class Valid:
    """Code the codemod must leave alone: no finding at all."""

    code: str


@dataclass(frozen=True)
class Invalid:
    """Code the codemod must flag. `fixed` is the expected rewrite (with --unsafe-fixes), or None for report-only.

    `message` is a substring the finding's message must contain.
    """

    code: str
    fixed: str | None = None
    message: str = ""


@dataclass(frozen=True)
class Option:
    """A setting of one codemod, read from `[tool.jaxfix.codemods.NAME]` (kebab-case keys)."""

    name: str  # "min-trip-count"
    default: Any  # its type is the option's type: int, float, bool or str
    doc: str  # one line, shown by `jaxfix rule CODE`

    def check(self, value: Any) -> Any:
        """`value` if it has the option's type, else OptionError with a one-line message."""
        expected = type(self.default)
        ok = isinstance(value, expected) and not (expected is not bool and isinstance(value, bool))
        if expected is float and isinstance(value, int) and not isinstance(value, bool):
            value, ok = float(value), True
        if not ok:
            raise OptionError(f"option {self.name} must be {_type_word(expected)}, not {value!r}")
        return value


@dataclass(frozen=True)
class YieldsTo:
    """Precedence between two rules that see the same place: where rule `code` reports on a statement (with a fix,
    if `fixed_only`), the rule declaring this leaves that statement to it. `reason` is what `jaxfix explain` says.
    The registry applies it (`registry.with_precedence`), so that no rule imports another."""

    code: str  # "JF102"
    reason: str  # "left to JF102 (loop-to-scan), which rewrites or reports this loop"
    fixed_only: bool = False  # only a finding with a fix takes the statement (else any finding)


class OptionError(ValueError):
    """An option a codemod does not have, or a value of the wrong type; the message is one line."""


def _type_word(kind: type) -> str:
    return {int: "an integer", float: "a number", bool: "true or false", str: "a string"}.get(
        kind, kind.__name__
    )


_VISITOR_NAMES: dict[type, tuple[str, ...]] = {}


def _visitor_names(cls: type) -> tuple[str, ...]:
    """The names of `cls`'s visit_/leave_ methods that are not LibCST's empty stubs, as `get_visitors` selects."""
    names = []
    for name in dir(cls):
        if name.startswith(("visit_", "leave_")):
            method = getattr(cls, name)
            if callable(method) and not getattr(method, "_is_no_op", False):
                names.append(name)
    return tuple(names)


class Codemod(cst.BatchableCSTVisitor):
    code: ClassVar[str]  # "JF901": family digit first (see DESIGN.md)
    name: ClassVar[str]  # "deprecated-api": kebab-case, usable in --select
    summary: ClassVar[str]  # one line for `jaxfix rules`
    fix_safety: ClassVar[Safety | None]  # the safety of its usual fix; None when it never fixes
    # The safeties of the fixes it makes in other cases (JF501's fix is unsafe where the step is public): the rules
    # table and `jaxfix rule` show them all, and tests/test_registry.py checks every fix against them.
    other_fix_safeties: ClassVar[tuple[Safety, ...]] = ()
    # A fix that changes the numbers on purpose (a reused PRNG key split): `jaxfix verify PATH` leaves it out.
    changes_values: ClassVar[bool] = False
    # Left out of the default selection (as Ruff keeps preview rules out): runs only when named by its exact code
    # or name, never through a prefix or ALL. For rules about code that works and that most users keep.
    opt_in: ClassVar[bool] = False
    # The file must contain one of these substrings for the codemod to possibly match (the first, text screen); a
    # codemod with a sharper test overrides `may_match` or `may_match_tree`. A screen must never hide a finding.
    screen: ClassVar[tuple[str, ...]] = ("jax",)
    VALID: ClassVar[Sequence[Valid]] = ()
    INVALID: ClassVar[Sequence[Invalid]] = ()
    # The settings a user may change, with their defaults; read them with `cls.option(name)`.
    OPTIONS: ClassVar[Sequence[Option]] = ()
    _option_values: ClassVar[Mapping[str, Any]] = {}
    # The rules this one leaves a statement to, in order, where they report on it (see YieldsTo); they run too,
    # unreported, when they are not selected.
    yields_to: ClassVar[Sequence[YieldsTo]] = ()
    # What a `check`-rule looks at, as LibCST names the kinds of nodes ("Call", "For"), for `jaxfix explain`'s
    # "no match" on a line that holds one (a visitor says it by its visit_ methods).
    looks_at: ClassVar[tuple[str, ...]] = ()

    # Metadata is resolved lazily through `self.context` (positions only when reporting, qualified names only
    # when a candidate node turns up): declaring providers here would compute them for every file.
    METADATA_DEPENDENCIES = ()

    def __init__(self, context: ModuleContext) -> None:
        super().__init__()
        self.context = context
        self.diagnostics: list[Diagnostic] = []
        self.decisions: list[Decision] = []  # filled only while explaining (`decline`)

    @classmethod
    def option(cls, name: str) -> Any:
        """The value of one of this codemod's OPTIONS: the configured one, else its default."""
        if name in cls._option_values:
            return cls._option_values[name]
        for declared in cls.OPTIONS:
            if declared.name == name:
                return declared.default
        raise KeyError(f"{cls.code} declares no option {name!r}")

    @classmethod
    def with_options(cls, values: Mapping[str, Any]) -> type["Codemod"]:
        """This codemod with `values` for its options (a subclass; the class itself is left as it is). Raises
        OptionError for an option it does not declare or a value of the wrong type."""
        declared = {option.name: option for option in cls.OPTIONS}
        checked = {}
        for name, value in values.items():
            if name not in declared:
                known = ", ".join(declared) or "none"
                raise OptionError(f"{cls.code} ({cls.name}) has no option {name!r} (its options: {known})")
            checked[name] = declared[name].check(value)
        if not checked:
            return cls
        return _configured(cls, tuple(sorted(checked.items())))

    @classmethod
    def consults(cls, text: str) -> Sequence[str]:
        """Codes, code prefixes or names of other codemods whose findings in `text` this one reads in `judge`;
        the engine runs them too (unreported) where they are not selected. JF001 asks for those that suppression
        comments name."""
        return ()

    @classmethod
    def judge(cls, facts: FileFacts, diagnostics: Sequence[Diagnostic]) -> list[Diagnostic]:
        """Findings about the other rules' findings on the module (`diagnostics`, suppressed ones included), asked
        once every rule has answered: JF001 judges suppression comments here. Not asked when a rule crashed on the
        module (its missing findings would mislead the judgement)."""
        return []

    @classmethod
    def may_match(cls, text: str) -> bool:
        """False only when this codemod cannot find anything in `text`: the file then skips parsing for it."""
        return any(s in text for s in cls.screen)

    def get_visitors(self):
        """LibCST's `get_visitors` (the visit_/leave_ methods a batched traversal calls), with the method names
        found once per class: LibCST's own runs `inspect.getmembers` over the ~1,700 attributes of every visitor
        instance, about 18 ms per codemod per file (benchmarks/fuzz.py spent 77% of its time there)."""
        names = _VISITOR_NAMES.get(type(self))
        if names is None:
            names = _VISITOR_NAMES[type(self)] = _visitor_names(type(self))
        return {name: getattr(self, name) for name in names}

    @classmethod
    def may_match_tree(cls, screen: Screen) -> bool:
        """The second screen, asked only where `may_match` passed: False only when this codemod cannot find
        anything in the module that `screen.tree` (its `ast`) is. Touching `screen.tree` parses the module if the
        engine has not yet; a codemod that does not override this costs nothing here."""
        return True

    # ---- the contract on `ast` (DESIGN.md, "A rule"): `check(facts)`, then `fix_finding` where a fix is wanted ----

    @classmethod
    def check(cls, facts: FileFacts) -> list[Diagnostic] | None:
        """Every finding of this rule in the module, decided on `ast` from `facts` (`jaxfix.facts.module`), with
        positions as `report` gives them (`facts.span`) and, where a fix exists, its safety and description in
        `fix` (no changes) and what `fix_finding` needs in `plan`. None: this rule runs as a LibCST visitor here
        (a rule that has not moved, or one that moved only for the modules it can decide). Asked for every file
        its text screen passes; the ast screen (`may_match_tree`) is not asked of a rule that overrides this."""
        return None

    @classmethod
    def answers_on_ast(cls) -> bool:
        """Whether this rule has a `check` (it may still answer None for a module)."""
        return cls.check.__func__ is not Codemod.check.__func__

    @classmethod
    def fix_finding(cls, finding: Diagnostic, bridge) -> Fix | None:
        """The Fix of a finding `check` gave with a `plan`, built on LibCST: `bridge` (`jaxfix.edit.bridge.Bridge`)
        maps the plan's `ast` nodes to the module's CST nodes (`bridge.cst_of`). None: no fix after all (the
        finding is then reported without one). Called only where fixes are wanted (`apply`, `--diff`, a code
        action, fixes in JSON/SARIF output)."""
        raise NotImplementedError(f"{cls.code} gives fix plans but builds no fix")

    @classmethod
    def finding(
        cls, facts: FileFacts, node: ast.AST, message: str, *, safety: Safety | None = None, description: str = "",
        plan: object = None,
    ) -> Diagnostic:
        """A finding of `check` on `node`; with a `description`, its fix (of `safety`, by default the rule's usual
        one), whose changes `fix_finding` builds from `plan` where fixes are wanted (a display-only one has none)."""
        fix = None
        if description:
            chosen = safety if safety is not None else cls.fix_safety
            assert chosen is not None, f"{cls.code} gives a fix but declares no fix safety"
            fix = Fix(chosen, description, ())
        start, end = facts.span(node)
        return Diagnostic(cls.code, cls.name, message, start, end, fix, plan=plan)

    def get_metadata(self, key, node, default=_NO_DEFAULT):
        """LibCST's get_metadata, resolved lazily for this module on first use of each provider."""
        table = self.context.wrapper.resolve(key)
        if node not in table:
            if default is _NO_DEFAULT:
                raise KeyError(f"no {key.__name__} metadata for {type(node).__name__}")
            return default
        value = table[node]
        return value() if isinstance(value, LazyValue) else value

    @classmethod
    def fix_safeties(cls) -> tuple[Safety, ...]:
        """Every safety its fixes can have, the usual one first."""
        usual = (cls.fix_safety,) if cls.fix_safety is not None else ()
        return usual + tuple(s for s in cls.other_fix_safeties if s not in usual)

    @classmethod
    def fix_label(cls) -> str:
        """`safe`, `unsafe`, `hint`, `safe or unsafe`, ... or `no fix`: the rules table's Fix column."""
        words = {Safety.SAFE: "safe", Safety.UNSAFE: "unsafe", Safety.DISPLAY_ONLY: "hint"}
        labels = [words[s] for s in cls.fix_safeties()]
        if not labels:
            return "no fix"
        return labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " or " + labels[-1]

    @classmethod
    def docs(cls) -> str:
        """The rule's documentation: the class docstring, whose sections are DOC_SECTIONS."""
        return _dedent_docstring(cls.__doc__ or "")

    def _span(self, node: cst.CSTNode) -> tuple[Position, Position]:
        """Where `node` starts and ends, with 1-based columns (LibCST counts columns from 0)."""
        where = self.context.positions[node]
        return Position(where.start.line, where.start.column + 1), Position(where.end.line, where.end.column + 1)

    def report(self, node: cst.CSTNode, message: str, fix: Fix | None = None) -> None:
        start, end = self._span(node)
        self.diagnostics.append(
            Diagnostic(
                code=self.code,
                name=self.name,
                message=message,
                start=start,
                end=end,
                fix=fix,
                node=node,
            )
        )

    def decline(self, node: cst.CSTNode, reason: str) -> None:
        """Say why this codemod leaves `node` alone although it recognised its pattern there. Kept only while
        `jaxfix explain` runs (a no-op otherwise), so a matcher states each refusal once, where it decides:
        `return self.decline(node, "...")`."""
        if self.context.explaining:
            self.decisions.append(Decision(self.code, *self._span(node), reason))

    def decline_untraced(self, node: cst.CSTNode) -> None:
        """`decline` for a place outside traced code, naming the function that nothing traces."""
        if self.context.explaining:
            function = self.context.traced.enclosing_function(node)
            if function is None:
                self.decline(node, "not in traced code: module-level code runs eagerly")
            else:
                name = getattr(getattr(function, "name", None), "value", "lambda")
                self.decline(node, f"not in traced code: nothing jits, vmaps or otherwise transforms `{name}`")

    def fix(
        self,
        description: str,
        changes: Sequence[tuple[cst.CSTNode, cst.CSTNode | cst.RemovalSentinel | cst.FlattenSentinel]],
        *,
        safety: Safety | None = None,
        add_imports=(),
        remove_imports=(),
    ) -> Fix:
        """A Fix with this codemod's usual safety unless told otherwise."""
        chosen = safety if safety is not None else self.fix_safety
        assert chosen is not None, f"{self.code} builds a fix but declares no fix safety"
        return Fix(chosen, description, tuple(changes), tuple(add_imports), tuple(remove_imports))


@functools.lru_cache(maxsize=None)
def _configured(cls: type[Codemod], values: tuple[tuple[str, Any], ...]) -> type[Codemod]:
    """One subclass per codemod and set of values, so that screens and visitors (class and instance) read them."""
    return type(cls.__name__, (cls,), {"_option_values": dict(values), "__module__": cls.__module__, "__doc__": cls.__doc__})


def _dedent_docstring(doc: str) -> str:
    lines = doc.expandtabs().splitlines()
    if not lines:
        return ""
    indents = [len(line) - len(line.lstrip()) for line in lines[1:] if line.strip()]
    margin = min(indents) if indents else 0
    body = [lines[0].strip()] + [line[margin:] for line in lines[1:]]
    return "\n".join(body).strip() + "\n"


def doc_sections(doc: str) -> dict[str, str]:
    """Split rule docs into their `## Section` parts, so tests can check that every section is present."""
    parts = re.split(r"^## +(.+?)\??\s*$", doc, flags=re.MULTILINE)
    return {title.strip(): text.strip() for title, text in zip(parts[1::2], parts[2::2])}
