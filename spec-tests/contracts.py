#!/usr/bin/env python3
"""Every request tributary's connectors sent to a fake platform, held to the
vendor's own OpenAPI document (issue 32).

The API tests' fakes write what they received when `TRIBUTARY_PLATFORM_CALLS`
is set (`tests/api/platforms/fake.rs`): one JSON file per fake, under a folder
per platform key. For the eight platforms whose vendors publish an OpenAPI
document (`tests/contracts/operations.json`), each recorded request is

1. put back on the real URL: the fake's API paths are the real ones relative
   to the connector's real API base, and the fake's `POST /token` stands for
   the platform's real token endpoint (`real_urls` in operations.json);
2. matched to an operation of one of the platform's trimmed documents
   (`tests/contracts/*.json`; Amazon's two Swagger 2.0 models converted to
   OpenAPI 3.0 at run time by swagger2openapi), and validated by openapi-core:
   path, method, path/query/header parameters, security requirements and the
   request body. Nothing here checks a parameter or a body by hand.

A request no document has, or that the validator refuses, fails the run
unless `tests/contracts/allowed.json` (reviewed like code) forgives exactly
that: a call no vendor document covers, a path the document spells otherwise,
or one named error of the vendor's document. So that the check cannot pass
vacuously, the run also fails when one of the eight platforms has no recorded
request, when an operation of operations.json was exercised by none, when an
allow-list entry forgave nothing, and when one of the mutated copies of real
requests in SELF_CHECK below (a required header, parameter or credential
removed, a bound overstepped) is accepted.

openapi-core treats the `oauth2` and `openIdConnect` security schemes as
unsupported: it warns and lets the requirement pass. Here a provider
registered for both through openapi-core's own extension point
(`SecurityProviderFactory.PROVIDERS`) requires what RFC 6750 section 2.1 says
such a token is sent as, an `Authorization: Bearer <token>` header; scopes
cannot be seen in a request and are not checked.

The documents' own spec validation is off when they are loaded (Xero quotes
boolean defaults, Square has `externalDocs` inside `info`: both fail
openapi-spec-validator); request validation is not.

Usage: contracts.py --calls DIR [--swagger2openapi PATH] [--work DIR]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import re
import subprocess
import sys
import warnings
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, ClassVar
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

from openapi_core import Config, OpenAPI
from openapi_core.casting.schemas import oas31_types_caster
from openapi_core.casting.schemas.casters import SchemaCaster
from openapi_core.casting.schemas.exceptions import CastError
from openapi_core.casting.schemas.factories import SchemaCastersFactory
from openapi_core.contrib.werkzeug import WerkzeugOpenAPIRequest
from openapi_core.deserializing.styles import style_deserializers
from openapi_core.deserializing.styles.deserializers import StyleDeserializer
from openapi_core.deserializing.styles.factories import StyleDeserializersFactory
from openapi_core.security.exceptions import SecurityProviderError
from openapi_core.security.factories import SecurityProviderFactory
from openapi_core.security.providers import BaseProvider
from openapi_core.templating.paths.exceptions import PathError
from openapi_core.validation.schemas import oas31_schema_validators_factory
from werkzeug.test import EnvironBuilder

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONTRACTS = os.path.join(ROOT, "tests", "contracts")

# Mutated copies of real recorded requests that the validator must refuse.
# Each takes the first recorded request of `platform` whose method is `method`
# and whose (fake) path matches `path`, which must itself pass (errors the
# allow-list forgives aside); applies `change`; and requires an error, not
# forgiven, matching `refused`.
SELF_CHECK = [
    {
        "platform": "plaid",
        "method": "POST",
        "path": r"/accounts/get",
        "change": {"drop_header": "Plaid-Version"},
        "refused": r"[Ss]ecurity",
        "why": "Plaid's security requirement is PLAID-CLIENT-ID + PLAID-SECRET + Plaid-Version",
    },
    {
        "platform": "plaid",
        "method": "POST",
        "path": r"/transactions/sync",
        "change": {"set_json": {"count": 501}},
        "refused": r"count|501|maximum",
        "why": "TransactionsSyncRequest.count is 1 to 500",
    },
    {
        "platform": "xero",
        "method": "GET",
        "path": r"/api\.xro/2\.0/Invoices",
        "change": {"drop_header": "xero-tenant-id"},
        "refused": r"xero-tenant-id",
        "why": "the requiredHeader parameter (xero-tenant-id) is required",
    },
    {
        "platform": "xero",
        "method": "GET",
        "path": r"/api\.xro/2\.0/Contacts",
        "change": {"drop_header": "Authorization"},
        "refused": r"[Ss]ecurity",
        "why": "OAuth2 is required: a bearer token (the provider registered for oauth2)",
    },
    {
        "platform": "stripe",
        "method": "GET",
        "path": r"/v1/invoices",
        "change": {"drop_header": "Authorization"},
        "refused": r"[Ss]ecurity",
        "why": "basicAuth or bearerAuth",
    },
    {
        "platform": "stripe",
        "method": "GET",
        "path": r"/v1/customers",
        "change": {"set_query": {"limit": "ten"}},
        "refused": r"limit",
        "why": "limit is an integer (its 1-100 is prose only, not in the schema)",
    },
    {
        "platform": "square",
        "method": "GET",
        "path": r"/v2/invoices",
        "change": {"drop_query": "location_id"},
        "refused": r"location_id",
        "why": "ListInvoices requires location_id",
    },
    {
        "platform": "square",
        "method": "POST",
        "path": r"/token",
        "change": {"set_json": {"grant_type": 42}},
        "refused": r"grant_type|42|type",
        "why": "ObtainTokenRequest.grant_type is a string",
    },
    # Not here: getOrderProducts without its "required" Content-Type header.
    # OpenAPI ignores a header parameter named Accept, Content-Type or
    # Authorization (3.0.3, Parameter Object, `name`: "the parameter definition
    # SHALL be ignored"), and this one has `default: application/json`, which
    # openapi-core takes for an absent value; so no conforming validator
    # refuses the call without it.
    {
        "platform": "bigcommerce",
        "method": "GET",
        "path": r"/stores/[^/]+/v2/orders/[^/]+/products",
        "change": {"set_query": {"limit": "all"}},
        "refused": r"limit",
        "why": "limit is a number",
    },
    {
        "platform": "bigcommerce",
        "method": "GET",
        "path": r"/stores/[^/]+/v3/customers",
        "change": {"drop_header": "X-Auth-Token"},
        "refused": r"[Ss]ecurity",
        "why": "the X-Auth-Token api key is required",
    },
    {
        "platform": "paypal",
        "method": "GET",
        "path": r"/v2/invoicing/invoices",
        "change": {"set_query": {"page": "1001"}},
        "refused": r"page",
        "why": "page is 1 to 1000",
    },
    {
        "platform": "amazon-seller-central",
        "method": "GET",
        "path": r"/orders/v0/orders",
        "change": {"drop_query": "MarketplaceIds"},
        "refused": r"MarketplaceIds",
        "why": "getOrders requires MarketplaceIds",
    },
    {
        "platform": "mollie",
        "method": "GET",
        "path": r"/v2/customers",
        "change": {"set_query": {"limit": "251"}},
        "refused": r"limit",
        "why": "list-limit is 1 to 250",
    },
    {
        "platform": "mollie",
        "method": "GET",
        "path": r"/v2/organizations/me",
        "change": {"drop_header": "Authorization"},
        "refused": r"[Ss]ecurity",
        "why": "advancedAccessToken (bearer) or oAuth",
    },
]


class BearerTokenProvider(BaseProvider):
    """`oauth2` and `openIdConnect`: the access token as RFC 6750 sends it."""

    def __call__(self, parameters: Any) -> Any:
        value = parameters.header.get("Authorization")
        if not value:
            raise SecurityProviderError("Missing authorization header (an OAuth 2.0 bearer token).")
        scheme, _, token = value.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise SecurityProviderError(f"Not a bearer token: Authorization: {scheme} ...")
        return token


class ContractSecurity(SecurityProviderFactory):
    PROVIDERS: ClassVar[dict[str, type[BaseProvider]]] = {
        **SecurityProviderFactory.PROVIDERS,
        "oauth2": BearerTokenProvider,
        "openIdConnect": BearerTokenProvider,
    }


# openapi-core 0.23.1 cannot read OpenAPI 3.1's list form of `type` in a
# parameter's schema (Mollie's `limit`: `type: [integer, "null"]`): its style
# deserializer and caster read `type` as a string and raise TypeError
# (python-openapi/openapi-core#1180, confirmed; fixed upstream by #1181 after
# 0.23.1, not released yet). Until a release carries the fix, the 3.1
# documents get these through openapi-core's own configuration
# (`schema_casters_factory`, `style_deserializers_factory`): a list-typed value
# is cast by the first of its non-null types whose caster takes it, and styled
# as its structural type, as #1181/#1182 do. Validation is still the
# library's: the cast value is checked against the whole schema. Remove them
# with the pin that brings the fix.
class ListTypeSchemaCaster(SchemaCaster):
    def cast(self, value: Any) -> Any:
        declared = (self.schema / "type").read_str_or_list(None)
        if not isinstance(declared, list) or value is None:
            return super().cast(value)
        for schema_type in declared:
            if schema_type == "null":
                continue
            try:
                return self.get_type_caster(schema_type)(value)
            except (ValueError, TypeError):
                continue
        raise CastError(value, declared)


class ListTypeCastersFactory(SchemaCastersFactory):
    def create(
        self, spec: Any, schema: Any, format_validators=None, extra_format_validators=None
    ) -> SchemaCaster:
        caster = super().create(spec, schema, format_validators, extra_format_validators)
        return ListTypeSchemaCaster(caster.schema, caster.schema_validator, caster.types_caster)


class ListTypeStyleDeserializersFactory(StyleDeserializersFactory):
    def create(self, spec: Any, schema: Any, style: str, explode: bool, name: str) -> StyleDeserializer:
        declared = (schema / "type").read_str_or_list("")
        if not isinstance(declared, list):
            return super().create(spec, schema, style, explode, name)
        concrete = [schema_type for schema_type in declared if schema_type != "null"]
        structural = next(
            (kind for kind in ("array", "object") if kind in concrete), concrete[0] if concrete else ""
        )
        caster = self.schema_casters_factory.create(spec, schema)
        return StyleDeserializer(
            style, explode, name, structural, caster, self.style_deserializers.get(style)
        )


OAS31_CASTERS = ListTypeCastersFactory(oas31_schema_validators_factory, oas31_types_caster)
OAS31_STYLES = ListTypeStyleDeserializersFactory(OAS31_CASTERS, style_deserializers=style_deserializers)


class SetupError(Exception):
    """The check itself cannot run as configured."""


# --------------------------------------------------------------------------
# Documents


@dataclass
class Document:
    output: str
    app: OpenAPI
    operations: set[tuple[str, str]]


def load_documents(catalogue: dict, work: str, swagger2openapi: str) -> dict[str, list[Document]]:
    """Every platform's trimmed documents as openapi-core apps, by operations.json key."""
    # spec_validator_cls=None: the documents are loaded as the vendors wrote
    # them, whether or not openapi-spec-validator passes them.
    config = Config(spec_validator_cls=None, security_provider_factory=ContractSecurity())
    config31 = Config(
        spec_validator_cls=None,
        security_provider_factory=ContractSecurity(),
        schema_casters_factory=OAS31_CASTERS,
        style_deserializers_factory=OAS31_STYLES,
    )
    documents: dict[str, list[Document]] = {}
    for platform, entry in catalogue["platforms"].items():
        loaded = []
        for source in entry["documents"]:
            path = os.path.join(CONTRACTS, source["output"])
            with open(path, encoding="utf-8") as handle:
                document = json.load(handle)
            if str(document.get("swagger")) == "2.0":
                document = convert(path, work, swagger2openapi)
            operations = {
                (operation["method"].upper(), operation["path"]) for operation in source["operations"]
            }
            chosen = config31 if str(document.get("openapi", "")).startswith("3.1") else config
            loaded.append(Document(source["output"], OpenAPI.from_dict(document, config=chosen), operations))
        documents[platform] = loaded
    return documents


