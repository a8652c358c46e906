"""The dataflow analysis: activity per statement, liveness, reaching definitions, loop-carried names, purity of
loop bodies and uses of a loop index that need a Python int."""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from jaxfix.analysis import ModuleContext, dataflow
from jaxfix.analysis.syntax import walk
from jaxfix.analysis.dataflow import UNDEFINED, FunctionFlow, activity, free_names

HEADER = "import jax\nimport jax.numpy as jnp\nimport numpy as np\nfrom functools import partial\n\n"


def _module(source: str):
    context = ModuleContext(MetadataWrapper(cst.parse_module(HEADER + textwrap.dedent(source))))
    return context, context.dataflow


def _find(node: cst.CSTNode, kind: type, index: int = 0):
    found = []

    class Finder(cst.CSTVisitor):
        def on_visit(self, visited: cst.CSTNode) -> bool:
            if isinstance(visited, kind):
                found.append(visited)
            return True

    node.visit(Finder())
    return found[index]


def _statement(source: str) -> cst.CSTNode:
    return cst.parse_module(textwrap.dedent(source)).body[0]


def _function_flow(source: str) -> tuple[FunctionFlow, cst.FunctionDef]:
    function = _statement(source)
    return FunctionFlow(function), function


def _marked(function: cst.FunctionDef, marker: str) -> cst.CSTNode:
    """The statement of `function` that holds the call `marker()`."""
    for stmt in _walk_statements(function.body.body):
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                    func = small.value.func
                    if isinstance(func, cst.Name) and func.value == marker:
                        return stmt
    raise LookupError(marker)


def _walk_statements(statements):
    for stmt in statements:
        yield stmt
        for attribute in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, attribute, None)
            if isinstance(inner, (cst.IndentedBlock, cst.Else, cst.Finally)):
                block = inner.body if isinstance(inner, (cst.Else, cst.Finally)) else inner
                yield from _walk_statements(block.body)
            elif isinstance(inner, cst.If):
                yield from _walk_statements([inner])
        for handler in getattr(stmt, "handlers", ()):
            yield from _walk_statements(handler.body.body)


# ---- activity -------------------------------------------------------------------------------------------------


def test_assignment_reads_value_and_writes_target() -> None:
    act = activity(_statement("y = x + z * x\n"))
    assert act.reads == ("x", "z")
    assert act.writes == ("y",)


def test_augmented_assignment_reads_its_target() -> None:
    act = activity(_statement("total += x\n"))
    assert set(act.reads) == {"total", "x"}
    assert act.writes == ("total",)


def test_attribute_and_subscript_stores_are_mutations_of_the_root() -> None:
    act = activity(_statement("state.cache[i] = v\n"))
    assert act.mutations == ("state",)
    assert act.writes == ()
    assert set(act.reads) == {"state", "i", "v"}
    assert activity(_statement("x[0] += 1\n")).mutations == ("x",)
    assert activity(_statement("del d[k]\n")).mutations == ("d",)


def test_tuple_targets_starred_and_walrus() -> None:
    act = activity(_statement("a, (b, *c) = f(y := g(x))\n"))
    assert set(act.writes) == {"a", "b", "c", "y"}
    assert set(act.reads) == {"f", "g", "x"}


def test_attribute_names_and_keywords_are_not_reads() -> None:
    act = activity(_statement("y = jnp.sum(x, axis=axis_value).shape\n"))
    assert set(act.reads) == {"jnp", "x", "axis_value"}


def test_comprehension_targets_are_local() -> None:
    act = activity(_statement("ys = [a * scale for a in xs if a > limit]\n"))
    assert set(act.reads) == {"scale", "xs", "limit"}
    assert act.writes == ("ys",)


def test_lambda_passed_to_a_call_reads_at_once_but_a_stored_lambda_captures() -> None:
    passed = activity(_statement("p = jax.tree.map(lambda q: q - lr * q, p)\n"))
    assert {"lr", "p"} <= set(passed.reads) and passed.captured == ()
    stored = activity(_statement("f = lambda: total\n"))
    assert stored.captured == ("total",) and "total" not in stored.reads


