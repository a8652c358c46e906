"""JF001 unused-noqa: a suppression comment naming a jaxfix rule that finds nothing on its line."""

from __future__ import annotations

import re
import tokenize
from typing import Iterator, Sequence

import libcst as cst

from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Diagnostic, Fix, Position, Safety
from jaxfix.facts.module import FileFacts
from jaxfix.suppression import Directive, directives, matches

_OURS = re.compile(r"JF\d*", re.IGNORECASE)  # in `# noqa: ...` other linters' codes sit beside jaxfix's
_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")  # lines with their ends, as ast and LibCST count them
_SCREEN = re.compile(r"noqa\s*:[^\n]*\bJF|jaxfix:\s*ignore(?!-file)", re.IGNORECASE)


class UnusedNoqa(Codemod):
    """
    ## What it does
    Finds `# noqa: JF601` and `# jaxfix: ignore[JF601]` comments where the rule they name finds nothing on
    that line, and removes them (or, in `# noqa: E501, JF601`, only the unused code). A bare
    `# jaxfix: ignore` that silences nothing is reported too.

    ## Why is this bad?
    A suppression outlives the code it was written for: after a refactor it silences nothing, yet it would
    hide the next real finding on that line. Ruff's RUF100 does the same for Ruff's codes.

    ## Example
    ```python
    def mean(x):
        print(x)  # noqa: JF601
        return x.mean()
    ```

    ## Use instead
    ```python
    def mean(x):
        print(x)
        return x.mean()
    ```

    ## Fix safety
    Safe: only a comment changes. The rule a code names is run on the file to decide, even when it is not
    selected (`--select`, `ignore`, per-file-ignores), so a suppression that still silences something is
    never removed.

    ## When it stays quiet
    - Blanket `# noqa` and codes of other tools (`# noqa: E501`): other linters read them.
    - File-level `# jaxfix: ignore-file`.
    - A file on which a rule crashed: its missing findings could make a used suppression look unused.
    - `# noqa: JF001` itself.
    """

    code = "JF001"
    name = "unused-noqa"
    summary = "Suppression comment for a jaxfix rule that finds nothing on its line: remove it"
    fix_safety = Safety.SAFE

    VALID = (
        Valid("import jax\n\n\n@jax.jit\ndef f(x):\n    print(x)  # noqa: JF601\n    return x\n"),
        Valid("import jax\n\n\n@jax.jit\ndef f(x):\n    print(x)  # jaxfix: ignore[print-in-traced]\n    return x\n"),
        Valid("import jax\n\n\ndef f(x):\n    return x  # noqa\n"),
        Valid("import jax\n\n\ndef f(x):\n    return x  # noqa: E501\n"),
        Valid("import jax\n\n\n@jax.jit\ndef f(x):\n    print(x)  # noqa: JF6\n    return x\n"),
    )
    INVALID = (
        Invalid(
            "import jax\n\n\ndef f(x):\n    print(x)  # noqa: JF601\n    return x\n",
            "import jax\n\n\ndef f(x):\n    print(x)\n    return x\n",
            message="JF601 finds nothing",
        ),
        Invalid(
            "import jax\n\n\ndef f(x):\n    return x  # noqa: E501, JF601\n",
            "import jax\n\n\ndef f(x):\n    return x  # noqa: E501\n",
        ),
        Invalid(
            "import jax\n\n\ndef f(x):\n    return x  # keep  # jaxfix: ignore\n",
            "import jax\n\n\ndef f(x):\n    return x  # keep\n",
        ),
        Invalid(
            "import jax\n\n\n@jax.jit\ndef f(x):\n    print(x)  # noqa: JF601, JF101\n    return x\n",
            "import jax\n\n\n@jax.jit\ndef f(x):\n    print(x)  # noqa: JF601\n    return x\n",
            message="JF101",
        ),
    )

    @classmethod
    def may_match(cls, text: str) -> bool:
        """Only a file with a jaxfix suppression: `# noqa: E501` alone, common in real code, must not cost a
        LibCST parse. Case-insensitive regular expressions are slow: the lowered text must hold "noqa" or "jaxf"
        before the expression is tried (0.15 s -> 0.06 s over 782 real files). Not "jaxfix": the expression's
        `i` also matches "İ" and "ı", which lower to something else; n, o, q, a, j, x and f match nothing but
        their two cases."""
        lowered = text.lower()
        return ("noqa" in lowered or "jaxf" in lowered) and _SCREEN.search(text) is not None

    @classmethod
    def consults(cls, text: str) -> Sequence[str]:
        """The rules the file's suppression comments name (every rule for a bare `# jaxfix: ignore`)."""
        asked: set[str] = set()
        for comment in re.findall(r"#[^\n]*", text):
            for directive in directives(comment):
                if directive.kind == "ignore" and directive.blanket:
                    asked.add("JF")
                elif directive.kind != "ignore-file":
                    asked.update(c for c in directive.codes if directive.kind == "ignore" or _OURS.fullmatch(c))
        return sorted(asked)

    @classmethod
    def check(cls, facts: FileFacts) -> list[Diagnostic]:
        """Nothing by itself: JF001 judges the other rules' findings (`judge`), on the comments of the text."""
        return []

    @classmethod
    def judge(cls, facts: FileFacts, diagnostics: Sequence[Diagnostic]) -> list[Diagnostic]:
        """Each suppression comment naming a code that silences none of `diagnostics` on its line."""
        found = []
        for line, column, comment in _comments(facts.text):
            if not directives(comment):
                continue
            here = [d for d in diagnostics if line in (d.start.line, d.end.line)]
            text, unused = comment, []
            for directive in reversed(directives(comment)):  # right to left: offsets stay valid
                dropped = _unused(directive, here)
                if dropped:
                    unused = dropped + unused
                    text = text[: directive.start] + _without(directive, dropped) + text[directive.end :]
            if unused:
                kept = _kept(text)
                description = "remove the unused codes" if kept else "remove the unused suppression"
                found.append(Diagnostic(
                    cls.code, cls.name, _message(comment, unused), Position(line, column + 1),
                    Position(line, column + len(comment) + 1), Fix(cls.fix_safety, description, ()),
                    plan=(line, comment, kept),
                ))  # fmt: skip
        return found

    @classmethod
    def fix_finding(cls, finding: Diagnostic, bridge) -> Fix | None:
        """The comment replaced by what it keeps, or removed with the whitespace before it (its own line too, where
        it stands alone)."""
        line, comment, kept = finding.plan
        holder = _holder(bridge, line, comment)
        if holder is None:
            return None
        if kept:
            change = (holder.comment, cst.Comment(kept))
        elif isinstance(holder, cst.EmptyLine):
            change = (holder, cst.RemoveFromParent())
        else:
            change = (holder, holder.with_changes(whitespace=cst.SimpleWhitespace(""), comment=None))
        return Fix(finding.fix.safety, finding.fix.description, (change,))


