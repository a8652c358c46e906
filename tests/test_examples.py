"""Each codemod's embedded VALID/INVALID examples, run as tests (Fixit's convention)."""

from __future__ import annotations

import pytest

from jaxfix import registry
from tests.helpers import findings, rewrite

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