def test_del_and_global_and_opaque_calls() -> None:
    assert activity(_statement("del a, b\n")).deletes == ("a", "b")
    assert activity(_statement("global g\n")).declared == ("g",)
    assert activity(_statement("y = locals()\n")).opaque


def test_compound_statement_activity_is_deep_unless_asked() -> None:
    loop = _statement("for i in range(n):\n    total = total + x[i]\n")
    deep = activity(loop)
    assert set(deep.writes) == {"i", "total"} and {"n", "total", "x"} <= set(deep.reads)
    shallow = activity(loop, deep=False)
    assert shallow.writes == ("i",) and set(shallow.reads) == {"range", "n"}


def test_free_names_of_a_nested_function() -> None:
    function = _statement("def g(a):\n    b = a + c\n    nonlocal_use = d\n    return b + e\n")
    assert set(free_names(function)) == {"c", "d", "e"}


# ---- liveness -------------------------------------------------------------------------------------------------


def test_straight_line_liveness() -> None:
    flow, function = _function_flow(
        """
        def f(x):
            a = x + 1
            mark1()
            b = a * 2
            a = 3
            mark2()
            return a + b
        """
    )
    after_one = flow.live_after(_marked(function, "mark1"))
    assert "a" in after_one and "x" not in after_one  # x is never read again
    after_two = flow.live_after(_marked(function, "mark2"))
    assert {"a", "b"} <= after_two and "x" not in after_two


def test_a_certain_overwrite_kills_and_a_conditional_one_does_not() -> None:
    flow, function = _function_flow(
        """
        def f(x, flag):
            y = x
            mark()
            if flag:
                y = 2
            return y
        """
    )
    assert "y" in flow.live_after(_marked(function, "mark"))
    flow, function = _function_flow(
        """
        def f(x, flag):
            y = x
            mark()
            if flag:
                y = 2
            else:
                y = 3
            return y
        """
    )
    assert "y" not in flow.live_after(_marked(function, "mark"))


def test_reads_in_a_loop_body_are_live_for_the_next_iteration() -> None:
    flow, function = _function_flow(
        """
        def f(x):
            prev = x
            for i in range(10):
                mark()
                x = x + prev
                prev = x
            return x
        """
    )
    loop = _find(function, cst.For)
    assert {"x", "prev"} <= flow.live_at_head(loop)
    assert "prev" in flow.live_after(_marked(function, "mark"))
    assert flow.live_after(loop) >= {"x"} and "prev" not in flow.live_after(loop)


def test_break_and_continue_targets() -> None:
    flow, function = _function_flow(
        """
        def f(x, y):
            while x:
                if y:
                    mark_break()
                    break
                mark_continue()
                continue
            return y
        """
    )
    assert "y" in flow.live_after(_marked(function, "mark_break"))
    assert "x" in flow.live_after(_marked(function, "mark_continue"))


def test_exception_handlers_keep_names_live_inside_try() -> None:
    flow, function = _function_flow(
        """
        def f(x):
            y = 1
            try:
                mark()
                y = g(x)
            except ValueError:
                return y
            return 0
        """
    )
    assert "y" in flow.live_after(_marked(function, "mark"))


def test_names_captured_by_closures_are_always_live() -> None:
    flow, function = _function_flow(
        """
        def f(x):
            def show():
                return total
            total = x
            mark()
            total = 2
            return show
        """
    )
    assert "total" in flow.live_after(_marked(function, "mark"))


def test_locals_makes_everything_live() -> None:
    flow, function = _function_flow(
        """
        def f(x):
            t = x
            mark()
            return locals()
        """
    )
    assert "t" in flow.live_after(_marked(function, "mark"))


# ---- reaching definitions -------------------------------------------------------------------------------------


