"""Plugin manager: entry-point loading, lookup by name, did-you-mean errors.

Every plugin, built-in or third-party, is a module named by an entry point in the
``kbench`` group. Each entry point is loaded in its own ``try``: pluggy's
``load_setuptools_entrypoints`` stops at the first broken plugin, kbench records it and
goes on. A broken plugin (import error, misspelled hook, hook that raises, duplicate
name) is listed by ``kbench list`` with its error and never stops the others.
"""

from __future__ import annotations

import importlib.metadata
import inspect
import os
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pluggy

from kbench import hookspecs
from kbench._validation import coerce_params, declared_types, suggest
from kbench.errors import PluginError, UnknownPluginError
from kbench.parameters import Param, declarations, defaults
from kbench.spec import CONTROL, RESERVED, Spec, shown

KINDS = tuple(hookspecs.HOOKS)
#: kbench's own folder: an error raised in it is placed at the plugin's line that called it
_PACKAGE = str(Path(__file__).resolve().parent) + os.sep
#: the distribution of the built-in plugins: loaded first, and kept when another package
#: registers one of their names (the name is then refused as ambiguous)
BUILTIN = "kbench"


@dataclass(frozen=True)
class PluginInfo:
    """A registered plugin object and where it came from."""

    name: str
    kind: str
    obj: Any
    source: str  # the distribution (package) that registered it
    version: str
    entry_point: str  # "name = module"
    description: str

    @property
    def parameters(self) -> dict[str, Param]:
        """The declared parameters: a class's ``parameters``, a dataset provider's ``options``."""
        declared = getattr(self.obj, "options" if self.kind == "dataset" else "parameters", None)
        taken = inspect.signature(self.obj.load if self.kind == "dataset" else self.obj).parameters
        return ({k: v for k, v in declared.items() if k in taken} if isinstance(declared, dict)
                else {})

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "source": self.source,
            "version": self.version,
            "entry_point": self.entry_point,
            "object": f"{self.obj.__module__}.{self.obj.__qualname__}",
            "description": self.description,
            "parameters": declarations(self.parameters,
                                       self.obj.load if self.kind == "dataset" else self.obj),
        }


@dataclass(frozen=True)
class BrokenPlugin:
    """An entry point (or one name it registers) that could not be used, with the reason."""

    entry_point: str
    source: str
    error: str

    def to_dict(self) -> dict[str, str]:
        return {"entry_point": self.entry_point, "source": self.source, "error": self.error}


def _first_line(obj) -> str:
    """The first paragraph of the object's own docstring (not its base class's), on one line."""
    own = obj.__dict__.get("__doc__") if isinstance(obj, type) else obj.__doc__
    doc = inspect.cleandoc(own or "")
    return " ".join(doc.split("\n\n")[0].split()) if doc else ""


def check_kind(kind: str) -> str:
    """Accept 'sampler' or 'samplers'; raise a did-you-mean error otherwise."""
    if not isinstance(kind, str):
        raise TypeError(f"a plugin kind is one of {', '.join(map(repr, KINDS))}, got "
                        f"{shown(kind)}.")
    singular = kind[:-1] if kind.endswith("s") and kind[:-1] in KINDS else kind
    if singular not in KINDS:
        raise UnknownPluginError(
            f"unknown plugin kind {kind!r}{suggest(kind, KINDS)}; kinds are: {', '.join(KINDS)}."
        )
    return singular


