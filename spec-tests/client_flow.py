#!/usr/bin/env python3
"""A partner's script: the seed flow through the Python client that
openapi-python-client generates from openapi.yaml (package tributary_client,
put on PYTHONPATH by spec-tests/run).

Creates a company and a sandbox connection, authorizes it, triggers a sync,
polls until it completes, then pages the paid invoices by following
`_links.next` to the end and checks the count against `totalResults`.
Then makes a second API key, reads the company with it, and deletes it; and
registers a webhook endpoint (before the company, so its events are queued for
it), lists its deliveries, rotates its secret and deletes it.

Environment: TRIBUTARY_URL, TRIBUTARY_KEY.
"""

import base64
import os
import sys
import time

from tributary_client import AuthenticatedClient
from tributary_client.api.api_keys import create_api_key, delete_api_key, list_api_keys
from tributary_client.api.companies import create_company, list_companies
from tributary_client.api.webhooks import (
    create_webhook_endpoint,
    delete_webhook_endpoint,
    list_webhook_deliveries,
    rotate_webhook_secret,
)
from tributary_client.api.connections import authorize_connection, create_connection
from tributary_client.api.data import list_invoices, list_pull_operations, sync_all_data
from tributary_client.api.migrations import create_migration, get_migration, list_migration_rows
from tributary_client.models import (
    ApiKeyInput,
    Company,
    CreatedApiKey,
    CompanyInput,
    Connection,
    ConnectionInput,
    ConnectionInputPlatformKey,
    ConnectionStatus,
    InvoiceStatus,
    Migration,
    MigrationCreation,
    MigrationInput,
    PagedMigrationRow,
    PagedApiKey,
    PagedWebhookDelivery,
    WebhookEndpointInput,
    WebhookEndpointWithSecret,
    PagedCompany,
    PagedInvoice,
    PagedPullOperation,
    PullStatus,
    SandboxAuthorization,
)
from tributary_client.types import UNSET

INVOICE_COUNT = 420
PAGE_SIZE = 25


def expect(value, kind):
    """The generated client answers the parsed body of whichever status came back."""
    if not isinstance(value, kind):
        sys.exit(f"client flow: expected {kind.__name__}, got {value!r}")
    return value


