"""What JAX and the libraries do is listed once, in jaxfix/facts/knowledge/: no other module of jaxfix/ or
codemods/ lists tracing transformations, lax bodies, array annotations or array-returning calls, and every table
there is read by some module (libraries.ARRAY_TYPES was read by nothing)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import jaxfix
from jaxfix.facts.knowledge import jax, jaxtyping, tables

ROOT = Path(jaxfix.__file__).resolve().parent.parent
KNOWLEDGE = ROOT / "jaxfix" / "facts" / "knowledge"
_DOTTED = re.compile(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*\.?")

# The facts a module may name one at a time (`callee == "jax.vmap"`) but never list. A rule may list the calls it
# rewrites by name (its vocabulary: `jnp.logical_and` for JF803); the analysis lists none.
CATEGORIES: dict[str, frozenset[str]] = {
    "tracing transformations and lax bodies": tables.TRANSFORMS | frozenset(tables.LAX_BODIES),
    "array annotations": tables.ARRAY_ANNOTATIONS | tables.TRACED_ARRAY_ANNOTATIONS
    | tables.BARE_ARRAY_ANNOTATION_NAMES | tables.DRAWN_ARRAY_NAMES | tables.DRAWN_NUMPY_ARRAY_NAMES
    | frozenset(jaxtyping.WRAPPER_DTYPES) | jaxtyping.ARRAY_WRAPPERS,
    "array namespaces": frozenset(jax.ARRAY_NAMESPACES),
}
ANALYSIS_CATEGORIES: dict[str, frozenset[str]] = {
    **CATEGORIES,
    "array-returning calls": jax.ARRAY_MAKERS | jax.LOUD_FUNCTIONS | jax.FRESH_ARRAY_FUNCTIONS
    | jax.VIEW_ARRAY_FUNCTIONS | jax.RANDOM_SAMPLERS,
}


def _modules() -> list[Path]:
    files = [*(ROOT / "jaxfix").rglob("*.py"), *(ROOT / "codemods").rglob("*.py")]
    return sorted(p for p in files if KNOWLEDGE not in p.parents)


def _text(node: ast.AST, constants: dict[str, str]) -> str | None:
    """The string an expression spells: a literal, a module constant (`_JNP`), or a sum of them."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _text(node.left, constants), _text(node.right, constants)
        return None if left is None or right is None else left + right
    return None


def _strings(node: ast.AST, constants: dict[str, str]) -> list[str] | None:
    """The names a literal lists: the strings of a set, list, tuple or dict's keys; the words of a string of
    names (`"jax.jit jax.vmap".split()`); `prefix + name for name in <a string of names>`. None for anything else.
    A docstring or an example program is prose or code, not a string of names, so it lists nothing."""
    if isinstance(node, (ast.Set, ast.List, ast.Tuple)):
        elements = node.elts
    elif isinstance(node, ast.Dict):
        elements = [k for k in node.keys if k is not None]
    elif isinstance(node, ast.Constant) and isinstance(node.value, str):
        words = node.value.split()
        return words if len(words) >= 2 and all(_DOTTED.fullmatch(w) for w in words) else None
    elif isinstance(node, (ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp)) and len(node.generators) == 1:
        element = node.key if isinstance(node, ast.DictComp) else node.elt
        iterated = node.generators[0].iter
        if isinstance(iterated, ast.Call) and isinstance(iterated.func, ast.Attribute) and iterated.func.attr == "split":
            iterated = iterated.func.value
        names = _strings(iterated, constants)
        if names is not None and isinstance(element, ast.BinOp) and isinstance(element.op, ast.Add):
            prefix = _text(element.left, constants)
            return None if prefix is None else [prefix + name for name in names]
        return None
    else:
        return None
    return [text for text in (_text(e, constants) for e in elements) if text is not None]


def listings(path: Path) -> list[str]:
    """`module:line: category: names` for each literal of `path` that lists two or more names of one category."""
    categories = CATEGORIES if ROOT / "codemods" in path.parents else ANALYSIS_CATEGORIES
    tree = ast.parse(path.read_text())
    constants = {
        target.id: node.value.value
        for node in tree.body if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str) for target in node.targets if isinstance(target, ast.Name)
    }
    found = []
    for node in ast.walk(tree):
        names = _strings(node, constants)
        if not names:
            continue
        for category, known in categories.items():
            listed = sorted({n for n in names if n in known})
            if len(listed) >= 2:
                where = path.relative_to(ROOT) if ROOT in path.parents else path.name
                found.append(f"{where}:{node.lineno}: {category}: {', '.join(listed[:4])}")
    return found


def test_no_module_outside_knowledge_lists_what_the_libraries_do() -> None:
    found = [line for path in _modules() for line in listings(path)]
    assert not found, "\n".join(found)


def test_a_listing_is_found_however_it_is_spelled(tmp_path) -> None:
    """The spellings the knowledge tables had before they moved there are all found."""
    source = tmp_path / "copy.py"
    source.write_text(
        '_JIT_LIKE = {"jax.jit", "jax.pmap"}\n'
        'ALWAYS = frozenset("""\n    jax.jit jax.vmap\n    """.split())\n'
        '_ANNOTATED = ("Array", "ArrayLike")\n'
        'LOUD = frozenset("jax.numpy." + n for n in "tanh sin".split())\n'
        'PREFIXES = ("jax.numpy.", "jax.nn.")\n'
        'BODIES = {"jax.lax.scan": 0, "jax.lax.cond": 1}\n'
        'ONE = "jax.jit"\nDOC = "jax.jit traces f; jax.vmap maps it."\n'
        '_JNP = "jax.numpy."\nPOSITION = {_JNP + "zeros": 1, _JNP + "ones": 1}\n'
    )
    found = listings(source)
    assert sorted(int(line.split(":")[1]) for line in found) == [1, 2, 5, 6, 7, 8, 12], found


def _table_names() -> list[tuple[str, str]]:
    names = []
    for path in sorted(KNOWLEDGE.glob("*.py")):
        for node in ast.parse(path.read_text()).body:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
            names += [(path.stem, t.id) for t in targets if isinstance(t, ast.Name) and t.id.isupper()]
    return names


def _reads() -> set[tuple[str, str]]:
    """(knowledge module, table) for every table some module reads: imported by name, as an attribute of the
    imported knowledge module, or by name inside its own module (to make another table)."""
    package = "jaxfix.facts.knowledge"
    reads = set()
    for path in [*_modules(), *sorted(KNOWLEDGE.glob("*.py"))]:
        tree = ast.parse(path.read_text())
        aliases = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == package:
                aliases.update({a.asname or a.name: a.name for a in node.names})
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(package + "."):
                reads |= {(node.module.rsplit(".", 1)[1], a.name) for a in node.names}
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
                reads.add((aliases[node.value.id], node.attr))
            elif KNOWLEDGE in path.parents and isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                reads.add((path.stem, node.id))
    return reads


def test_every_table_is_read() -> None:
    reads = _reads()
    unread = [f"{module}.{name}" for module, name in _table_names() if (module, name) not in reads]
    assert not unread, unread


def test_knowledge_is_data_that_imports_nothing_of_jaxfix_outside_it() -> None:
    outside = []
    for path in sorted(KNOWLEDGE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            outside += [f"{path.name}: {m}" for m in modules
                        if m not in ("__future__", "dataclasses") and not m.startswith("jaxfix.facts.knowledge")]
    assert not outside, outside
