"""jaxfix.facts.flow on `ast` says what `analysis.dataflow.activity` says on LibCST of every statement of the
examples, the corpus and the planted real-code files (found through jaxfix/edit/bridge.py), but where LibCST's
spelling departs from Python's (`None`/`True`/`False` as names, every name node of a `match`); and a block's
statements group into LibCST's lines."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import libcst as cst
import pytest

from jaxfix.analysis import dataflow
from jaxfix.analysis.syntax import body_statements
from jaxfix.edit.bridge import Bridge
from jaxfix.facts import flow
from jaxfix.facts.binder import Binder
from jaxfix.facts.jitted import only_arithmetic

ROOT = Path(__file__).resolve().parent.parent
_CONSTANTS = ("None", "True", "False")  # names in LibCST, constants in `ast`


def _libcst_activity(node: cst.CSTNode) -> flow.Activity:
    found = dataflow.activity(node)
    return dataclasses.replace(
        found,
        reads=tuple(n for n in found.reads if n not in _CONSTANTS),
        captured=tuple(n for n in found.captured if n not in _CONSTANTS),
    )


def _files() -> list[Path]:
    return sorted(p for folder in ("examples", "corpus", "tests/planted") for p in (ROOT / folder).rglob("*.py"))


def _parsed():
    """(path, ast tree, LibCST module, bridge) of every file of `_files` that both parse."""
    for path in _files():
        text = path.read_text(encoding="utf-8")
        try:
            tree, module = ast.parse(text), cst.parse_module(text)
        except (SyntaxError, cst.ParserSyntaxError):
            continue
        yield path, tree, module, Bridge(module, tree, None, text)


def test_every_statement_reads_and_writes_what_dataflow_says() -> None:
    asked, differ = 0, []
    for path, tree, module, bridge in _parsed():
        for node in ast.walk(tree):
            if not isinstance(node, ast.stmt) or any(type(n).__name__ == "Match" for n in ast.walk(node)):
                continue
            spelled = bridge.cst_of(node)
            assert spelled is not None, f"{path}:{node.lineno}"
            asked += 1
            if flow.activity(node) != _libcst_activity(spelled):
                differ.append(f"{path.relative_to(ROOT)}:{node.lineno} {flow.activity(node)} {_libcst_activity(spelled)}")
    assert asked > 5000
    assert differ == []


@pytest.mark.parametrize(
    "code",
    [
        "f(lambda: a, key=lambda b=c: b + d)\n",  # a lambda passed to a call runs there: read
        "g = lambda: a\n",  # stored: captured
        "x[i], *y = [v := f(w) for w in z if w]\n",  # mutations, walrus in a comprehension, its own targets
        "def f(a: A, *b: B, c=C, **d) -> R:\n    global g\n    nonlocal h\n    return a + e\n",
        "class C(B, metaclass=M):\n    x = y\n    def m(self):\n        return z\n",
        "del a, b[c]\n",
        "try:\n    pass\nexcept E as e:\n    del e\nelse:\n    import a.b as c, d.e\n",
        "with open(p) as (f, g), h:\n    eval(s)\n",
        "for i, (j, k) in xs:\n    q += i\nelse:\n    r: int = k\n",
        "x = {a: b, **c, d: (lambda: e)()}\n",
    ],
)
def test_a_statement_of_each_kind(code: str) -> None:
    (statement,) = ast.parse(code).body
    module = cst.parse_module(code)
    assert flow.activity(statement) == _libcst_activity(module.body[0] if not isinstance(module.body[0], cst.SimpleStatementLine) else module.body[0].body[0])


def test_lines_group_as_libcst_does() -> None:
    """`;` joins simple statements into one line; a one-line suite is no line a statement can be put before;
    `elif` is told from an `if` alone in an `else`."""
    text = "a = 1; b = 2\nc = (3,\n  4); d = 5\nif a: e = 1; f = 2\nelif b:\n    g = 3\nelse:\n    if c:\n        h = 4\n"
    tree = ast.parse(text)
    lines = flow.Lines(text)
    groups = lines.group(tree.body)
    assert [(kind, [s.lineno for s in line]) for kind, line in groups] == [
        ("line", [1, 1]), ("line", [2, 3]), ("compound", [4])
    ]
    outer = groups[2][1][0]
    assert lines.group(outer.body)[0][0] == "suite"
    (elif_,) = outer.orelse
    assert lines.is_elif(elif_) and not lines.is_elif(elif_.orelse[0])
    module = cst.parse_module(text)
    assert [len(s.body) for s in module.body[:2]] == [2, 2]  # LibCST's own lines, for comparison
    assert isinstance(module.body[2].body, cst.SimpleStatementSuite) and body_statements(module.body[2].body)


@pytest.mark.parametrize(
    ("body", "bound"),
    [
        ("for x in xs:\n    y = x\nt = 0\n", {"xs"}),  # the loop may run zero times
        ("y = 0\nfor x in xs:\n    y = x\nt = 0\n", {"xs", "y"}),
        ("while True:\n    y = 1\n    break\nt = 0\n", {"xs"}),  # LibCST's flow does not read `while True`
        ("try:\n    y = f()\nexcept E:\n    return\nt = 0\n", {"xs", "y"}),
        ("with c:\n    y = 1\nt = 0\n", {"xs"}),  # a context manager may swallow an exception
        ("y = 1\ndel y\nt = 0\n", {"xs"}),
    ],
)
def test_bound_names_are_libcst_defined_before(body: str, bound: set[str]) -> None:
    """`flow.Reaching` answers `FunctionFlow.defined_before` (benchmarks/agreement.py's `bound-exact` on all trees)."""
    text = "def g(xs):\n" + "".join(f"    {line}\n" for line in body.splitlines())
    function = ast.parse(text).body[0]
    last = function.body[-1]
    found = flow.Reaching(function, flow.Lines(text))
    assert {n for n in found.locals if found.defined_before(last, n)} == bound
    libcst_function = cst.parse_module(text).body[0]
    libcst_flow = dataflow.FunctionFlow(libcst_function)
    libcst_last = body_statements(libcst_function.body)[-1]
    assert {n for n in libcst_flow.locals if libcst_flow.defined_before(libcst_last, n)} == bound


@pytest.mark.parametrize(
    ("code", "count"),
    [
        ("def f(step):\n    step = 1; step = 2\n", 2),  # a parameter, and one line however many `;` statements
        ("def f():\n    if c: step = 1\n    for step.a in xs:\n        pass\n", 1),  # a suite is no line; `for` spells it
        ("def f():\n    with g() as step:\n        def step():\n            pass\n", 2),
        ("def f(*step, **kw):\n    class K:\n        step = 3\n", 1),  # not `*args`; nested scopes count
        ("def step():\n    x = (step := 1)\n", 1),  # the def itself does not, its walrus does
    ],
)
def test_binding_statements_counts_libcst_statements(code: str, count: int) -> None:
    tree = ast.parse(code)
    assert flow.binding_statements(tree.body[0], "step", flow.Lines(code)) == count


def test_statement_of_is_libcst_statement() -> None:
    """The statement LibCST holds a node in: a line by its first statement, a suite's compound statement."""
    code = "def f(x):\n    a = 1; b = g(x)\n    if x: c = h(x)\n    for y in x:\n        d = k(y)\n"
    tree = ast.parse(code)
    lines, parents = flow.Lines(code), {c: p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
    function = tree.body[0]
    calls = {n.func.id: n for n in ast.walk(tree) if isinstance(n, ast.Call)}
    assert flow.statement_of(calls["g"], parents, lines) is function.body[0]
    assert flow.statement_of(calls["h"], parents, lines) is function.body[2]  # the `if` of the suite
    loop = function.body[3]
    assert flow.statement_of(calls["k"], parents, lines, stop=loop) is loop.body[0]
    assert flow.statement_of(loop.iter, parents, lines, stop=loop) is None


def test_top_level_bindings_by_libcst_statement() -> None:
    code = "import a; b = 1\ndef c():\n    d = 1\nfor e in f:\n    g = 1\nclass h:\n    pass\n"
    tree = ast.parse(code)
    found = flow.top_level_bindings(tree, flow.Lines(code))
    assert {name: [s.lineno for s in statements] for name, statements in found.items()} == {
        "a": [1], "b": [1], "c": [2], "e": [4], "h": [6]
    }


@pytest.mark.parametrize(
    ("body", "answer"),
    [
        ("v * i", True), ("v * i - t", True), ("i * 2", True),  # the whole body: its value only flows out
        ("(v * i, v)", True), ("f(v * i)", True), ("f(i * 2)", False), ("v[i]", False), ("v ** i", False),
        ("v * float(i)", False), ("v.i * 2", False), ("f(v, i=v) * i", False), ("(lambda: i)() * v", False),
        ("v * 2", False),  # not read at all
    ],
)
def test_only_arithmetic(body: str, answer: bool) -> None:
    """Whether a name may become a traced argument of a lambda (its parameter `v` traced): an operand of `+ - * /`
    with `v` or the whole body only (benchmarks/agreement.py's `only-arithmetic-exact` compares it with LibCST's)."""
    tree = ast.parse(f"step = lambda v: {body}")
    lam = tree.body[0].value
    assert only_arithmetic(Binder(tree), lam.body, "i", {"v"}) is answer


# ---- facts.loops: liveness, reaching definitions and loop-carried names, as LibCST's analysis.dataflow ------------

_LOOPS = [
    "def g(x, n):\n    y = 0\n    for i in range(n):\n        y = y + x; z = i\n    return y\n",
    "def g(x):\n    while x > 0:\n        x = x - 1\n        if x == 3:\n            break\n    return x\n",
    "def g(xs):\n    for a, *b in xs:\n        acc = a\n        continue\n    return acc, a\n",  # acc undefined before
    "def g(x):\n    total = x\n    for i in range(3): total += i; del x\n    return total\n",  # a one-line suite
    "def g(x):\n    global y\n    for i in x:\n        y = i\n        x.a = i\n",  # declared, mutated
    "def g(x):\n    def h():\n        return s\n    s = 0\n    for i in x:\n        s = s + h()\n    return s\n",
    "def g(x):\n    try:\n        s = f()\n    except E as e:\n        s = e\n    with c as w:\n        for i in x:\n"
    "            s = s + w\n    return s\n",
]


def _sources(found, spell) -> set[str]:
    return {s if isinstance(s, str) else spell(s) for s in found}


@pytest.mark.parametrize("text", _LOOPS)
def test_loop_flow_and_reaching_are_libcst_s(text: str) -> None:
    from jaxfix.facts import loops

    tree = ast.parse(text)
    module = cst.parse_module(text)
    bridge = Bridge(module, tree)
    lines = flow.Lines(text)
    function, libcst_function = tree.body[0], module.body[0]
    found, expected = loops.FunctionFlow(function, lines), dataflow.FunctionFlow(libcst_function)
    for node in ast.walk(function):
        if isinstance(node, (ast.For, ast.While)):
            mine = loops.loop_flow(found, node)
            theirs = dataflow.loop_flow(expected, bridge.cst_of(node))
            for field in ("targets", "modified", "carried", "undefined", "mutated", "declared", "targets_live_out"):
                assert getattr(mine, field) == getattr(theirs, field), field
            assert mine.live_in == theirs.live_in - set(_CONSTANTS)
            assert mine.live_out == theirs.live_out - set(_CONSTANTS)
    last, libcst_last = function.body[-1], body_statements(libcst_function.body)[-1]
    assert found.live_after(last) == expected.live_after(libcst_last) - set(_CONSTANTS)
    for name in found.locals:
        mine = {repr(s) if not isinstance(s, ast.AST) else bridge.cst_of(s) for s in found.reaching(last, name)}
        theirs = {repr(s) if not isinstance(s, cst.CSTNode) else s for s in expected.reaching(libcst_last, name)}
        assert mine == theirs, name


def test_reaching_definitions_are_values_parameters_statements_or_undefined() -> None:
    from jaxfix.facts import loops

    text = "def g(p):\n    a = 1\n    b, c = f()\n    if p:\n        del a\n    return a, b, p\n"
    function = ast.parse(text).body[0]
    found = loops.FunctionFlow(function, flow.Lines(text))
    ret = function.body[-1]
    assert {type(s).__name__ for s in found.reaching(ret, "a")} == {"Constant", "_Undefined"}
    assert found.reaching(ret, "b") == {function.body[1]}  # the statement of `b, c = ...`
    assert [repr(s) for s in found.reaching(ret, "p")] == ["PARAM(p)"]
    assert not found.defined_before(ret, "a") and found.defined_before(ret, "b")
    assert found.live_after(function.body[0]) >= {"a", "p"}


class _Scalars:
    """Ranks and categories for the carry: every value a scalar of unknown category."""

    def rank(self, expr, env=None):
        return 0

    def category(self, expr, env=None):
        return None

    least_category = category

    def reshaping(self, value, name):
        return None


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("    y = None\n    for i in range(3):\n        y = x\n    return y\n", "`y` starts as None"),
        ("    y = True\n    for i in range(3):\n        y = x\n    return y\n",
         "`y` starts as a Python bool, which lax.fori_loop does not promote"),
        ("    for i in range(3):\n        y = x\n        y = y + 1\n    return y\n",
         "`y` is carried from one step to the next but not defined before the loop"),
        ("    y = 0\n    for i in range(3):\n        y = y + 1\n    return y\n", "`y` stays a Python number in the loop"),
        ("    y = x\n    for i in range(3):\n        y = y * 2\n    return y\n", None),
    ],
)  # fmt: skip
def test_carry_blocker(body: str, reason: str | None) -> None:
    from jaxfix.facts.carry import CarryAnalysis
    from jaxfix.facts.module import FileFacts

    text = "import jax\n\n@jax.jit\ndef g(x):\n" + body
    facts = FileFacts(text)
    loop = next(n for n in ast.walk(facts.tree) if isinstance(n, ast.For))
    carry = CarryAnalysis(facts, _Scalars())
    assert carry.blocker(loop, facts.loop(loop), construct="lax.fori_loop") == reason
    assert carry.name_kind(loop, "y").name == ("STATIC" if reason and "Python number" in reason else "TRACED")
