"""One pass over a module's `ast`: scopes, bindings, imports as qualified names, defs and a node index, and the
names query over them (`qualified`, `is_builtin`), memoized, that every fact about names reads.

The names it answers are those LibCST's QualifiedNameProvider gives (what `analysis.names.JaxNames` reads), so
that facts can move onto `ast` without changing a finding: a name read in a scope sees the bindings of the scope
that resolves it, and of that scope only those made earlier in the order LibCST walks (`Scope.count`, LibCST's
`_assignment_count`), an enclosing scope's all; a dotted name (`jnp.zeros`) is resolved through its longest
prefix that some scope binds, all of that scope's bindings. `tests/test_binder.py` compares every answer with
JaxNames'. Where LibCST departs from Python, the binder keeps Python's rule (the agreement test lists these):
- a walrus inside a comprehension binds in the enclosing function, not in the comprehension;
- a `match` capture (`case x:`) binds `x`;
- a name a function binds, read in it before its binding in the text, is still the function's local (a later
  loop step's value, or an UnboundLocalError), never the enclosing scope's name.
No LibCST and no I/O here: the facts are built on this, and LibCST only builds the fixes."""

from __future__ import annotations

import ast
import builtins
from typing import Iterator, NamedTuple

IMPORT, LOCAL, BUILTIN = "import", "local", "builtin"  # where a name's binding comes from (LibCST's sources)
_BUILTINS = frozenset(vars(builtins))


def _is_builtin_name(name: str) -> bool:
    """`hasattr(builtins, name)`, as LibCST asks it, without the call for ordinary names."""
    return name in _BUILTINS or (name.startswith("__") and hasattr(builtins, name))


class QualifiedName(NamedTuple):
    name: str  # `jax.numpy.zeros`; a local's own spelling; `builtins.print`
    source: str  # IMPORT, LOCAL or BUILTIN


class Binding(NamedTuple):
    """One place that binds `name` in `scope`: an assignment target, a parameter, a def, an import, a capture."""

    name: str  # dotted for `import a.b` (which binds `a.b` and `a`)
    scope: Scope
    node: ast.AST  # the `ast.Name` stored to, the def, the `ast.arg`, the handler, or the import statement
    index: int  # `scope.count` when bound

    @property
    def source(self) -> str:
        if self.scope.kind == "builtins":
            return BUILTIN
        return IMPORT if isinstance(self.node, (ast.Import, ast.ImportFrom)) else LOCAL

    def qualified_names(self, full_name: str) -> set[QualifiedName]:
        """What `full_name` (this binding's name, or a dotted name starting with it) stands for through it."""
        if self.scope.kind == "builtins":
            return {QualifiedName(f"builtins.{self.name}", BUILTIN)}
        if isinstance(self.node, (ast.Import, ast.ImportFrom)):
            return {QualifiedName(name, IMPORT) for name in _imported_names(self.node, full_name)}
        return {QualifiedName(full_name, LOCAL)}


def _imported_names(statement: ast.Import | ast.ImportFrom, full_name: str) -> Iterator[str]:
    """The names `full_name` stands for through an import statement, as LibCST's ImportAssignment spells them:
    each alias whose local name is `full_name` or a dotted prefix of it; relative modules keep their dots
    (`.a` for `from . import a`, `..m.a` for `from ..m import a`)."""
    module = ""
    if isinstance(statement, ast.ImportFrom):
        module = "." * statement.level + (statement.module or "")
    for alias in statement.names:
        parts = alias.name.split(".")
        for cut in range(len(parts), 0, -1):
            real_name = as_name = ".".join(parts[:cut])
            if module.endswith("."):
                real_name = module + real_name
            elif module:
                real_name = f"{module}.{real_name}"
            if alias.asname:
                as_name = alias.asname
            if full_name.startswith(as_name):
                remaining = full_name[len(as_name):]
                if remaining and not remaining.startswith("."):
                    continue
                remaining = remaining.lstrip(".")
                yield f"{real_name}.{remaining}" if remaining else real_name
                break