def test_definitely_defined_through_branches() -> None:
    flow, function = _function_flow(
        """
        def f(x, flag):
            if flag:
                a = 1
                b = 1
            else:
                a = 2
            if flag:
                return x
            else:
                c = 3
            mark()
        """
    )
    here = _marked(function, "mark")
    assert flow.defined_before(here, "a")
    assert not flow.defined_before(here, "b")
    assert flow.defined_before(here, "c")  # the other branch returned
    assert flow.defined_before(here, "x")


def test_loop_bodies_and_deletes_do_not_define() -> None:
    flow, function = _function_flow(
        """
        def f(xs):
            for x in xs:
                seen = x
            total = 0
            del total
            mark()
        """
    )
    here = _marked(function, "mark")
    assert not flow.defined_before(here, "seen")
    assert not flow.defined_before(here, "total")
    assert UNDEFINED in flow.reaching(here, "seen")


def test_reaching_sources() -> None:
    flow, function = _function_flow(
        """
        def f(x, flag):
            total = 0.0
            if flag:
                total = x
            mark()
        """
    )
    sources = flow.reaching(_marked(function, "mark"), "total")
    assert {type(s).__name__ for s in sources} == {"Float", "Name"}


def test_definitions_from_a_later_iteration_reach_the_loop_head() -> None:
    flow, function = _function_flow(
        """
        def f(x):
            y = 0
            for i in range(3):
                mark()
                y = x
        """
    )
    sources = flow.reaching(_marked(function, "mark"), "y")
    assert {type(s).__name__ for s in sources} == {"Integer", "Name"}


# ---- loops ----------------------------------------------------------------------------------------------------


def _first_loop(source: str):
    context, dataflow = _module(source)
    loop = _find(context.module, cst.For)
    return context, dataflow, loop


def test_loop_carried_names() -> None:
    _, dataflow, loop = _first_loop(
        """
        @jax.jit
        def f(x):
            total = 0.0
            h = x
            for i in range(100):
                t = jnp.sin(h)     # a temporary: written before it is read
                h = h * 0.5 + t     # read in the next iteration
                total = total + t   # read after the loop
                unused = t * 2      # never read again
            return total
        """
    )
    flow = dataflow.loop(loop)
    assert flow.carried == ("h", "total")
    assert flow.modified == ("h", "t", "total", "unused")  # in order of first appearance in the body
    assert flow.undefined == ()
    assert flow.targets == ("i",) and flow.targets_live_out == ()


def test_carried_but_undefined_and_index_read_after_loop() -> None:
    _, dataflow, loop = _first_loop(
        """
        @jax.jit
        def f(x):
            for i in range(100):
                y = x * i
            return y, i
        """
    )
    flow = dataflow.loop(loop)
    assert flow.carried == ("y",)
    assert flow.undefined == ("y",)
    assert flow.targets_live_out == ("i",)


def test_mutations_and_declared_names() -> None:
    _, dataflow, loop = _first_loop(
        """
        def f(x, state):
            global counter
            for i in range(100):
                state.value = x
                counter = counter + 1
        """
    )
    flow = dataflow.loop(loop)
    assert flow.mutated == ("state",)
    assert flow.declared == ("counter",)


# ---- purity ---------------------------------------------------------------------------------------------------


def _impurity(body: str, prelude: str = "") -> str | None:
    source = f"{prelude}\n@jax.jit\ndef f(x, xs):\n    out = x\n    for i in range(100):\n" + textwrap.indent(
        textwrap.dedent(body), "        "
    ) + "    return out\n"
    _, dataflow, loop = _first_loop(source)
    blocker = dataflow.impurity(loop)
    return None if blocker is None else blocker.reason


