// The hosted link flow in a real browser (Debian's Chromium through
// playwright-core, as the Swagger UI check): a link session for the
// sandbox, opened as an end customer opens it, consented to on the
// sandbox's own page (by keyboard), an organization chosen, and the
// customer landing on the partner's redirect URL with the outcome; then
// Xero, whose identity server (spec-tests/fake-platforms.mjs) returns a
// consent of two organisations: one chosen, the other disconnected at Xero;
// QuickBooks Online (the company on the callback) and Shopify (the shop
// asked first, a signed callback). The API confirms each session and
// connection. Every page comes from tributary
// (or the fake platform) and no request carries a Referer.
//
// Environment: TRIBUTARY_URL, TRIBUTARY_KEY, FAKE_PLATFORMS_URL, CHROMIUM (default
// /usr/bin/chromium), SCREENSHOT_DIR (default target/ci-artifacts).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const url = process.env.TRIBUTARY_URL;
const fakes = process.env.FAKE_PLATFORMS_URL;
const key = process.env.TRIBUTARY_KEY;
assert.ok(url && key, 'TRIBUTARY_URL and TRIBUTARY_KEY must be set (see spec-tests/run)');
const screenshots = process.env.SCREENSHOT_DIR ?? 'target/ci-artifacts';
const auth = { authorization: `Basic ${Buffer.from(key).toString('base64')}`, 'content-type': 'application/json' };