class Scope:
    """A module, class, function, lambda or comprehension (and, above the module, Python's builtins)."""

    __slots__ = ("kind", "node", "parent", "bindings", "overwrites", "count", "star_import")

    def __init__(self, kind: str, node: ast.AST | None, parent: Scope | None) -> None:
        self.kind = kind  # "builtins", "module", "class", "function", "lambda", "comprehension"
        self.node = node
        self.parent = parent
        self.bindings: dict[str, list[Binding]] = {}
        self.overwrites: dict[str, Scope] = {}  # `global`/`nonlocal` names -> the scope they bind in
        self.count = 0  # binding statements completed so far, in LibCST's walk order: orders reads and bindings
        self.star_import = False  # `from m import *` here: names not bound otherwise are unknown

    def __repr__(self) -> str:
        return f"<Scope {self.kind} {getattr(self.node, 'name', '')}>"

    @property
    def function_like(self) -> bool:
        return self.kind in ("function", "lambda", "comprehension")

    def visible_above(self) -> Scope:
        """The next enclosing scope whose names this one sees: class bodies are not seen from inside them."""
        parent = self.parent
        while parent.kind == "class":
            parent = parent.parent
        return parent

    def contains(self, name: str) -> bool:
        """Whether `name` is bound here or in a scope this one sees (LibCST's `name in scope`)."""
        if self.kind == "builtins":
            return self._builtin(name) is not None
        if name in self.overwrites:
            return self.overwrites[name].contains(name)
        if name in self.bindings:
            return True
        return self.visible_above().contains(name)

    def resolve(self, name: str) -> list[Binding]:
        """Every binding of `name` in the scope that answers it for code here (in no order)."""
        if self.kind == "builtins":
            found = self._builtin(name)
            return [found] if found is not None else []
        if name in self.overwrites:
            target = self.overwrites[name]
            while target.kind == "class":
                target = target.parent
            return target.resolve(name)
        if name in self.bindings:
            return self.bindings[name]
        return self.visible_above().resolve(name)

    def binding_target(self, name: str) -> Scope:
        """The scope a binding of `name` made here lands in (`global` and `nonlocal` move it)."""
        target = self.overwrites.get(name)
        if target is None:
            return self
        while target.kind == "class":
            target = target.parent
        return target.binding_target(name)

    def _builtin(self, name: str) -> Binding | None:
        found = self.bindings.get(name)
        if found is None and _is_builtin_name(name):
            found = self.bindings[name] = [Binding(name, self, None, 0)]
        return found[0] if found else None


class Read(NamedTuple):
    """A name read (or deleted) in `scope`, when `scope.count` was `index`, inside the attribute chain `chain`
    (the outermost attribute reached from it through `.value` and subscripts, LibCST's top-level attribute)."""

    node: ast.Name
    scope: Scope
    index: int
    chain: ast.Attribute | None


_SKIPPED_FIELDS = frozenset({"ctx", "op", "ops", "type_comment"})  # shared singletons and strings, never nodes
_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields(kind: type) -> tuple[str, ...]:
    found = _FIELDS.get(kind)
    if found is None:
        found = _FIELDS[kind] = tuple(f for f in kind._fields if f not in _SKIPPED_FIELDS)
    return found


def _dotted_prefixes(chain: ast.Attribute) -> Iterator[tuple[str, ast.AST]]:
    """`("a.b.c", a.b.c), ("a.b", a.b), ("a", a)` for `a.b.c`, longest first; through a call's callee as LibCST
    does (`a.b().c` gives `a.b`'s), nothing for any other chain."""
    value = chain.value
    if isinstance(value, ast.Call):
        if isinstance(value.func, (ast.Attribute, ast.Name)):
            yield from _prefixes_of(value.func)
    elif isinstance(value, (ast.Attribute, ast.Name)):
        inner = list(_prefixes_of(value))
        if inner:
            yield f"{inner[0][0]}.{chain.attr}", chain
            yield from inner


