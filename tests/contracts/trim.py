#!/usr/bin/env python3
"""Trim a vendor's OpenAPI document down to the operations tributary calls.

The result keeps the requested operations and everything they reference,
transitively (`$ref` closure over components: schemas, parameters,
responses, requestBodies, headers, examples, links, callbacks, pathItems,
securitySchemes; for Swagger 2.0 documents `definitions`, `parameters`,
`responses` and `securityDefinitions`), together with the document's
`openapi`/`swagger`, `info`, `servers` (or `host`, `basePath`, `schemes`),
`consumes`/`produces`, top-level `security`, `externalDocs`, the `tags` the
kept operations use and the document's top-level `x-` extensions. It is
written as JSON with sorted keys and a final newline, so the same input
always gives the same bytes.

Standard library and PyYAML only.

Usage
-----

One document, operations on the command line (METHOD PATH pairs, the path
spelled as the vendor's document spells its template)::

    python3 tests/contracts/trim.py trim DOC GET /v1/invoices GET /v1/customers -o out.json

Every platform of ``operations.json`` (the vendor documents read from the
local mirror at the recorded commit, or from a directory of checkouts)::

    python3 tests/contracts/trim.py regenerate
    python3 tests/contracts/trim.py regenerate --sources ~/vendor-checkouts
    python3 tests/contracts/trim.py regenerate --check      # compare, write nothing

A requested operation the document does not hold is an error (exit 2), as
is a `$ref` that points nowhere (unless ``operations.json`` gives the
document a ``stand_ins`` entry for it: a schema put in its place, marked
``x-tributary-stand-in`` with the reason), a security scheme that is not
defined, or a source whose content is not the one ``operations.json``
records.

YAML is read with the YAML 1.2 core schema's rules, not PyYAML's YAML 1.1
defaults, so that what a JSON reader of the same document would see comes
out: only ``true``/``false`` are booleans (``yes``, ``no``, ``on``, ``off``,
``NO`` stay strings), dates and times stay strings, and only ``0``, ``[1-9]
[0-9]*``, ``0o…`` and ``0x…`` are integers (``0410999888`` stays a string,
so an example phone number keeps its leading zero). Mapping keys are made
strings (``200:`` becomes ``"200"``).
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import os
import re
import subprocess
import sys
from typing import Any, Iterable

import yaml

HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")

# Top-level keys kept as they are, by kind of document.
KEEP_TOP = {
    "openapi3": ("openapi", "info", "jsonSchemaDialect", "servers", "security", "externalDocs"),
    "swagger2": (
        "swagger",
        "info",
        "host",
        "basePath",
        "schemes",
        "consumes",
        "produces",
        "security",
        "externalDocs",
    ),
}

# Where a `$ref` may point: the unit copied is the named entry.
SWAGGER_SECTIONS = ("definitions", "parameters", "responses", "securityDefinitions")

# Keys under which every key is a name, not an OpenAPI/JSON Schema keyword.
NAME_MAPS = {
    "properties",
    "patternProperties",
    "definitions",
    "$defs",
    "schemas",
    "parameters",
    "responses",
    "requestBodies",
    "headers",
    "securitySchemes",
    "securityDefinitions",
    "content",
    "encoding",
    "variables",
    "mapping",
    "paths",
    "callbacks",
    "links",
    "scopes",
    "dependentSchemas",
    "pathItems",
    "webhooks",
}
# Values that are data, not OpenAPI: nothing under them is touched.
DATA_KEYS = {"example", "examples", "default", "enum", "const", "x-examples"}


class TrimError(Exception):
    """A loud failure: the trimmed document would not be what was asked for."""


# --------------------------------------------------------------------------
# Reading


class _Yaml12Loader(yaml.SafeLoader):
    """PyYAML's safe loader with YAML 1.2 core-schema scalars (see module doc)."""


_CLibLoader = getattr(yaml, "CSafeLoader", None)
if _CLibLoader is not None:

    class _FastYaml12Loader(_CLibLoader):  # type: ignore[misc, valid-type]
        """The same, on libyaml's parser."""

    _LOADERS = (_FastYaml12Loader, _Yaml12Loader)
else:
    _LOADERS = (_Yaml12Loader,)

_REPLACED = {
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:timestamp",
}


