"""Evidence from use: a non-static argument of a traced function is taken for an array where anything else
fails loudly. These tests keep the premises true on the installed JAX, and show where the evidence stops."""

from __future__ import annotations

import ast
import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from jaxfix.analysis.context import ModuleContext
from jaxfix.facts.module import FileFacts


def _argument(source: str, name: str) -> str | None:
    facts = FileFacts(textwrap.dedent(source).lstrip("\n"))
    for node in ast.walk(facts.tree):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == name:
            return facts.arrays.traced_argument(node.value)
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


def _containers():
    import jax.numpy as jnp

    rows = [jnp.ones(3), jnp.ones(3)]
    return [tuple(rows), list(rows), {"a": rows[0], "b": rows[1]}]


def test_every_loud_function_raises_on_a_container() -> None:
    """The premise of `loud_use`: each function it counts fails on a tuple, list or dict of arrays."""
    import jax
    import jax.numpy as jnp

    from jaxfix.facts.knowledge.jax import LOUD_FUNCTIONS

    other = {"dot", "matmul", "maximum", "minimum", "outer", "tensordot"}
    for qualified in sorted(LOUD_FUNCTIONS):
        module, _, name = qualified.rpartition(".")
        function = jax.nn if module == "jax.nn" else jnp.linalg if module.endswith("linalg") else jnp
        function = getattr(function, name)
        for value in _containers():
            with pytest.raises(Exception):
                if name in other:
                    function(value, jnp.ones(3))
                elif name == "einsum":
                    function("i->", value)
                elif name == "where":
                    function(value, 1.0, 0.0)
                elif name == "clip":
                    function(value, 0.0, 1.0)
                else:
                    function(value)


def test_every_loud_operator_and_attribute_raises_on_a_container() -> None:
    import operator

    import jax.numpy as jnp

    from jaxfix.facts.batches import LOUD_ATTRIBUTES

    loud = [operator.sub, operator.truediv, operator.floordiv, operator.pow, operator.matmul]
    with_arrays = [operator.add, operator.mul]
    for value in _containers():
        for op in loud:
            for other in (2, 2.0, jnp.ones(3)):
                for args in ((value, other), (other, value)):
                    with pytest.raises(TypeError):
                        op(*args)
        for op in with_arrays:
            for other in (2.0, jnp.ones(3), jnp.int32(2)):
                for args in ((value, other), (other, value)):
                    with pytest.raises(TypeError):
                        op(*args)
        with pytest.raises(TypeError):
            -value
        for attribute in LOUD_ATTRIBUTES:
            assert not hasattr(value, attribute), attribute


def test_vmap_over_a_tuple_computes_something_else_unless_a_use_raises() -> None:
    """Why a comprehension over an unannotated argument needs a loud use of its variable: over a tuple,
    jax.vmap maps the rows of each leaf where the comprehension walked the elements. `x[0] * 2` then silently
    computes other numbers; `x @ w` raises."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    xs = (jnp.arange(3.0), jnp.arange(3.0) + 10)
    walked = jnp.stack([x[0] * 2 for x in xs])
    mapped = jax.vmap(lambda x: x[0] * 2)(xs)
    assert walked.shape != mapped.shape or not np.array_equal(walked, mapped)
    with pytest.raises(TypeError):
        jax.vmap(lambda x: jnp.tanh(x @ jnp.ones((3, 2))))(xs)


@pytest.mark.parametrize(
    "element,loud",
    [
        ("jnp.tanh(x @ w)", True),
        ("x.shape[0] + 1", True),
        ("(x - 1.0) * 2", True),
        ("x * 2.0", True),
        ("x * 2", False),  # repeats a tuple
        ("x + x", False),  # concatenates tuples
        ("x[0] * 2", False),
        ("jnp.stack(x)", False),  # accepts a sequence
        ("w if c else x @ w", False),  # only on one branch
        ("c and jnp.sum(x)", False),
    ],
)
def test_loud_uses(element: str, loud: bool) -> None:
    source = HEAD + f"def f(xs, w, c):\n    return [{element} for x in xs]\n"
    facts = FileFacts(source)
    comprehension = next(n for n in ast.walk(facts.tree) if isinstance(n, ast.ListComp))
    assert (facts.batches.loud_use("x", comprehension.elt) is not None) is loud


def test_fixes_on_evidence_say_what_they_assume() -> None:
    from tests.helpers import codemod_for_module, findings

    vmap = codemod_for_module("batch_loop_to_vmap")
    source = HEAD + "@jax.jit\ndef f(xs, w):\n    return jnp.stack([jnp.tanh(x @ w) for x in xs])\n"
    (finding,) = findings(source, vmap)
    assert finding.fix is not None
    assert "assumes `xs` is an array: a non-static argument of `f`, which JAX traces" in finding.message
    assert "`x @ w` raises at trace time" in finding.message
    # proven arrays need no assumption
    annotated = source.replace("def f(xs, w)", "def f(xs: jax.Array, w)")
    (finding,) = findings(annotated, vmap)
    assert finding.fix is not None and "assumes" not in finding.message


@pytest.mark.parametrize(
    "annotation,imports,traced,proven",
    [
        ("jax.Array", "", True, True),
        ("jnp.ndarray", "", True, True),
        ("chex.Array", "import chex\n", True, True),
        ("chex.Array", "import chex\n", False, True),
        ('Float[Array, "n"]', "from jaxtyping import Array, Float\n", True, True),
        ("np.ndarray", "import numpy as np\n", True, True),
        ("npt.NDArray[np.float32]", "import numpy as np\nimport numpy.typing as npt\n", True, True),
        # outside traced code a NumPy array stays a NumPy array
        ("np.ndarray", "import numpy as np\n", False, False),
        ('Float[np.ndarray, "n"]', "import numpy as np\nfrom jaxtyping import Float\n", False, False),
        ("tuple", "", True, False),
    ],
)
def test_array_annotations_of_every_common_spelling(annotation: str, imports: str, traced: bool, proven: bool) -> None:
    decorator = "@jax.jit\n" if traced else ""
    source = HEAD + imports + f"{decorator}def f(xs: {annotation}, i):\n    return xs[i]\n"
    context = ModuleContext(MetadataWrapper(cst.parse_module(source)))
    name = next(
        n.value for n in _walk(context.wrapper.module) if isinstance(n, cst.Subscript) and isinstance(n.value, cst.Name)
        and n.value.value == "xs"
    )
    assert context.arrays.is_array(name) is proven


def test_a_lambda_parameter_is_no_argument_of_the_enclosing_function() -> None:
    source = HEAD + "@jax.jit\ndef f(xs, i):\n    g = lambda xs: xs[i]\n    return g(xs)\n"
    facts = FileFacts(source)
    lambda_read = [n for n in ast.walk(facts.tree) if isinstance(n, ast.Subscript)][0].value
    assert facts.arrays.traced_argument(lambda_read) is None


# ---- a library call's output: a Flax module's `apply`, by convention one array --------------------------------

_MODELS = """
import flax.linen as nn
import haiku as hk
from flax.training import train_state


