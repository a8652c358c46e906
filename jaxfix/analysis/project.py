"""The project index: what one module needs to know about the others to be judged right.

A loop in `model.py` runs under tracing because `train.py` jits the function around it; `env.step` is traced
because a trainer writes `jax.jit(env.step)`; a Flax module's `__call__` is traced by the convention of the
library (jaxfix/facts/knowledge/). Module-local analysis cannot see these, so the index summarises every Python
file of the project (the folder of the nearest pyproject.toml or .git above the paths given) from `ast` once per
content (a `Summary`: imports, functions, classes, module assignments and call sites), resolves names across
modules, and solves which functions are traced and how. It reads no file: jaxfix/project_io.py lists the project's files,
reads them, caches their summaries and the solved facts, and builds the `Project`.

What a module receives is its `ModuleFacts`: the functions of its own (by qualified name: `f`, `Env.step`) that
something *outside its own view* traces, with the transformations that reach them and their parameters' kinds,
and static facts (attributes that are hyperparameters). What a module can see itself (a local `@jax.jit`, a
call by name from a function it traces) stays the local analysis' job, so its answers are unchanged there.
The facts' digest enters the cache key of the module's findings: editing train.py re-checks model.py exactly
when what model.py reads changes.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
from dataclasses import dataclass, field, replace
from functools import cached_property
from itertools import chain
from pathlib import Path
from typing import Callable, Iterable, Mapping

from jaxfix.analysis.ast_flow import target_names
from jaxfix.analysis.kinds import STATIC, TRACED, UNKNOWN
from jaxfix.analysis.recording import Recorded
from jaxfix.facts.sharding import legacy_mesh_contexts
from jaxfix.facts.knowledge import configs, conventions, jaxtyping, tables
from jaxfix.facts.knowledge.jax import ARRAY_MAKERS, NUMERIC_NAMESPACES, REGISTER_STATIC
from jaxfix.facts.knowledge.tables import LAX_BODIES, TRANSFORMS
from jaxfix.facts.traced import MAPPED, SEEDING_OPTIONS, UNMAPPED, UNSURE, parameter_kinds

INDEX_FORMAT = 6  # 2: a store into an attribute or item (`config.x = 1`) rebinds no name; 3: call-site evidence; 4: marshal; 5: a pack per project; 6: legacy meshes

# The callees whose calls seed their arguments as functions: lax bodies, and libraries' convention wrappers.
_SEEDING_NAMES = frozenset(LAX_BODIES) | frozenset(tables.CONVENTION_WRAPPERS)
_PARTIAL = "functools.partial"
# The transformation a convention stands for: what a jitted training step does to the code it calls.
CONVENTION = "jax.jit"


def canonical(name: str) -> str:
    """A library's transformation as the JAX transformation it behaves like (`flax.nnx.jit` → `jax.jit`)."""
    return tables.TRANSFORM_ALIASES.get(name, name)


# ---- summaries: one module from `ast` ------------------------------------------------------------------------
# References are JSON: {"n": "a.b.c"} a dotted name, {"l": value} a literal, {"c": call} a call, {"lam": 1} a
# lambda, None anything else. A call is {"f": ref of the callee, "a": [refs], "k": {keyword: ref}}.


def _ref(node: ast.AST | None, depth: int = 0):
    """The reference of an expression (node types compared by identity: `ast.parse` makes no subclasses, and this
    runs on every call's callee and arguments)."""
    if node is None or depth > 4:
        return None
    kind = type(node)
    if kind is ast.Name:
        return {"n": node.id}
    if kind is ast.Attribute:
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name):
            parts.append(node.id)
            return {"n": ".".join(reversed(parts))}
        return None
    if kind is ast.Constant:
        value = node.value
        return {"l": value} if isinstance(value, (int, float, str, bool)) or value is None else None
    if kind is ast.Call:
        return {"c": _call(node, depth + 1)}
    if kind is ast.Tuple or kind is ast.List:
        values = []
        for element in node.elts:
            inner = _ref(element, depth + 1)
            if not inner or "l" not in inner:
                return {"t": [_ref(e, depth + 1) for e in node.elts]}
            values.append(inner["l"])
        return {"l": values}
    if kind is ast.UnaryOp and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        value = node.operand.value
        return {"l": -value} if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if kind is ast.Lambda:
        return {"lam": 1}
    if kind is ast.BinOp:
        return {"o": [_ref(node.left, depth + 1), _ref(node.right, depth + 1)]}
    if kind is ast.UnaryOp and not isinstance(node.op, ast.Not):
        return {"o": [_ref(node.operand, depth + 1)]}
    if kind is ast.Subscript:
        return {"o": [_ref(node.value, depth + 1), _ref(node.slice, depth + 1)]}
    return None


def _call(node: ast.Call, depth: int = 0) -> dict:
    starred = 0
    arguments = []
    for a in node.args:
        if type(a) is ast.Starred:
            starred = 1
            arguments.append(None)
        else:
            arguments.append(_ref(a, depth))
    keywords = {}
    for k in node.keywords:
        if k.arg is None:
            starred = 1
        else:
            keywords[k.arg] = _ref(k.value, depth)
    call = {"f": _ref(node.func, depth), "a": arguments, "k": keywords, "s": starred}
    if call["f"] is None and isinstance(node.func, ast.Attribute):
        call["m"] = node.func.attr  # `super().encode(x)`, `models[0].encode(x)`: a call of some `encode`
    return call