class Registry:
    """The loaded plugins of one entry-point group."""

    def __init__(self, group: str = hookspecs.PROJECT):
        self.group = group
        self.manager = pluggy.PluginManager(hookspecs.PROJECT)
        self.manager.add_hookspecs(hookspecs)
        self.plugins: dict[str, dict[str, PluginInfo]] = {kind: {} for kind in KINDS}
        self.broken: list[BrokenPlugin] = []
        self._conflicts: dict[tuple[str, str], str] = {}
        entry_points = importlib.metadata.entry_points(group=group)
        for ep in sorted(entry_points,
                         key=lambda e: (_dist_name(e) != BUILTIN, _dist_name(e), e.name)):
            self._load(ep)

    # -- loading -------------------------------------------------------------------
    def _load(self, ep: importlib.metadata.EntryPoint) -> None:
        source, version = _dist_name(ep), _dist_version(ep)
        label = f"{ep.name} = {ep.value}"

        def fail(message: str) -> None:
            self.broken.append(BrokenPlugin(label, source, message))

        try:
            module = ep.load()
        except Exception as exc:  # a plugin may raise anything on import
            return fail(f"import failed: {type(exc).__name__}: {exc}{_where(exc)}")
        try:
            self.manager.register(module, name=f"{source}:{ep.name}")
        except (ValueError, pluggy.PluginValidationError) as exc:
            return fail(f"registration failed: {exc}")
        try:
            self.manager.check_pending()
        except pluggy.PluginValidationError as exc:
            self.manager.unregister(module)
            hooks = [n for n in dir(module) if n.startswith("kbench_")
                     and n not in hookspecs.HOOKS.values()]
            hint = "".join(f" '{h}'{suggest(h, hookspecs.HOOKS.values())}" for h in hooks)
            return fail(f"{exc}. Unknown hook(s):{hint}; hooks are: "
                        f"{', '.join(hookspecs.HOOKS.values())}.")

        hooks = 0
        for kind, hook_name in hookspecs.HOOKS.items():
            for impl in getattr(self.manager.hook, hook_name).get_hookimpls():
                if impl.plugin is not module:
                    continue
                hooks += 1
                try:
                    objects = list(impl.function())
                except Exception as exc:
                    fail(f"{hook_name}() raised {type(exc).__name__}: {exc}{_where(exc)}")
                    continue
                for obj in objects:
                    self._add(kind, obj, source, version, label, fail)
        if not hooks:
            fail(f"module {module.__name__!r} loads but implements no kbench hook, so it registers "
                 "nothing; decorate a function such as kbench_register_samplers with "
                 "@kbench.plugin.hookimpl")

    def _add(self, kind, obj, source, version, label, fail) -> None:
        name = getattr(obj, "name", None)
        if not isinstance(name, str) or not name:
            return fail(f"{kind} {obj!r} has no 'name' class attribute (a non-empty string).")
        reserved = sorted({c for c in name if c in RESERVED} | set(CONTROL.findall(name)))
        if reserved or name != name.strip():
            return fail(f"{kind} name {name!r} holds "
                        f"{shown(reserved[0]) if reserved else 'blank ends'}, which a spec "
                        "('name:key=value,…') cannot name; rename the plugin")
        key = (kind, name)
        if key in self._conflicts:
            self._conflicts[key] += f", '{source}' ({label})"
            return
        if name in self.plugins[kind]:
            first = self.plugins[kind][name]
            message = (
                f"{kind} {name!r} is registered by both '{first.source}' ({first.entry_point}) "
                f"and '{source}' ({label}); uninstall one of the two packages or rename its {kind}"
            )
            # a built-in stays listed; the name is ambiguous all the same
            if first.source != BUILTIN:
                del self.plugins[kind][name]
            self._conflicts[key] = message
            self.broken.append(BrokenPlugin(label, source, message))
            return
        self.plugins[kind][name] = PluginInfo(
            name, kind, obj, source, version, label, _first_line(obj)
        )

    # -- lookup --------------------------------------------------------------------
    def get(self, kind: str, name: str) -> PluginInfo:
        """The plugin ``name`` of ``kind``; a name two packages register is a PluginError
        naming both, an unknown one an UnknownPluginError naming the closest and the
        plugins that failed to load (one of them may have held it)."""
        kind = check_kind(kind)
        if (kind, name) in self._conflicts:
            raise PluginError(self._conflicts[(kind, name)] + ".")
        known = self.plugins[kind]
        if name in known:
            return known[name]
        listed = [part for part in name.split(";")
                  if part.strip() in known] if kind in ("sampler", "task") else []
        hint = (f" (a list of {kind}s is separated by ',': "
                f"{','.join(p.strip() for p in name.split(';'))})" if listed
                else suggest(name, known))
        raise UnknownPluginError(
            f"unknown {kind} {name!r}{hint}. Known {kind}s: "
            f"{', '.join(sorted(known)) or 'none'}.{self.broken_hint()}{_stale_hint(self.group)}"
        )

    def broken_hint(self) -> str:
        """' N plugin(s) failed to load: …' with each one's entry point and error, or ''."""
        if not self.broken:
            return ""
        listed = "; ".join(f"{b.entry_point} from '{b.source}': {_shorten(b.error)}"
                           for b in self.broken)
        return f" {len(self.broken)} plugin(s) failed to load (kbench list shows them): {listed}."

    def create(self, kind: str, name: str, **params) -> Any:
        """Instantiate plugin ``name`` with ``params``; unknown parameters, and values that do
        not match a parameter's declared type, are a clear error naming the parameter."""
        info = self.get(kind, name)
        signature = inspect.signature(info.obj)
        accepts_any = any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values())
        allowed = [p for p in signature.parameters if p not in ("self", "args", "kwargs")]
        unknown = [key for key in params if key not in allowed]
        if unknown and not accepts_any:
            key = unknown[0]
            ridge = (" (λ is the sweep's, not a sampler's: a ridge-dependent sampler is fitted at "
                     "the λ path's smallest, --lams / lams; "
                     "KernelApproximation(lam=...))") if kind == "sampler" and key == "lam" else \
                (" (the rank is the sweep's, not a sampler's: --ranks / ranks; Sampler.fit(X, "
                 "kernel, rank=...))"
                 if kind == "sampler" and key in ("rank", "n_components", "ranks") else "")
            raise ValueError(
                f"{kind} {name!r} has no parameter {key!r}{suggest(key, allowed)}; "
                f"its parameters are: {', '.join(allowed) or 'none'}{ridge}."
            )
        declared = {key: param.types for key, param in info.parameters.items()}
        return info.obj(**coerce_params(params, {**declared_types(info.obj), **declared},
                                        f"{kind} {name!r}"))


