"""The corpus: before/after pairs that tests, verification, benchmarks and docs all read.

    corpus/<codemod module>/<case>/before.py    the code as a user wrote it
    corpus/<codemod module>/<case>/after.py     what `jaxfix apply` must make of it (absent: must stay unchanged)
    corpus/<codemod module>/<case>/case.toml    how to run and compare it
    corpus/<codemod module>/<case>/before.ipynb, after.ipynb   a notebook case instead of before.py and
                                                after.py: its code cells, as one module, are what runs
    corpus/<codemod module>/<case>/idiom.py     optional: the same `entry` written by hand the way a JAX user
                                                would (lax.fori_loop, lax.scan, ...); benchmarks/loops.py times
                                                before.py and after.py against it. It is no input of the
                                                codemod: tests ignore it, and no codemod should change it.

A case that spans modules (one module traced because another jits its function) holds folders instead:

    corpus/<codemod module>/<case>/before/*.py   the project as a user wrote it (its root: imports between its
                                                 modules are absolute, `from model import forward`)
    corpus/<codemod module>/<case>/after/*.py    every module as `jaxfix apply` must leave it (absent: unchanged)
    corpus/<codemod module>/<case>/case.toml     as below, with `entry_module = "train"` naming the module of
                                                 `entry`; `findings` counts over every module

case.toml keys (all optional but `entry` for cases that run):
    entry = "f"                    the function called in before.py and after.py
    args = ["jnp.arange(6.0)", "3"] Python expressions (jax, jnp, np, lax in scope) for the positional arguments
    kwargs = { n = "3" }           likewise, by keyword
    rtol = 1e-6, atol = 1e-6       tolerance of the comparison
    unsafe = false                 apply with --unsafe-fixes
    findings = 1                   how many findings the case's codemod reports on before.py
    original_raises = "TypeError"  the original fails under JAX (the rewrite repairs it); then
    expected = "np.array([...])"   the value the rewrite must produce instead
    more_args = [["jnp.float32(-1.0)"]] more positional argument lists (same kwargs), each compared too: inputs
                                   that take the other branch of a rewritten `if`
    size_arg = 1                   which argument is a loop's (static) trip count: an index into args, or a kwargs
                                   name; lets `benchmarks/loops.py --sizes 10,300` run the case at other sizes
    batch_args = [3]               which arguments are batches (arrays whose rows a loop walks); lets
                                   `benchmarks/vmap_batch.py --batch 512` tile them to other batch sizes
    not_equivalent = "why"         the rewrite changes the numbers on purpose (a reused PRNG key split): before
                                   and after are not compared, nor verified; say what the rewrite promises instead
    no_grad = "why"                `jaxfix verify` compares the values only: the fix's safety section documents a
                                   gradient the rewrite does not keep (lax.while_loop, donation, ties of max)
    no_nan = "why"                 `jaxfix verify` draws finite floats only: the fix's safety section documents
                                   what it does with a NaN otherwise (Python's max/min and jnp.maximum/minimum)
    grad = true                    tests/test_corpus.py compares the gradients of the entry's first argument too
    identical = ["out[0]", "out[1]"] expressions of the entry's result `out` that are all equal in before.py and
                                   pairwise different in after.py (draws from a reused key become independent)
"""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_NUMBERS = (bool, int, float, complex)
ROOT = Path(__file__).resolve().parent.parent / "corpus"


@dataclass(frozen=True)
class Case:
    codemod: str  # the codemod's module name, which is also the corpus folder's name
    name: str
    folder: Path
    spec: dict[str, Any] = field(default_factory=dict)
    suffix: str = ".py"  # ".ipynb" for a notebook case (notebook_cases)

    @property
    def id(self) -> str:
        return f"{self.codemod}/{self.name}"

    @property
    def before(self) -> Path:
        return self.folder / f"before{self.suffix}"

    @property
    def after(self) -> Path:
        """The expected rewrite; before.py itself for a negative case."""
        after = self.folder / f"after{self.suffix}"
        return after if after.exists() else self.before

    @property
    def negative(self) -> bool:
        return not (self.folder / f"after{self.suffix}").exists()

    @property
    def runnable(self) -> bool:
        return "entry" in self.spec

    @property
    def compared(self) -> bool:
        """Whether after.py must compute what before.py does (false where `not_equivalent` says why not)."""
        return "not_equivalent" not in self.spec


def cases(root: Path = ROOT) -> list[Case]:
    found = []
    for folder in sorted(p for p in root.glob("*/*") if (p / "before.py").exists()):
        spec_file = folder / "case.toml"
        spec = tomllib.loads(spec_file.read_text(encoding="utf-8")) if spec_file.exists() else {}
        found.append(Case(folder.parent.name, folder.name, folder, spec))
    return found


def notebook_cases(root: Path = ROOT) -> list[Case]:
    """The cases whose files are notebooks (before.ipynb, after.ipynb)."""
    found = []
    for folder in sorted(p for p in root.glob("*/*") if (p / "before.ipynb").exists()):
        spec_file = folder / "case.toml"
        spec = tomllib.loads(spec_file.read_text(encoding="utf-8")) if spec_file.exists() else {}
        found.append(Case(folder.parent.name, folder.name, folder, spec, ".ipynb"))
    return found