def convert(path: str, work: str, swagger2openapi: str) -> dict:
    """A Swagger 2.0 document as OpenAPI 3.0, by swagger2openapi."""
    os.makedirs(work, exist_ok=True)
    out = os.path.join(work, os.path.basename(path).replace(".json", ".openapi3.json"))
    result = subprocess.run(
        [swagger2openapi, path, "--outfile", out],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise SetupError(f"swagger2openapi could not convert {path}: {result.stderr.strip()}")
    with open(out, encoding="utf-8") as handle:
        return json.load(handle)


# --------------------------------------------------------------------------
# Requests


@dataclass
class Recorded:
    test: str
    platform: str  # operations.json key
    fake_key: str  # the fake's (and allowed.json's) key
    method: str
    url: str  # real URL, query included
    headers: list[tuple[str, str]]
    body: str
    fake_path: str


def real_url(urls: dict, request: dict) -> str:
    """The real URL a recorded request stands for."""
    query = request.get("query") or ""
    if request["path"] == "/token":
        endpoint = urls.get("token_endpoint")
        if endpoint is None:
            raise ValueError("a request to the fake's token endpoint, but the platform has none")
        if request["method"].upper() != endpoint["method"].upper():
            raise ValueError(
                f"{request['method']} to the fake's token endpoint; the real one takes {endpoint['method']}"
            )
        base = endpoint["url"]
    else:
        base = urls["api_base"].rstrip("/") + request["path"]
    return base + ("?" + query if query else "")


def werkzeug_request(
    method: str, url: str, headers: list[tuple[str, str]], body: str
) -> WerkzeugOpenAPIRequest:
    parts = urlsplit(url)
    kept = [(name, value) for name, value in headers if name.lower() not in ("host", "content-length")]
    builder = EnvironBuilder(
        method=method,
        base_url=f"{parts.scheme}://{parts.netloc}",
        path=unquote(parts.path),
        query_string=parts.query,
        headers=kept,
        data=body.encode("utf-8"),
    )
    try:
        return WerkzeugOpenAPIRequest(builder.get_request())
    finally:
        builder.close()


def describe(error: BaseException) -> str:
    """An openapi-core error with what caused it (schema errors included)."""
    text = str(error)
    details = []
    cause = error.__cause__
    seen = 0
    while cause is not None and seen < 5:
        seen += 1
        schema_errors = getattr(cause, "schema_errors", None)
        if schema_errors:
            for schema_error in schema_errors:
                where = "/".join(str(part) for part in schema_error.absolute_path)
                details.append(f"{where + ': ' if where else ''}{schema_error.message}")
        else:
            cause_text = str(cause)
            if cause_text and cause_text not in text:
                details.append(cause_text)
        cause = cause.__cause__
    return text + (" (" + "; ".join(details) + ")" if details else "")


@dataclass
class Outcome:
    document: str | None = None
    operation: str | None = None  # "GET /Invoices", the document's template
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def validate(documents: list[Document], method: str, url: str, headers, body: str) -> Outcome:
    """The operation `url` matches in one of `documents`, and what openapi-core says of the request."""
    misses = []
    for document in documents:
        request = werkzeug_request(method, url, headers, body)
        try:
            found = document.app.request_validator.path_finder.find(request.method, url.split("?", 1)[0])
        except PathError as error:
            misses.append(f"{document.output}: {error}")
            continue
        outcome = Outcome(document.output, f"{method.upper()} {found.path_result.pattern}")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            outcome.errors = [
                describe(error) for error in document.app.request_validator.iter_errors(request)
            ]
        outcome.notes = sorted({str(warning.message) for warning in caught})
        return outcome
    return Outcome(errors=["no operation in " + "; ".join(misses)])


# --------------------------------------------------------------------------
# The allow-list


def url_pattern(template: str) -> re.Pattern:
    """`https://host/path/{id}`: `{name}` matches one path segment."""
    parts = re.split(r"(\{[^}]+\})", template)
    regex = "".join(
        f"(?P<{part[1:-1]}>[^/?]+)" if part.startswith("{") else re.escape(part) for part in parts
    )
    return re.compile(regex + r"(?:\?.*)?\Z")


@dataclass
class Allowance:
    index: int
    entry: dict
    pattern: re.Pattern
    used: int = 0

    @property
    def kind(self) -> str:
        return self.entry["kind"]

    def matches(self, platform: str, method: str, url: str) -> re.Match | None:
        if self.entry["platform"] != platform or self.entry["method"].upper() != method.upper():
            return None
        return self.pattern.match(url)

    def label(self) -> str:
        entry = self.entry
        return f"allowed.json entry {self.index} ({entry['platform']} {entry['method']} {entry['url']}, {self.kind})"


KINDS = ("not-in-documents", "path-spelling", "document-error")


def load_allowed(path: str, catalogue: dict) -> list[Allowance]:
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    allowances = []
    for index, entry in enumerate(data["entries"]):
        for key in ("platform", "kind", "method", "url", "reason"):
            if not entry.get(key):
                raise SetupError(f"{path}: entry {index} has no {key!r}")
        if entry["kind"] not in KINDS:
            raise SetupError(f"{path}: entry {index}: kind must be one of {', '.join(KINDS)}")
        if entry["platform"] not in {
            urls_of(catalogue, key)["recorded_as"] for key in catalogue["platforms"]
        }:
            raise SetupError(f"{path}: entry {index}: unknown platform {entry['platform']!r}")
        if entry["kind"] == "path-spelling" and not entry.get("validate_as"):
            raise SetupError(
                f"{path}: entry {index}: a path-spelling entry names the document's URL in 'validate_as'"
            )
        if entry["kind"] == "document-error" and not (entry.get("error") and entry.get("document")):
            raise SetupError(
                f"{path}: entry {index}: a document-error entry names the 'error' it forgives (a regular "
                "expression) and the place in the vendor's document ('document')"
            )
        if entry["kind"] == "not-in-documents":
            listed = [
                absent["request"]
                for key in catalogue["platforms"]
                if urls_of(catalogue, key)["recorded_as"] == entry["platform"]
                for absent in catalogue["platforms"][key].get("not_in_vendor_documents") or []
            ]
            if {"method": entry["method"].upper(), "url": entry["url"]} not in listed:
                raise SetupError(
                    f"{path}: entry {index}: {entry['method']} {entry['url']} is not among the platform's "
                    "not_in_vendor_documents in operations.json, which says why no document has it"
                )
        allowances.append(Allowance(index, entry, url_pattern(entry["url"])))
    return allowances


def urls_of(catalogue: dict, platform: str) -> dict:
    urls = catalogue["platforms"][platform].get("real_urls")
    if not urls:
        raise SetupError(f"operations.json: {platform} has no real_urls")
    return urls


# --------------------------------------------------------------------------
# The run


@dataclass
class Checked:
    recorded: Recorded
    outcome: Outcome
    forgiven: list[str]
    failures: list[str]


def check_one(
    recorded: Recorded, documents: list[Document], allowances: list[Allowance], count: bool = True
) -> Checked:
    method, url = recorded.method, recorded.url
    forgiven: list[str] = []
    for allowance in allowances:
        if allowance.kind != "path-spelling":
            continue
        match = allowance.matches(recorded.fake_key, method, url)
        if match:
            query = urlsplit(url).query
            url = allowance.entry["validate_as"].format(**match.groupdict()) + ("?" + query if query else "")
            forgiven.append(allowance.label())
            allowance.used += count
            break
    outcome = validate(documents, method, url, recorded.headers, recorded.body)
    if outcome.document is None:
        for allowance in allowances:
            if allowance.kind == "not-in-documents" and allowance.matches(recorded.fake_key, method, url):
                allowance.used += count
                return Checked(recorded, outcome, forgiven + [allowance.label()], [])
        return Checked(recorded, outcome, forgiven, outcome.errors)
    failures = []
    for error in outcome.errors:
        for allowance in allowances:
            if (
                allowance.kind == "document-error"
                and allowance.matches(recorded.fake_key, method, url)
                and re.search(allowance.entry["error"], error)
            ):
                allowance.used += count
                forgiven.append(allowance.label())
                break
        else:
            failures.append(error)
    return Checked(recorded, outcome, forgiven, failures)


def read_calls(folder: str, catalogue: dict) -> tuple[dict[str, list[Recorded]], list[str]]:
    """The recorded requests of the eight platforms, by operations.json key."""
    by_fake = {urls_of(catalogue, key)["recorded_as"]: key for key in catalogue["platforms"]}
    calls: dict[str, list[Recorded]] = defaultdict(list)
    problems = []
    for fake_key in sorted(os.listdir(folder)):
        platform = by_fake.get(fake_key)
        if platform is None or not os.path.isdir(os.path.join(folder, fake_key)):
            continue
        urls = urls_of(catalogue, platform)
        for name in sorted(os.listdir(os.path.join(folder, fake_key))):
            if not name.endswith(".json"):
                continue
            with open(os.path.join(folder, fake_key, name), encoding="utf-8") as handle:
                record = json.load(handle)
            if record.get("platform") != fake_key:
                problems.append(f"{fake_key}/{name}: names platform {record.get('platform')!r}")
                continue
            for request in record["requests"]:
                try:
                    url = real_url(urls, request)
                except ValueError as error:
                    problems.append(
                        f"FAIL {record['test']} [{fake_key}] {request['method']} {request['path']}: {error}"
                    )
                    continue
                calls[platform].append(
                    Recorded(
                        record["test"],
                        platform,
                        fake_key,
                        request["method"].upper(),
                        url,
                        [tuple(pair) for pair in request["headers"]],
                        request.get("body") or "",
                        request["path"],
                    )
                )
    return calls, problems


def mutate(recorded: Recorded, change: dict) -> Recorded:
    mutated = copy.deepcopy(recorded)
    if "drop_header" in change:
        name = change["drop_header"].lower()
        mutated.headers = [(key, value) for key, value in mutated.headers if key.lower() != name]
    base, _, query = mutated.url.partition("?")
    pairs = parse_qsl(query, keep_blank_values=True)
    if "drop_query" in change:
        pairs = [(key, value) for key, value in pairs if key != change["drop_query"]]
    if "set_query" in change:
        for name, value in change["set_query"].items():
            pairs = [(key, old) for key, old in pairs if key != name] + [(name, value)]
    if "drop_query" in change or "set_query" in change:
        mutated.url = base + ("?" + urlencode(pairs) if pairs else "")
    if "set_json" in change:
        body = json.loads(mutated.body)
        body.update(change["set_json"])
        mutated.body = json.dumps(body)
    return mutated


def self_check(
    calls: dict[str, list[Recorded]],
    catalogue: dict,
    documents: dict[str, list[Document]],
    allowances: list[Allowance],
) -> tuple[list[str], list[str]]:
    by_fake = {urls_of(catalogue, key)["recorded_as"]: key for key in catalogue["platforms"]}
    lines, failures = [], []
    for case in SELF_CHECK:
        platform = by_fake[case["platform"]]
        label = f"{case['platform']} {case['method']} {case['path']} {json.dumps(case['change'])}"
        source = None
        for recorded in calls.get(platform, []):
            if recorded.method != case["method"] or not re.fullmatch(case["path"], recorded.fake_path):
                continue
            original = check_one(recorded, documents[platform], allowances, count=False)
            if original.outcome.document and not original.failures:
                source = recorded
                break
        if source is None:
            failures.append(f"self-check: {label}: no recorded request passes cleanly to mutate")
            continue
        mutated = check_one(mutate(source, case["change"]), documents[platform], allowances, count=False)
        refusals = mutated.failures
        if not refusals:
            failures.append(
                f"self-check: {label}: ACCEPTED ({case['why']}); errors forgiven: {mutated.forgiven}"
            )
        elif not any(re.search(case["refused"], refusal) for refusal in refusals):
            failures.append(f"self-check: {label}: refused, but not for /{case['refused']}/: {refusals}")
        else:
            lines.append(f"  refused as it must be: {label}: {'; '.join(refusals)}")
    return lines, failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", required=True, help="the folder TRIBUTARY_PLATFORM_CALLS pointed to")
    parser.add_argument("--operations", default=os.path.join(CONTRACTS, "operations.json"))
    parser.add_argument("--allowed", default=os.path.join(CONTRACTS, "allowed.json"))
    parser.add_argument(
        "--swagger2openapi",
        default=os.path.join(ROOT, "spec-tests", "node_modules", ".bin", "swagger2openapi"),
        help="the swagger2openapi command (npm, spec-tests/package.json)",
    )
    parser.add_argument(
        "--work",
        default=os.path.join(ROOT, "target", "spec-tests", "contracts"),
        help="where converted documents go",
    )
    parser.add_argument("--verbose", action="store_true", help="also list every request checked")
    args = parser.parse_args(argv)

    with open(args.operations, encoding="utf-8") as handle:
        catalogue = json.load(handle)
    try:
        documents = load_documents(catalogue, args.work, args.swagger2openapi)
        allowances = load_allowed(args.allowed, catalogue)
        calls, failures = read_calls(args.calls, catalogue)
    except SetupError as error:
        print(f"contracts: {error}", file=sys.stderr)
        return 2

    per_operation: Counter = Counter()
    per_platform: Counter = Counter()
    notes: Counter = Counter()
    for platform in catalogue["platforms"]:
        fake_key = urls_of(catalogue, platform)["recorded_as"]
        if not calls.get(platform):
            failures.append(
                f"FAIL [{fake_key}]: no recorded request at all (does its fake write to {args.calls}?)"
            )
        for recorded in calls.get(platform, []):
            checked = check_one(recorded, documents[platform], allowances)
            per_platform[fake_key] += 1
            outcome = checked.outcome
            key = (
                (fake_key, outcome.document, outcome.operation)
                if outcome.document
                else (fake_key, "(allowed)", f"{recorded.method} {recorded.url.split('?')[0]}")
            )
            per_operation[key] += 1
            for note in outcome.notes:
                notes[(fake_key, outcome.operation, note)] += 1
            if args.verbose:
                print(
                    f"  {recorded.test} [{fake_key}] {recorded.method} {recorded.url} -> {outcome.operation}"
                )
            if checked.failures:
                failures.append(
                    f"FAIL {recorded.test} [{fake_key}] {recorded.method} {recorded.url}: "
                    + " | ".join(checked.failures)
                )

    for platform in catalogue["platforms"]:
        fake_key = urls_of(catalogue, platform)["recorded_as"]
        for source in documents[platform]:
            for method, path in sorted(source.operations):
                if not per_operation[(fake_key, source.output, f"{method} {path}")]:
                    failures.append(
                        f"FAIL [{fake_key}] {method} {path} ({source.output}): listed in operations.json, "
                        "exercised by no recorded request"
                    )
    for allowance in allowances:
        if not allowance.used:
            failures.append(
                f"FAIL {allowance.label()}: forgave nothing; remove it or find why it no longer applies"
            )

    self_lines, self_failures = self_check(calls, catalogue, documents, allowances)
    failures.extend(self_failures)

    print("Requests checked against the vendors' documents:")
    for fake_key in sorted(per_platform):
        print(f"  {fake_key}: {per_platform[fake_key]}")
        for (key, document, operation), count in sorted(per_operation.items(), key=lambda item: str(item[0])):
            if key == fake_key:
                print(f"      {count:4d}  {operation}  [{document}]")
    print(f"  total: {sum(per_platform.values())}")
    used = [allowance for allowance in allowances if allowance.used]
    print(f"Allow-list: {len(used)} of {len(allowances)} entries used (tests/contracts/allowed.json)")
    for allowance in used:
        print(f"  {allowance.used:4d} x {allowance.label()}")
    for (fake_key, operation, note), count in sorted(notes.items(), key=str):
        print(f"note: [{fake_key}] {operation}: {note} ({count} request(s))")
    print(f"Self-check: {len(self_lines)} of {len(SELF_CHECK)} mutated requests refused")
    for line in self_lines:
        print(line)
    if failures:
        print(f"\n{len(failures)} failure(s):", file=sys.stderr)
        for failure in failures:
            print(failure, file=sys.stderr)
        return 1
    print("contracts: every request is allowed by its vendor's document or the reviewed allow-list")
    return 0


if __name__ == "__main__":
    sys.exit(main())
