#!/usr/bin/env python3
"""Every example in openapi.yaml, held to the document and to the server.

1. Each example (request bodies, success answers, error answers) is valid
   against its schema (openapi-schema-validator, OpenAPI 3.0 semantics), an
   error example's `statusCode` is its status, and every operation with a
   JSON request body or a JSON success answer has an example of it.
2. Every request example is sent to a live `tributary serve` (plain HTTP,
   the standard library only, so no client under test is involved), in an
   order where each operation's path ids come from objects created by the
   examples before it; each must be accepted with a documented success
   status, and its answer must be valid against that status's schema.
   Operations without a body are called too, so every operation of the
   document is exercised once; the run fails if one is missing from the
   order below (add it where its ids exist).

Usage: examples.py --url http://127.0.0.1:PORT --key KEY [--spec openapi.yaml]
"""

import argparse
import base64
import json
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

import yaml
from jsonschema import Draft4Validator

WAIT_SECONDS = 120


class JsonLikeLoader(yaml.SafeLoader):
    """YAML 1.2's reading of the document, as a JSON client sees it: PyYAML
    follows YAML 1.1, which reads an unquoted `2026-11-20T09:12:44Z` as a
    timestamp rather than the string the schema says it is."""


JsonLikeLoader.yaml_implicit_resolvers = {
    first: [(tag, pattern) for tag, pattern in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def fail(message: str) -> None:
    sys.exit(f"examples: {message}")


def json_schema(value):
    """`value` with OpenAPI 3.0's `nullable: true` rewritten as JSON Schema."""
    if isinstance(value, list):
        return [json_schema(item) for item in value]
    if not isinstance(value, dict):
        return value
    schema = {key: json_schema(item) for key, item in value.items() if key != "nullable"}
    if value.get("nullable") is not True:
        return schema
    if isinstance(schema.get("type"), str):
        schema["type"] = [schema["type"], "null"]
        if "enum" in schema:
            schema["enum"] = [*schema["enum"], None]
        return schema
    return {"anyOf": [{"type": "null"}, schema]}


class Document:
    """openapi.yaml, with its operations by id and a validator per schema."""

    def __init__(self, path: str) -> None:
        with open(path, encoding="utf-8") as file:
            self.spec = yaml.load(file, Loader=JsonLikeLoader)
        self.operations = {}
        for route, item in self.spec["paths"].items():
            for method, operation in item.items():
                self.operations[operation["operationId"]] = (method.upper(), route, operation)

    def problems(self, schema: dict, value) -> list[str]:
        # The schema is validated in a root that carries the components, so
        # its `#/components/...` references resolve; OpenAPI 3.0's
        # `nullable` is read as JSON Schema's null type, as schemathesis and
        # the server's own request validation read it (a strict reading of
        # OpenAPI 3.0.3 ignores `nullable` beside a bare `allOf`, which is
        # how poem-openapi writes an optional reference).
        root = json_schema({"allOf": [schema], "components": self.spec["components"]})
        validator = Draft4Validator(root, format_checker=Draft4Validator.FORMAT_CHECKER)
        return [
            f"{'/'.join(map(str, error.absolute_path)) or '(root)'}: {error.message}"
            for error in validator.iter_errors(value)
        ]

    @staticmethod
    def examples_of(media: dict) -> dict:
        """A media type's examples by name (`example` is named `default`)."""
        if "examples" in media:
            return {name: entry["value"] for name, entry in media["examples"].items()}
        if "example" in media:
            return {"default": media["example"]}
        return {}


def check_examples(document: Document) -> int:
    """Part 1: every example against its schema. Returns how many were checked."""
    checked = 0
    errors = []
    for operation_id, (_, _, operation) in document.operations.items():
        body = operation.get("requestBody", {}).get("content", {}).get("application/json")
        places = []
        if body is not None:
            if not Document.examples_of(body):
                errors.append(f"{operation_id}: its request body has no example")
            places.append(("request", None, body))
        for status, response in operation["responses"].items():
            media = response.get("content", {}).get("application/json")
            if media is None:
                continue
            if status.startswith("2") and not Document.examples_of(media):
                errors.append(f"{operation_id}: its {status} answer has no example")
            places.append((f"{status} answer", status, media))
        for place, status, media in places:
            for name, example in Document.examples_of(media).items():
                checked += 1
                for problem in document.problems(media["schema"], example):
                    errors.append(f"{operation_id} {place} example {name!r}: {problem}")
                if status and not status.startswith("2") and example.get("statusCode") != int(status):
                    errors.append(f"{operation_id} {place} example {name!r}: statusCode is not {status}")
    if errors:
        fail("examples that do not match openapi.yaml:\n  " + "\n  ".join(errors))
    return checked


class Server:
    """Sends the document's operations to a live server and checks the answers."""

    def __init__(self, document: Document, url: str, key: str) -> None:
        self.document = document
        self.url = url.rstrip("/")
        token = base64.b64encode(key.encode()).decode()
        self.authorization = f"Basic {token}"
        self.called = set()
        self.sent = set()

    def request(self, method: str, path: str, body=None):
        headers = {"Authorization": self.authorization, "Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(self.url + path, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, response.headers.get("content-type", ""), response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.headers.get("content-type", ""), error.read().decode()

    def call(self, operation_id: str, ids: dict | None = None, example: str | None = None, query: dict | None = None):
        """Calls `operation_id` with its path ids (and its request example
        named `example`, or its only one); returns the parsed answer."""
        method, route, operation = self.document.operations[operation_id]
        path = route
        for name, value in (ids or {}).items():
            path = path.replace("{" + name + "}", urllib.parse.quote(str(value), safe=""))
        if "{" in path:
            fail(f"{operation_id}: no value for a path id in {path}")
        if query:
            path += "?" + urllib.parse.urlencode(query)
        body = None
        media = operation.get("requestBody", {}).get("content", {}).get("application/json")
        if media is not None:
            examples = Document.examples_of(media)
            name = example or next(iter(examples))
            body = examples[name]
            self.sent.add((operation_id, name))
        status, content_type, text = self.request(method, path, body)
        self.called.add(operation_id)
        documented = {code for code in operation["responses"] if code.startswith("2")}
        if str(status) not in documented:
            fail(f"{operation_id} {method} {path} (example {example!r}) answered {status}, not one of {sorted(documented)}: {text}")
        answer = operation["responses"][str(status)]
        media = answer.get("content", {}).get("application/json")
        if media is None:
            return text
        if not content_type.startswith("application/json"):
            fail(f"{operation_id} answered {content_type}, not application/json")
        value = json.loads(text)
        problems = self.document.problems(media["schema"], value)
        if problems:
            fail(f"{operation_id} answered {status} with a body its schema refuses:\n  " + "\n  ".join(problems))
        return value

    def wait(self, what: str, read, done) -> dict:
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            value = read()
            if done(value):
                return value
            if time.monotonic() > deadline:
                fail(f"{what} did not happen within {WAIT_SECONDS} s: {json.dumps(value)[:2000]}")
            time.sleep(0.3)


def exercise(server: Server) -> None:
    """Part 2: every operation once, every request example sent."""
    server.call("getHealth")
    # A receiver first, so the company's events have deliveries to list and retry.
    endpoint = server.call("createWebhookEndpoint")
    hooks = {"endpointId": endpoint["id"]}
    server.call("listWebhookEndpoints")
    server.call("getWebhookEndpoint", hooks)
    server.call("updateWebhookEndpoint", hooks)
    server.call("rotateWebhookSecret", hooks)

    company = server.call("createCompany")
    ids = {"companyId": company["companyId"]}
    server.call("listCompanies")
    server.call("getCompany", ids)
    server.call("replaceCompany", ids)

    # One connection per authorization example: a Xero organisation (its API
    # played by spec-tests/fake-platforms.mjs) and the synthetic sandbox.
    connections = {}
    media = server.document.operations["authorizeConnection"][2]["requestBody"]["content"]["application/json"]
    for name in Document.examples_of(media):
        created = server.call("createConnection", ids, example=name)
        connections[name] = created["connectionId"]
        linked = server.call("authorizeConnection", {**ids, "connectionId": created["connectionId"]}, example=name)
        if linked["status"] != "Linked":
            fail(f"the {name} authorization example left the connection {linked['status']}, not Linked")
    first = next(iter(connections.values()))
    server.call("listConnections", ids)
    server.call("getConnection", {**ids, "connectionId": first})

    operations = server.call("syncAllData", ids)
    server.wait(
        "the sync of every connection",
        lambda: server.call("listPullOperations", ids, query={"pageSize": 500}),
        lambda page: all(op["status"] not in ("Queued", "Fetching") for op in page["results"]),
    )
    server.call("getPullOperation", {**ids, "pullOperationId": operations[0]["pullOperationId"]})
    server.call("getDataStatus", ids)
    for data_type, single, id_field, id_name in [
        ("Invoices", "Invoice", "invoiceId", "invoiceId"),
        ("Customers", "Customer", "customerId", "customerId"),
        ("Orders", "Order", "orderId", "orderId"),
        ("BankAccounts", "BankAccount", "accountId", "accountId"),
        ("BankTransactions", "BankTransaction", "transactionId", "transactionId"),
        ("Accounts", "Account", "accountId", "accountId"),
        ("Suppliers", "Supplier", "supplierId", "supplierId"),
        ("TaxRates", "TaxRate", "taxRateId", "taxRateId"),
        ("Bills", "Bill", "billId", "billId"),
        ("Payments", "Payment", "paymentId", "paymentId"),
        ("BillPayments", "BillPayment", "billPaymentId", "billPaymentId"),
        ("CreditNotes", "CreditNote", "creditNoteId", "creditNoteId"),
        ("Items", "Item", "itemId", "itemId"),
        ("CompanyInfo", "CompanyInfo", "companyInfoId", "companyInfoId"),
        ("JournalEntries", "JournalEntry", "journalEntryId", "journalEntryId"),
    ]:
        page = server.call(f"list{data_type}", ids, query={"pageSize": 1})
        if not page["results"]:
            fail(f"list{data_type} is empty after the sandbox sync")
        server.call(f"get{single}", {**ids, id_name: page["results"][0][id_field]})
    server.call("queueDataType", {**ids, "dataType": "invoices"})
    # After the reads above: the example's choice narrows what later syncs queue.
    server.call("getSyncSettings")
    server.call("setSyncSettings")

    server.call("listIntegrations")
    server.call("getIntegration", {"platformKey": "xero"})
    server.call("setOauthClient", {"platformKey": "xero"})
    server.call("getOauthClient", {"platformKey": "xero"})

    server.call("getLinkSettings")
    server.call("setLinkSettings")
    session = server.call("createLinkSession", ids)
    server.call("getLinkSession", {**ids, "linkSessionId": session["id"]})

    migrate(server)

    deliveries = server.call("listWebhookDeliveries", hooks)
    if not deliveries["results"]:
        fail("the webhook endpoint has no deliveries after a company, connections and a sync")
    server.call("retryWebhookMessage", {"messageId": deliveries["results"][0]["messageId"]})
    server.call("replayWebhookMessages", hooks)

    key = server.call("createApiKey")
    server.call("listApiKeys")
    server.call("getApiKey", {"apiKeyId": key["id"]})
    server.call("deleteApiKey", {"apiKeyId": key["id"]})

    server.call("updateConnection", {**ids, "connectionId": first})
    server.call("deleteConnection", {**ids, "connectionId": first})
    server.call("deleteOauthClient", {"platformKey": "xero"})
    server.call("deleteWebhookEndpoint", hooks)
    server.call("deleteCompany", ids)


def migrate(server: Server) -> None:
    """A managed migration batch, from the request example to its report."""
    created = server.call("createMigration")
    migration = {"migrationId": created["migration"]["id"]}
    server.call("listMigrations")
    for item in created["migration"]["checklist"]:
        if item["done"]:
            continue
        if item["checkedByTributary"]:
            # oauthClientRegistered: done once the platform's OAuth client is stored.
            server.call("setOauthClient", {"platformKey": created["migration"]["platformKey"]})
        else:
            server.call("attestMigrationStep", {**migration, "step": item["step"]})
    server.call("startMigration", migration)
    read = lambda: server.call("getMigration", migration)  # noqa: E731
    server.wait("the canary", read, lambda batch: batch["state"] in ("AwaitingProceed", "CanaryFailed"))
    server.call("proceedMigration", migration)
    server.wait("the batch", read, lambda batch: batch["state"] == "Completed")
    server.call("retryFailedMigrationRows", migration)
    server.call("listMigrationRows", migration)
    server.call("getMigrationReport", migration)
    server.call("getMigrationReportCsv", migration)
    server.call("cancelMigration", migration)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--spec", default="openapi.yaml")
    args = parser.parse_args()

    document = Document(args.spec)
    checked = check_examples(document)
    server = Server(document, args.url, args.key)
    exercise(server)

    missing = sorted(set(document.operations) - server.called)
    if missing:
        fail(f"operations the run never called (add them to exercise()): {', '.join(missing)}")
    unsent = sorted(
        f"{operation_id} {name!r}"
        for operation_id, (_, _, operation) in document.operations.items()
        for name in Document.examples_of(operation.get("requestBody", {}).get("content", {}).get("application/json", {}))
        if (operation_id, name) not in server.sent
    )
    if unsent:
        fail(f"request examples the run never sent: {', '.join(unsent)}")
    print(
        f"examples: {checked} examples valid against their schemas; {len(server.called)} operations called, "
        f"{len(server.sent)} request examples sent, each accepted with a documented status and schema"
    )


if __name__ == "__main__":
    main()