def _prefixes_of(node: ast.AST) -> Iterator[tuple[str, ast.AST]]:
    if isinstance(node, ast.Name):
        yield node.id, node
    else:
        yield from _dotted_prefixes(node)


def _full_name(node: ast.AST) -> str | None:
    """`jax.numpy.zeros` for that chain of attributes on a name, None for anything else."""
    if type(node) is ast.Name:
        return node.id
    base = _full_name(node.value) if type(node) is ast.Attribute else None
    return None if base is None else f"{base}.{node.attr}"


class _Naming(NamedTuple):
    """How the project index names a def met here (`ast_syntax.ast_qualified_defs`): `prefix + name` at the top
    (module level, inside module-level `if`/`try`, a module-level class's body), `prefix.<locals>.name` inside an
    indexed function, not at all elsewhere (inside a module-level loop or `with`, a nested class)."""

    kind: str  # "top", "function" or "none"
    prefix: str


_NOT_INDEXED = _Naming("none", "")


class Binder:
    """The model of one module's names, built in one pass over its `ast`; each query memoized."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.builtins = Scope("builtins", None, None)
        self.module = Scope("module", tree, self.builtins)
        self.scopes: list[Scope] = [self.module]
        self.parents: dict[ast.AST, ast.AST] = {}  # every node but the module -> its parent
        self.scope_of: dict[ast.AST, Scope] = {tree: self.module}  # every node -> the innermost scope it is in
        self.defs: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}  # by the project index's names
        self.reads: dict[ast.Name, Read] = {}
        self._binding_of: dict[ast.AST, Binding] = {}  # a stored-to `ast.Name` -> its binding
        self._imported_heads: set[str] = set()  # the first names of what imports bind: only these name imports
        self._dotted_bound: set[str] = set()  # the dotted names bound (`a.b` of `import a.b`): no other is
        self._scope = self.module
        self._chains: list[ast.Attribute | None] = [None]  # LibCST's top-level attribute, one per call entered
        self._naming = _Naming("top", "")
        self._answers: dict[ast.AST, frozenset[QualifiedName]] = {}
        self._spelled: dict[tuple[Scope, str], set[QualifiedName]] = {}  # non-read spellings' answers
        self._seen: dict[tuple[Scope, str, int], set[QualifiedName]] = {}  # reads' answers
        self._reader_of: dict[ast.AST, Read] | None = None
        self._read_bindings: set[Binding] | None = None
        self._reads_by_name: dict[str, list[Read]] | None = None
        self._by_type: dict[type, list[ast.AST]] | None = None
        self._bound: frozenset[str] | None = None
        self._aliases: dict[str, str] | None = None
        self._sole: dict[str, set[str] | None] | None = None
        self._otherwise: dict[tuple[type, ...], frozenset[str]] = {}
        self._children(tree)

    # ---- queries ------------------------------------------------------------------------------------------------

    def qualified(self, node: ast.AST) -> str | None:
        """The dotted name a name or attribute chain refers to through imports (`jax.numpy.zeros` for
        `jnp.zeros`), or None: a local, an attribute of a value, or a name bound to different imports on
        different paths (a compatibility shim), which is no one name."""
        base = node
        while isinstance(base, ast.Attribute):
            base = base.value
        if not isinstance(base, ast.Name) or base.id not in self._imported_heads:
            return None  # an attribute of a value, or a name no import binds
        imported = {q.name for q in self.names(node) if q.source == IMPORT}
        return imported.pop() if len(imported) == 1 else None

    def imported(self, node: ast.AST) -> str | None:
        """The one name `node` stands for where that is an import's on every path: no local, builtin or second
        import beside it (`qualified` lets a fallback `xp = None` beside `import jax.numpy as xp` pass; this does
        not), or None."""
        base = node
        while isinstance(base, ast.Attribute):
            base = base.value
        if not isinstance(base, ast.Name) or base.id not in self._imported_heads:
            return None
        names = self.names(node)
        if len(names) != 1:
            return None
        (found,) = names
        return found.name if found.source == IMPORT else None

    def sole_import(self, name: str) -> str | None:
        """The full name `name` stands for wherever it is read, where only absolute imports at module level bind
        it, all to that one name (`jax.numpy` for `jnp` of `import jax.numpy as jnp`; `jax` of `import
        jax.numpy`), and no scope binds it otherwise or declares it `global`/`nonlocal`; else None."""
        if self._sole is None:
            self._sole = {}
            declared = {n for scope in self.scopes for n in scope.overwrites}
            for scope in self.scopes:
                for bound, bindings in scope.bindings.items():
                    if "." in bound:
                        continue  # `a.b` of `import a.b`: its `a` answers
                    for binding in bindings:
                        node = binding.node
                        absolute = type(node) is ast.Import or (type(node) is ast.ImportFrom and not node.level)
                        if scope is self.module and absolute and bound not in declared and self._at_module_level(node):
                            fulls = set(_imported_names(node, bound))
                            known = self._sole.get(bound, fulls)
                            self._sole[bound] = fulls if known == fulls else None
                        else:
                            self._sole[bound] = None
                            break
        found = self._sole.get(name)
        return next(iter(found)) if found is not None and len(found) == 1 else None

    def _at_module_level(self, statement: ast.AST) -> bool:
        """Whether an import statement sits in the module's own code (not in a def that declares its name global)."""
        return self.scope_of.get(statement) is self.module

    def bound_otherwise(self, but: tuple[type, ...] = ()) -> frozenset[str]:
        """Every name some scope binds otherwise than by an absolute import (a store, parameter, def, class, handler,
        capture, relative import), or declares `global`/`nonlocal`; a binding by a node of the types `but`
        (`ast.Import` too, say) left out."""
        found = self._otherwise.get(but)
        if found is None:
            names = {n for scope in self.scopes for n in scope.overwrites}
            for scope in self.scopes:
                for bound, bindings in scope.bindings.items():
                    if "." in bound:
                        continue
                    for binding in bindings:
                        node = binding.node
                        absolute = type(node) is ast.Import or (type(node) is ast.ImportFrom and not node.level)
                        if not absolute and not isinstance(node, but):
                            names.add(bound)
                            break
            found = self._otherwise[but] = frozenset(names)
        return found

    @property
    def module_aliases(self) -> dict[str, str]:
        """Module or imported name → the local name the first top-level import of it binds (`jax.numpy` → `jnp`;
        `jax` → `jax` and `jax.numpy` → `jax.numpy` for `import jax.numpy`): how a fix spells a name here."""
        if self._aliases is None:
            aliases: dict[str, str] = {}
            for statement in self.tree.body:
                if type(statement) is ast.Import:
                    for alias in statement.names:
                        if alias.asname:
                            aliases.setdefault(alias.name, alias.asname)
                        else:
                            head = alias.name.split(".")[0]
                            aliases.setdefault(head, head)
                            aliases.setdefault(alias.name, alias.name)
                elif type(statement) is ast.ImportFrom and statement.module and not statement.level:
                    for alias in statement.names:
                        if alias.name != "*":
                            aliases.setdefault(f"{statement.module}.{alias.name}", alias.asname or alias.name)
            self._aliases = aliases
        return self._aliases

    def spelling(self, qualified_name: str) -> tuple[str, str | None]:
        """How a fix writes `qualified_name` here, and the module it must then import (None: none): through the
        alias a top-level import binds to its longest module prefix (`jnp.zeros`), else in full (`jax.tree.map`,
        with `import jax`)."""
        parts = qualified_name.split(".")
        aliases = self.module_aliases
        for cut in range(len(parts), 0, -1):
            local = aliases.get(".".join(parts[:cut]))
            if local is not None:
                return ".".join([local, *parts[cut:]]), None
        return qualified_name, parts[0]

    def release(self) -> None:
        """Breaks the reference cycles of this pass (a scope holds its bindings, each binding its scope), once
        nothing will ask it again: reference counting then frees the file's tree and facts at once, instead of
        the cyclic collector after scanning all of them."""
        for scope in (self.builtins, *self.scopes):
            scope.bindings, scope.overwrites, scope.parent = {}, {}, None

    def unbound_builtin(self, name: str) -> bool:
        """Whether `name` is a builtin's that no scope of the module binds: every read of it is the builtin."""
        if self._bound is None:
            self._bound = frozenset(n for scope in self.scopes for n in scope.bindings)
        return name not in self._bound and _is_builtin_name(name)

    @property
    def imported_names(self) -> frozenset[str]:
        """Every local name an import binds, in any scope (`jnp`, `jax` of `import jax.numpy`, relative ones too)."""
        return frozenset(self._imported_heads)

    def may_be_imported(self, name: str) -> bool:
        """Whether some import binds `name` (a name or dotted name's first part): only then may `qualified` name
        what it starts."""
        return name in self._imported_heads

    def is_builtin(self, node: ast.AST, name: str) -> bool:
        """Whether `node` is Python's own `name` (`print`) on every path: not a local or imported object of that
        name, and not one that some branch rebinds."""
        if not _is_builtin_name(name):
            return False
        names = self.names(node)
        return bool(names) and all(q.source == BUILTIN and q.name == f"builtins.{name}" for q in names)

    def callee(self, call: ast.Call) -> str | None:
        return self.qualified(call.func)

    def names(self, node: ast.AST) -> frozenset[QualifiedName]:
        """Every qualified name `node` may stand for (LibCST's `get_qualified_names_for`)."""
        found = self._answers.get(node)
        if found is None:
            found = self._answers[node] = frozenset(self._names_now(node))
        return found

    def read_bindings(self) -> set[Binding]:
        """Every binding that some read of the module may see (those whose LibCST assignment has references; names
        read only inside string annotations aside)."""
        if self._read_bindings is None:
            self._read_bindings = {
                binding for at, read in self._reads_by_node().items() for binding in self._referents(read, _full_name(at))
            }
        return self._read_bindings
    def references(self, scope: Scope, name: str) -> list[ast.Name]:
        """Every read of `name` that may see one of `scope`'s own bindings of it (LibCST's `references` of
        those assignments), in the order of the pass."""
        own = scope.bindings.get(name)
        if not own:
            return []
        if self._reads_by_name is None:
            self._reads_by_name = {}
            for read in self.reads.values():
                self._reads_by_name.setdefault(read.node.id, []).append(read)
        return [
            read.node for read in self._reads_by_name.get(name, ())
            if any(b in own for b in self._referents(read, name))
        ]

    def nodes_of(self, *types: type) -> list[ast.AST]:
        """The module's nodes of these types, in the order of the pass."""
        if self._by_type is None:
            self._by_type = {}
            for child in self.scope_of:
                self._by_type.setdefault(type(child), []).append(child)
        if len(types) == 1:
            return self._by_type.get(types[0], [])
        return [n for n in self.scope_of if isinstance(n, types)]

    @property
    def calls(self) -> list[ast.Call]:
        return self.nodes_of(ast.Call)

    def parent(self, node: ast.AST) -> ast.AST | None:
        return self.parents.get(node)

    def referents(self, node: ast.Name) -> list[Binding]:
        """The bindings a name read may refer to (LibCST's `Access.referents`); [] for a name that is no read."""
        read = self.reads.get(node)
        return [] if read is None else self._referents(read, node.id)

    def _names_now(self, node: ast.AST) -> set[QualifiedName]:
        read = self._reads_by_node().get(node)
        if read is not None:  # the node LibCST records the read at: what its referents name
            key = (read.scope, _full_name(node), read.index)  # the same read later in the same scope sees the same
            found = self._seen.get(key)
            if found is None:
                referents = self._referents(read, key[1])
                found = self._seen[key] = {q for b in referents for q in b.qualified_names(b.name)}
            return found
        full_name = _full_name(node)
        scope = self.scope_of.get(node)
        if full_name is None or scope is None:
            return set()
        own = self._binding_of.get(node)
        if own is None:  # the same spelling in the same scope means the same
            key = (scope, full_name)
            found = self._spelled.get(key)
            if found is None:
                found = self._spelled[key] = self._spelled_now(scope, full_name, None)
            return found
        return self._spelled_now(scope, full_name, own)

    def _spelled_now(self, scope: Scope, full_name: str, own: Binding | None) -> set[QualifiedName]:
        """What a dotted name that is no read's own node stands for in `scope`: through its longest prefix some
        visible scope binds, every binding of it there; a stored-to name, its own binding."""
        prefix: str | None = full_name
        bindings: list[Binding] = []
        while prefix:
            if ("." not in prefix or prefix in self._dotted_bound) and scope.contains(prefix):
                bindings = scope.resolve(prefix)
                break
            cut = prefix.rfind(".")
            prefix = prefix[:cut] if cut > 0 else None
        if own is not None and own in bindings:
            return own.qualified_names(full_name)
        return {q for binding in bindings for q in binding.qualified_names(full_name)}

    def _reads_by_node(self) -> dict[ast.AST, Read]:
        """Each read by the node it is recorded at: the name, or the longest attribute chain on it whose dotted
        name some visible scope binds (`jax.numpy` of `jax.numpy.zeros` after `import jax.numpy`)."""
        if self._reader_of is None:
            self._reader_of = {}
            for read in self.reads.values():
                at: ast.AST = read.node
                if read.chain is not None and self._dotted_bound:
                    for dotted, node in _dotted_prefixes(read.chain):
                        if dotted in self._dotted_bound and read.scope.contains(dotted):
                            at = node
                            break
                self._reader_of[at] = read
        return self._reader_of

    def _referents(self, read: Read, name: str) -> list[Binding]:
        """The bindings a read of `name` may see: the answering scope's, only those made before the read where
        that is the read's own scope; none made before in a module or class body: the enclosing scope's."""
        scope = read.scope
        found = scope.resolve(name)
        earlier = [b for b in found if b.scope is not scope or b.index < read.index]
        if earlier or not found:
            return earlier
        if scope.function_like:
            return found  # a local read before its binding in the text: Python's local, not the enclosing name
        return scope.parent.resolve(name)

    # ---- the pass -----------------------------------------------------------------------------------------------

    def _visit(self, node: ast.AST, parent: ast.AST) -> None:
        self.parents[node] = parent
        self.scope_of[node] = self._scope
        handler = _HANDLERS.get(type(node))
        if handler is not None:
            handler(self, node)
        else:
            self._children(node)

    def _children(self, node: ast.AST) -> None:
        """`_visit` of each child, inlined: the pass's hot loop (every handler puts `_scope` back as it was)."""
        parents, scope_of, scope = self.parents, self.scope_of, self._scope
        for field in _FIELDS.get(type(node)) or _fields(type(node)):
            value = getattr(node, field, None)
            for child in value if type(value) is list else (value,):
                if isinstance(child, ast.AST):
                    parents[child] = node
                    scope_of[child] = scope
                    handler = _HANDLERS.get(type(child))
                    if handler is not None:
                        handler(self, child)
                    else:
                        self._children(child)

    def _visit_all(self, nodes, parent: ast.AST) -> None:
        for item in nodes:
            if item is not None:
                self._visit(item, parent)

    def _bind(self, name: str, node: ast.AST, scope: Scope | None = None) -> Binding:
        target = (scope or self._scope).binding_target(name)
        binding = Binding(name, target, node, target.count)
        target.bindings.setdefault(name, []).append(binding)
        return binding

    def _enter(self, kind: str, node: ast.AST) -> Scope:
        scope = Scope(kind, node, self._scope)
        self.scopes.append(scope)
        self._scope = scope
        return scope

    def _statement(self, node: ast.stmt) -> None:
        """Any statement but a def or class: the index names defs inside it only where `_Naming` says."""
        naming = self._naming
        if naming.kind == "top" and (naming.prefix or type(node) not in _TOP_BLOCKS):
            self._naming = _NOT_INDEXED
        self._children(node)
        self._naming = naming

    def _name(self, node: ast.Name) -> None:
        if type(node.ctx) is ast.Store:
            scope = self._scope
            if self._walrus_target is node:  # Python binds it outside every comprehension
                while scope.kind == "comprehension":
                    scope = scope.parent
            self._binding_of[node] = self._bind(node.id, node, scope)
        else:
            self.reads[node] = Read(node, self._scope, self._scope.count, self._chains[-1])

    _walrus_target: ast.AST | None = None

    def _named_expr(self, node: ast.NamedExpr) -> None:
        self._walrus_target = node.target
        self._visit(node.target, node)
        self._walrus_target = None
        self._visit(node.value, node)
        self._scope.count += 1

    def _attribute(self, node: ast.Attribute) -> None:
        outermost = self._chains[-1] is None
        if outermost:
            self._chains[-1] = node
        self._visit(node.value, node)
        if outermost:
            self._chains[-1] = None

    def _call(self, node: ast.Call) -> None:
        self._chains.append(None)
        self._children(node)
        self._chains.pop()

    def _assignment(self, node: ast.stmt) -> None:  # Assign, AugAssign, AnnAssign
        self._statement(node)
        self._scope.count += 1

    def _import(self, node: ast.Import | ast.ImportFrom) -> None:
        for alias in node.names:
            self.parents[alias] = node
            self.scope_of[alias] = self._scope
            if alias.name == "*":
                self._scope.star_import = True
            elif alias.asname:
                self._bind(alias.asname, node)
                self._imported_heads.add(alias.asname)
            else:
                parts = alias.name.split(".")
                self._imported_heads.add(parts[0])
                for cut in range(len(parts), 1, -1):
                    self._dotted_bound.add(self._bind(".".join(parts[:cut]), node).name)
                self._bind(parts[0], node)
        self._scope.count += 1

    def _global(self, node: ast.Global | ast.Nonlocal) -> None:
        if self._scope.kind != "module":
            target = self.module if isinstance(node, ast.Global) else self._scope.parent
            for name in node.names:
                self._scope.overwrites[name] = target
        self._scope.count += 1

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._bind(node.name, node)
        naming = self._naming
        if naming.kind == "top":
            indexed = naming.prefix + node.name
        elif naming.kind == "function":
            indexed = f"{naming.prefix}.<locals>.{node.name}"
        else:
            indexed = None
        if indexed is not None:
            self.defs[indexed] = node
        self._naming = _Naming("function", indexed) if indexed is not None else _NOT_INDEXED
        outer = self._scope
        self._parameters(node.args, node, "function")
        self._visit_all(node.body, node)
        self._scope = outer
        self._naming = naming
        self._visit_all(node.decorator_list, node)
        if node.returns is not None:
            self._visit(node.returns, node)
        outer.count += 1

    def _lambda(self, node: ast.Lambda) -> None:
        outer = self._scope
        self._parameters(node.args, node, "lambda")
        self._visit(node.body, node)
        self._scope = outer

    def _parameters(self, arguments: ast.arguments, owner: ast.AST, kind: str) -> None:
        """Enter the scope of `owner`, binding its parameters there; their defaults and annotations are read in
        the enclosing scope."""
        outer = self._scope
        self.parents[arguments] = owner
        self.scope_of[arguments] = outer
        scope = self._enter(kind, owner)
        self._scope = outer
        for default in [*arguments.defaults, *arguments.kw_defaults]:
            if default is not None:
                self._visit(default, arguments)
        every = [*arguments.posonlyargs, *arguments.args, arguments.vararg, *arguments.kwonlyargs, arguments.kwarg]
        for arg in every:
            if arg is None:
                continue
            self.parents[arg] = arguments
            self.scope_of[arg] = scope
            if arg.annotation is not None:
                self._visit(arg.annotation, arg)
            self._bind(arg.arg, arg, scope)
        self._scope = scope
        scope.count += 1

    def _class(self, node: ast.ClassDef) -> None:
        self._bind(node.name, node)
        outer = self._scope
        self._visit_all(node.decorator_list, node)
        self._visit_all(node.bases, node)
        self._visit_all(node.keywords, node)
        naming = self._naming
        self._naming = _Naming("top", node.name + ".") if naming == ("top", "") else _NOT_INDEXED
        self._enter("class", node)
        self._visit_all(node.body, node)
        self._scope = outer
        self._naming = naming
        outer.count += 1

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp) -> None:
        """The first `for`'s iterable is read outside; the rest inside, after the first target (LibCST counts
        the inner `for`s as bindings only once all of them are walked)."""
        first, *inner = node.generators
        outer = self._scope
        self.parents[first] = node
        self.scope_of[first] = outer
        self._visit(first.iter, first)
        scope = self._enter("comprehension", node)
        self._visit(first.target, first)
        scope.count += 1
        self._visit_all(first.ifs, first)
        for generator in inner:
            self.parents[generator] = node
            self.scope_of[generator] = scope
            self._children(generator)
        scope.count += len(inner)
        if isinstance(node, ast.DictComp):
            self._visit(node.key, node)
            self._visit(node.value, node)
        else:
            self._visit(node.elt, node)
        self._scope = outer

    def _for(self, node: ast.For | ast.AsyncFor) -> None:
        naming = self._naming
        if naming.kind == "top":
            self._naming = _NOT_INDEXED
        self._visit(node.target, node)
        self._scope.count += 1
        self._visit(node.iter, node)
        self._visit_all(node.body, node)
        self._visit_all(node.orelse, node)
        self._naming = naming

    def _withitem(self, node: ast.withitem) -> None:
        self._visit(node.context_expr, node)
        if node.optional_vars is not None:
            self._visit(node.optional_vars, node)
            self._scope.count += 1  # LibCST's AsName
        self._scope.count += 1  # and its WithItem

    def _handler(self, node: ast.ExceptHandler) -> None:
        if node.type is not None:
            self._visit(node.type, node)
        if node.name is not None:
            self._bind(node.name, node)
            self._scope.count += 1
        self._visit_all(node.body, node)

    def _capture(self, node: ast.AST) -> None:  # MatchAs, MatchStar, MatchMapping: Python binds the capture
        self._children(node)
        name = getattr(node, "name", None) if not isinstance(node, ast.MatchMapping) else node.rest
        if name is not None:
            self._bind(name, node)