async function api(method, path, body) {
  const response = await fetch(`${url}${path}`, { method, headers: auth, body: body && JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

let context;
let page;
let profile;
const referers = [];

before(async () => {
  profile = mkdtempSync(join(tmpdir(), 'tributary-link-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    viewport: { width: 900, height: 800 },
  });
  page = context.pages()[0] ?? (await context.newPage());
  page.on('request', (request) => {
    const target = new URL(request.url());
    if (!['http:', 'https:'].includes(target.protocol)) return;
    const origins = [new URL(url).origin, fakes && new URL(fakes).origin];
    assert.ok(origins.includes(target.origin), `the page fetched ${request.url()}`);
    const referer = request.headers()['referer'];
    if (referer) referers.push(referer);
  });
  mkdirSync(screenshots, { recursive: true });
});

after(async () => {
  await context?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

test('a customer links the sandbox through the hosted pages and lands on the redirect URL', async () => {
  const redirectUrl = `${url}/healthz`;
  const settings = await api('PUT', '/linkSettings', { displayName: 'Acme Lending', allowedRedirectUrls: [redirectUrl] });
  assert.equal(settings.status, 200);
  const company = await api('POST', '/companies', { name: 'Bramble & Co' });
  assert.equal(company.status, 201);
  const companyId = company.body.companyId;
  const session = await api('POST', `/companies/${companyId}/linkSessions`, { platformKey: 'sandbox', redirectUrl });
  assert.equal(session.status, 201, JSON.stringify(session.body));

  await page.goto(session.body.linkUrl);
  assert.ok(!page.url().includes('token='), `the token left the address bar: ${page.url()}`);
  await page.getByText('Acme Lending').first().waitFor();
  await page.screenshot({ path: join(screenshots, 'link-1-confirm.png') });
  await page.getByRole('button', { name: 'Continue to tributary Sandbox' }).click();

  await page.getByRole('heading', { name: 'tributary Sandbox' }).waitFor();
  await page.screenshot({ path: join(screenshots, 'link-2-consent.png') });
  // By keyboard: the consent buttons are reachable and work without a mouse.
  await page.getByRole('button', { name: 'Allow' }).focus();
  await page.keyboard.press('Enter');

  await page.getByRole('heading', { name: 'Choose the organization' }).waitFor();
  await page.screenshot({ path: join(screenshots, 'link-3-organization.png') });
  await page.getByLabel('Demo Traders Ltd').check();
  await page.getByRole('button', { name: 'Connect this organization' }).click();

  await page.waitForURL((target) => target.toString().startsWith(redirectUrl));
  const landed = new URL(page.url());
  assert.equal(landed.searchParams.get('statusCode'), '200');
  assert.equal(landed.searchParams.get('companyId'), companyId);
  assert.equal(landed.searchParams.get('platformKey'), 'sandbox');
  const connectionId = landed.searchParams.get('connectionId');

  const confirmed = await api('GET', `/companies/${companyId}/linkSessions/${session.body.id}`);
  assert.equal(confirmed.body.status, 'Completed');
  assert.equal(confirmed.body.connectionId, connectionId);
  const connection = await api('GET', `/companies/${companyId}/connections/${connectionId}`);
  assert.equal(connection.body.status, 'Linked');
  assert.deepEqual(referers, [], 'no request carried a Referer');
});

test('a Xero consent of two organisations links the chosen one and disconnects the other', { skip: !fakes && 'FAKE_PLATFORMS_URL is not set' }, async () => {
  const client = await api('PUT', '/integrations/xero/oauth-client', { clientId: 'spec-client', clientSecret: 'spec-secret' });
  assert.equal(client.status, 200);
  const integration = await api('GET', '/integrations/xero');
  assert.equal(integration.body.callbackUrl, `${url}/oauth/xero/callback`);
  const company = await api('POST', '/companies', { name: 'Maple Florists' });
  const companyId = company.body.companyId;
  const session = await api('POST', `/companies/${companyId}/linkSessions`, { platformKey: 'xero' });
  assert.equal(session.status, 201, JSON.stringify(session.body));

  await page.goto(session.body.linkUrl);
  await page.getByRole('button', { name: 'Continue to Xero' }).click();
  // Xero's consent (the fake answers at once), then back: the picker.
  await page.getByRole('heading', { name: 'Choose the organization' }).waitFor();
  await page.screenshot({ path: join(screenshots, 'link-xero-organization.png') });
  await page.getByLabel('Maple Florists (Demo)').waitFor();
  await page.getByLabel('Maple Florists', { exact: true }).check();
  await page.getByRole('button', { name: 'Connect this organization' }).click();
  await page.getByRole('heading', { name: 'Connected' }).waitFor();
  assert.ok(!page.url().includes('code='), `no code stays in the address bar: ${page.url()}`);

  const confirmed = await api('GET', `/companies/${companyId}/linkSessions/${session.body.id}`);
  assert.equal(confirmed.body.status, 'Completed');
  const connection = await api('GET', `/companies/${companyId}/connections/${confirmed.body.connectionId}`);
  assert.equal(connection.body.status, 'Linked');
  assert.equal(connection.body.authorization.organizationId, '70784a63-d24b-46a9-a4db-0e70a274b056');
  const seen = await (await fetch(`${fakes}/_seen`)).json();
  assert.deepEqual(seen.disconnected, ['c0000000-0000-4000-8000-000000000002']);
  assert.equal(seen.connectionLookups[0], 'ev-spec');
  const exchange = seen.tokenRequests.find((request) => request.platform === 'xero');
  assert.equal(exchange.grant_type, 'authorization_code');
  assert.equal(exchange.redirect_uri, `${url}/oauth/xero/callback`);
  assert.deepEqual(referers, [], 'no request carried a Referer');
});

/** Links `platformKey` for a new company through the hosted pages; `beforeContinue` fills the confirmation page. */
async function linkInBrowser(platformKey, name, beforeContinue = async () => {}) {
  const client = await api('PUT', `/integrations/${platformKey}/oauth-client`, { clientId: 'spec-client', clientSecret: 'spec-secret' });
  assert.equal(client.status, 200);
  const company = await api('POST', '/companies', { name });
  const companyId = company.body.companyId;
  const session = await api('POST', `/companies/${companyId}/linkSessions`, { platformKey });
  assert.equal(session.status, 201, JSON.stringify(session.body));
  await page.goto(session.body.linkUrl);
  await beforeContinue();
  await page.getByRole('button', { name: /^Continue to / }).click();
  await page.getByRole('heading', { name: 'Connected' }).waitFor();
  await page.screenshot({ path: join(screenshots, `link-${platformKey}-connected.png`) });
  const confirmed = await api('GET', `/companies/${companyId}/linkSessions/${session.body.id}`);
  assert.equal(confirmed.body.status, 'Completed');
  const connection = await api('GET', `/companies/${companyId}/connections/${confirmed.body.connectionId}`);
  assert.equal(connection.body.status, 'Linked');
  return connection.body;
}

test('QuickBooks Online links the company its callback names', { skip: !fakes && 'FAKE_PLATFORMS_URL is not set' }, async () => {
  const connection = await linkInBrowser('quickbooks-online', 'Juniper Books');
  assert.equal(connection.authorization.organizationId, '9130357096634567');
});

test('Shopify asks for the shop, then links it from a signed callback', { skip: !fakes && 'FAKE_PLATFORMS_URL is not set' }, async () => {
  const connection = await linkInBrowser('shopify', 'Maple Goods', async () => {
    await page.getByLabel("Your shop's domain").fill('maple-goods');
  });
  assert.equal(connection.authorization.organizationId, 'maple-goods.myshopify.com');
  assert.deepEqual(referers, [], 'no request carried a Referer');
});