@pytest.mark.parametrize(
    "body",
    [
        "out = jnp.tanh(out) + jax.nn.relu(x)\n",
        "out = out.at[0].add(1.0).reshape(out.shape).sum() + out\n",
        "out = jax.tree.map(lambda a: a * 2, out)\n",
        "key = jax.random.key(0)\nout = out + jax.random.normal(key, out.shape)\n",
        "for j in range(3):\n    if j > 1:\n        break\n    out = out + j\n",
        "d = {}\nd['a'] = out\nout = d['a'] * 2\n",
        "parts = []\nparts.append(out)\nout = jnp.stack(parts).sum(0)\n",
        "out = helper(out)\n",
        "out = jax.vmap(helper)(out)\n",
        "out = out + abs(len(xs)) + max(1, 2)\n",
    ],
)
def test_pure_bodies(body: str) -> None:
    prelude = "def helper(v):\n    scratch = [v]\n    scratch.append(v)\n    return jnp.cos(v) + len(scratch)\n"
    assert _impurity(body, prelude) is None


@pytest.mark.parametrize(
    "body,reason",
    [
        ("break\n", "`break`"),
        ("continue\n", "`continue`"),
        ("return out\n", "`return`"),
        ("print(out)\n", "I/O (`print`)"),
        ("jax.debug.print('{}', out)\n", "I/O (`jax.debug.print`)"),
        ("xs.append(out)\n", "changes `xs` with `.append()`"),
        ("xs[0] = out\n", "assigns to `xs[0]`"),
        ("x.attr = 1\n", "assigns to `x.attr`"),
        ("del out\n", "`del`"),
        ("out = np.random.normal() + out\n", "numpy.random.normal"),
        ("out = impure(out)\n", "calls `impure`, which does I/O (`print`)"),
        ("out = unknown_function(out)\n", "calls `unknown_function`"),
        ("out = xs.pop()\n", "changes `xs` with `.pop()`"),
        ("out = out.custom_method()\n", "custom_method"),
        ("out = jax.tree.map(impure, out)\n", "passes `impure`"),
        ("with jax.named_scope('a'):\n    out = out + 1\n", "`with`"),
        ("def g():\n    return out\nout = g()\n", "defines a function"),
    ],
)
def test_impure_bodies(body: str, reason: str) -> None:
    prelude = "def impure(v):\n    print(v)\n    return v\n"
    found = _impurity(body, prelude)
    assert found is not None and reason in found, found


def test_collecting_is_marked() -> None:
    _, dataflow, loop = _first_loop(
        "@jax.jit\ndef f(x):\n    outs = []\n    for i in range(100):\n        outs.append(x * i)\n    return outs\n"
    )
    blocker = dataflow.impurity(loop)
    assert blocker is not None and blocker.collects


def test_appendable_lists_allow_append_and_nothing_else() -> None:
    """JF102 turns `outs.append(v)` into a scan output: `appendable` lets exactly that call through."""
    source = (
        "@jax.jit\ndef f(x):\n    outs = []\n    for i in range(100):\n        outs.append(x * i)\n{extra}"
        "    return outs\n"
    )
    _, dataflow, loop = _first_loop(source.format(extra=""))
    assert dataflow.impurity(loop, appendable=["outs"]) is None
    assert dataflow.impurity(loop, appendable=["other"]).collects
    _, dataflow, loop = _first_loop(source.format(extra="        outs.extend([x])\n"))
    blocker = dataflow.impurity(loop, appendable=["outs"])
    assert blocker is not None and "`.extend()`" in blocker.reason
    _, dataflow, loop = _first_loop(source.format(extra="        outs.append(print(x))\n"))
    blocker = dataflow.impurity(loop, appendable=["outs"])
    assert blocker is not None and "print" in blocker.reason  # the appended value is still checked


def test_recursive_pure_functions_are_pure() -> None:
    prelude = (
        "def even(n, v):\n    return v if n == 0 else odd(n - 1, v)\n\n"
        "def odd(n, v):\n    return jnp.sin(even(n - 1, v))\n"
    )
    assert _impurity("out = even(3, out)\n", prelude) is None


# ---- concrete uses of the index -------------------------------------------------------------------------------


def _concrete(body: str, params: str = "x, xs") -> str | None:
    source = (
        f"@jax.jit\ndef f({params}):\n    n = x.shape[0]\n    out = x\n    for i in range(100):\n"
        + textwrap.indent(textwrap.dedent(body), "        ")
        + "    return out\n"
    )
    _, dataflow, loop = _first_loop(source)
    blocker = dataflow.concrete_use(loop, ["i"])
    return None if blocker is None else blocker.reason


