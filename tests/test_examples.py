"""Each codemod's embedded VALID/INVALID examples, run as tests (Fixit's convention)."""

from __future__ import annotations

import pytest

from jaxfix import registry
from jaxfix.diagnostics import Safety
from tests.helpers import codemod_for_module, findings, rewrite

VALID = [(c, i, e) for c in registry.all_codemods() for i, e in enumerate(c.VALID)]
INVALID = [(c, i, e) for c in registry.all_codemods() for i, e in enumerate(c.INVALID)]


@pytest.mark.parametrize("codemod,index,example", VALID, ids=[f"{c.code}-VALID-{i}" for c, i, _ in VALID])
def test_valid(codemod, index, example) -> None:
    assert findings(example.code, codemod) == []


@pytest.mark.parametrize("codemod,index,example", INVALID, ids=[f"{c.code}-INVALID-{i}" for c, i, _ in INVALID])
def test_invalid(codemod, index, example) -> None:
    reported = findings(example.code, codemod)
    assert reported, "expected a finding"
    assert all(example.message in d.message for d in reported[:1]), [d.message for d in reported]
    expected = example.fixed if example.fixed is not None else example.code
    assert rewrite(example.code, codemod, unsafe=True) == expected


# Rules whose unsafe fixes name, in the message, what they assume or what may come out different (their Fix safety
# sections' "Fails loudly" and "May compute different numbers").
SAYS_UNSAFE = {"JF101", "JF102", "JF103", "JF104", "JF201", "JF202", "JF203", "JF204", "JF301", "JF601", "JF801", "JF802", "JF901"}
UNSAFE_EXAMPLES = [(c, i, e) for c, i, e in INVALID if c.code in SAYS_UNSAFE and e.fixed is not None]


@pytest.mark.parametrize(
    "codemod,index,example", UNSAFE_EXAMPLES, ids=[f"{c.code}-INVALID-{i}" for c, i, _ in UNSAFE_EXAMPLES]
)
def test_an_unsafe_fix_says_what_it_assumes(codemod, index, example) -> None:
    unsafe = [d for d in findings(example.code, codemod) if d.fix is not None and d.fix.safety is Safety.UNSAFE]
    assert all("unsafe: " in d.message for d in unsafe), [d.message for d in unsafe]


@pytest.mark.parametrize(
    "codemod,source,clause",
    [
        (
            "loop_to_fori",
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    for i in range(100):\n"
            "        x = x + i / 100\n    return x\n",
            "`i` is a traced int32 in the body",
        ),
        (
            "loop_to_fori",
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    for i in range(100):\n"
            "        x = jnp.cos(x)\n    return x\n",
            "unsafe: floats may round differently in the last bits",
        ),
        (
            "while_to_while_loop",
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    while x > 1.0:\n        x = x / 2\n"
            "    return x\n",
            "a tolerance test may stop a step sooner or later",
        ),
    ],
)
def test_the_message_names_the_index_only_where_the_body_reads_it(codemod, source, clause) -> None:
    [finding] = findings(source, codemod_for_module(codemod))
    assert finding.fix is not None and clause in finding.message
    assert ("int32" in finding.message) == ("int32" in clause)
