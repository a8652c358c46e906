"""Evidence from use: a non-static argument of a traced function is taken for an array where anything else
fails loudly. These tests keep the premises true on the installed JAX, and show where the evidence stops."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from jaxfix.analysis.context import ModuleContext


def _argument(source: str, name: str) -> str | None:
    context = ModuleContext(MetadataWrapper(cst.parse_module(textwrap.dedent(source).lstrip("\n"))))
    for node in _walk(context.wrapper.module):
        if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and node.value.value == name:
            return context.arrays.traced_argument(node.value)
    raise AssertionError(f"no `{name}[...]` in the source")


def _walk(node: cst.CSTNode):
    yield node
    for child in node.children:
        yield from _walk(child)


HEAD = "import jax\nimport jax.numpy as jnp\nfrom functools import partial\n"


def test_a_non_static_argument_of_a_jitted_function_is_evidence() -> None:
    assert _argument(HEAD + "@jax.jit\ndef f(xs, i):\n    return xs[i]\n", "xs") == "f"
    # handed to jax.jit later, or a lax body's parameter
    assert _argument(HEAD + "def f(xs, i):\n    return xs[i]\ng = jax.jit(f)\n", "xs") == "f"


@pytest.mark.parametrize(
    "source",
    [
        # static: a Python value at trace time
        "@partial(jax.jit, static_argnums=(0,))\ndef f(xs, i):\n    return xs[i]\n",
        # annotated as something else than an array
        "@jax.jit\ndef f(xs: tuple, i):\n    return xs[i]\n",
        # a call in the module passes a list (a comprehension, or a name bound to a list)
        "@jax.jit\ndef f(xs, i):\n    return xs[i]\ndef g(ys):\n    return f([y for y in ys], 0)\n",
        "@jax.jit\ndef f(xs, i):\n    return xs[i]\ndef g(a, b):\n    pair = (a, b)\n    return f(pair, 0)\n",
        # not traced at all, or rebound in the function
        "def f(xs, i):\n    return xs[i]\n",
        "@jax.jit\ndef f(xs, i):\n    xs = list(xs)\n    return xs[i]\n",
    ],
)
def test_where_the_evidence_stops(source: str) -> None:
    assert _argument(HEAD + source, "xs") is None


@pytest.mark.parametrize("container", [tuple, list, dict])
def test_indexing_a_pytree_argument_with_a_traced_index_raises_at_trace_time(container) -> None:
    """The premise of the indexing rewrites: given a tuple, list or dict where an array was assumed, a scan's
    traced index fails loudly (TracerIntegerConversionError, or an unhashable tracer) instead of computing."""
    import jax
    import jax.numpy as jnp

    @jax.jit
    def summed(xs):
        def step(total, t):
            return total + xs[t], None

        return jax.lax.scan(step, 0.0, jnp.arange(2))[0]

    rows = [jnp.ones(()), jnp.ones(())]
    value = dict(enumerate(rows)) if container is dict else container(rows)
    with pytest.raises((TypeError, jax.errors.TracerIntegerConversionError)):
        summed(value)
    assert float(summed(jnp.ones(2))) == 2.0
