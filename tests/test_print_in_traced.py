"""JF601: a print in traced code becomes jax.debug.print safely only where every value it prints is surely traced.
A value known at trace time (a shape, a dtype, a static argument, a module's hyperparameter) is what such a print
shows: moved to run time it prints on every call, and a Python value as an array (flax's key_concepts notebook)."""

from __future__ import annotations

import pytest

from jaxfix.diagnostics import Safety
from tests.helpers import codemod_for_module, findings, project_findings, rewrite

PRINT = codemod_for_module("print_in_traced")
JIT = "import jax\nimport jax.numpy as jnp\nfrom functools import partial\n\n"


def _only(source: str):
    [diagnostic] = findings(source, PRINT)
    return diagnostic


@pytest.mark.parametrize(
    "body",
    [
        "@jax.jit\ndef f(x):\n    print('x', x)\n    return x\n",  # a traced parameter
        "@jax.jit\ndef f(x):\n    y = jnp.tanh(x) * 2.0\n    print(f'{y = } {x.sum():.2f}')\n    return y\n",
        "@jax.jit\ndef f(batch):\n    print('inputs', batch['x'], batch['y'][0])\n    return batch\n",  # items of a tree
        "def run(xs):\n    def step(c, x):\n        print('carry', c, 3)\n        return c + x, None\n"
        "    return jax.lax.scan(step, 0.0, xs)\n",
    ],
)
def test_surely_traced_values_keep_the_safe_fix(body: str) -> None:
    diagnostic = _only(JIT + body)
    assert diagnostic.fix.safety is Safety.SAFE, diagnostic.message
    assert "jax.debug.print(" in rewrite(JIT + body, PRINT, unsafe=False)


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ("@jax.jit\ndef f(x):\n    print(f'{x.dtype} input, mean {jnp.mean(x)}')\n    return x\n", "`x.dtype` is static"),
        ("@jax.jit\ndef f(x):\n    print('x', x, 'of shape', x.shape)\n    return x\n", "`x.shape` is static"),
        ("@partial(jax.jit, static_argnums=(1,))\ndef f(x, n):\n    print(n, 'steps:', x)\n    return x\n", "`n` is static"),
        ("@jax.jit\ndef f(x):\n    print('n =', len(x), x)\n    return x\n", "`len(x)` is static"),
    ],
)
def test_static_values_beside_traced_ones_make_the_fix_unsafe(body: str, named: str) -> None:
    diagnostic = _only(JIT + body)
    assert diagnostic.fix.safety is Safety.UNSAFE, diagnostic.message
    assert named in diagnostic.message and "on every call instead of once" in diagnostic.message
    assert rewrite(JIT + body, PRINT, unsafe=False) == JIT + body


def test_an_attribute_of_a_traced_module_is_only_a_hint() -> None:
    """flax's docs_nnx/key_concepts.ipynb: `model.dim` is a Python int of an NNX module, static under jit; a
    jax.debug.print would show `Array(4, dtype=int32)` on every call where the cell teaches `model.dim = 4`."""
    source = JIT + "@jax.jit\ndef jitted(model):\n    print(f'{model.dim = }')\n    return model\n"
    diagnostic = _only(source)
    assert diagnostic.fix.safety is Safety.DISPLAY_ONLY
    assert "`model.dim` may be static" in diagnostic.message and "as an array" in diagnostic.message
    assert rewrite(source, PRINT, unsafe=True) == source


def test_a_string_made_from_a_tracer_is_only_a_hint() -> None:
    source = JIT + "@jax.jit\ndef f(x):\n    print('as text:', str(x), x)\n    return x\n"
    diagnostic = _only(source)
    assert diagnostic.fix.safety is Safety.DISPLAY_ONLY
    assert "`str(x)` may be static (a string made at trace time" in diagnostic.message


def test_a_call_result_not_proven_an_array_is_unsafe_and_says_what_it_assumes() -> None:
    source = JIT + "def loss_fn(w, x):\n    return helper(w, x)\n\n@jax.jit\ndef f(w, x):\n    loss = loss_fn(w, x)\n" \
        "    print('loss', loss)\n    return loss\n"
    diagnostic = _only(source)
    assert diagnostic.fix.safety is Safety.UNSAFE
    assert "assumes `loss` is an array, not proven" in diagnostic.message