def _comments(text: str) -> Iterator[tuple[int, int, str]]:
    """Each comment of the module's text: its line, its 0-based column in characters and its text. Lines end as
    `ast` and LibCST end them (a lone "\\r" too), which `tokenize` is given as "\\n"."""
    lines = iter(re.sub(r"\r\n?|\n", "\n", line) for line in _LINES.findall(text))
    for token in tokenize.generate_tokens(lambda: next(lines, "")):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.start[1], token.string


def _kept(text: str) -> str:
    """What a comment keeps once its unused codes are cut out ("": nothing worth a comment)."""
    text = re.sub(r"\s*#\s*$", "", text.rstrip())
    text = re.sub(r"^#\s+#", "#", text)
    kept = text.strip()
    if not kept or kept == "#":
        return ""
    return kept if kept.startswith("#") else f"# {kept}"


def _holder(bridge, line: int, comment: str) -> cst.TrailingWhitespace | cst.EmptyLine | None:
    """The CST node that holds the comment `comment` on `line`."""
    found = []

    class _Holders(cst.CSTVisitor):
        def visit_TrailingWhitespace(self, node: cst.TrailingWhitespace) -> None:
            self._keep(node)

        def visit_EmptyLine(self, node: cst.EmptyLine) -> None:
            self._keep(node)

        def _keep(self, node) -> None:
            if node.comment is not None and node.comment.value == comment and bridge.line_at(node.comment) == line:
                found.append(node)

    bridge.module.visit(_Holders())
    return found[0] if found else None


def _unused(directive: Directive, here: Sequence[Diagnostic]) -> list[str]:
    """The codes of `directive` that silence nothing among the findings on its line (["*"]: a bare jaxfix
    ignore that silences nothing)."""
    if directive.kind == "ignore-file" or (directive.kind == "noqa" and directive.blanket):
        return []
    if directive.blanket:
        return [] if here else ["*"]
    ours = [c for c in directive.codes if directive.kind == "ignore" or _OURS.fullmatch(c)]
    return [c for c in ours if c.upper() != "JF001" and not any(matches(d, frozenset({c.upper()})) for d in here)]


def _without(directive: Directive, dropped: list[str]) -> str:
    kept = [c for c in directive.codes if c not in dropped]
    if directive.blanket or not kept:
        return ""
    return f"# noqa: {', '.join(kept)}" if directive.kind == "noqa" else f"# jaxfix: ignore[{', '.join(kept)}]"


def _message(comment: str, unused: list[str]) -> str:
    if unused == ["*"]:
        return f"unused suppression `{comment}`: no jaxfix rule finds anything on this line"
    named = ", ".join(unused)
    verb = "finds" if len(unused) == 1 else "find"
    return f"unused suppression in `{comment}`: {named} {verb} nothing on this line"