def _shorten(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _where(exc: BaseException) -> str:
    """' (at FILE:LINE)' of the place an exception was raised (a syntax error: its own line)."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return f" (at {exc.filename}:{exc.lineno})"
    frames = traceback.extract_tb(exc.__traceback__)
    frames = [f for f in frames if "importlib" not in f.filename] or frames
    # the plugin's own line, not the kbench code it called (a Param it declared wrongly)
    frames = [f for f in frames if not f.filename.startswith(_PACKAGE)] or frames
    return f" (at {frames[-1].filename}:{frames[-1].lineno})" if frames else ""


def _stale_hint(group: str) -> str:
    """A hint naming editable installs whose pyproject.toml declares other ``group`` entry
    points than their installed metadata: they were edited after ``pip install -e``."""
    import json
    import tomllib
    from pathlib import Path
    from urllib.parse import unquote, urlparse

    stale = []
    for dist in importlib.metadata.distributions():
        try:
            direct = json.loads(dist.read_text("direct_url.json") or "{}")
            if not direct.get("dir_info", {}).get("editable"):
                continue
            source = Path(unquote(urlparse(direct["url"]).path))
            declared = tomllib.loads((source / "pyproject.toml").read_text())
        except (OSError, ValueError, KeyError):
            continue
        wanted = declared.get("project", {}).get("entry-points", {}).get(group, {})
        installed = {ep.name: ep.value for ep in dist.entry_points if ep.group == group}
        if wanted != installed:
            stale.append(f"'{dist.metadata['Name']}' (pip install -e {source})")
    if not stale:
        return ""
    return (f" The installed metadata of {', '.join(stale)} is older than its pyproject.toml's "
            f"[project.entry-points.{group}]: reinstall it so kbench sees its plugins.")


def _dist_name(ep) -> str:
    dist = getattr(ep, "dist", None)
    return dist.metadata["Name"] if dist is not None else "unknown"


def _dist_version(ep) -> str:
    dist = getattr(ep, "dist", None)
    return dist.version if dist is not None else ""


_registry: Registry | None = None


def get_registry(refresh: bool = False) -> Registry:
    """The process-wide registry, loaded on first use (``refresh=True`` reloads it)."""
    global _registry
    if _registry is None or refresh:
        _registry = Registry()
    return _registry


def list_plugins(kind: str) -> dict[str, PluginInfo]:
    """The usable plugins of ``kind`` ('sampler', 'task', 'dataset' or 'kernel') by name."""
    return dict(sorted(get_registry().plugins[check_kind(kind)].items()))


def _make(kind: str, spec: Spec | str, params: dict) -> Any:
    """The plugin of a spec (``squeak:qbar=20``), its parameters merged with ``params``; a key
    given both ways is a ValueError naming it."""
    spec = Spec.parse(spec, kind)
    if spec.kind != kind:
        raise ValueError(f"{spec.label!r} is a {spec.kind} spec, not a {kind} spec.")
    twice = sorted(set(spec.params) & set(params))
    if twice:
        raise ValueError(f"{kind} parameter(s) {', '.join(map(repr, twice))} given both in the "
                         f"spec {spec.label!r} and as keyword arguments; give each once.")
    return get_registry().create(kind, spec.name, **spec.params, **params)


def make_sampler(spec: Spec | str, **params) -> Any:
    """Create the sampler a spec names, e.g. ``make_sampler("squeak:qbar=20")`` or
    ``make_sampler("squeak", qbar=20)`` (parameters from both are merged)."""
    return _make("sampler", spec, params)


def make_task(spec: Spec | str, **params) -> Any:
    """Create the task a spec names, e.g. ``make_task("kpca:components=1;5")`` or
    ``make_task("kpca", components=[1, 5])``."""
    return _make("task", spec, params)


def make_kernel(spec: Spec | str, **params) -> Any:
    """Create the kernel a spec names, e.g. ``make_kernel("gaussian:sigma=1.0")`` or
    ``make_kernel("gaussian", sigma=1.0)``."""
    return _make("kernel", spec, params)


def create(spec: Spec | str, kind: str | None = None) -> Any:
    """The kernel, sampler or task a spec names, with its parameters checked:
    ``create("squeak:qbar=20", "sampler")`` or ``create(Spec.parse(...))``. (A dataset spec is
    loaded by :func:`kbench.load_dataset`.)"""
    spec = _as_spec(spec, kind)
    if spec.kind == "dataset":
        raise ValueError(f"{spec.label!r} is a dataset spec: load it with kbench.load_dataset.")
    return get_registry().create(spec.kind, spec.name, **spec.params)


def canonical_label(spec: str, kind: str) -> str:
    """A sampler's or task's ``spec`` as its results are labelled: the parameters it gives at
    their defaults left out (``approximation:max_n=10,seed=0`` is ``approximation:max_n=10``),
    the rest as written, so that a run finds the cells of another that wrote a default out.
    A spec that cannot be read is returned as it is, for the checks that name its problem."""
    try:
        parsed = Spec.parse(spec, kind)
        given = create(parsed).get_params()
        default = defaults(plugin_class(parsed))
    except (ValueError, TypeError, PluginError):
        return spec
    declared = getattr(plugin_class(parsed), "parameters", {})
    kept = tuple((key, value[0] if key in declared and declared[key].many
                  and isinstance(value, tuple)
                  and len(value) == 1 else value)  # (components=2; is components=2)
                 for key, value in parsed.items if not (
                     key in default and given.get(key) == default[key]
                     and type(given.get(key)) is type(default[key])))
    return spec if kept == parsed.items else Spec(kind, parsed.name, kept).label


def plugin_class(spec: Spec | str, kind: str | None = None) -> type:
    """The registered class of a kernel, sampler or task spec."""
    spec = _as_spec(spec, kind)
    return get_registry().get(spec.kind, spec.name).obj


def package_of(spec: Spec | str, kind: str | None = None) -> tuple[str, str]:
    """The distribution (name, version) that registered a spec's plugin; for a dataset spec,
    its provider's (``sklearn:diabetes`` → the package registering ``sklearn``)."""
    spec = _as_spec(spec, kind)
    name = spec.name.split(":", 1)[0] if spec.kind == "dataset" else spec.name
    info = get_registry().get(spec.kind, name)
    return info.source, info.version


def _as_spec(spec: Spec | str, kind: str | None) -> Spec:
    if isinstance(spec, Spec):
        return spec
    if kind is None:
        raise TypeError(f"pass the plugin kind with a spec text: create({spec!r}, 'sampler'), say.")
    return Spec.parse(spec, kind)