class MLP(nn.Module):
    @nn.compact
    def __call__(self, x):
        return nn.Dense(4)(x)


class Deeper(MLP):
    pass


model = MLP()
net = hk.without_apply_rng(hk.transform(lambda x: hk.Linear(4)(x)))
stateful = hk.transform_with_state(lambda x: hk.Linear(4)(x))
"""


def _output(body: str) -> str | None:
    source = HEAD + _MODELS + "\n@jax.jit\ndef f(variables, state, x, i):\n" + textwrap.indent(body, "    ")
    source += "    return out[i]\n"
    facts = FileFacts(source)
    reads = [n for n in ast.walk(facts.tree) if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name)]
    reads.sort(key=lambda n: (n.lineno, n.col_offset))
    return facts.arrays.library_output(reads[-1].value)


@pytest.mark.parametrize(
    "body,call",
    [
        ("out = model.apply(variables, x)\n", "model.apply(...)"),
        ("out = MLP().apply(variables, x)\n", "MLP().apply(...)"),
        ("out = Deeper().apply(variables, x)\n", "Deeper().apply(...)"),  # through a base of the module
        ("layer = nn.Dense(3)\nout = layer.apply(variables, x)\n", "layer.apply(...)"),
        ("out = state.apply_fn({'params': state.params}, x)\n", "state.apply_fn(...)"),  # a TrainState, by name
        ("out = model.apply(variables, x, mutable=False)\n", "model.apply(...)"),
        ("out = net.apply(variables, x)\n", "net.apply(...)"),  # Haiku
    ],
)
def test_a_flax_apply_output_is_evidence(body: str, call: str) -> None:
    assert _output(body) == call


@pytest.mark.parametrize(
    "body",
    [
        # (output, updated collections)
        "out = model.apply(variables, x, mutable=['batch_stats'])\n",
        "out = model.apply(variables, x, capture_intermediates=True)\n",
        "out = model.apply(variables, x, **options)\n",
        # (output, new state)
        "out = stateful.apply(variables, state, None, x)\n",
        # nothing tells what `make_model()` is, nor what `out` is once rebound
        "out = make_model().apply(variables, x)\n",
        "out = model.apply(variables, x)\nout = out, x\n",
        "out = model.init(variables, x)\n",
    ],
)
def test_where_the_apply_evidence_stops(body: str) -> None:
    assert _output(body) is None


def test_apply_evidence_is_used_only_where_a_wrong_guess_raises() -> None:
    """Indexed by a scan's traced index (JF102) or walked by jax.vmap with a loud use (JF301), the output of
    `apply` is assumed to be an array, and the message says so; collected into `jnp.array(...)` (where a tuple
    would silently become one array, a scan's output a tuple of stacked arrays) it is not."""
    from tests.helpers import codemod_for_module, findings

    scan = codemod_for_module("loop_to_scan")
    indexed = HEAD + _MODELS + (
        "\n@jax.jit\ndef f(variables, x):\n    logits = model.apply(variables, x)\n    total = jnp.zeros(4)\n"
        "    outs = []\n    for t in range(16):\n        total = 0.9 * total + logits[t]\n        outs.append(total)\n"
        "    return jnp.stack(outs)\n"
    )
    (finding,) = findings(indexed, scan)
    assert finding.fix is not None
    assert "assumes `logits` is an array: the output of `model.apply(...)`" in finding.message
    stacked = indexed.replace("outs.append(total)", "outs.append(model.apply(variables, total))")
    stacked = stacked.replace("return jnp.stack(outs)", "return jnp.array(outs)").replace("16", "100")
    (finding,) = findings(stacked, scan)
    assert finding.fix is None and "not proven to be one array" in finding.message, finding.message
    vmap = codemod_for_module("batch_loop_to_vmap")
    walked = HEAD + _MODELS + (
        "\n@jax.jit\ndef f(state, x, w):\n    feats = state.apply_fn({'params': state.params}, x)\n"
        "    return jnp.stack([jnp.tanh(f @ w) for f in feats])\n"
    )
    (finding,) = findings(walked, vmap)
    assert finding.fix is not None
    assert "assumes `feats` is an array: the output of `state.apply_fn(...)`" in finding.message
    quiet = walked.replace("jnp.tanh(f @ w)", "f[0] * 2")  # computes on a tuple too: no loud use
    assert not [f for f in findings(quiet, vmap) if f.fix is not None]
