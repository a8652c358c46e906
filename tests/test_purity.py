"""facts/purity.py: what stops a loop body, an `if` arm or a function from becoming a body JAX traces, and which
uses of a loop index need a Python int (the answers of LibCST's `Dataflow`, which benchmarks/agreement.py's
`impurity-exact` compares on every loop, function, `if` and conditional expression)."""

from __future__ import annotations

import ast
import textwrap

import pytest

from jaxfix.facts.module import FileFacts
from jaxfix.facts.purity import Blocker

HEADER = "import functools\nimport jax\nimport jax.numpy as jnp\nimport numpy as np\nimport optax\n"


def facts_of(code: str) -> FileFacts:
    return FileFacts(HEADER + textwrap.dedent(code))


def first(facts: FileFacts, kind: type) -> ast.AST:
    return next(node for node in ast.walk(facts.tree) if isinstance(node, kind))


def where(facts: FileFacts, blocker: Blocker | None) -> tuple[str, int, int] | None:
    """The reason and the place (line of the snippet, 0-based column) of a blocker."""
    if blocker is None:
        return None
    return blocker.reason, blocker.node.lineno - HEADER.count("\n"), blocker.node.col_offset


def loop_impurity(code: str, live_in=(), **options):
    facts = facts_of(code)
    loop = first(facts, (ast.For, ast.AsyncFor, ast.While))
    return where(facts, facts.purity.impurity(loop, live_in, **options))


LOOPS = [
        ("def f(xs):\n    for x in xs:\n        if x:\n            break\n", ("has `break`", 4, 12)),
        ("def f(xs):\n    for x in xs:\n        continue\n", ("has `continue`", 3, 8)),
        ("def f(xs):\n    for x in xs:\n        return x\n", ("has `return`", 3, 8)),
        ("def f(xs):\n    for x in xs:\n        yield x\n", ("has `yield`", 3, 8)),
        ("def f(xs):\n    for x in xs:\n        global g\n", ("has `global`", 3, 8)),
        ("def f(xs):\n    for x in xs:\n        del x\n", ("has `del`", 3, 8)),
        ("def f(xs):\n    for x in xs:\n        import os\n", ("imports inside the body", 3, 8)),
        ("def f(xs):\n    for x in xs:\n        with open(x):\n            pass\n", ("has a `with` block", 3, 8)),
        ("def f(xs):\n    for x in xs:\n        try:\n            pass\n        finally:\n            pass\n",
         ("has a `try` block", 3, 8)),
        ("def f(xs):\n    for x in xs:\n        class C: pass\n", ("defines a class", 3, 8)),
        ("def f(xs):\n    for x in xs:\n        def g(): pass\n", ("defines a function", 3, 8)),
        ("async def f(xs):\n    for x in xs:\n        async for y in x:\n            pass\n", ("has `async for`", 3, 8)),
        ("def f(xs):\n    for x in xs:\n        pass\n    else:\n        pass\n",
         ("is followed by an `else:` clause", 5, 8)),
        # a break inside an inner loop leaves only that loop
        ("def f(xs):\n    for x in xs:\n        for y in x:\n            break\n", None),
        ("def f(xs, s):\n    for x in xs:\n        s.total = x\n",
         ("assigns to `s.total`, an object from outside the loop", 3, 8)),
        ("def f(xs):\n    for x in xs:\n        d = {}\n        d['k'] = x\n", None),  # a fresh container
        ("def f(xs):\n    for x in xs:\n        print(x)\n", ("does I/O (`print`)", 3, 8)),
        ("def f(xs):\n    for x in xs:\n        setattr(x, 'a', 1)\n", ("calls `setattr`, which is not known to be pure", 3, 8)),
        ("def f(xs):\n    for x in xs:\n        jax.debug.print('{}', x)\n", ("does I/O (`jax.debug.print`)", 3, 8)),
        ("def f(xs):\n    for x in xs:\n        np.random.seed(x)\n",
         ("calls `numpy.random.seed`, which is not known to be pure", 3, 8)),
        ("def f(xs):\n    for x in xs:\n        y = jnp.sin(x) + x.at[0].set(1.0)\n", None),
        ("def f(xs, out):\n    for x in xs:\n        out.append(x)\n", ("changes `out` with `.append()`", 3, 8)),
        ("def f(xs, tx, s, g):\n    for x in xs:\n        u, s = tx.update(g, s)\n",
         ("changes `tx` with `.update()`", 3, 15)),
        ("def f(xs, g):\n    tx = optax.adam(1e-3)\n    s = tx.init(g)\n    for x in xs:\n        u, s = tx.update(g, s)\n",
         None),  # a summarised optimizer's method: pure
        ("def f(xs):\n    for x in xs:\n        (lambda v: v)(x)\n",
         ("calls `(lambda v: v)`, which is not known to be pure", 3, 8)),
        # LibCST's code of a node holds no indentation of the block it stands in
        ("def f(xs):\n    for x in xs:\n        y = g(\n            x\n        )(x)\n",
         ("calls `g(\n    x\n)`, which is not known to be pure", 3, 12)),

]  # fmt: skip


