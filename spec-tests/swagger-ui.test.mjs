// Swagger UI in a real browser: Debian's Chromium driven by playwright-core
// (no browser download). Opens /docs on a seeded server, authorizes through
// the Authorize dialog, runs "Try it out" on listCompanies and on
// listInvoices with status=paid, and checks the rendered 200 responses.
//
// Environment: TRIBUTARY_URL, TRIBUTARY_KEY, the SEED_* values from seed.py,
// CHROMIUM (default /usr/bin/chromium), SCREENSHOT_DIR (default
// target/ci-artifacts). Run with `node --test spec-tests/swagger-ui.test.mjs`.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const env = (name) => {
  const value = process.env[name];
  assert.ok(value, `${name} must be set (see spec-tests/run)`);
  return value;
};

const url = env('TRIBUTARY_URL');
const key = env('TRIBUTARY_KEY');
const screenshots = process.env.SCREENSHOT_DIR ?? 'target/ci-artifacts';

let browser;
let context;
let page;
let profile;

before(async () => {
  profile = mkdtempSync(join(tmpdir(), 'tributary-chromium-'));
  // A persistent context is how Playwright takes a fresh --user-data-dir.
  context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 1280, height: 900 },
  });
  browser = context;
  page = context.pages()[0] ?? (await context.newPage());
  // Everything the page needs is served by tributary itself: any request to
  // another host would be a bug (assets must be embedded).
  page.on('request', (request) => {
    const target = new URL(request.url());
    if (!['http:', 'https:'].includes(target.protocol)) return;
    assert.equal(target.origin, new URL(url).origin, `the page fetched ${request.url()}`);
  });
  await page.goto(`${url}/docs`);
  await page.locator('.swagger-ui .info .title').waitFor();
  // What a reader sees first: title, description, the first tags.
  mkdirSync(screenshots, { recursive: true });
  await page.screenshot({ path: join(screenshots, 'swagger-ui-top.png') });
});

after(async () => {
  if (page) {
    mkdirSync(screenshots, { recursive: true });
    // The listInvoices call as a person sees it, and the whole page.
    const invoices = page.locator('#operations-Data-listInvoices');
    if (await invoices.locator('.live-responses-table').count()) {
      await invoices.screenshot({ path: join(screenshots, 'swagger-ui.png') });
    } else {
      await page.screenshot({ path: join(screenshots, 'swagger-ui.png') });
    }
    await page.screenshot({ path: join(screenshots, 'swagger-ui-full.png'), fullPage: true });
  }
  await browser?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

/** Expands an operation, runs "Try it out" with `parameters` filled, and returns the rendered response. */
async function tryItOut(operationBlock, parameters = {}) {
  const block = page.locator(operationBlock);
  await block.locator('.opblock-summary').first().click();
  await block.locator('button.try-out__btn').click();
  for (const [name, value] of Object.entries(parameters)) {
    await block.locator(`tr[data-param-name="${name}"] input`).fill(value);
  }
  await block.locator('button.execute').click();
  const response = block.locator('.live-responses-table .response').first();
  await response.waitFor();
  const status = (await response.locator('.response-col_status').innerText()).trim();
  const body = await response.locator('.response-col_description pre.microlight').first().innerText();
  const requestUrl = (await block.locator('.request-url pre').innerText()).trim();
  return { status, body: JSON.parse(body), requestUrl };
}

test('the page reads as product documentation', async () => {
  assert.equal(await page.title(), 'tributary API reference');
  const title = await page.locator('.swagger-ui .info .title').innerText();
  assert.match(title, /^tributary/);
  const description = await page.locator('.swagger-ui .info .description').innerText();
  for (const heading of [
    'Authentication',
    'Paging',
    'Linking a connection',
    'Migrating a connection',
    'Managed migrations',
    "Each platform's authorization body",
    'Webhooks',
    'Rate limits',
    'Errors',
  ]) {
    assert.ok(description.includes(heading), `the description has a section "${heading}"`);
  }
  const tags = await page.locator('.swagger-ui .opblock-tag-section h3').allInnerTexts();
  const names = tags.map((text) => text.split('\n')[0].trim());
  assert.deepEqual(names, ['ApiKeys', 'Companies', 'Connections', 'Data', 'Integrations', 'Links', 'Migrations', 'Service', 'Webhooks']);
  for (const text of tags) {
    assert.ok(text.split('\n').length > 1 || text.length > 20, `tag "${text}" has a description`);
  }
});

test('Authorize with the API key, then listCompanies answers 200 with the seeded companies', async () => {
  await page.locator('.swagger-ui .auth-wrapper button.authorize').click();
  const dialog = page.locator('.swagger-ui .dialog-ux .modal-ux');
  await dialog.waitFor();
  // HTTP Basic: the key is the username, the password stays empty.
  await dialog.locator('input[type="text"]').first().fill(key);
  await dialog.locator('button.authorize').click();
  await dialog.getByText('Authorized', { exact: false }).first().waitFor();
  await dialog.locator('button.btn-done').click();

  const { status, body, requestUrl } = await tryItOut('#operations-Companies-listCompanies');
  assert.equal(status, '200');
  assert.ok(requestUrl.startsWith(`${url}/companies`), requestUrl);
  assert.equal(body.totalResults, Number(env('SEED_COMPANY_COUNT')));
  const names = body.results.map((company) => company.name);
  assert.ok(names.includes(env('SEED_COMPANY_NAME')), names.join(', '));
  assert.equal(body._links.self.href.startsWith('/companies'), true);
});

test('listInvoices with status=paid answers 200 with only paid invoices', async () => {
  const { status, body, requestUrl } = await tryItOut('#operations-Data-listInvoices', {
    companyId: env('SEED_COMPANY_ID'),
    status: 'paid',
  });
  assert.equal(status, '200');
  assert.ok(requestUrl.includes('status=paid'), requestUrl);
  assert.equal(body.totalResults, Number(env('SEED_PAID_COUNT')));
  assert.ok(body.results.length > 0);
  for (const invoice of body.results) {
    assert.equal(invoice.status, 'Paid');
    assert.equal(invoice.amountDue, '0.00');
  }
});