def test_a_static_module_attribute_in_an_nnx_call_is_unsafe(tmp_path) -> None:
    """`self.features`, a constructor argument an NNX module stores as it is, is static by the project's facts."""
    (tmp_path / "model.py").write_text(
        "import jax\nimport jax.numpy as jnp\nfrom flax import nnx\n\n\nclass Encoder(nnx.Module):\n"
        "    def __init__(self, features, rngs):\n        self.features = features\n"
        "        self.linear = nnx.Linear(features, features, rngs=rngs)\n\n    def __call__(self, x):\n"
        "        h = jax.nn.relu(self.linear(x))\n        print('features', self.features, h)\n        return h\n"
    )
    [(name, diagnostic)] = project_findings(tmp_path, PRINT)
    assert diagnostic.fix.safety is Safety.UNSAFE
    assert "`self.features` is static" in diagnostic.message


_FOO = (
    "import jax\nfrom flax import nnx\n\n\nclass Foo(nnx.Module):\n    def __init__(self, dim, rngs, scale=2):\n"
    "        self.w = nnx.Param(jax.random.normal(rngs.param(), (dim, dim)))\n        self.dim = dim\n"
    "        self.scale = scale\n        self.traced_dim = nnx.Param(dim)\n        self.rngs = rngs\n"
)
_JITTED = (
    "import jax.numpy as jnp\nfrom flax import nnx\n\nfrom model import Foo\n\n\n@nnx.jit\ndef jitted(model):\n"
    "    print(f'{model.dim = }')\n    print('dim', model.dim, 'scale', model.scale, jnp.sum(model.w.value))\n"
    "    print('rngs', model.rngs, jnp.sum(model.w.value))\n    return model.traced_dim.value * 2\n\n\n"
)


@pytest.mark.parametrize("calls", ["foo = Foo(4, nnx.Rngs(0))\njitted(foo)\n", "jitted(Foo(4, nnx.Rngs(0)))\n"])
def test_the_python_int_attributes_of_an_nnx_module_every_call_passes_are_static(tmp_path, calls: str) -> None:
    """The key_concepts pattern: `foo = Foo(4, nnx.Rngs(0))` passed to the jitted function: `dim` (a literal
    argument) and `scale` (a literal default) are Python ints of the module, static fields of its tree, so the
    print of `model.dim` alone is a trace-time print (no finding) and beside a traced sum an unsafe fix; `rngs`
    (an `nnx.Rngs`, traced state) is not, and stays a hint."""
    (tmp_path / "model.py").write_text(_FOO)
    (tmp_path / "demo.py").write_text(_JITTED + calls)
    found = {d.start.line: d for _, d in project_findings(tmp_path, PRINT)}
    assert sorted(found) == [10, 11]
    assert found[10].fix.safety is Safety.UNSAFE and "`model.dim` and `model.scale` are static" in found[10].message
    assert found[11].fix.safety is Safety.DISPLAY_ONLY and "`model.rngs` may be static" in found[11].message


@pytest.mark.parametrize(
    "calls",
    [
        "def run(dim):\n    jitted(Foo(dim, nnx.Rngs(0)))\n",  # built from a parameter: any value
        "foo = Foo(4, nnx.Rngs(0))\njitted(foo)\njitted(make())\n",  # another call passes something else
        "foo = Foo(4, nnx.Rngs(0))\njitted(foo)\nhandler = jitted\n",  # used as a value: calls unseen
        "def run(a, b):\n    m = a or b\n    jitted(m)\n",  # bound to what the index does not represent
    ],
)
def test_without_every_call_passing_such_a_module_the_attributes_stay_unproven(tmp_path, calls: str) -> None:
    (tmp_path / "model.py").write_text(_FOO)
    (tmp_path / "demo.py").write_text(_JITTED + calls)
    found = {d.start.line: d for _, d in project_findings(tmp_path, PRINT)}
    assert sorted(found) == [9, 10, 11]
    assert found[9].fix.safety is Safety.DISPLAY_ONLY and "`model.dim` may be static" in found[9].message


def test_a_pytree_node_false_field_of_an_annotated_struct_is_static(tmp_path) -> None:
    """A flax.struct field with `pytree_node=False` is part of the tree's structure: static at trace time."""
    (tmp_path / "env.py").write_text(
        "import jax\nimport jax.numpy as jnp\nfrom flax import struct\n\n\n@struct.dataclass\nclass EnvParams:\n"
        "    max_steps: int = struct.field(pytree_node=False, default=100)\n    gravity: float = 9.8\n\n\n"
        "@jax.jit\ndef step(x, params: EnvParams):\n    print(params.max_steps, 'steps, x', x)\n"
        "    print('gravity', params.gravity, x)\n    return x + params.gravity\n"
    )
    found = {d.start.line: d for _, d in project_findings(tmp_path, PRINT)}
    assert found[14].fix.safety is Safety.UNSAFE and "`params.max_steps` is static" in found[14].message
    assert found[15].fix.safety is Safety.DISPLAY_ONLY and "`params.gravity` may be static" in found[15].message