def main() -> None:
    key = os.environ["TRIBUTARY_KEY"]
    client = AuthenticatedClient(
        base_url=os.environ["TRIBUTARY_URL"],
        token=base64.b64encode(key.encode()).decode(),
        prefix="Basic",
        raise_on_unexpected_status=True,
    )
    with client:
        hooks = expect(
            create_webhook_endpoint.sync(
                client=client,
                body=WebhookEndpointInput(url="https://hooks.example.com/python-hooks", event_types=[]),
            ),
            WebhookEndpointWithSecret,
        )
        assert hooks.secret.startswith("whsec_"), "the signing secret, shown once"
        company = expect(
            create_company.sync(client=client, body=CompanyInput(name="Python Partner Ltd", description="Generated client")),
            Company,
        )
        connection = expect(
            create_connection.sync(
                company.company_id,
                client=client,
                body=ConnectionInput(platform_key=ConnectionInputPlatformKey.SANDBOX),
            ),
            Connection,
        )
        assert connection.status == ConnectionStatus.PENDINGAUTH, connection.status
        linked = expect(
            authorize_connection.sync(
                company.company_id,
                connection.connection_id,
                client=client,
                body=SandboxAuthorization(
                    organization_id="sbx-python",
                    access_token="python-token",
                    invoice_count=INVOICE_COUNT,
                    seed=11,
                ),
            ),
            Connection,
        )
        assert linked.status == ConnectionStatus.LINKED, linked.status
        assert linked.authorization is not None and linked.authorization.organization_id == "sbx-python"

        queued = sync_all_data.sync(company.company_id, client=client)
        assert isinstance(queued, list) and queued, queued

        deadline = time.monotonic() + 120
        while True:
            history = expect(list_pull_operations.sync(company.company_id, client=client), PagedPullOperation)
            statuses = {operation.status for operation in history.results}
            if statuses == {PullStatus.COMPLETE}:
                break
            assert not statuses & {PullStatus.FAILED, PullStatus.AUTHERROR, PullStatus.CANCELLED}, statuses
            assert time.monotonic() < deadline, f"the sync did not complete: {statuses}"
            time.sleep(0.25)

        # The first page through the typed operation, the rest by following
        # `_links.next` with the client's own HTTP session (same auth), each
        # page parsed by the generated model.
        page = expect(
            list_invoices.sync(company.company_id, client=client, status="paid", page_size=PAGE_SIZE),
            PagedInvoice,
        )
        total = page.total_results
        seen = []
        pages = 0
        while True:
            pages += 1
            assert page.total_results == total
            for invoice in page.results:
                assert invoice.status == InvoiceStatus.PAID, invoice.status
                seen.append(invoice.invoice_id)
            if page.field_links.next_ is UNSET:
                break
            response = client.get_httpx_client().get(page.field_links.next_.href)
            response.raise_for_status()
            page = PagedInvoice.from_dict(response.json())

        assert 0 < total < INVOICE_COUNT, total
        assert len(seen) == total, f"followed _links.next to {len(seen)} invoices, totalResults says {total}"
        assert len(set(seen)) == total, "an invoice appeared twice"
        assert pages == -(-total // PAGE_SIZE), pages
        rotated = rotate_through_a_second_key(client, key)
        events = expect(list_webhook_deliveries.sync(hooks.id, client=client, page_size=100), PagedWebhookDelivery)
        types = {delivery.event_type for delivery in events.results}
        assert {"company.created", "connection.created", "connection.connected", "read.completed"} <= types, types
        renewed = expect(rotate_webhook_secret.sync(hooks.id, client=client), WebhookEndpointWithSecret)
        assert renewed.secret != hooks.secret and renewed.previous_secret_expires is not None
        assert delete_webhook_endpoint.sync_detailed(hooks.id, client=client).status_code == 204
        migrated = migrate_a_batch(client)
        print(
            f"client flow: company {company.company_id}, {INVOICE_COUNT} invoices synced; "
            f"{total} paid read over {pages} pages by following _links.next; {rotated}; "
            f"{events.total_results} webhook deliveries listed; {migrated}"
        )


def migrate_a_batch(client: AuthenticatedClient) -> str:
    """A managed migration batch: validated only, then stored, read back with its rows."""
    rows = [
        {"externalReference": f"client-flow-{n}", "companyName": f"Client flow {n}",
         "authorization": {"organizationId": f"sbx-client-flow-{n}", "accessToken": "client-flow-token"}}
        for n in range(2)
    ]
    body = MigrationInput.from_dict({"platformKey": "sandbox", "rows": rows})
    planned = expect(create_migration.sync(client=client, body=body, dry_run=True), MigrationCreation)
    assert planned.plan.rows == 2 and planned.migration is None, planned
    created = expect(create_migration.sync(client=client, body=body), MigrationCreation)
    batch = expect(get_migration.sync(created.migration.id, client=client), Migration)
    assert batch.state == "Draft" and batch.row_count == 2, batch
    assert not [item for item in batch.checklist if item.done and not item.checked_by_tributary], batch.checklist
    listed = expect(list_migration_rows.sync(batch.id, client=client), PagedMigrationRow)
    assert [row.external_reference for row in listed.results] == ["client-flow-0", "client-flow-1"], listed
    return f"a migration batch of {listed.total_results} rows stored as {batch.state}"


def rotate_through_a_second_key(client: AuthenticatedClient, key: str) -> str:
    """Creates a key, checks it sees the same companies, deletes it, and checks it no longer works."""
    created = expect(create_api_key.sync(client=client, body=ApiKeyInput(name="python partner")), CreatedApiKey)
    assert created.key != key and created.key.startswith("trb_"), "a new key, shown once"
    second = AuthenticatedClient(
        base_url=os.environ["TRIBUTARY_URL"],
        token=base64.b64encode(created.key.encode()).decode(),
        prefix="Basic",
    )
    with second:
        theirs = expect(list_companies.sync(client=second), PagedCompany)
        ours = expect(list_companies.sync(client=client), PagedCompany)
        assert theirs.total_results == ours.total_results, "both keys see the same companies"
        keys = expect(list_api_keys.sync(client=client, page_size=50), PagedApiKey)
        listed = [entry for entry in keys.results if entry.id == created.id]
        assert len(listed) == 1 and listed[0].name == "python partner", keys
        assert delete_api_key.sync_detailed(created.id, client=client).status_code == 204
        refused = list_companies.sync_detailed(client=second)
        assert refused.status_code == 401, refused.status_code
    return f"a second key created, used and deleted ({keys.total_results} keys listed)"


if __name__ == "__main__":
    main()