def _yaml12_int(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    text = loader.construct_scalar(node)
    if re.fullmatch(r"[-+]?(0|[1-9][0-9]*)", text):
        return int(text, 10)
    if text.startswith("0o"):
        return int(text[2:], 8)
    if text.startswith("0x"):
        return int(text[2:], 16)
    return text


def _yaml12_float(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    text = loader.construct_scalar(node)
    lowered = text.lower()
    if lowered in (".inf", "+.inf"):
        return float("inf")
    if lowered == "-.inf":
        return float("-inf")
    if lowered == ".nan":
        return float("nan")
    return float(text)


for _loader in _LOADERS:
    _loader.yaml_implicit_resolvers = {
        first: [entry for entry in entries if entry[0] not in _REPLACED]
        for first, entries in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    _loader.add_implicit_resolver(
        "tag:yaml.org,2002:bool",
        re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
        list("tTfF"),
    )
    _loader.add_implicit_resolver(
        "tag:yaml.org,2002:int",
        re.compile(r"^(?:[-+]?(?:0|[1-9][0-9]*)|0o[0-7]+|0x[0-9a-fA-F]+)$"),
        list("-+0123456789"),
    )
    _loader.add_implicit_resolver(
        "tag:yaml.org,2002:float",
        re.compile(
            r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
            r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
        ),
        list("-+0123456789."),
    )
    _loader.add_constructor("tag:yaml.org,2002:int", _yaml12_int)
    _loader.add_constructor("tag:yaml.org,2002:float", _yaml12_float)
    # An explicit !!timestamp stays the text it was written as.
    _loader.add_constructor(
        "tag:yaml.org,2002:timestamp", lambda loader, node: loader.construct_scalar(node)
    )


def _string_keys(value: Any) -> Any:
    """Every mapping key as a string, as JSON has them."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if isinstance(key, bool):
                key = "true" if key else "false"
            elif key is None:
                key = "null"
            elif not isinstance(key, str):
                key = str(key)
            out[key] = _string_keys(item)
        return out
    if isinstance(value, list):
        return [_string_keys(item) for item in value]
    return value


def parse_document(data: bytes, name: str = "<document>") -> dict:
    """A vendor document from its bytes, JSON or YAML."""
    text = data.decode("utf-8-sig")
    if text.lstrip().startswith("{"):
        try:
            document = json.loads(text)
        except json.JSONDecodeError:
            document = None
        if isinstance(document, dict):
            return document
    try:
        document = yaml.load(text, Loader=_LOADERS[0])  # noqa: S506 - a safe loader
    except yaml.YAMLError as error:
        raise TrimError(f"{name}: neither JSON nor YAML: {error}") from error
    if not isinstance(document, dict):
        raise TrimError(f"{name}: not an OpenAPI document (no mapping at the top)")
    return _string_keys(document)


def git_blob_id(data: bytes) -> str:
    """The id git gives `data` as a blob (`git hash-object`)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


# --------------------------------------------------------------------------
# Trimming


def document_kind(document: dict) -> str:
    if str(document.get("openapi", "")).startswith("3"):
        return "openapi3"
    if str(document.get("swagger", "")) == "2.0":
        return "swagger2"
    raise TrimError("neither an OpenAPI 3 (`openapi: 3.x`) nor a Swagger 2.0 document")


def _pointer_parts(ref: str) -> list[str]:
    from urllib.parse import unquote

    pointer = unquote(ref[1:])
    if pointer in ("", "/"):
        return []
    if not pointer.startswith("/"):
        raise TrimError(f"unsupported $ref {ref!r} (not a JSON pointer)")
    return [part.replace("~1", "/").replace("~0", "~") for part in pointer[1:].split("/")]


def _resolve(document: Any, parts: list[str], ref: str) -> Any:
    node = document
    for part in parts:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise TrimError(f"$ref {ref!r} points nowhere in the vendor document")
    return node


def _near(path: str, method: str, paths: dict) -> list[str]:
    """Operations of the document that look like the one asked for."""

    def shape(text: str) -> str:
        return re.sub(r"\{[^}]*\}", "{}", text).rstrip("/").lower()

    wanted = shape(path)
    found = []
    for candidate, item in paths.items():
        if not isinstance(item, dict) or shape(candidate) != wanted:
            continue
        methods = [m.upper() for m in HTTP_METHODS if m in item]
        found.append(f"{' '.join(methods) or '(no operations)'} {candidate}")
    return found


def _drop_descriptions(node: Any, names: bool = False) -> Any:
    """`node` without `description` keywords (property names kept, data untouched)."""
    if isinstance(node, list):
        return [_drop_descriptions(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if names:
            out[key] = _drop_descriptions(value)
        elif key == "description" and isinstance(value, str):
            continue
        elif key in DATA_KEYS or key.startswith("x-"):
            out[key] = value
        else:
            out[key] = _drop_descriptions(value, names=key in NAME_MAPS and isinstance(value, dict))
    return out


def trim(
    document: dict,
    operations: Iterable[tuple[str, str]],
    drop_descriptions: bool = False,
    provenance: dict | None = None,
    stand_ins: dict[str, dict] | None = None,
) -> tuple[dict, list[str]]:
    """The trimmed document and the external `$ref`s it keeps unresolved.

    `stand_ins` maps a local `$ref` the vendor's document references but
    never defines to the schema put in its place (with its `why`); a
    stand-in for a `$ref` the document does define, or one no kept
    operation reaches, is an error, so a stand-in goes once the vendor
    fixes its document.
    """
    kind = document_kind(document)
    stand_ins = dict(stand_ins or {})
    stood_in: list[str] = []
    paths = document.get("paths") or {}
    out_paths: dict[str, dict] = {}
    missing = []
    wanted = []
    for method, path in operations:
        method_key = method.lower()
        if method_key not in HTTP_METHODS:
            raise TrimError(f"{method!r} is not an HTTP method")
        wanted.append(f"{method.upper()} {path}")
        item = paths.get(path)
        if isinstance(item, dict) and "$ref" in item:
            raise TrimError(f"path item {path!r} is a $ref; not supported")
        if not isinstance(item, dict) or not isinstance(item.get(method_key), dict):
            near = _near(path, method_key, paths)
            hint = f" (the document has: {'; '.join(near)})" if near else ""
            missing.append(f"{method.upper()} {path}{hint}")
            continue
        kept = out_paths.setdefault(
            path, {key: value for key, value in item.items() if key not in HTTP_METHODS}
        )
        kept[method_key] = item[method_key]
    if missing:
        raise TrimError(
            "the vendor document does not hold: " + "; ".join(missing)
        )

    out: dict[str, Any] = {key: document[key] for key in KEEP_TOP[kind] if key in document}
    out.update({key: value for key, value in document.items() if key.startswith("x-")})
    out["paths"] = out_paths

    included: set[tuple[str, ...]] = set()
    external: set[str] = set()
    pending: list[Any] = [out_paths, out.get("security")]

    def unit_of(parts: list[str], ref: str) -> tuple[str, ...]:
        if kind == "openapi3" and len(parts) >= 3 and parts[0] == "components":
            return tuple(parts[:3])
        if kind == "swagger2" and len(parts) >= 2 and parts[0] in SWAGGER_SECTIONS:
            return tuple(parts[:2])
        if parts and parts[0] == "paths" and len(parts) >= 2 and parts[1] in out_paths:
            return ()  # inside an operation already kept
        raise TrimError(f"$ref {ref!r} points outside the reusable components; not supported")

    def take(ref: str) -> None:
        if not ref.startswith("#"):
            external.add(ref)
            return
        parts = _pointer_parts(ref)
        if ref in stand_ins:
            try:
                _resolve(document, parts, ref)
            except TrimError:
                pass
            else:
                raise TrimError(f"{ref!r} has a stand-in, but the document now defines it: drop the stand-in")
            unit = unit_of(parts, ref)
            if unit != tuple(parts):
                raise TrimError(f"stand-in {ref!r} must name a whole component")
            if unit in included:
                return
            included.add(unit)
            stand_in = stand_ins[ref]
            value = dict(stand_in["schema"])
            value["x-tributary-stand-in"] = stand_in["why"]
            place = out
            for part in unit[:-1]:
                place = place.setdefault(part, {})
            place[unit[-1]] = value
            stood_in.append(ref)
            return
        _resolve(document, parts, ref)  # the whole pointer must resolve
        unit = unit_of(parts, ref)
        if not unit or unit in included:
            return
        included.add(unit)
        value = _resolve(document, list(unit), ref)
        place = out
        for part in unit[:-1]:
            place = place.setdefault(part, {})
        place[unit[-1]] = value
        pending.append(value)

    def scheme(name: str) -> None:
        section = ("components", "securitySchemes") if kind == "openapi3" else ("securityDefinitions",)
        pointer = "#/" + "/".join(section + (name.replace("~", "~0").replace("/", "~1"),))
        try:
            take(pointer)
        except TrimError as error:
            raise TrimError(f"security scheme {name!r} is not defined in the document") from error

    def security_names(requirements: Any) -> list[str]:
        names = []
        for requirement in requirements or []:
            if isinstance(requirement, dict):
                names.extend(requirement.keys())
        return names

    for name in security_names(out.get("security")):
        scheme(name)
    used_tags = set()
    for item in out_paths.values():
        for method_key in HTTP_METHODS:
            operation = item.get(method_key)
            if not isinstance(operation, dict):
                continue
            for name in security_names(operation.get("security")):
                scheme(name)
            used_tags.update(tag for tag in operation.get("tags") or [] if isinstance(tag, str))

    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                take(ref)
            discriminator = node.get("discriminator")
            if isinstance(discriminator, dict) and isinstance(discriminator.get("mapping"), dict):
                for target in discriminator["mapping"].values():
                    if isinstance(target, str):
                        take(target if "#" in target or "/" in target else
                             ("#/components/schemas/" if kind == "openapi3" else "#/definitions/") + target)
            for key, value in node.items():
                if key != "$ref":
                    pending.append(value)
        elif isinstance(node, list):
            pending.extend(node)

    tags = [
        tag for tag in document.get("tags") or []
        if isinstance(tag, dict) and tag.get("name") in used_tags
    ]
    if tags:
        out["tags"] = tags

    unused = sorted(set(stand_ins) - set(stood_in))
    if unused:
        raise TrimError(f"stand-in(s) no kept operation reaches: {', '.join(unused)}")

    out = copy.deepcopy(out)
    if drop_descriptions:
        out = _drop_descriptions(out)
    _check_closed(out)
    trim_record: dict[str, Any] = {"operations": wanted, "dropDescriptions": drop_descriptions}
    if provenance:
        trim_record.update(provenance)
    if external:
        trim_record["unresolvedExternalRefs"] = sorted(external)
    if stood_in:
        trim_record["standIns"] = sorted(stood_in)
    out["x-tributary-trim"] = trim_record
    return out, sorted(external)


def _check_closed(out: dict) -> None:
    """Every local `$ref` of the trimmed document resolves inside it."""
    pending: list[Any] = [out]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#"):
                try:
                    _resolve(out, _pointer_parts(ref), ref)
                except TrimError as error:
                    raise TrimError(f"internal error: the trimmed document lost {ref!r}") from error
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)


def dump(document: dict) -> bytes:
    """Stable JSON: sorted keys, two-space indent, final newline."""
    try:
        text = json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)
    except ValueError as error:
        raise TrimError(f"the trimmed document is not plain JSON: {error}") from error
    return (text + "\n").encode("utf-8")


# --------------------------------------------------------------------------
# Sources


def read_source(entry: dict, sources: str | None, mirror: str) -> tuple[bytes, str]:
    """The vendor document of an `operations.json` entry, and where it was read."""
    repository = entry["repository"]
    owner, name = repository.split("/", 1)
    path = entry["path"]
    if sources:
        candidates = [
            os.path.join(sources, f"{owner}+{name}", path),
            os.path.join(sources, owner, name, path),
            os.path.join(sources, name, path),
        ]
        for candidate in candidates:
            if os.path.isfile(candidate):
                with open(candidate, "rb") as handle:
                    return handle.read(), candidate
        raise TrimError(
            f"{repository}:{path} not found under {sources} (looked at {', '.join(candidates)})"
        )
    git_dir = os.path.join(mirror, f"{owner}+{name}", "repo")
    if not os.path.isdir(git_dir):
        raise TrimError(f"no mirror of {repository} at {git_dir} (pass --sources DIR)")
    spec = f"{entry['commit']}:{path}"
    result = subprocess.run(
        ["git", f"--git-dir={git_dir}", "cat-file", "blob", spec],
        capture_output=True,
        check=False,
    )
    if result.returncode != 0:
        raise TrimError(
            f"{repository}: cannot read {spec} from {git_dir}: "
            + result.stderr.decode("utf-8", "replace").strip()
        )
    return result.stdout, f"{git_dir} {spec}"


def regenerate(args: argparse.Namespace) -> int:
    with open(args.operations, encoding="utf-8") as handle:
        catalogue = json.load(handle)
    out_dir = args.out_dir or os.path.dirname(os.path.abspath(args.operations))
    platforms = catalogue["platforms"]
    chosen = args.platform or list(platforms)
    unknown = [name for name in chosen if name not in platforms]
    if unknown:
        raise TrimError(f"not in {args.operations}: {', '.join(unknown)}")
    differing = []
    for platform in chosen:
        for entry in platforms[platform]["documents"]:
            data, where = read_source(entry, args.sources, args.mirror)
            blob = git_blob_id(data)
            if entry.get("blob") and blob != entry["blob"]:
                raise TrimError(
                    f"{platform}: {where} is blob {blob}, but operations.json records "
                    f"{entry['blob']} ({entry['repository']} {entry['path']} at {entry['commit']}); "
                    "review the vendor's changes, then record the new commit and blob"
                )
            document = parse_document(data, where)
            for absent in platforms[platform].get("not_in_vendor_documents") or []:
                probe = absent.get("probe") or {}
                if probe.get("output") != entry["output"]:
                    continue
                item = (document.get("paths") or {}).get(probe["path"])
                if isinstance(item, dict) and probe["method"].lower() in item:
                    print(
                        f"warning: {platform}: {probe['method']} {probe['path']} is now in "
                        f"{entry['repository']} {entry['path']}; move it from "
                        "not_in_vendor_documents to the document's operations",
                        file=sys.stderr,
                    )
            operations = [(op["method"], op["path"]) for op in entry["operations"]]
            provenance = {
                "repository": entry["repository"],
                "path": entry["path"],
                "commit": entry["commit"],
                "blob": blob,
            }
            if entry.get("notice"):
                # The licence and attribution the excerpt carries with it.
                provenance["notice"] = entry["notice"]
            try:
                trimmed, external = trim(
                    document,
                    operations,
                    drop_descriptions=bool(entry.get("drop_descriptions")),
                    provenance=provenance,
                    stand_ins={
                        stand_in["ref"]: stand_in for stand_in in entry.get("stand_ins") or []
                    },
                )
            except TrimError as error:
                raise TrimError(f"{platform} ({entry['repository']} {entry['path']}): {error}") from error
            output = dump(trimmed)
            target = os.path.join(out_dir, entry["output"])
            note = f" ({len(external)} external $ref(s) left as they are)" if external else ""
            if args.check:
                try:
                    with open(target, "rb") as handle:
                        same = handle.read() == output
                except FileNotFoundError:
                    same = False
                if not same:
                    differing.append(target)
                print(f"{'same' if same else 'DIFFERS'}: {target}{note}")
            else:
                with open(target, "wb") as handle:
                    handle.write(output)
                print(
                    f"{target}: {len(operations)} operation(s), {len(data)} -> {len(output)} bytes{note}"
                )
    if differing:
        print(f"{len(differing)} file(s) differ from what operations.json gives", file=sys.stderr)
        return 1
    return 0


def trim_one(args: argparse.Namespace) -> int:
    if len(args.pairs) % 2:
        raise TrimError("operations come in METHOD PATH pairs")
    operations = list(zip(args.pairs[0::2], args.pairs[1::2]))
    if not operations:
        raise TrimError("name at least one operation (METHOD PATH)")
    with open(args.document, "rb") as handle:
        data = handle.read()
    document = parse_document(data, args.document)
    trimmed, external = trim(document, operations, drop_descriptions=args.drop_descriptions)
    output = dump(trimmed)
    if args.output in (None, "-"):
        sys.stdout.buffer.write(output)
    else:
        with open(args.output, "wb") as handle:
            handle.write(output)
    for ref in external:
        print(f"note: external $ref left as it is: {ref}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)

    one = commands.add_parser("trim", help="trim one document to the operations named")
    one.add_argument("document", help="the vendor's OpenAPI document (JSON or YAML)")
    one.add_argument("pairs", nargs="*", metavar="METHOD PATH", help="operations to keep")
    one.add_argument("-o", "--output", help="where to write (default: standard output)")
    one.add_argument(
        "--drop-descriptions",
        action="store_true",
        help="leave out `description` texts (not property names, not example data)",
    )
    one.set_defaults(run=trim_one)

    every = commands.add_parser("regenerate", help="every platform of operations.json")
    every.add_argument(
        "--operations", default=os.path.join(here, "operations.json"), help="the catalogue"
    )
    every.add_argument("--out-dir", help="where the trimmed documents go (default: beside it)")
    every.add_argument(
        "--sources",
        help="a directory of vendor checkouts (<owner>+<name>/, <owner>/<name>/ or <name>/ "
        "holding each document's path) instead of the git mirror",
    )
    every.add_argument(
        "--mirror",
        default=os.environ.get("TRIBUTARY_VENDOR_MIRROR", "/work/.mirror"),
        help="root of the bare mirrors (<owner>+<name>/repo), read at the recorded commit "
        "(default: $TRIBUTARY_VENDOR_MIRROR or /work/.mirror)",
    )
    every.add_argument("--platform", action="append", help="only this platform (repeatable)")
    every.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if a file would change"
    )
    every.set_defaults(run=regenerate)

    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except TrimError as error:
        print(f"trim.py: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
