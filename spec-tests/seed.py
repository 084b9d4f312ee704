#!/usr/bin/env python3
"""Seeds a running tributary server with data the spec tests need.

Plain HTTP (the standard library only), so the seed does not depend on any
client under test. Creates:

- "Acme Trading Ltd" with a `sandbox` connection, authorized (invoiceCount
  300, seed 7) and fully synced, so invoices exist and some are `Paid`;
  plus a second, unauthorized `sandbox` connection that fuzzing may delete;
- "Bramble Foods", a second company, so lists have more than one item;
- "Discard Ltd", a company that fuzzing may delete.

Writes the ids as shell assignments (`export NAME=value`) to the file
named by `--env-out`, for the steps that follow.

Usage: seed.py --url http://127.0.0.1:PORT --key KEY --env-out FILE
"""

import argparse
import base64
import json
import sys
import time
import urllib.error
import urllib.request

INVOICE_COUNT = 300
SYNC_TIMEOUT_SECONDS = 120


class Api:
    def __init__(self, url: str, key: str) -> None:
        self.url = url.rstrip("/")
        token = base64.b64encode(key.encode()).decode()
        self.headers = {"Authorization": f"Basic {token}", "Accept": "application/json"}

    def call(self, method: str, path: str, body=None, expect=(200,)):
        data = None
        headers = dict(self.headers)
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(self.url + path, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                status, text = response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            status, text = error.code, error.read().decode()
        if status not in expect:
            sys.exit(f"seed: {method} {path} answered {status}, expected {expect}: {text}")
        return json.loads(text) if text else None


def wait_for_health(url: str, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(url.rstrip("/") + "/healthz", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            sys.exit(f"seed: {url}/healthz did not answer 200 within {seconds} s")
        time.sleep(0.2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--env-out", required=True)
    args = parser.parse_args()

    wait_for_health(args.url)
    api = Api(args.url, args.key)

    # Endpoints first, so the companies' events have deliveries. Nothing listens
    # at port 9 (discard): the attempts fail and are retried, as with a real
    # endpoint that is down.
    hooks = api.call("POST", "/webhooks/endpoints", {"url": "https://hooks.example.com/hooks", "description": "seeded"}, (201,))
    discard_hooks = api.call("POST", "/webhooks/endpoints", {"url": "https://hooks.example.com/discard"}, (201,))
    acme = api.call("POST", "/companies", {"name": "Acme Trading Ltd", "description": "Wholesale"}, (201,))
    bramble = api.call("POST", "/companies", {"name": "Bramble Foods", "description": "Organic groceries"}, (201,))
    discard = api.call("POST", "/companies", {"name": "Discard Ltd", "description": "Fuzzing may delete it"}, (201,))
    kept_key = api.call("POST", "/apiKeys", {"name": "seeded key"}, (201,))
    discard_key = api.call("POST", "/apiKeys", {"name": "fuzzing may delete it"}, (201,))
    company = acme["companyId"]

    connection = api.call("POST", f"/companies/{company}/connections", {"platformKey": "sandbox"}, (201,))
    spare = api.call("POST", f"/companies/{company}/connections", {"platformKey": "sandbox"}, (201,))
    authorized = api.call(
        "PUT",
        f"/companies/{company}/connections/{connection['connectionId']}/authorization",
        {"organizationId": "sbx-acme", "accessToken": "seed-token", "invoiceCount": INVOICE_COUNT, "seed": 7},
    )
    assert authorized["status"] == "Linked", authorized

    queued = api.call("POST", f"/companies/{company}/data/all", expect=(202,))
    deadline = time.monotonic() + SYNC_TIMEOUT_SECONDS
    while True:
        history = api.call("GET", f"/companies/{company}/data/history?pageSize=100")
        statuses = [operation["status"] for operation in history["results"]]
        if statuses and all(status == "Complete" for status in statuses):
            break
        if any(status in ("Failed", "AuthError", "Cancelled") for status in statuses):
            sys.exit(f"seed: the sync did not complete: {history['results']}")
        if time.monotonic() > deadline:
            sys.exit(f"seed: the sync did not complete within {SYNC_TIMEOUT_SECONDS} s: {statuses}")
        time.sleep(0.25)

    invoices = api.call("GET", f"/companies/{company}/data/invoices?pageSize=1")
    paid = api.call("GET", f"/companies/{company}/data/invoices?status=paid&pageSize=1")
    if invoices["totalResults"] != INVOICE_COUNT or paid["totalResults"] == 0:
        sys.exit(f"seed: expected {INVOICE_COUNT} invoices, some paid; got {invoices['totalResults']}, {paid['totalResults']} paid")

    # A managed migration batch (Draft: its checklist is not done, so nothing
    # is imported while the fuzzers work on it), and a spare one to cancel.
    migration_rows = [
        {"externalReference": f"seed-{n}", "companyName": f"Seeded migration {n}",
         "authorization": {"organizationId": f"sbx-seed-{n}", "accessToken": "seed-migration-token"}}
        for n in range(3)
    ]
    migration = api.call("POST", "/migrations", {"platformKey": "sandbox", "reference": "seeded", "rows": migration_rows}, (201,))
    spare_migration = api.call(
        "POST", "/migrations",
        {"platformKey": "sandbox", "rows": [dict(row, externalReference=f"spare-{n}") for n, row in enumerate(migration_rows)]},
        (201,),
    )

    deliveries = api.call("GET", f"/webhooks/endpoints/{hooks['id']}/deliveries?pageSize=1")
    if not deliveries["results"]:
        sys.exit("seed: the seeded webhook endpoint has no delivery")
    values = {
        "SEED_COMPANY_ID": company,
        "SEED_COMPANY_NAME": acme["name"],
        "SEED_OTHER_COMPANY_ID": bramble["companyId"],
        "SEED_DISCARD_COMPANY_ID": discard["companyId"],
        "SEED_CONNECTION_ID": connection["connectionId"],
        "SEED_SPARE_CONNECTION_ID": spare["connectionId"],
        "SEED_PULL_OPERATION_ID": queued[0]["pullOperationId"],
        "SEED_API_KEY_ID": kept_key["id"],
        "SEED_DISCARD_API_KEY_ID": discard_key["id"],
        "SEED_WEBHOOK_ENDPOINT_ID": hooks["id"],
        "SEED_DISCARD_WEBHOOK_ENDPOINT_ID": discard_hooks["id"],
        "SEED_WEBHOOK_MESSAGE_ID": deliveries["results"][0]["messageId"],
        "SEED_MIGRATION_ID": migration["migration"]["id"],
        "SEED_SPARE_MIGRATION_ID": spare_migration["migration"]["id"],
        "SEED_INVOICE_COUNT": str(invoices["totalResults"]),
        "SEED_PAID_COUNT": str(paid["totalResults"]),
        "SEED_COMPANY_COUNT": "3",
    }
    with open(args.env_out, "w", encoding="utf-8") as out:
        for name, value in values.items():
            out.write(f"export {name}='{value}'\n")
    print(
        f"seed: 3 companies; {invoices['totalResults']} invoices synced for {company}, "
        f"{paid['totalResults']} paid ({time.monotonic() - started:.1f} s)"
    )


started = time.monotonic()

if __name__ == "__main__":
    main()