@pytest.mark.parametrize("code, expected", LOOPS)
def test_what_stops_a_loop_body(code, expected) -> None:
    assert loop_impurity(code) == expected


def test_a_collected_list_and_run_time_effects() -> None:
    code = "def f(xs, out):\n    for x in xs:\n        out.append(x)\n"
    facts = facts_of(code)
    blocker = facts.purity.impurity(first(facts, ast.For), ())
    assert blocker.collects  # lax.scan's job
    assert loop_impurity(code, appendable=["out"]) is None
    effect = "def f(xs):\n    for x in xs:\n        jax.debug.print('{}', print(x))\n"
    assert loop_impurity(effect, run_time_effects=["jax.debug.print"]) == ("does I/O (`print`)", 3, 30)


def test_run_time_effects_let_exactly_those_calls_through() -> None:
    """JF103 keeps `jax.debug.print` in a lax.while_loop body: `run_time_effects` lets that call through, its
    arguments are still checked, and other I/O still stops the body."""
    source = "@jax.jit\ndef f(x, xs):\n    out = x\n    for i in range(100):\n{body}    return out\n"
    effects = ["jax.debug.print"]
    printed = source.format(body="        out = out + 1\n        jax.debug.print('{}', out)\n")
    assert loop_impurity(printed, ("out",), run_time_effects=effects) is None
    assert "jax.debug.print" in loop_impurity(printed, ("out",))[0]
    popped = source.format(body="        jax.debug.print('{}', xs.pop())\n")
    assert "`.pop()`" in loop_impurity(popped, ("out",), run_time_effects=effects)[0]
    shown = source.format(body="        print(out)\n")
    assert "I/O (`print`)" in loop_impurity(shown, ("out",), run_time_effects=effects)[0]


def test_a_container_live_at_the_head_is_not_fresh() -> None:
    code = "def f(xs):\n    d = {}\n    for x in xs:\n        d = {}\n        d['k'] = x\n"
    assert loop_impurity(code) is None
    assert loop_impurity(code, live_in=["d"]) == ("assigns to `d['k']`, an object from outside the loop", 5, 8)


FUNCTIONS = [
    ("class C:\n    @deco(\n        'a'\n        'b'\n    )\n    def m(self):\n        pass\n", "m",
     ("is decorated with `deco(\n    'a'\n    'b'\n)`", 2, 5)),
    ('class C:\n    @deco("""\n    kept\n    """)\n    def m(self):\n        pass\n', "m",
     ('is decorated with `deco("""\n    kept\n    """)`', 2, 5)),  # a string keeps its lines
]  # fmt: skip


@pytest.mark.parametrize("code, name, expected", FUNCTIONS)
def test_a_decorated_function(code, name, expected) -> None:
    assert function_impurity(code, name) == expected


def function_impurity(code: str, name: str, **options):
    facts = facts_of(code)
    function = next(n for n in ast.walk(facts.tree) if isinstance(n, ast.FunctionDef) and n.name == name)
    return where(facts, facts.purity.function_impurity(function, **options))


def test_same_module_functions_are_followed() -> None:
    code = (
        "def log(x):\n    print(x)\n    return x\n"
        "def step(x):\n    return log(x) + 1\n"
        "def count(n):\n    return 0 if n == 0 else count(n - 1)\n"  # recursion: pure while its cycle is checked
        "def mapped(xs):\n    return jax.tree.map(log, xs)\n"
        "@functools.lru_cache\ndef cached(x):\n    return x\n"
        "def rows(x):\n    return x.sum()\n"
    )
    assert function_impurity(code, "step") == ("calls `log`, which does I/O (`print`)", 5, 11)
    assert function_impurity(code, "count") is None
    assert function_impurity(code, "mapped") == ("passes `log`, which does I/O (`print`)", 9, 24)
    assert function_impurity(code, "cached") == ("is decorated with `functools.lru_cache`", 10, 1)
    assert function_impurity(code, "rows") == ("calls `x.sum()`, which is not known to be pure", 14, 11)
    assert function_impurity(code, "rows", arrays=frozenset({"x"})) is None  # the caller knows `x` is an array
    assert function_impurity("def f(x):\n    x.y = 1\n", "f") == ("assigns to `x.y`, an object from outside the function", 2, 4)


def test_an_if_arm_leaves_its_final_returns_to_the_caller() -> None:
    code = "def f(x):\n    if x > 0:\n        y = x * 2\n        return y\n    else:\n        print(x)\n        return x\n"
    facts = facts_of(code)
    branch = first(facts, ast.If)
    purity = facts.purity
    assert purity.block_impurity(branch.body, outside=["x"]) is None
    assert where(facts, purity.block_impurity(branch.orelse, outside=["x"])) == ("does I/O (`print`)", 6, 8)
    one_line = facts_of("def f(x):\n    if x:\n        y = 1; return y\n")  # not a line of its own: a `return`
    arm = first(one_line, ast.If).body
    assert where(one_line, one_line.purity.block_impurity(arm, outside=[])) == ("has `return`", 3, 15)
    stored = facts_of("def f(x, s):\n    if x:\n        s.a = 1\n")
    assert where(stored, stored.purity.block_impurity(first(stored, ast.If).body, outside=[])) == (
        "assigns to `s.a`, an object from outside the branch", 3, 8
    )