@pytest.mark.parametrize(
    "body",
    [
        "out = out + x[i]\n",
        "out = out.at[i].set(x[i - 1] * 2)\n",
        "out = out * i + i / 3\n",
        "out = jnp.where(i % 2 == 0, out, -out)\n",
        "key = jax.random.fold_in(jax.random.key(0), i)\nout = out + jax.random.normal(key, out.shape)\n",
        "j = i + 1\nout = out + x[j]\n",
        "out = out + jnp.sum(x * i)\n",
        "out = lax_like = jax.lax.dynamic_slice(x, (i,), (1,)) + out\n",
        "out = out + 0.5 ** i\n",
        "out = out + jnp.float32(i)\n",
    ],
)
def test_index_uses_that_work_when_traced(body: str) -> None:
    assert _concrete(body) is None


@pytest.mark.parametrize(
    "body,reason",
    [
        ("if i == 0:\n    out = out * 2\n", "a truth value"),
        ("out = out + x[i : i + 2].sum()\n", "slice"),
        ("out = out + xs[i]\n", "not known to be a JAX array"),
        ("out = out + jnp.zeros(i).sum()\n", "an argument of `jnp.zeros`"),
        ("for j in range(i):\n    out = out + j\n", "an argument of `range`"),
        ("out = out + float(i)\n", "an argument of `float`"),
        ("name = f'step{i}'\n", "string formatting"),
        ("j = i * 2\nout = out + x[j:]\n", "`j`"),
        ("out = out + 2 ** i\n", "overflows"),
        ("out = out + (1 if i else 0)\n", "a truth value"),
        ("out = out.reshape(i, -1)\n", "reshape"),
    ],
)
def test_index_uses_that_need_a_python_int(body: str, reason: str) -> None:
    found = _concrete(body)
    assert found is not None and reason in found, found


def test_array_evidence_for_an_unannotated_parameter() -> None:
    # `x` is used as an array elsewhere (x.shape); `ys` never is, so it may be a list.
    assert _concrete("out = out + x[i]\n") is None
    assert _concrete("out = out + ys[i]\n", params="x, ys") is not None
    assert _concrete("out = out + ys[i]\n", params="x, ys: jax.Array") is None


class _LibcstReads(cst.CSTVisitor):
    """`dataflow._ExpressionReads` under LibCST's own traversal: what its walk must match."""

    _comprehension = dataflow._ExpressionReads._comprehension

    def __init__(self, collector) -> None:
        super().__init__()
        self.c = collector

    def on_visit(self, node: cst.CSTNode) -> bool:
        visit = dataflow._READERS.get(type(node))
        return True if visit is None else visit(self, node)

    def read(self, node: cst.CSTNode) -> None:
        node.visit(self)


def _libcst_expression(collector, expr) -> None:
    if expr is not None:
        _LibcstReads(collector).read(expr)


CORPUS = Path(__file__).resolve().parent.parent / "corpus"


@pytest.mark.parametrize("path", sorted(CORPUS.rglob("*.py")), ids=lambda p: str(p.relative_to(CORPUS)))
def test_expression_reads_walk_as_libcst_visits(path, monkeypatch):
    """Every expression of the corpus reads, writes, captures the same names, in the same order, with either walk
    (inner comprehensions and lambdas too)."""
    module = cst.parse_module(path.read_text(encoding="utf-8"))
    expressions = [node for node in walk(module) if isinstance(node, cst.BaseExpression)]
    ours = []
    for node in expressions:
        ours.append(dataflow._Collector())
        ours[-1].expression(node)
    monkeypatch.setattr(dataflow._Collector, "expression", _libcst_expression)
    for node, found in zip(expressions, ours):
        theirs = dataflow._Collector()
        theirs.expression(node)
        assert found.activity() == theirs.activity(), cst.Module([]).code_for_node(node)