def _params(args: ast.arguments) -> tuple[list[str], dict[str, object], dict[str, str]]:
    """Parameter names in order, those with a default (→ its reference), and dotted annotations."""
    positional = [*args.posonlyargs, *args.args]
    names = [a.arg for a in positional] + [a.arg for a in args.kwonlyargs]
    defaults = {a.arg: _ref(d) for a, d in zip(positional[len(positional) - len(args.defaults):], args.defaults)}
    defaults.update({a.arg: _ref(d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
    annotations = {}
    for a in (*positional, *args.kwonlyargs):
        ref = _ref(_strip_subscript(a.annotation)) if a.annotation is not None else None
        if ref and "n" in ref:
            annotations[a.arg] = ref["n"]
    return names, defaults, annotations


def _strip_subscript(node: ast.AST) -> ast.AST:
    """`Float[Array, "n"]` → `Array`'s spelling is `Float`; jaxtyping's dtype wrappers mean an array."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in jaxtyping.ARRAY_WRAPPERS:
        return ast.Name("Array")
    return node




class _FunctionSummarizer:
    """The calls, simple local bindings and returns of one function body (`_walk_body` fills it). Nested
    functions get summaries of their own (`outer.<locals>.inner`, as Python's `__qualname__`); classes inside
    functions are left out."""

    def __init__(self, qual: str, functions: dict[str, dict], imports: list) -> None:
        self.qual = qual
        self.functions = functions
        self.imports = imports  # import statements inside functions (the module's, shared)
        self.calls: list[dict] = []
        self.locals: dict[str, object] = {}
        self.rebound: set[str] = set()
        self.self_assigned: dict[str, object] = {}  # `self.x = value` (in __init__: haiku's hyperparameters)
        self.nested: list[str] = []
        self.returns: list[object] = []

    def nested_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        _walk_body(self, list(node.decorator_list))
        self.nested.append(node.name)
        self.rebound.discard(node.name)
        self.locals.pop(node.name, None)
        _function(node, f"{self.qual}.<locals>.{node.name}", self.functions, parent=self.qual, imports=self.imports)

    def rebind(self, target: ast.AST | None) -> None:
        # none for a store into an attribute or an item (`config.num_layers = 4`, `cache[k] = v` change an
        # object, the name still holds the same one)
        self.rebound.update(target_names(target))


def _walk_body(body: _FunctionSummarizer, statements: list) -> None:
    """Record what the statements hold into `body`: one explicit walk (NodeVisitor's dispatch cost a third more;
    a summary costs about as much as parsing the file, and this walk is most of it). Each node type's recorder,
    if it has one, is found in one look-up (`_RECORDERS`: a chain of type tests cost every node up to 14 of them);
    the fields read are those that may hold nodes (none for names and constants, a third of the nodes)."""
    stack = list(reversed(statements))
    fields_of = _FIELDS
    recorders = _RECORDERS
    while stack:
        node = stack.pop()
        kind = type(node)
        record = recorders.get(kind)
        if record is not None and record(body, node):
            continue
        fields = fields_of.get(kind)
        if fields is None:  # last field first: the stack pops the first child first
            fields = fields_of[kind] = tuple(reversed([f for f in kind._fields if f not in _LEAF_FIELDS]))
        for name in fields:
            value = getattr(node, name, None)
            if isinstance(value, list):
                stack.extend(reversed(value))  # `None` (a dict's `**`, a missing default) or names: no fields
            elif isinstance(value, ast.AST):
                stack.append(value)


# Fields that never hold a node (and `ctx`, `type_comment`); None and the identifiers in lists (`global a, b`)
# are popped like nodes, with no field to read. A constant's value is never a node.
_LEAF_FIELDS = frozenset({"ctx", "type_comment", "id", "attr", "arg", "module", "level", "asname", "is_async", "conversion"})
_FIELDS: dict[type, tuple[str, ...]] = {type(None): (), str: (), ast.Constant: ()}


def _record_call(body: _FunctionSummarizer, node: ast.Call) -> bool:
    body.calls.append(_call(node))
    return False


def _record_nested(body: _FunctionSummarizer, node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    body.nested_function(node)  # its decorators are walked there; its body is its own summary
    return True


def _record_class(body: _FunctionSummarizer, node: ast.ClassDef) -> bool:
    body.rebound.add(node.name)
    return True


def _record_return(body: _FunctionSummarizer, node: ast.Return) -> bool:
    body.returns.append(_ref(node.value))
    return False


def _record_target(body: _FunctionSummarizer, node: ast.AugAssign | ast.AnnAssign | ast.For | ast.NamedExpr) -> bool:
    body.rebind(node.target)
    return False


def _record_with(body: _FunctionSummarizer, node: ast.With | ast.AsyncWith) -> bool:
    for item in node.items:
        body.rebind(item.optional_vars)
    return False


def _record_import(body: _FunctionSummarizer, node: ast.Import | ast.ImportFrom) -> bool:
    body.imports.append(node)
    return False


def _record_assign(body: _FunctionSummarizer, node: ast.Assign) -> bool:
    for target in node.targets:
        if isinstance(target, ast.Name):
            if target.id in body.locals:
                body.rebound.add(target.id)
            body.locals[target.id] = _ref(node.value)
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
            body.self_assigned[target.attr] = _ref(node.value)
        else:
            body.rebind(target)
    return False


# What `_walk_body` records of a node, by its type: True where the walk does not go on into it.
_RECORDERS: dict[type, Callable[[_FunctionSummarizer, ast.AST], bool]] = {
    ast.Call: _record_call,
    ast.Assign: _record_assign,
    ast.FunctionDef: _record_nested,
    ast.AsyncFunctionDef: _record_nested,
    ast.ClassDef: _record_class,
    ast.Return: _record_return,
    **dict.fromkeys((ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.NamedExpr), _record_target),
    ast.With: _record_with,
    ast.AsyncWith: _record_with,
    ast.Import: _record_import,
    ast.ImportFrom: _record_import,
}


def _function(node: ast.FunctionDef | ast.AsyncFunctionDef, qual: str, functions: dict[str, dict],
              parent: str | None = None, imports: list | None = None) -> None:
    """Add the summary of `node` (and of the functions nested in it) to `functions` under `qual`; the import
    statements inside it go to `imports`."""
    names, defaults, annotations = _params(node.args)
    body = _FunctionSummarizer(qual, functions, imports if imports is not None else [])
    _walk_body(body, node.body)
    functions[qual] = {
        "params": names,
        "kwonly": [a.arg for a in node.args.kwonlyargs],
        "defaults": defaults,
        "ann": annotations,
        "dec": [_ref(d) for d in node.decorator_list],
        "calls": body.calls,
        "locals": {k: v for k, v in body.locals.items() if k not in body.rebound and k not in names},
        "rebound": sorted(body.rebound | {n for n in body.locals if n in names}),
        "self_assigned": dict(body.self_assigned),
        "nested": body.nested,
        "returns": body.returns,
        "parent": parent,
        "line": node.lineno,
    }


def summarize(tree: ast.Module, module: str, is_package: bool) -> dict:
    """The `Summary` of one module: JSON data, the same for the same text and module name."""
    imports: dict[str, str] = {}
    stars: list[str] = []
    functions: dict[str, dict] = {}
    classes: dict[str, dict] = {}
    assigns: dict[str, object] = {}
    calls: list[dict] = []  # module-level calls (outside any function)
    package = module if is_package else module.rpartition(".")[0]

    def absolute(node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        base = package.split(".") if package else []
        if node.level > 1:
            base = base[: len(base) - (node.level - 1)] if node.level - 1 <= len(base) else []
        return ".".join([*base, *([node.module] if node.module else [])])

    def imports_of(statement: ast.AST) -> None:
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                if alias.asname:
                    imports[alias.asname] = alias.name
                else:
                    head = alias.name.split(".")[0]
                    imports.setdefault(head, head)
        elif isinstance(statement, ast.ImportFrom):
            source = absolute(statement)
            for alias in statement.names:
                if alias.name == "*":
                    stars.append(source)
                else:
                    imports[alias.asname or alias.name] = f"{source}.{alias.name}" if source else alias.name

    nested_imports: list = []
    # The module's statements, those of module-level `if`/`try` blocks in place, in order. A loop, not a function
    # calling itself: that would be a cycle (function, closure cell) holding all of the above, which only a
    # collection frees, and the engine freezes what the index leaves (workers.collections_deferred).
    pending = [iter(tree.body)]
    while pending:
        statement = next(pending[-1], None)
        if statement is None:
            pending.pop()
        elif isinstance(statement, (ast.Import, ast.ImportFrom)):
            imports_of(statement)
        elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            _function(statement, statement.name, functions, imports=nested_imports)
        elif isinstance(statement, ast.ClassDef):
            classes[statement.name] = _class(statement, functions, nested_imports)
        elif isinstance(statement, (ast.If, ast.Try)) or type(statement).__name__ == "TryStar":
            blocks = [getattr(statement, block, ()) for block in ("body", "orelse", "finalbody")]
            pending.append(chain(*blocks, *(handler.body for handler in getattr(statement, "handlers", ()))))
        else:
            if isinstance(statement, ast.Assign):
                for target in statement.targets:
                    if isinstance(target, ast.Name):
                        assigns[target.id] = _ref(statement.value)
            for inner in ast.walk(statement):
                if isinstance(inner, ast.Call):
                    calls.append(_call(inner))
                elif isinstance(inner, (ast.Import, ast.ImportFrom)):
                    imports_of(inner)
    before = dict(imports)
    for statement in nested_imports:  # imports inside functions bind names there: count them module-wide
        imports_of(statement)
    imports.update(before)  # a module-level import wins over a local one
    # what may enter a legacy mesh context, without its lines: an edit that moves them keeps the solution
    meshes = sorted({code for _, code in legacy_mesh_contexts(tree, {k: (v,) for k, v in imports.items()})})
    return {"module": module, "package": is_package, "imports": imports, "stars": stars, "functions": functions,
            "classes": classes, "assigns": assigns, "calls": calls, "legacy_meshes": meshes}  # fmt: skip


def _class(node: ast.ClassDef, functions: dict[str, dict], nested_imports: list) -> dict:
    methods: list[str] = []
    fields: dict[str, dict] = {}
    for statement in node.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            _function(statement, f"{node.name}.{statement.name}", functions, imports=nested_imports)
            methods.append(statement.name)
        elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            annotation = _ref(statement.annotation)
            fields[statement.target.id] = {
                "ann": annotation["n"] if annotation and "n" in annotation else None,
                "value": _ref(statement.value) if statement.value is not None else None,
            }
        elif isinstance(statement, ast.Assign):
            for target in statement.targets:
                if isinstance(target, ast.Name):
                    fields.setdefault(target.id, {"ann": None, "value": _ref(statement.value), "plain": 1})
    return {
        "bases": [_ref(b.value if isinstance(b, ast.Subscript) else b) for b in node.bases],  # `Env[S, P]`: Env
        "methods": methods,
        "dec": [_ref(d) for d in node.decorator_list],
        "fields": fields,
        "line": node.lineno,
    }


# ---- the project ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModuleFacts:
    """What the project tells one module: `traced` maps a function's qualified name in the module (`f`,
    `Class.method`) to (the transformations that reach it, its parameters' kinds); `static_attrs` maps it to
    {parameter: attributes of it that are static} (`self`'s hyperparameters, a static config's fields);
    `recorded` maps it to what `jaxfix record` saw it called with (recording.py's `Recorded`); `called_with`
    maps it to {parameter: call sites} for the parameters every call in the project passes an array
    (`Project.call_site_evidence`); `legacy_meshes` says where the project may enter a legacy mesh context
    (`with mesh:`, which pjit reads and jax.jit does not), the same for every module."""

    traced: Mapping[str, tuple[tuple[str, ...], Mapping[str, int]]] = field(default_factory=dict)
    static_attrs: Mapping[str, Mapping[str, tuple[str, ...]]] = field(default_factory=dict)
    recorded: Mapping[str, Recorded] = field(default_factory=dict)
    called_with: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    legacy_meshes: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return (bool(self.traced) or bool(self.static_attrs) or bool(self.recorded) or bool(self.called_with)
                or bool(self.legacy_meshes))  # fmt: skip

    def digest(self) -> str:
        data = json.dumps([self.traced, self.static_attrs, self.recorded, self.called_with, self.legacy_meshes],
                          sort_keys=True, default=list)  # fmt: skip
        return hashlib.sha256(data.encode()).hexdigest()

    @classmethod
    def from_json(cls, data: dict) -> "ModuleFacts":
        traced = {k: (tuple(t), dict(p)) for k, (t, p) in data["traced"].items()}
        static = {k: {p: tuple(a) for p, a in v.items()} for k, v in data["static_attrs"].items()}
        called = {k: {p: int(n) for p, n in v.items()} for k, v in data["called_with"].items()}
        return cls(traced, static, called_with=called, legacy_meshes=tuple(data["legacy_meshes"]))

    def to_json(self) -> dict:
        return {"traced": {k: [list(t), dict(p)] for k, (t, p) in self.traced.items()},
                "static_attrs": {k: {p: list(a) for p, a in v.items()} for k, v in self.static_attrs.items()},
                "called_with": {k: dict(v) for k, v in self.called_with.items()},
                "legacy_meshes": list(self.legacy_meshes)}  # fmt: skip


EMPTY = ModuleFacts()

Key = tuple[str, str]  # (module name, qualified name in it)


@dataclass
class _Seed:
    transforms: set[str] = field(default_factory=set)
    kinds: dict[str, int] = field(default_factory=dict)
    local: bool = True  # only reasons the module's own analysis sees


class Project:
    """Every module of a project, summarised, with names resolved across them and traced-ness solved."""

    def __init__(self, root: Path | None, summaries: dict[str, dict], paths: dict[str, str]) -> None:
        self.root = root
        self.modules = summaries  # module name → summary (several names may share one summary)
        self.path_module = paths  # absolute path → its primary module name
        self._solved: dict[Key, _Seed] | None = None
        self._static_attrs: dict[Key, dict[str, set[str]]] = {}
        self._static_class_cache: dict[tuple[str, str], set[str]] | None = None
        self.preset: dict[str, ModuleFacts] | None = None  # every path's facts, read back from the cache
        self._by_module: dict[str, list[str]] | None = None
        self._resolved: dict[tuple, list[tuple]] = {}
        self._config_cache: dict[Key, frozenset[str]] = {}
        self.recorded: dict[str, dict[str, Recorded]] = {}  # relative path → qualified name → what was recorded
        self._called_by_libraries: set[Key] = set()  # functions a library calls by convention (callers unseen)
        self._call_sites: dict[Key, dict[str, int]] | None = None
        self._instance_attrs: dict[Key, dict[str, set[str]]] = {}  # static attributes of modules every call passes

    def facts_for(self, path: str) -> ModuleFacts:
        """The facts of the module at `path`: the solution's, and what a recorded run saw its functions called with."""
        facts = self.solved_facts(path)
        recorded = self._recorded_for(path)
        return replace(facts, recorded=recorded) if recorded else facts

    def _recorded_for(self, path: str) -> dict[str, Recorded]:
        if not self.recorded or self.root is None:
            return {}
        try:
            relative = Path(path).resolve().relative_to(self.root).as_posix()
        except ValueError:
            return {}
        return self.recorded.get(relative, {})

    def solved_facts(self, path: str) -> ModuleFacts:
        """The solution's facts of the module at `path` (`preset`'s, where project_io.py read them back)."""
        if self.preset is not None:
            return self.preset.get(os.path.abspath(path), EMPTY)
        module = self.path_module.get(os.path.abspath(path))
        if module is None:
            return EMPTY
        solved = self.solve()
        evidence = self.call_site_evidence()
        if self._by_module is None:
            self._by_module = {}
            for key in sorted(set(solved) | set(self._static_attrs) | set(self._instance_attrs)):
                self._by_module.setdefault(key[0], []).append(key[1])
        traced, static, called = {}, {}, {}
        for qual in self._by_module.get(module, ()):
            seed = solved.get((module, qual))
            if seed is not None and not seed.local:
                traced[qual] = (tuple(sorted(seed.transforms)), dict(sorted(seed.kinds.items())))
            if (module, qual) in evidence:
                called[qual] = dict(sorted(evidence[(module, qual)].items()))
        for qual in self._by_module.get(module, ()):
            attrs = dict(self._static_attrs.get((module, qual), {}))
            for param, found in self._instance_attrs.get((module, qual), {}).items():
                attrs[param] = attrs.get(param, set()) | found
            if attrs and (module, qual) in solved and any(attrs.values()):
                static[qual] = {p: tuple(sorted(a)) for p, a in sorted(attrs.items()) if a}
        return ModuleFacts(traced, static, called_with=called, legacy_meshes=self.legacy_meshes)

    @cached_property
    def legacy_meshes(self) -> tuple[str, ...]:
        """Where a module of the project may enter a legacy mesh context (`sharding.legacy_mesh_contexts`), the
        first three in module order: "`with self._mesh:` (in brax.training.replay_buffers)"."""
        found = []
        for module in sorted(set(self.path_module.values())):
            for code in (self.modules.get(module) or {}).get("legacy_meshes", ()):
                found.append(f"`with {code}:` (in {module})")
        return tuple(found[:3])

    # ---- names -----------------------------------------------------------------------------------------------

    def _module(self, name: str) -> dict | None:
        return self.modules.get(name)

    def qualify(self, module: str, dotted: str) -> str:
        """`jnp.sum` → `jax.numpy.sum` through the module's imports; other names unchanged."""
        summary = self.modules[module]
        head, _, rest = dotted.partition(".")
        target = summary["imports"].get(head)
        if target is None:
            return dotted
        return f"{target}.{rest}" if rest else target

    def resolve(self, module: str, function: str | None, ref, depth: int = 0) -> list[tuple]:
        """What a reference may denote: ("func", module, qualname, bound) where `bound` counts the leading
        parameters a bound method or partial binds, ("class", module, name), ("instance", module, name),
        ("module", name), ("external", qualified name), ("partial", target, bound, keywords), or ("static",
        qualified name) for a value of a configuration class that is never traced (configs.STATIC_CONFIG_TYPES:
        `ml_collections.ConfigDict()`)."""
        if ref is None or depth > 8:
            return []
        if "n" in ref:
            return self._resolve_dotted(module, function, ref["n"], depth)
        if "c" in ref:
            call = ref["c"]
            callee = self.resolve(module, function, call["f"], depth + 1)
            found = []
            for target in callee:
                if target[0] == "class":
                    found.append(("instance", target[1], target[2]))
                elif target[0] == "external" and target[1] in configs.STATIC_CONFIG_TYPES:
                    found.append(("static", target[1]))
                elif target[0] == "func" and depth < 4:  # a factory: what it returns (`jax.jit(make_step(...))`)
                    info = self._info((target[1], target[2]))
                    for returned in info["returns"] if info is not None else ():
                        found.extend(self.resolve(target[1], target[2], returned, depth + 2))
                elif target[0] == "external" and target[1] == _PARTIAL and call["a"]:
                    bound = sum(1 for a in call["a"][1:]) if not call.get("s") else 0
                    keywords = frozenset(call["k"])
                    for inner in self.resolve(module, function, call["a"][0], depth + 1):
                        if inner[0] == "func":
                            bound_keywords = (inner[4] if len(inner) > 4 else frozenset()) | keywords
                            found.append(("func", inner[1], inner[2], inner[3] + bound, bound_keywords))
                        elif inner[0] == "external":
                            found.append(("partial", inner[1], call))
            return found
        return []

    def _resolve_dotted(self, module: str, function: str | None, dotted: str, depth: int) -> list[tuple]:
        if depth == 0:  # the same names are resolved again and again while solving: once each
            key = (module, function, dotted)
            found = self._resolved.get(key)
            if found is None:
                if function is not None and not self._binds(module, function, dotted.partition(".")[0]):
                    found = self._resolve_dotted(module, None, dotted, 0)  # `jnp.sum` in each function: once
                else:
                    found = self._resolve_dotted_uncached(module, function, dotted, 0)
                self._resolved[key] = found
            return found
        return self._resolve_dotted_uncached(module, function, dotted, depth)

    def _binds(self, module: str, function: str, name: str) -> bool:
        """Whether `function` or a function around it binds `name` (where `_resolve_dotted_uncached` starts from
        there): a name none of them binds means what it means at module level."""
        functions = self.modules[module]["functions"]
        scope = function
        while scope is not None:
            info = functions.get(scope)
            if info is None:
                return False
            if name in info["params"] or name in info["nested"] or name in info["locals"] or name in info["rebound"]:
                return True
            scope = info.get("parent")
        return False

    def _resolve_dotted_uncached(self, module: str, function: str | None, dotted: str, depth: int) -> list[tuple]:
        summary = self.modules[module]
        parts = dotted.split(".")
        head, rest = parts[0], parts[1:]
        starts: list[tuple] | None = None
        scope = function
        while scope is not None and starts is None:  # the function, then the functions around it (closures)
            info = summary["functions"].get(scope)
            if info is None:
                break
            owner = scope.split(".<locals>.")[0]
            if (head in ("self", "cls") and info["params"][:1] == [head] and "." in owner and scope == owner
                    and owner.split(".")[0] in summary["classes"]):
                starts = [("instance" if head == "self" else "class", module, owner.split(".")[0])]
            elif head in info["nested"]:
                starts = [("func", module, f"{scope}.<locals>.{head}", 0)]
            elif head in info["locals"]:
                starts = self.resolve(module, scope, info["locals"][head], depth + 1)
            elif head in info["params"]:
                annotation = info["ann"].get(head)
                starts = []
                if annotation:
                    starts = [("instance", t[1], t[2]) for t in self._resolve_dotted(module, None, annotation, depth + 1)
                              if t[0] == "class"]  # fmt: skip
            elif head in info["rebound"]:
                starts = []
            scope = info.get("parent")
        if starts is None:
            starts = self._module_attr(module, head, depth)
        for attr in rest:
            starts = [t for start in starts for t in self._attribute(start, attr, depth)]
        return starts

    def _module_attr(self, module: str, name: str, depth: int) -> list[tuple]:
        summary = self.modules.get(module)
        if summary is None or depth > 8:
            return [("external", f"{module}.{name}")]
        if name in summary["functions"]:
            return [("func", module, name, 0)]
        if name in summary["classes"]:
            return [("class", module, name)]
        if name in summary["assigns"]:
            return self.resolve(module, None, summary["assigns"][name], depth + 1)
        if name in summary["imports"]:
            return self._qualified(summary["imports"][name], depth + 1)
        submodule = f"{module}.{name}"
        if submodule in self.modules:
            return [("module", submodule)]
        for star in summary["stars"]:
            if star in self.modules and star != module:
                found = self._module_attr(star, name, depth + 1)
                if found and found[0][0] != "external":
                    return found
        return []

    def _qualified(self, qualified: str, depth: int) -> list[tuple]:
        parts = qualified.split(".")
        for cut in range(len(parts), 0, -1):
            name = ".".join(parts[:cut])
            if name in self.modules:
                starts: list[tuple] = [("module", name)]
                for attr in parts[cut:]:
                    starts = [t for s in starts for t in self._attribute(s, attr, depth)]
                return starts
        return [("external", qualified)]

    def _attribute(self, start: tuple, attr: str, depth: int) -> list[tuple]:
        kind = start[0]
        if kind == "module":
            return self._module_attr(start[1], attr, depth + 1)
        if kind in ("class", "instance"):
            for owner_module, owner in self.mro(start[1], start[2]):
                summary = self.modules[owner_module]
                if attr in summary["classes"][owner]["methods"]:
                    return [("func", owner_module, f"{owner}.{attr}", 1 if kind == "instance" else 0)]
            return []
        if kind == "external":
            return [("external", f"{start[1]}.{attr}")]
        return []

    def mro(self, module: str, name: str, depth: int = 0) -> list[tuple[str, str]]:
        """The class and its project base classes, depth first (enough for methods' look-up)."""
        order = [(module, name)]
        if depth > 10 or name not in self.modules[module]["classes"]:
            return order
        for base in self.modules[module]["classes"][name]["bases"]:
            for target in self.resolve(module, None, base, depth + 1):
                if target[0] == "class":
                    for entry in self.mro(target[1], target[2], depth + 1):
                        if entry not in order:
                            order.append(entry)
        return order

    def external_bases(self, module: str, name: str) -> set[str]:
        """The qualified names of the classes outside the project that the class derives from."""
        found: set[str] = set()
        for owner_module, owner in self.mro(module, name):
            if (owner_module, owner) != (module, name):  # a library's own base class, checked in its own sources
                found.add(f"{owner_module}.{owner}")
            for base in self.modules[owner_module]["classes"][owner]["bases"]:
                if base is not None and "n" in base:
                    for target in self.resolve(owner_module, None, base):
                        if target[0] == "external":
                            found.add(target[1])
        return found

    # ---- traced-ness -----------------------------------------------------------------------------------------

    def solve(self) -> dict[Key, _Seed]:
        if self._solved is not None:
            return self._solved
        return self._solve()

    def _solve(self) -> dict[Key, _Seed]:
        traced: dict[Key, _Seed] = {}
        todo: list[Key] = []

        def mark(key: Key, transforms: Iterable[str], kinds: Mapping[str, int], local: bool) -> None:
            info = self._info(key)
            if info is None:
                return
            seed = traced.get(key)
            new = seed is None
            if seed is None:
                seed = traced[key] = _Seed(local=local)
            changed = new
            if not local and seed.local:
                seed.local, changed = False, True
            for t in transforms:
                if t not in seed.transforms:
                    seed.transforms.add(t)
                    changed = True
            configs = self._config_params(key, info)
            for p in info["params"]:
                k = STATIC if p in configs else kinds.get(p, UNKNOWN)
                old = seed.kinds.get(p)
                k = k if old is None else max(old, k)
                if k != old:
                    seed.kinds[p] = k
                    changed = True
            if changed:
                todo.append(key)

        visible = [(name, s) for name, s in self.modules.items() if s["module"] == name]
        for module, summary in visible:
            for qual, info in summary["functions"].items():
                for decorator in info["dec"]:
                    self._seed_from_decorator(module, qual, info, decorator, mark)
                for call in info["calls"]:
                    self._seed_from_call(module, qual, call, mark)
            for call in summary["calls"]:
                self._seed_from_call(module, None, call, mark)
            for name in summary["classes"]:
                self._seed_from_conventions(module, name, mark)
        while todo:
            key = todo.pop()
            seed = traced[key]
            info = self._info(key)
            module, qual = key
            for nested in info["nested"]:  # functions nested in a traced one are traced (the local analysis' rule)
                mark((module, f"{qual}.<locals>.{nested}"), seed.transforms, {}, True)
            for call in info["calls"]:
                for target in self.resolve(module, qual, call["f"]):
                    if target[0] != "func":
                        continue
                    callee = (target[1], target[2])
                    callee_info = self._info(callee)
                    if callee_info is None:
                        continue
                    kinds = self._argument_kinds(module, qual, seed, callee_info["params"], call, target[3], callee_info["ann"])
                    plain = call["f"] is not None and "n" in call["f"] and "." not in call["f"]["n"]
                    local = seed.local and plain and target[1] == module and "." not in target[2]
                    mark(callee, seed.transforms, kinds, local)
        self._solved = traced
        self._collect_static_attrs(traced)
        return traced

    def _config_params(self, key: Key, info: dict) -> frozenset[str]:
        """The parameters annotated with a configuration class that is never traced (configs.STATIC_CONFIG_TYPES:
        `config: ml_collections.ConfigDict`): Python values wherever the function is traced."""
        found = self._config_cache.get(key)
        if found is None:
            found = frozenset(
                p for p, annotation in info["ann"].items()
                if any(t[0] == "external" and t[1] in configs.STATIC_CONFIG_TYPES
                       for t in self._resolve_dotted(key[0], None, annotation, 0))
            )  # fmt: skip
            self._config_cache[key] = found
        return found

    def _info(self, key: Key) -> dict | None:
        summary = self.modules.get(key[0])
        return summary["functions"].get(key[1]) if summary is not None else None

    def _argument_kinds(self, module: str, caller: str, seed: _Seed, params: list[str], call: dict, bound: int,
                        callee_annotations: Mapping[str, str] = {}) -> dict[str, int]:
        """Kinds of the callee's parameters at one call site: TRACED where the argument is (an index, attribute
        or method of) a TRACED parameter of the caller that the caller does not rebind, STATIC for literals,
        UNKNOWN otherwise."""
        info = self._info((module, caller))
        rebound = set(info["rebound"]) | set(info["locals"])

        def kind(ref) -> int:
            if ref is None:
                return UNKNOWN
            if "l" in ref:
                return STATIC
            if "n" in ref:
                parts = ref["n"].split(".")
                if parts[0] in rebound or parts[0] not in seed.kinds:
                    # a local or a name from outside: static when it holds a configuration object (and so is
                    # every attribute of it: `config.num_layers`)
                    return STATIC if self._static_config(module, caller, parts[0]) else UNKNOWN
                if len(parts) > 1 and parts[-1] in ("shape", "ndim", "dtype", "size"):
                    return STATIC
                if len(parts) > 1:  # a field of a pytree: a static one (brax's `sys.num_iter`) is a Python value
                    static = self._static_attrs_of(module, caller, parts[0])
                    if "*" in static or parts[1] in static or seed.kinds[parts[0]] == STATIC:
                        return STATIC
                    return UNKNOWN
                return seed.kinds[parts[0]]
            if "o" in ref:
                return max((kind(r) for r in ref["o"]), default=STATIC)
            if "c" in ref and ref["c"]["f"] is not None and "n" in ref["c"]["f"]:
                callee = self.qualify(module, ref["c"]["f"]["n"])
                if callee.startswith(NUMERIC_NAMESPACES):
                    return TRACED
            return UNKNOWN

        free = params[bound:]
        if call.get("s"):
            return {}
        kinds = {p: STATIC for p in params[:bound] if p not in ("self", "cls")}
        for p, ref in zip(free, call["a"]):
            kinds[p] = kind(ref)
        for name, ref in call["k"].items():
            if name in free:
                kinds[name] = kind(ref)
        for p, annotation in callee_annotations.items():  # `num_iter: int` is meant as a Python value
            if kinds.get(p) == TRACED and annotation.split(".")[-1] in conventions.PYTHON_TYPES:
                kinds[p] = UNKNOWN
        return kinds

    def _static_config(self, module: str, function: str, name: str) -> bool:
        """Whether `name`, read in `function`, surely holds a configuration object that is never traced: every
        value it may denote is one (`config = get_config()`, where `get_config` returns an
        `ml_collections.ConfigDict()`, whose fields it then sets)."""
        targets = self._resolve_dotted(module, function, name, 0)
        return bool(targets) and all(t[0] == "static" for t in targets)

    def _static_attrs_of(self, module: str, function: str, param: str) -> set[str]:
        """The static fields of `param`, from its annotation: all ("*") for a class registered static, the
        `pytree_node=False` fields of a struct dataclass."""
        info = self._info((module, function))
        annotation = info["ann"].get(param) if info is not None else None
        if not annotation:
            return set()
        found: set[str] = set()
        for target in self._resolve_dotted(module, None, annotation, 0):
            if target[0] == "class":
                found |= self._static_classes().get((target[1], target[2]), set())
        return found

    def _seed_kinds(self, info: dict, transform: str, options: dict, bound: int, fixed=()) -> dict[str, int]:
        """What `transform` and its options (references of the summary) say of the parameters it traces."""
        written = {key: _option_literal(key, ref) for key, ref in options.items() if key in SEEDING_OPTIONS}
        kinds = parameter_kinds(info["params"], transform, written, bound, fixed=fixed, method=True)
        return {p: int(k) for p, k in kinds.items()}

    def _seed_from_decorator(self, module: str, qual: str, info: dict, decorator, mark) -> None:
        if decorator is None:
            return
        transform, options = self._transform(module, None, decorator)
        if transform is not None:
            mark((module, qual), [transform], self._seed_kinds(info, transform, options, 0), True)
            return
        names = self._qualified_names(module, decorator)
        if names & tables.TRACED_DECORATORS:
            self._called_by_libraries.add((module, qual))
            mark((module, qual), [CONVENTION], self._convention_kinds(module, info), False)

    def _qualified_names(self, module: str, ref) -> set[str]:
        if ref is None:
            return set()
        if "c" in ref:
            return self._qualified_names(module, ref["c"]["f"])
        names = set()
        for target in self.resolve(module, None, ref):  # outside the project, or a library's own definition
            if target[0] == "external":
                names.add(target[1])
            elif target[0] in ("class", "func"):
                names.add(f"{target[1]}.{target[2]}")
        return names

    def _transform(self, module: str, function: str | None, ref) -> tuple[str | None, dict]:
        """The JAX transformation a decorator or callee stands for, with its keyword options:
        `jax.jit`, `jax.jit(static_argnums=1)`, `partial(jax.jit, static_argnums=1)`, `nnx.jit`."""
        if ref is None:
            return None, {}
        if "n" in ref:
            for target in self.resolve(module, function, ref):
                if target[0] == "external" and canonical(target[1]) in TRANSFORMS:
                    return canonical(target[1]), {}
            return None, {}
        if "c" in ref:
            call = ref["c"]
            inner, _ = self._transform(module, function, call["f"])
            options = {k: v for k, v in call["k"].items()}
            if inner is not None and not call["a"]:
                return inner, options
            if call["f"] is not None and any(t == ("external", _PARTIAL) for t in self.resolve(module, function, call["f"])):
                if call["a"]:
                    inner, _ = self._transform(module, function, call["a"][0])
                    if inner is not None:
                        return inner, options
        return None, {}

    def _seed_from_call(self, module: str, function: str | None, call: dict, mark) -> None:
        callee = call["f"]
        if callee is None:
            return
        if "n" in callee and not self._may_seed(module, function, callee["n"]):
            return
        transform, options = self._transform(module, function, callee)
        if transform is not None and call["a"]:
            options = {**options, **call["k"]}
            self._seed_targets(module, function, call["a"][0], transform, options, mark)
            return
        names = self._qualified_names(module, callee) if "n" in callee else set()
        if not names:
            return
        for name in names:
            if name in LAX_BODIES:
                positions, keywords = LAX_BODIES[name]
                bodies = [a for i, a in enumerate(call["a"]) if i in positions]
                bodies += [v for k, v in call["k"].items() if k in keywords]
                for body in bodies:
                    for ref in (body["t"] if body and "t" in body else [body]):
                        self._seed_targets(module, function, ref, name, {}, mark, body=True)
            if name in tables.CONVENTION_WRAPPERS:
                positions = tables.CONVENTION_WRAPPERS[name]
                for i, ref in enumerate(call["a"]):
                    if i in positions:
                        for target in self.resolve(module, function, ref):
                            if target[0] == "func":
                                info = self._info((target[1], target[2]))
                                if info is None:
                                    continue
                                limit = tables.CONVENTION_ARITY.get(name, 1_000) + target[3]
                                kinds = self._convention_kinds(target[1], info, limit)
                                # `hk.transform(partial(forward, config=config))`: what partial binds is a constant
                                for p in [*info["params"][:target[3]], *(target[4] if len(target) > 4 else ())]:
                                    if p in kinds and p not in ("self", "cls"):
                                        kinds[p] = STATIC
                                self._called_by_libraries.add((target[1], target[2]))
                                mark((target[1], target[2]), [CONVENTION], kinds, False)

    def _may_seed(self, module: str, function: str | None, dotted: str) -> bool:
        """Whether a call of the name `dotted` in `function` may seed anything: the name may denote a transformation
        (`_transform`), a lax body's or a convention wrapper's callee (`_qualified_names`). Most calls (94k in
        1,449 real files) are of none: told from the names' resolutions (cached), without the sets of names."""
        for target in self._resolve_dotted(module, function, dotted, 0):
            if target[0] == "external" and canonical(target[1]) in TRANSFORMS:
                return True
        for target in self._resolve_dotted(module, None, dotted, 0):
            kind = target[0]
            if kind == "external":
                if target[1] in _SEEDING_NAMES:
                    return True
            elif (kind == "class" or kind == "func") and f"{target[1]}.{target[2]}" in _SEEDING_NAMES:
                return True
        return False

    def _seed_targets(self, module: str, function: str | None, ref, transform: str, options: dict, mark,
                      body: bool = False) -> None:
        for target in self.resolve(module, function, ref):
            if target[0] != "func":
                continue
            key = (target[1], target[2])
            info = self._info(key)
            if info is None:
                continue
            plain = ref is not None and "n" in ref and "." not in ref["n"]
            local = plain and target[1] == module and (
                "." not in target[2] or (function is not None and function.split(".")[0] == target[2].split(".")[0] and False)
            )
            if body:
                kinds = {p: TRACED for p in info["params"][target[3]:]}
                kinds.update({p: STATIC for p in info["params"][:target[3]]})
                if info["params"][:1] in (["self"], ["cls"]):
                    kinds[info["params"][0]] = UNKNOWN
                for keyword in target[4] if len(target) > 4 else ():  # `partial(f, beam_size=n)`: a constant
                    if keyword in kinds:
                        kinds[keyword] = STATIC
            else:
                kinds = self._seed_kinds(info, transform, options, target[3], target[4] if len(target) > 4 else ())
            mark(key, [transform], kinds, local)

    def _convention_kinds(self, module: str, info: dict, limit: int = 1_000) -> dict[str, int]:
        """Parameters of a function traced by convention: TRACED (arrays and pytrees of them: inputs, states,
        updates), but UNKNOWN for `self`/`cls`, a flag (`train: bool`, `deterministic=True`, a name in
        conventions.FLAG_PARAMETERS) or a parameter annotated with a Python type: those stay Python values."""
        kinds = {}
        kwonly = set(info.get("kwonly", ()))
        for index, p in enumerate(info["params"]):
            if p in kwonly or index >= limit:  # extra arguments (optax's `**extra_args` kind): unknown
                kinds[p] = UNKNOWN
                continue
            annotation = info["ann"].get(p)
            default = info["defaults"].get(p, None) if isinstance(info["defaults"], dict) else None
            python_value = (
                p in ("self", "cls")
                or p in conventions.FLAG_PARAMETERS
                or (annotation is not None and annotation.split(".")[-1] in conventions.PYTHON_TYPES)
                or (default is not None and "l" in default and isinstance(default["l"], (bool, str)))
            )
            kinds[p] = UNKNOWN if python_value else TRACED
        return kinds

    def _seed_from_conventions(self, module: str, name: str, mark) -> None:
        bases = self.external_bases(module, name)
        methods: set[str] = set()
        every = False
        for base in bases:
            listed = tables.TRACED_BASES.get(base)
            if listed is None:
                continue
            if "*" in listed:
                every = True
            methods.update(m for m in listed if m != "*")
        if not methods and not every:
            return
        for owner_module, owner in self.mro(module, name):
            summary = self.modules[owner_module]
            for method in summary["classes"][owner]["methods"]:
                if method in conventions.UNTRACED_METHODS or (method.startswith("_") and not method.startswith("__")):
                    if not (every and method.startswith("_") and not method.startswith("__")):
                        continue
                if method.startswith("__") and method != "__call__":
                    continue
                if every or method in methods:
                    key = (owner_module, f"{owner}.{method}")
                    info = self._info(key)
                    if info is not None and not any(self._is_property(owner_module, d) for d in info["dec"]):
                        self._called_by_libraries.add(key)
                        mark(key, [CONVENTION], self._convention_kinds(owner_module, info), False)

    def _is_property(self, module: str, decorator) -> bool:
        return decorator is not None and "n" in decorator and decorator["n"].split(".")[-1] in (
            "property", "cached_property", "nowrap", "setter", "staticmethod", "classmethod", "abstractmethod")

    # ---- call-site evidence ----------------------------------------------------------------------------------

    def call_site_evidence(self) -> dict[Key, dict[str, int]]:
        """For each traced function, its parameters that every call site in the project passes an array, with the
        number of sites (at least one): evidence for the rules (ArrayAnalysis.called_argument), not proof, as a
        caller outside the project may pass anything. An array is the value of a call of an array constructor
        (`ARRAY_MAKERS`: `jnp.ones(...)`, `jax.random.normal(...)`), there or through a local bound once to one;
        a literal, tuple, list, parameter of the caller or any other name is not. No evidence for a function a
        call could reach unseen: one a library calls by convention, a dunder, one wrapped by a decorator other
        than a JAX transformation, one whose name appears as a value anywhere (passed, stored, returned: called
        elsewhere through it), that a call the index cannot resolve names (`model.encode(x)` on an unannotated
        `model`), or a method whose name another class defines too (an override); nor for a parameter some call
        leaves out, binds with `partial`, or passes through `*args`/`**kwargs`. Under the same conditions it keeps,
        for a parameter every call passes an NNX module built in the project (`_instance_static`), the module's
        attributes that hold Python scalars: static fields of the tree `jit` is handed (`model.dim`)."""
        if self._call_sites is not None:
            return self._call_sites
        solved = self.solve()
        sites: dict[Key, int] = {}
        not_arrays: dict[Key, set[str]] = {}
        instances: dict[Key, dict[str, set[str]]] = {}  # parameter → static attributes common to every site
        unresolved: set[str] = set()  # the last names of callees the index cannot resolve
        values: set[str] = set()  # the last names of names used as values
        methods: dict[str, int] = {}  # how many classes define a method of each name
        for module, summary in self.modules.items():
            if summary["module"] != module:
                continue
            for info in summary["classes"].values():
                for method in info["methods"]:
                    methods[method] = methods.get(method, 0) + 1
            for value in summary["assigns"].values():
                _value_names(value, values)
            for info in summary["classes"].values():  # a class body's calls are not among the summary's calls
                for spec in info["fields"].values():
                    _value_names(spec.get("value"), values, calls=True)
                for decorator in info["dec"]:
                    _value_names(decorator, values, calls=True)
            scopes: list[tuple[str | None, list]] = [(None, summary["calls"])]
            for qual, info in summary["functions"].items():
                scopes.append((qual, info["calls"]))
                for group in (info["locals"].values(), info["returns"], info["self_assigned"].values()):
                    for value in group:
                        _value_names(value, values)
                for value in [*info["dec"], *info["defaults"].values()]:  # neither is walked for calls
                    _value_names(value, values, calls=True)
            for qual, calls in scopes:
                for call in calls:
                    for ref in (*call["a"], *call["k"].values()):
                        _value_names(ref, values)
                    callee = call["f"]
                    if callee is None or "n" not in callee:
                        if "m" in call:
                            unresolved.add(call["m"])
                        continue
                    targets = self._resolve_dotted(module, qual, callee["n"], 0)
                    if not targets:
                        unresolved.add(callee["n"].rpartition(".")[2])
                    for target in targets:
                        key = (target[1], target[2]) if target[0] == "func" else None
                        if key is None or key not in solved:
                            continue
                        sites[key] = sites.get(key, 0) + 1
                        given = self._given(call, target)
                        self._count_site(key, given, module, qual, not_arrays.setdefault(key, set()))
                        self._count_instances(key, given, module, qual, instances, first=sites[key] == 1)
        found: dict[Key, dict[str, int]] = {}
        for key, count in sites.items():
            name = key[1].rpartition(".")[2]
            if name in unresolved or name in values or name.startswith("__") or key in self._called_by_libraries:
                continue
            if "<locals>" not in key[1] and "." in key[1] and methods.get(name, 0) > 1:
                continue  # `self.encode(x)` in a base class may run a subclass's `encode`: sites not told apart
            info = self._info(key)
            if any(self._transform(key[0], None, decorator)[0] is None for decorator in info["dec"]):
                continue  # a wrapper in between may pass anything on
            arrays = {p: count for p in info["params"] if p not in not_arrays[key]}
            if arrays:
                found[key] = arrays
            static = {p: attrs for p, attrs in instances.get(key, {}).items() if attrs}
            if static:
                self._instance_attrs[key] = static
        self._call_sites = found
        return found

    def _given(self, call: dict, target: tuple) -> dict | None:
        """Parameter → the reference `call` passes it, for a call of `target` (a resolved "func"); None for a call
        with `*args` or `**kwargs`. A parameter bound by `partial`'s keywords is left out (not this call's)."""
        if call.get("s"):
            return None
        info = self._info((target[1], target[2]))
        params = info["params"]
        bound, keywords = target[3], target[4] if len(target) > 4 else frozenset()
        kwonly = set(info.get("kwonly", ()))
        given = dict(zip([p for p in params if p not in kwonly][bound:], call["a"]))
        given.update((k, v) for k, v in call["k"].items() if k in params)
        return {p: ref for p, ref in given.items() if p not in keywords}

    def _count_site(self, key: Key, given: dict | None, module: str, caller: str | None, not_arrays: set[str]) -> None:
        """Add to `not_arrays` the parameters of `key` that the call passing `given` does not surely pass an array:
        all of them for a call with `*args` or `**kwargs`."""
        for p in self._info(key)["params"]:
            if p not in not_arrays and (given is None or p not in given or not self._passes_array(module, caller, given[p])):
                not_arrays.add(p)

    def _count_instances(self, key: Key, given: dict | None, module: str, caller: str | None,
                         instances: dict[Key, dict[str, set[str]]], first: bool) -> None:
        """Keep, for each parameter of `key`, the static attributes of the NNX module that every call so far
        passes it (`_instance_static`); none once a call passes anything else."""
        common = instances.setdefault(key, {})
        for p in self._info(key)["params"]:
            found = self._instance_static(module, caller, given.get(p)) if given is not None else set()
            common[p] = found if first else common.get(p, set()) & found

    def _instance_static(self, module: str, function: str | None, ref) -> set[str]:
        """The attributes that hold Python scalars, and so are static fields of its tree under a transformation, of
        the NNX module `ref` (read in `function`) holds: a construction `Foo(4, rngs)` of a project class deriving
        from `nnx.Module`, there or bound once to a name (in the function, one around it, or at module level), whose
        `__init__` sets them from a literal, or from a parameter the construction passes a literal (or leaves
        to a literal default), and which no other method of the class sets. Empty for anything else."""
        bound = (function, ref) if ref is not None and "c" in ref else self._binding(module, function, ref)
        if bound is None or bound[1] is None or "c" not in bound[1] or bound[1]["c"].get("s"):
            return set()
        call = bound[1]["c"]
        classes = self.resolve(module, bound[0], call["f"])
        if len(classes) != 1 or classes[0][0] != "class":
            return set()
        owner_module, owner = classes[0][1], classes[0][2]
        if not self.external_bases(owner_module, owner) & tables.PYTREE_MODULES:
            return set()
        static: set[str] = set()
        elsewhere: set[str] = set()
        constructor_seen = False
        for cls_module, cls in self.mro(owner_module, owner):
            summary = self.modules[cls_module]
            for method in summary["classes"][cls]["methods"]:
                info = summary["functions"].get(f"{cls}.{method}")
                if info is None:
                    continue
                if method != "__init__":
                    elsewhere |= set(info["self_assigned"])
                    continue
                passed = {}
                if not constructor_seen:  # the `__init__` the construction runs: its arguments are known
                    constructor_seen = True
                    params = [p for p in info["params"][1:] if p not in set(info.get("kwonly", ()))]
                    passed = dict(zip(params, call["a"]))
                    passed.update((k, v) for k, v in call["k"].items() if k in info["params"])
                    defaults = info["defaults"] if isinstance(info["defaults"], dict) else {}
                    for p in info["params"][1:]:
                        passed.setdefault(p, defaults.get(p))
                for attr, value in info["self_assigned"].items():
                    if value is not None and "n" in value and value["n"] in info["params"][1:]:
                        value = passed.get(value["n"])
                    if value is not None and "l" in value and not isinstance(value["l"], list):
                        static.add(attr)
        return static - elsewhere

    def _binding(self, module: str, function: str | None, ref, module_level: bool = True) -> tuple | None:
        """(the function that binds it or None, the value) for the plain name `ref`, read in `function`: its one
        binding there or in a function around it (not a parameter), or, where `module_level`, its module-level
        assignment; None otherwise."""
        if ref is None or "n" not in ref or "." in ref["n"]:
            return None
        name, scope = ref["n"], function
        while scope is not None:
            info = self._info((module, scope))
            if info is None or name in info["params"] or name in info["rebound"] or name in info["nested"]:
                return None
            if name in info["locals"]:
                return scope, info["locals"][name]
            scope = info.get("parent")
        value = self.modules[module]["assigns"].get(name) if module_level else None
        return (None, value) if value is not None else None

    def _passes_array(self, module: str, function: str | None, ref, through_local: bool = True) -> bool:
        """Whether `ref`, read in `function`, is surely an array: a call of an array constructor, or a name bound
        once, in the function or one around it, to such a call (and not a parameter there)."""
        if ref is None:
            return False
        if "c" in ref:
            callee = ref["c"]["f"]
            if callee is None or "n" not in callee:
                return False
            targets = self._resolve_dotted(module, function, callee["n"], 0)
            return bool(targets) and all(t[0] == "external" and t[1] in ARRAY_MAKERS for t in targets)
        bound = self._binding(module, function, ref, module_level=False) if through_local else None
        return bound is not None and self._passes_array(module, bound[0], bound[1], through_local=False)

    # ---- static-ness -----------------------------------------------------------------------------------------

    def _collect_static_attrs(self, traced: dict[Key, _Seed]) -> None:
        """For each traced function: `self`'s attributes that are hyperparameters (a linen module's fields, a Haiku
        or NNX module's constructor arguments or literals stored as they are, an Equinox module's static fields), and for parameters
        annotated with a class registered static (or a struct dataclass): its static fields (all: "*")."""
        static_classes = self._static_classes()
        for key in traced:
            module, qual = key
            info = self._info(key)
            attrs: dict[str, set[str]] = {}
            owner, _, method = qual.partition(".")
            if method and "<locals>" not in qual and owner in self.modules[module]["classes"] and info["params"][:1] == ["self"]:
                found = self._self_static(module, owner)
                if found:
                    attrs["self"] = found
            for param, annotation in info["ann"].items():
                for target in self._resolve_dotted(module, None, annotation, 0):
                    if target[0] == "class":
                        fields = static_classes.get((target[1], target[2]))
                        if fields:
                            attrs[param] = set(fields)
            if attrs:
                self._static_attrs[key] = attrs

    def _self_static(self, module: str, owner: str) -> set[str]:
        bases = self.external_bases(module, owner)
        static: set[str] = set()
        linen_or_haiku = bool(bases & tables.STATIC_SELF)
        for owner_module, cls in self.mro(module, owner):
            summary = self.modules[owner_module]
            info = summary["classes"][cls]
            for name, spec in info["fields"].items():
                if spec.get("plain"):
                    continue
                if linen_or_haiku or self._static_field(owner_module, spec):
                    static.add(name)
            init = summary["functions"].get(f"{cls}.__init__")
            if init is not None and linen_or_haiku:
                params = set(init["params"][1:])
                for attr, value in init["self_assigned"].items():
                    if value is not None and ("l" in value or value.get("n") in params):
                        static.add(attr)
            setup = summary["functions"].get(f"{cls}.setup")
            if setup is not None:
                static -= set(setup["self_assigned"])
        return static

    def _static_field(self, module: str, spec: dict) -> bool:
        value = spec.get("value")
        if value is None or "c" not in value:
            return False
        call = value["c"]
        names = self._qualified_names(module, call["f"])
        if names & tables.STATIC_FIELDS:
            return True
        if names & tables.STRUCT_FIELDS:
            for key in ("pytree_node", "static"):
                option = call["k"].get(key)
                if option is not None and "l" in option:
                    return option["l"] is (key == "static")
        return False

    def _static_classes(self) -> dict[tuple[str, str], set[str]]:
        """Classes whose instances are static under a transformation (`register_static`: every attribute), or
        struct dataclasses with static fields (those fields)."""
        if self._static_class_cache is not None:
            return self._static_class_cache
        found: dict[tuple[str, str], set[str]] = {}
        self._static_class_cache = found
        for module, summary in self.modules.items():
            if summary["module"] != module:
                continue
            for name, info in summary["classes"].items():
                names = set()
                for decorator in info["dec"]:
                    names |= self._qualified_names(module, decorator)
                if names & REGISTER_STATIC:
                    found[(module, name)] = {"*"}
                elif names & tables.STRUCT_DATACLASSES:
                    fields = {f for f, spec in info["fields"].items() if self._static_field(module, spec)}
                    if fields:
                        found[(module, name)] = fields
            for call in summary["calls"]:
                if self._qualified_names(module, call["f"]) & REGISTER_STATIC and call["a"]:
                    for target in self.resolve(module, None, call["a"][0]):
                        if target[0] == "class":
                            found[(target[1], target[2])] = {"*"}
        return found


def _option_literal(key: str, ref) -> list | str | None:
    """A seeding option's reference as `parameter_kinds` reads it (None: not a literal)."""
    if key == "in_axes":
        value = ref.get("l", ref.get("t")) if ref else None
        return [_axis(e if "t" in ref else {"l": e}) for e in value] if isinstance(value, list) else _axis(ref)
    return _literal_list(ref, str if key == "static_argnames" else int)


def _axis(ref) -> str:
    if ref is not None and "l" in ref and ref["l"] is None:
        return UNMAPPED
    if ref is not None and "l" in ref and type(ref["l"]) is int:
        return MAPPED
    return UNSURE


def _literal_list(ref, kind: type) -> list | None:
    if ref is None or "l" not in ref:
        return None
    value = ref["l"]
    values = value if isinstance(value, list) else [value]
    if all(isinstance(v, kind) and not (kind is int and isinstance(v, bool)) for v in values):
        return values
    return None


def _value_names(ref, found: set[str], calls: bool = False) -> None:
    """Add to `found` the last part of each name `ref` holds as a value (`encode` of `jax.jit(model.encode)`'s
    argument); inside calls too where `calls` (a call in a function body is among its calls, counted there)."""
    if not ref:
        return
    if "n" in ref:
        found.add(ref["n"].rpartition(".")[2])
    for inner in ref.get("t", ()) or ref.get("o", ()):
        _value_names(inner, found, calls)
    if calls and "c" in ref:
        for inner in (*ref["c"]["a"], *ref["c"]["k"].values()):
            _value_names(inner, found, calls)