_TOP_BLOCKS = (ast.If, ast.Try, getattr(ast, "TryStar", ast.Try))  # module-level blocks whose defs are indexed

_HANDLERS = {
    ast.Name: Binder._name,
    ast.Attribute: Binder._attribute,
    ast.Call: Binder._call,
    ast.NamedExpr: Binder._named_expr,
    ast.Assign: Binder._assignment,
    ast.AugAssign: Binder._assignment,
    ast.AnnAssign: Binder._assignment,
    ast.Import: Binder._import,
    ast.ImportFrom: Binder._import,
    ast.Global: Binder._global,
    ast.Nonlocal: Binder._global,
    ast.FunctionDef: Binder._function,
    ast.AsyncFunctionDef: Binder._function,
    ast.Lambda: Binder._lambda,
    ast.ClassDef: Binder._class,
    ast.ListComp: Binder._comprehension,
    ast.SetComp: Binder._comprehension,
    ast.DictComp: Binder._comprehension,
    ast.GeneratorExp: Binder._comprehension,
    ast.For: Binder._for,
    ast.AsyncFor: Binder._for,
    ast.withitem: Binder._withitem,
    ast.ExceptHandler: Binder._handler,
    ast.MatchAs: Binder._capture,
    ast.MatchStar: Binder._capture,
    ast.MatchMapping: Binder._capture,
}
for _kind in (ast.If, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.Match, ast.Expr, ast.Return, ast.Delete,
              ast.Raise, ast.Assert, ast.Pass, ast.Break, ast.Continue, *((ast.TryStar,) if hasattr(ast, "TryStar") else ())):
    _HANDLERS[_kind] = Binder._statement
