"""What `pip install jaxfix` (not editable) gets: every package of the source tree, or a command fails to import."""

from __future__ import annotations

import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent


def test_every_package_is_listed_in_pyproject() -> None:
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "jaxfix").rglob("__init__.py")}
    found |= {"jaxfix.codemods"}  # codemods/ at the top of the repository, installed under jaxfix
    assert found <= listed, f"packages missing from [tool.setuptools] packages: {sorted(found - listed)}"
