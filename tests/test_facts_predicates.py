"""facts/predicates.py: which values in traced code are surely tracers, and surely arrays (benchmarks/agreement.py's
`tracer-exact`, `array-evidence-exact` and `array-exact` compare it with PredicateAnalysis on every tree)."""

from __future__ import annotations

import ast

import pytest

from jaxfix.facts.module import FileFacts


def _answers(text: str, fact: str) -> dict[str, bool]:
    """`fact` of each expression `return`ed in the module, by its code."""
    facts = FileFacts(text)
    predicates = facts.predicates
    found = {}
    for node in ast.walk(facts.tree):
        if isinstance(node, ast.Return) and node.value is not None:
            found[ast.unparse(node.value)] = getattr(predicates, fact)(node.value)
    return found


JIT = "import jax\nimport jax.numpy as jnp\n\n@jax.jit\n"


@pytest.mark.parametrize(
    "body, tracer",
    [
        ("def f(x):\n    return jnp.sin(x)\n", True),
        ("def f(x):\n    return x.sum()\n", True),
        ("def f(x, n=3):\n    return n\n", False),  # an omitted default is passed as is
        ("def f(x):\n    return x.shape[0]\n", False),
        ("def f(state):\n    return state.count\n", False),  # a pytree's field may be static
        ("def f(x):\n    m = None\n    m = jnp.ones(3)\n    return m\n", True),  # the binding that reaches
        ("def f(x, c):\n    m = None\n    if c:\n        m = jnp.ones(3)\n    return m\n", False),
        ("def f(x):\n    return '%d' % x\n", False),
        ("def f(x):\n    n = x\n    while n > 0:\n        n = n / 2\n    return n\n", True),
    ],
)
def test_tracers(body: str, tracer: bool) -> None:
    (answer,) = _answers(JIT + body, "tracer").values()
    assert answer is tracer


def test_outside_traced_code_nothing_is_a_tracer() -> None:
    (answer,) = _answers("import jax.numpy as jnp\n\ndef f(x):\n    return jnp.sin(x)\n", "tracer").values()
    assert answer is False


@pytest.mark.parametrize(
    "body, evidence",
    [
        ("def f(x):\n    y = jnp.cos(x)\n    return y\n", True),  # bound to an array
        ("def f(x: jax.Array):\n    return x\n", True),  # annotated
        ("def f(x):\n    print(x.shape)\n    return x\n", True),  # used as only an array is
        ("def f(x):\n    return x\n", False),  # may be a tuple, whose truth is its length
        ("def f(x):\n    t = (x, x)\n    return t\n", False),
    ],
)
def test_array_evidence(body: str, evidence: bool) -> None:
    (answer,) = _answers(JIT + body, "array_evidence").values()
    assert answer is evidence


@pytest.mark.parametrize(
    "test, truth",
    [
        ("x > 0", "TRACED"),  # a traced comparison
        ("x", "OTHER"),  # a bare parameter may be a tuple, whose truth is static
        ("jnp.sum(x)", "TRACED"),
        ("n > 1", "OTHER"),  # an omitted default is a Python value
        ("x > 0 and n > 1", "MIXED"),  # the first operand's test fails; `n > 1` alone would not
        ("n > 1 and x > 0", "OTHER"),  # Python may stop at the static first operand
        ("x.sum() > 0 and not x.mean() < 1", "TRACED"),
    ],
)
def test_truth_of_a_test(test: str, truth: str) -> None:
    facts = FileFacts(JIT + f"def f(x, n=3):\n    if {test}:\n        pass\n")
    (branch,) = [node for node in ast.walk(facts.tree) if isinstance(node, ast.If)]
    assert facts.predicates.truth(branch.test).name == truth


def test_items_of_a_traced_pytree_are_traced_trees() -> None:
    answers = _answers(JIT + "def f(batch):\n    return batch['x']\n", "traced_tree")
    assert answers == {"batch['x']": True}  # an item of a traced argument: a leaf or a subtree, traced alike
    assert _answers(JIT + "def f(batch):\n    return batch['x']\n", "tracer") == {"batch['x']": False}  # a dict?
    answers = _answers(JIT + "def f(x):\n    y = jnp.sin(x)\n    return y[0]\n", "traced_tree")
    assert answers == {"y[0]": True}


@pytest.mark.parametrize(
    "body, boolean",
    [
        ("def f(x):\n    return (x > 0) and not (x < 1)\n", True),
        ("def f(x):\n    return jnp.isnan(x).any() or (x > 0).all()\n", True),
        ("def f(x):\n    m = x > 0\n    return m\n", True),  # a name of dtype category bool (facts/shapes.py)
        ("def f(x):\n    m = x + 1\n    return m\n", False),
        ("def f(x, n=2):\n    return (x > 0) and n\n", False),  # a Python operand: `and` returns it
        ("def f(x):\n    return x.shape[0] > 1\n", False),
        ("def f(x):\n    return -(x > 0)\n", False),
    ],
)
def test_traced_booleans(body: str, boolean: bool) -> None:
    """`Predicates.boolean`: what JF203 rewrites into jnp.logical_* and JF801 takes for a mask."""
    (answer,) = _answers(JIT + body, "boolean").values()
    assert answer is boolean