def concrete(code: str, name: str = "i", **options):
    facts = facts_of(code)
    loop = first(facts, (ast.For, ast.While))
    return where(facts, facts.purity.concrete_use(loop, [name], **options))


CONCRETE = [
        ("def f(xs, n):\n    for i in range(n):\n        xs = xs.at[i].set(0.0)\n",  # `xs`: not known to be an array
         ("uses `i` as a Python int (an index into something not known to be a JAX array: `xs.at[i]`)", 3, 13)),
        ("@jax.jit\ndef f(xs, n):\n    for i in range(3):\n        xs = xs.at[i].set(0.0)\n    return xs.shape\n", None),
        ("def f(n):\n    xs = jnp.zeros(3)\n    for i in range(n):\n        y = xs[i]\n", None),
        ("def f(xs, n):\n    for i in range(n):\n        y = xs[i]\n",
         ("uses `i` as a Python int (an index into something not known to be a JAX array: `xs[i]`)", 3, 12)),
        ("def f(x, n):\n    for i in range(n):\n        y = x[i:]\n",
         ("uses `i` as a Python int (a slice bound; use lax.dynamic_slice: `x[i:]`)", 3, 12)),
        ("def f(x, n):\n    for i in range(n):\n        if i > 2:\n            pass\n",
         ("uses `i` as a Python int (a truth value: `i > 2`)", 3, 11)),
        ("def f(x, n):\n    for i in range(n):\n        y = 2 ** i\n",
         ("uses `i` as a Python int (an integer power overflows int32: `2 ** i`)", 3, 12)),
        ("def f(x, n):\n    for i in range(n):\n        j = i + 1\n        s = f'{j}'\n",
         ("uses `j` as a Python int (string formatting: `{j}`)", 4, 14)),  # followed through `j`
        ("def f(x, n):\n    for i in range(n):\n        y = i in (1, 2)\n",
         ("uses `i` as a Python int (a membership or identity test: `i in (1, 2)`)", 3, 12)),
        ("def f(a, b, n):\n    for i in range(n):\n        y = i and a and b\n",
         ("uses `i` as a Python int (a truth value: `i and a`)", 3, 12)),  # LibCST's inner `and`
        ("def f(a, n):\n    for i in range(n):\n        if (i and a):\n            pass\n",
         ("uses `i` as a Python int (a truth value: `(i and a)`)", 3, 12)),
        # LibCST's nodes that `ast` places nowhere: a comprehension's clause, an assignment's target, a parameter
        ("def f(xs):\n    for i in xs:\n        y = [a for a in i if a]\n",
         ("uses `i` as a Python int (a use that may need a Python value: `for a in i if a`)", 3, 14)),
        ("def f(xs):\n    for i in xs:\n        y = [a for a in xs if i]\n",
         ("uses `i` as a Python int (a use that may need a Python value: `if i`)", 3, 26)),
        ("def f(xs):\n    for i in xs:\n        i['k'] = 1\n",
         ("uses `i` as a Python int (a use that may need a Python value: `i['k'] =`)", 3, 8)),
        ("def f(xs, n):\n    for i in range(n):\n        g = lambda x, k=i + 1: x\n",
         ("uses `i` as a Python int (a use that may need a Python value: `k=i + 1`)", 3, 22)),
        ("def f(xs, n):\n    for i in range(n):\n        g = lambda x, k=i: x\n", None),  # a default: no load
]  # fmt: skip


@pytest.mark.parametrize("code, expected", CONCRETE)
def test_uses_that_need_a_python_int(code, expected) -> None:
    assert concrete(code) == expected


def test_is_array_like() -> None:
    facts = facts_of(
        "def f(xs: list):\n    a = jnp.zeros(3)\n    b = a.T\n    c = a.at[0].set(1.0)\n    d = [a]\n"
        "    e = jnp.linalg.eigh(a)\n    g = a.sum() + 1\n    return a, b, c, d, e, g, xs\n"
    )
    values = {t.id: n.value for n in ast.walk(facts.tree) if isinstance(n, ast.Assign) for t in n.targets}
    purity = facts.purity
    assert [name for name, value in values.items() if purity.is_array_like(value)] == ["a", "b", "c", "g"]
    returned = first(facts, ast.Return).value.elts
    assert [n.id for n in returned if purity.is_array_like(n)] == ["a", "b", "c", "g"]


def test_local_function() -> None:
    facts = facts_of("def g(x):\n    return x\nh = lambda x: x\nh2 = 1\nh2 = 2\nprint(g, h, h2)\n")
    call = next(n for n in ast.walk(facts.tree) if isinstance(n, ast.Call))
    g, h, h2 = call.args
    assert isinstance(facts.purity.local_function(g), ast.FunctionDef)
    assert isinstance(facts.purity.local_function(h), ast.Lambda)
    assert facts.purity.local_function(h2) is None  # bound twice
