"""The traced-code analysis: which functions are traced and what kind each value has."""

from __future__ import annotations

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from jaxfix.analysis import ModuleContext
from jaxfix.analysis.traced import Kind


def _analyse(source: str):
    context = ModuleContext(MetadataWrapper(cst.parse_module(source)))
    functions = {}

    class Finder(cst.CSTVisitor):
        def visit_FunctionDef(self, node):
            functions[node.name.value] = node

    context.module.visit(Finder())
    return context.traced, functions


def _returned(traced, function: cst.FunctionDef) -> Kind:
    """The kind of the expression in the function's last `return`."""
    found = []

    class Finder(cst.CSTVisitor):
        def visit_Return(self, node):
            found.append(node.value)

    function.visit(Finder())
    return traced.kind(found[-1])


@pytest.mark.parametrize(
    "decorator",
    ["@jax.jit", "@jit", "@jax.jit()", "@partial(jax.jit, donate_argnums=0)", "@functools.partial(jax.vmap)",
     "@jax.grad", "@jax.checkpoint", "@eqx.filter_jit"],
)
def test_decorators_make_functions_traced(decorator: str) -> None:
    traced, functions = _analyse(
        f"import jax, functools, equinox as eqx\nfrom jax import jit\nfrom functools import partial\n\n"
        f"{decorator}\ndef f(x):\n    return x\n\ndef g(x):\n    return x\n"
    )
    assert traced.is_traced(functions["f"])
    assert not traced.is_traced(functions["g"])


def test_static_arguments_are_static() -> None:
    traced, f = _analyse(
        "import jax\nfrom functools import partial\n\n@partial(jax.jit, static_argnums=(1,), static_argnames='mode')\n"
        "def f(x, n, mode='a'):\n    return x\n"
    )
    function = f["f"]
    assert traced.param_kind(function, "x") is Kind.TRACED
    assert traced.param_kind(function, "n") is Kind.STATIC
    assert traced.param_kind(function, "mode") is Kind.STATIC


def test_non_literal_static_argnums_make_every_parameter_unknown() -> None:
    traced, f = _analyse("import jax\nSTATIC = (1,)\n\ndef f(x, n):\n    return x\n\ng = jax.jit(f, static_argnums=STATIC)\n")
    assert traced.param_kind(f["f"], "x") is Kind.UNKNOWN


def test_wrapping_call_and_partial_binding() -> None:
    traced, f = _analyse(
        "import jax\nfrom functools import partial\n\ndef f(cfg, x):\n    return x\n\n"
        "g = jax.jit(partial(f, {'a': 1}))\n"
    )
    assert traced.is_traced(f["f"])
    assert traced.param_kind(f["f"], "cfg") is Kind.STATIC
    assert traced.param_kind(f["f"], "x") is Kind.TRACED


def test_lax_bodies_and_callees_are_traced() -> None:
    traced, f = _analyse(
        "import jax\nfrom jax import lax\n\ndef helper(v):\n    return v * 2\n\n"
        "def step(c, x):\n    return helper(c) + x, None\n\n"
        "def run(xs):\n    return lax.scan(step, 0.0, xs)\n"
    )
    assert traced.is_traced(f["step"])
    assert traced.is_traced(f["helper"])
    assert traced.param_kind(f["helper"], "v") is Kind.TRACED
    assert not traced.is_traced(f["run"])


def test_host_callback_functions_are_not_traced() -> None:
    traced, f = _analyse(
        "import jax\n\n@jax.jit\ndef f(x):\n    def show(v):\n        return v\n"
        "    jax.debug.callback(show, x)\n    return x\n"
    )
    assert traced.is_traced(f["f"])
    assert not traced.is_traced(f["show"])


@pytest.mark.parametrize(
    "body,kind",
    [
        ("return x.shape", Kind.STATIC),
        ("return len(x) + x.ndim", Kind.STATIC),
        ("return x is None", Kind.STATIC),
        ("y = jnp.sin(x)\n    return y", Kind.TRACED),
        ("y = jnp.zeros(3)\n    return y", Kind.TRACED),
        ("return x[0] + 1", Kind.TRACED),
        ("return [v for v in x]", Kind.TRACED),
        ("for i in range(3):\n        pass\n    return i", Kind.STATIC),
        ("return LIMIT * 2", Kind.STATIC),
        ("return unknown_global", Kind.UNKNOWN),
        ("return opaque()", Kind.UNKNOWN),
        ("return jax.tree.map(lambda a: a is None, x)", Kind.STATIC),
        ("return jax.tree.map(lambda a: a + 1, x)", Kind.TRACED),
        ("return jax.tree.map(is_none, x)", Kind.UNKNOWN),
        ("return jax.tree.structure(x)", Kind.STATIC),
        ("y = 1\n    y = y + x\n    return y", Kind.TRACED),
    ],
)
def test_value_kinds(body: str, kind: Kind) -> None:
    traced, f = _analyse(
        "import jax\nimport jax.numpy as jnp\nLIMIT = 3\n\ndef opaque():\n    return 1\n\n"
        f"@jax.jit\ndef f(x):\n    {body}\n"
    )
    assert _returned(traced, f["f"]) is kind


def test_compiled_means_some_jit_or_lax_body_reaches_the_function():
    source = """
import jax
from jax import lax

def eager(r):
    return r

def under_jit(r):
    return r

def called_by_jitted(r):
    return r

def scan_body(c, x):
    return c, x

population = jax.vmap(eager)
jitted = jax.jit(jax.vmap(under_jit))
grads = jax.grad(eager)

@jax.jit
def step(x):
    lax.scan(scan_body, x, x)
    return called_by_jitted(x)
"""
    context = ModuleContext(MetadataWrapper(cst.parse_module(source)))
    functions = {f.name.value: f for f in context.module.body if isinstance(f, cst.FunctionDef)}
    compiled = {name: context.traced.compiled(f) for name, f in functions.items()}
    assert compiled == {"eager": False, "under_jit": True, "called_by_jitted": True, "scan_body": True, "step": True}
