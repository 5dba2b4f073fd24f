"""A workflow config as a document, checked before anything walks it: its files hold no
repeated key, its size and depth are bounded (a YAML alias counts at each use, so an alias
tree of a few hundred bytes is refused in microseconds instead of expanding into millions
of values), and its structure meets the JSON schema, each failure in one line.

The values are checked afterwards by :func:`kbench.workflow.check_config`.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from functools import partial
from pathlib import Path

import jsonschema
import yaml

from kbench._validation import suggest
from kbench.errors import ConfigError
from kbench.spec import spec_of_mapping
from kbench.sweep.config import LONGEST

#: a config file larger than this is not a sweep's config (the largest shipped is 4 KB)
MAX_FILE_BYTES = 1_000_000
#: values in a config, an alias counted at each use (the largest shipped config has ~400)
MAX_VALUES = 100_000
#: nesting of a config (the deepest shipped key, tiers[0].batch, is 3 levels down)
MAX_DEPTH = 12
#: YAML's tag of an integer, and the way a config writes one
INTEGER, DECIMAL = "tag:yaml.org,2002:int", re.compile(r"[-+]?(0|[1-9][0-9]*)")
#: YAML's tag of text, and a number YAML 1.1 reads as text (1e-3, 1.5e3: no dot or no exponent sign)
TEXT, NUMBER = ("tag:yaml.org,2002:str",
                re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)[eE][-+]?[0-9]+"))
#: a number as --config's list items carry it, as text
NUMBER_TEXT = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
#: the options of snakemake's command line that set config keys
CONFIG_OPTIONS = ("--config", "-C")
#: what a config names its data by: the message of a config with both, or neither
DATA_SOURCES = ("list the datasets ('datasets') or name a catalogue and its tiers ('catalogue', "
                "'tiers'), one of the two.")
#: how much of a value a message shows
SHOWN = 120


def check_files(paths) -> None:
    """Each config file: at most :data:`MAX_FILE_BYTES`, JSON or YAML with no mapping
    repeating a key (both keep the last one silently), no YAML integer that reads otherwise
    than it looks, and no YTE template. Aliases are followed once."""
    for path in map(Path, paths):
        size = os.stat(path).st_size
        if size > MAX_FILE_BYTES:
            raise ConfigError(f"config file {path}: {size} bytes; a sweep config is at most "
                              f"{MAX_FILE_BYTES} bytes.")
        text = Path(path).read_text(encoding="utf-8")
        try:  # Snakemake reads JSON first
            json.loads(text, object_pairs_hook=partial(_once, path=path))
            continue
        except json.JSONDecodeError:
            pass
        try:
            root = yaml.compose(text, Loader=yaml.SafeLoader)
        except yaml.YAMLError as exc:
            raise ConfigError(f"config file {path}: not valid YAML: {_short(exc)}") from None
        if isinstance(root, yaml.MappingNode) and any(key.value == "__use_yte__"
                                                      for key, _ in root.value):
            raise ConfigError(f"config file {path}: __use_yte__ makes it a YTE template, whose "
                              "values Snakemake evaluates as Python; a sweep config is data: write "
                              "the values out.")
        _refuse_ambiguous(root, path)


def _refuse_ambiguous(root, path: Path) -> None:
    """A repeated key in a mapping, an integer YAML 1.1 reads otherwise than it looks (``010``
    is 8, ``1:30`` is 90, ``0x0A`` is 10), and a number it reads as text (``1e-3``)."""
    seen, stack = set(), [root]
    while stack:
        node = stack.pop()
        if (isinstance(node, yaml.ScalarNode) and node.tag == INTEGER
                and not DECIMAL.fullmatch(node.value)):
            raise ConfigError(f"config file {path}, line {node.start_mark.line + 1}: "
                              f"{node.value!r} is read by YAML as the integer "
                              f"{yaml.safe_load(node.value)}; write the number in decimal digits.")
        if (isinstance(node, yaml.ScalarNode) and node.tag == TEXT and node.style is None
                and NUMBER.fullmatch(node.value)):
            raise ConfigError(f"config file {path}, line {node.start_mark.line + 1}: {node.value} "
                              "is read by YAML 1.1 as text, not a number (it wants a dot and a "
                              "signed exponent): write 1.0e-3, not 1e-3.")
        if node is None or id(node) in seen or isinstance(node, yaml.ScalarNode):
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            keys = set()
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode) and key.value != "<<":
                    if key.value in keys:
                        raise ConfigError(f"config file {path}, line {key.start_mark.line + 1}: "
                                          f"key {key.value!r} appears twice in one mapping (YAML "
                                          "would keep the last silently); remove one.")
                    keys.add(key.value)
                stack += [key, value]
            _refuse_merge_overlap(node, keys, path)
        else:
            stack += node.value


def _refuse_merge_overlap(node, keys: set, path: Path) -> None:
    """A key both given and merged (``<<: *defaults``), or merged from two mappings: YAML
    keeps one of them silently."""
    merged = []
    for key, value in node.value:
        if isinstance(key, yaml.ScalarNode) and key.value == "<<":
            sources = value.value if isinstance(value, yaml.SequenceNode) else [value]
            merged += [item.value for source in sources if isinstance(source, yaml.MappingNode)
                       for item, _ in source.value if isinstance(item, yaml.ScalarNode)]
    twice = sorted(name for name, count in Counter(merged).items() if count > 1 or name in keys)
    if twice:
        raise ConfigError(f"config file {path}, line {node.start_mark.line + 1}: key {twice[0]!r} "
                          "is given by a merge key (<<) and again in the same mapping (YAML would "
                          "keep one silently); give it once.")


def _once(pairs: list, path: Path) -> dict:
    """A JSON object whose keys are each given once."""
    repeated = sorted(key for key, count in Counter(key for key, _ in pairs).items() if count > 1)
    if repeated:
        raise ConfigError(f"config file {path}: key {repeated[0]!r} appears twice in one object "
                          "(JSON would keep the last silently); remove one.")
    return dict(pairs)


def check_shape(config) -> None:
    """At most :data:`MAX_VALUES` values (an alias counted at each use) nested at most
    :data:`MAX_DEPTH` deep: counted without recursion and stopped at the bound, so neither
    an alias tree nor deep nesting costs more than the bound. Lists of specs are at most
    as long as :data:`kbench.sweep.config.LONGEST` says."""
    for key, most in LONGEST.items():
        if isinstance(config, dict) and isinstance(config.get(key),
                                                   list) and len(config[key]) > most:
            raise ConfigError(f"config key '{key}': {len(config[key])} entries; a sweep takes at "
                              f"most {most}.")
    count, stack = 0, [(config, 0, "")]
    while stack:
        value, depth, key = stack.pop()
        count += 1
        if count > MAX_VALUES:
            raise ConfigError(f"config key '{_top(key)}': the config holds more than {MAX_VALUES} "
                              "values (a YAML alias counts at each use); a sweep config holds a "
                              "few hundred.")
        if depth > MAX_DEPTH:
            raise ConfigError(f"config key '{key}': nested more than {MAX_DEPTH} levels deep; no "
                              "config key takes that.")
        if isinstance(value, dict):
            stack += [(item, depth + 1, f"{key}.{name}" if key else str(name))
                      for name, item in value.items()]
        elif isinstance(value, list):
            stack += [(item, depth + 1, f"{key}[{index}]") for index, item in enumerate(value)]


def check_schema(config, schema: Path) -> None:
    """``config`` against the JSON schema: its most relevant error in one line, naming the
    key, with the offending value shortened."""
    validator = jsonschema.Draft202012Validator(yaml.safe_load(Path(schema).read_text()))
    error = jsonschema.exceptions.best_match(validator.iter_errors(config))
    if error is not None:
        key = "".join(f"[{p}]" if isinstance(p, int) else f".{p}"
                      for p in error.absolute_path).lstrip(".")
        message = _short(error.message)
        # the whole config echoed: say what is wrong instead
        if error.validator == "oneOf" and not key:
            message = DATA_SOURCES
        elif error.validator == "oneOf" and "description" in error.schema:
            message = f"{_short(repr(error.instance))} is not {error.schema['description']}."
            if not isinstance(error.instance, list) and any(
                    b.get("type") == "array" for b in error.schema["oneOf"]):
                message += (" It takes a list in brackets, which snakemake --config cannot set: "
                            "use --configfile.")
        if error.validator == "type":
            message += _yaml_hint(error.instance, error.validator_value, key)
        # every missing key at once
        if error.validator == "required" and isinstance(error.instance, dict):
            missing = [name for name in error.validator_value if name not in error.instance]
            if len(missing) > 1:
                names = [repr(name) for name in missing]
                message = f"{', '.join(names[:-1])} and {names[-1]} are required properties"
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            unknown = [name for name in error.instance
                       if name not in error.schema.get("properties", {})]
            message += "".join(suggest(str(name), error.schema.get("properties", {}))
                               for name in unknown[:1])
        raise ConfigError(f"config{f' key {key!r}' if key else ''}: {message}")


def check_overrides(argv) -> None:
    """The ``KEY=VALUE`` entries of ``snakemake --config`` on the command line ``argv``, as
    typed: Snakemake reads a value by Python's ``int`` first, which takes ``010`` as 10 and
    ``1_0`` as 10, so these are refused as the config file's ``010`` and ``1_0`` are."""
    taking = False
    for arg in argv[1:]:
        if arg in CONFIG_OPTIONS or arg.startswith("--config="):
            taking, arg = True, arg.partition("=")[2]
        elif arg.startswith("-"):
            taking = False
        if not taking or "=" not in arg:
            continue
        key, value = arg.split("=", 1)
        try:
            number = int(value)
        except ValueError:
            number = None
        if (number is not None and not DECIMAL.fullmatch(value)
                or "_" in value and NUMBER_TEXT.fullmatch(value.replace("_", ""))):
            raise ConfigError(f"snakemake --config {key}={value}: Snakemake reads {value!r} as the "
                              f"number {number if number is not None else float(value)}; write it "
                              "in decimal digits.")