@dataclass(frozen=True)
class ProjectCase:
    """A case of several modules (`before/` and `after/` folders): the project index decides what is traced."""

    codemod: str
    name: str
    folder: Path
    spec: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.codemod}/{self.name}"

    @property
    def before(self) -> Path:
        return self.folder / "before"

    @property
    def after(self) -> Path:
        """The expected project; before/ itself for a negative case."""
        after = self.folder / "after"
        return after if after.is_dir() else self.before

    @property
    def negative(self) -> bool:
        return not (self.folder / "after").is_dir()

    @property
    def runnable(self) -> bool:
        return "entry" in self.spec and "entry_module" in self.spec

    @property
    def compared(self) -> bool:
        return "not_equivalent" not in self.spec

    def modules(self, folder: Path) -> dict[str, str]:
        """File name → text of every module in `folder`."""
        return {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.py"))}


def project_cases(root: Path = ROOT) -> list[ProjectCase]:
    found = []
    for folder in sorted(p for p in root.glob("*/*") if (p / "before").is_dir()):
        spec_file = folder / "case.toml"
        spec = tomllib.loads(spec_file.read_text(encoding="utf-8")) if spec_file.exists() else {}
        found.append(ProjectCase(folder.parent.name, folder.name, folder, spec))
    return found


def load_project_function(folder: Path, module: str, entry: str) -> Callable[..., Any]:
    """Import `module` from the project in `folder` (its modules under their own names, removed from
    sys.modules again afterwards, so that before/ and after/ never share a module) and take `entry`."""
    import importlib

    names = [p.stem for p in folder.glob("*.py")]
    saved = {n: sys.modules.pop(n) for n in names if n in sys.modules}
    sys.path.insert(0, str(folder))
    try:
        return getattr(importlib.import_module(module), entry)
    finally:
        sys.path.remove(str(folder))
        for n in names:
            sys.modules.pop(n, None)
        sys.modules.update(saved)


def load_function(path: Path, entry: str, *, tag: str) -> Callable[..., Any]:
    """Import `path` as a fresh module (its own name, so before and after never share state) and take `entry`.
    A notebook runs as its code cells do in order, its IPython lines as no-ops (jaxfix/notebook.py)."""
    name = f"jaxfix_corpus_{tag}_{abs(hash(str(path)))}"
    if path.suffix == ".ipynb":
        from types import ModuleType

        from jaxfix import notebook

        module = ModuleType(name)
        module.__file__ = str(path)
        sys.modules[name] = module
        exec(compile(notebook.read(path.read_bytes()).module()[0], str(path), "exec"), module.__dict__)
        return getattr(module, entry)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return getattr(module, entry)


def _namespace() -> dict[str, Any]:
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax

    return {"jax": jax, "jnp": jnp, "np": np, "lax": lax}


def arguments(case: Case) -> tuple[list[Any], dict[str, Any]]:
    namespace = _namespace()
    args = [eval(source, namespace) for source in case.spec.get("args", [])]
    kwargs = {key: eval(source, namespace) for key, source in case.spec.get("kwargs", {}).items()}
    return args, kwargs


def argument_sets(case: Case) -> list[tuple[list[Any], dict[str, Any]]]:
    """`args`/`kwargs`, then each list of `more_args` with the same keyword arguments."""
    args, kwargs = arguments(case)
    namespace = _namespace()
    more = [[eval(source, namespace) for source in extra] for extra in case.spec.get("more_args", [])]
    return [(args, kwargs), *((extra, kwargs) for extra in more)]


def expected(case: Case) -> Any:
    return eval(case.spec["expected"], _namespace())


def call(function: Callable[..., Any], args, kwargs) -> Any:
    """Call and wait for the result. An original that JAX rejects under tracing (a Python `if` on a traced
    value, say) runs again with jit disabled: that is what it computes for a user who runs it eagerly."""
    import jax

    try:
        return jax.block_until_ready(function(*args, **kwargs))
    except (
        jax.errors.ConcretizationTypeError,
        jax.errors.TracerBoolConversionError,
        jax.errors.TracerIntegerConversionError,
        jax.errors.NonConcreteBooleanIndexError,
    ):
        with jax.disable_jit():
            result = jax.block_until_ready(function(*args, **kwargs))
        if hasattr(function, "lower"):  # a jitted function: jit returns Python numbers as (weakly typed) arrays
            result = jax.tree.map(lambda leaf: jax.numpy.asarray(leaf) if isinstance(leaf, _NUMBERS) else leaf, result)
        return result


def assert_same(actual: Any, wanted: Any, *, rtol: float = 1e-6, atol: float = 1e-6) -> None:
    """Same pytree structure, shapes and dtypes, and values within tolerance (NaN equal to NaN)."""
    import jax
    import numpy as np

    actual_leaves, actual_tree = jax.tree.flatten(actual)
    wanted_leaves, wanted_tree = jax.tree.flatten(wanted)
    assert actual_tree == wanted_tree, f"structure differs: {actual_tree} != {wanted_tree}"
    for index, (a, w) in enumerate(zip(actual_leaves, wanted_leaves)):
        a, w = np.asarray(a), np.asarray(w)
        assert a.shape == w.shape, f"leaf {index}: shape {a.shape} != {w.shape}"
        assert a.dtype == w.dtype, f"leaf {index}: dtype {a.dtype} != {w.dtype}"
        np.testing.assert_allclose(a, w, rtol=rtol, atol=atol, equal_nan=True, err_msg=f"leaf {index}")
