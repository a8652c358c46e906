"""JF902 legacy-prng-key: `jax.random.PRNGKey`, which typed keys from `jax.random.key` supersede. Opt-in.

The API still works and JAX does not deprecate it, so a hint about it in a default run is noise: most JAX code
creates its keys this way. The rule reads the table's legacy rows (`LEGACY_ROWS` of
`jaxfix.facts.knowledge.deprecations`) through the references it shares with JF901
(`jaxfix.analysis.api_references`), on `ast` alone (`check`: the references, assignments and shims of
`jaxfix.facts.module`). Its rows are hints only, so it looks at names alone: the imports of a hint row get no
finding of their own, and it never needs LibCST.
"""

from __future__ import annotations

from jaxfix.analysis.api_references import LEGACY, ReadsApiTable, descend, hint_message
from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Diagnostic, Safety
from jaxfix.facts.module import FileFacts


class LegacyPrngKey(ReadsApiTable, Codemod):
    """Points at raw `uint32[2]` keys from `jax.random.PRNGKey` where typed keys from `jax.random.key` would do.

    ## What it does
    Finds references to `jax.random.PRNGKey` through any import alias (`jr.PRNGKey`, `from jax.random import
    PRNGKey as P`) and suggests `jax.random.key`. This rule is opt-in: it runs only when selected by its exact code
    or name (`--select JF902`, `--extend-select JF902`, or `extend-select = ["JF902"]` in `[tool.jaxfix]`).

    ## Why is this bad?
    It is not wrong: `PRNGKey` is supported and not deprecated. Typed keys (`jax.random.key`) carry their PRNG
    implementation in their dtype, so a key cannot be mistaken for an array of integers, added to one, or
    reinterpreted under another implementation; JAX recommends them for new code.

    ## Example
    ```python
    import jax

    key = jax.random.PRNGKey(0)
    ```

    ## Use instead
    ```python
    import jax

    key = jax.random.key(0)
    ```

    ## Fix safety
    Display-only, never applied: typed keys have shape `()` and a key dtype, and reject the indexing
    (`key[0]`), arithmetic and `uint32` conversions that raw keys allow, so the code around the call may need
    changes (`jax.random.key_data` gives the raw data back).

    ## When it stays quiet
    Names that resolve to something else (`obj.PRNGKey`, a local `PRNGKey`), `jaxtyping.PRNGKeyArray`,
    compatibility shims (a `try` that catches `ImportError`/`AttributeError`, an `if` on `hasattr` or a version),
    and every file unless the rule is selected.
    """

    code = "JF902"
    name = "legacy-prng-key"
    summary = "jax.random.PRNGKey makes raw uint32[2] keys: consider typed keys from jax.random.key (opt-in)"
    fix_safety = Safety.DISPLAY_ONLY
    other_fix_safeties = ()
    opt_in = True
    table = LEGACY

    VALID = [
        Valid("import jax\n\nkey = jax.random.key(0)\n"),
        Valid("import jax\n\ndef f(obj):\n    return obj.PRNGKey(0)\n"),
        Valid("import jax\nfrom jaxtyping import PRNGKeyArray\n\ndef f(key: PRNGKeyArray) -> None: ...\n"),
        Valid("import jax\n\ny = jax.tree_map(abs, [1])\n"),  # JF901's, not this rule's
    ]
    INVALID = [
        Invalid("import jax\n\nkey = jax.random.PRNGKey(0)\n", fixed=None, message="jax.random.key"),
        Invalid("import jax.random as jr\n\nkey = jr.PRNGKey(0)\n", fixed=None, message="jax.random.key"),
        Invalid("from jax.random import PRNGKey as P\n\nkey = P(0)\n", fixed=None, message="typed keys"),
    ]

    looks_at = ("Name", "Attribute")

    @classmethod
    def check(cls, facts: FileFacts) -> list[Diagnostic]:
        """A hint at each reference that resolves to a row (the part of the name the row names: `jax.random.PRNGKey`
        of `jax.random.PRNGKey.__doc__`); not where the name is assigned or sits in a shim. Its fix, never
        applied, needs no plan."""
        found = []
        for node, qualified in facts.references:
            row = cls.table.lookup(qualified)
            if row is None:
                continue
            api, prefix = row
            target = descend(node, qualified.count(".") - prefix.count("."))
            if facts.stored(node):
                facts.decline(cls.code, target, "assigned or deleted here, not used")
            elif facts.in_shim(target):
                facts.decline(cls.code, target, "in a compatibility shim (a fallback for another JAX version)")
            else:
                found.append(cls.finding(facts, target, hint_message(api), description=f"Consider {api.new}"))
        return found