def check_document(config, schema: Path, files=(), argv=()) -> None:
    """The config's files and ``--config`` values as typed, then its shape, then its schema
    (module docstring)."""
    check_files(files)
    check_overrides(argv)
    check_shape(config)
    check_schema(config, schema)


def _yaml_hint(value, wanted, key: str) -> str:
    """What a value of the wrong type likely was as written: YAML reads ``~`` as null and
    ``on``/``yes`` as true; Snakemake's ``--config key=[5,10]`` passes list items as text;
    ``lams: [auto]`` for ``lams: auto``; a list of kernels, which ``dataset_kernels`` takes."""
    wanted = set([wanted] if isinstance(wanted, str) else wanted)
    if key.startswith("lams[") and value == "auto":
        return " (λ chosen on validation data is written lams: auto, not in a list)"
    if key == "kernel" and isinstance(value, list):
        return (" (one kernel for every dataset; several kernels, each swept, go in "
                "dataset_kernels: {<dataset>: [gaussian, laplacian]})")
    kind = {"samplers": "sampler", "tasks": "task", "datasets": "dataset"}.get(_top(key), "kernel")
    if isinstance(value, dict) and "string" in wanted and (spec := spec_of_mapping(value, kind)):
        return f" (a {kind} is one string: write {spec!r})"
    if value is None and "string" in wanted:
        return " (YAML reads ~ and an empty value as null: quote the text, e.g. \"~/results\")"
    if isinstance(value, bool) and "string" in wanted:
        return " (YAML reads on, off, yes and no as true or false: quote the text, e.g. \"on\")"
    if isinstance(value, str) and wanted & {"number",
                                            "integer"} and NUMBER_TEXT.fullmatch(value.strip()):
        if "[" not in key:  # a quoted scalar
            return f" (a quoted number is text: write it unquoted, {_top(key)}: {value.strip()})"
        return (" (a quoted number is text: write it unquoted in the config file; snakemake "
                "--config passes a list's items as text, so set a list in a config file, given "
                "with --configfile)")
    words = ("true", "false", "yes", "no")
    if isinstance(value, str) and "boolean" in wanted and value.strip().lower() in words:
        flag, name = value.strip().lower() in ("true", "yes"), _top(key)
        return (f" (write {name}: {str(flag).lower()} in a config file, or snakemake --config "
                f"{name}={flag})")
    if "array" in wanted and not isinstance(value, list | dict):
        return (f" (a list: write {key}: [{value}] in a config file, given with --configfile; "
                "snakemake --config cannot set a list)")
    return ""


def _top(key: str) -> str:
    """The top-level key of a path (``x`` of ``x[3].y``)."""
    return key.split(".")[0].split("[")[0]


def _short(text) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= SHOWN else f"{text[:SHOWN]}… ({len(text)} characters)"
