// The hosted link flow in a real browser (Debian's Chromium through
// playwright-core, as the Swagger UI check): a link session for the
// sandbox, opened as an end customer opens it, consented to on the
// sandbox's own page (by keyboard), an organization chosen, and the
// customer landing on the partner's redirect URL with the outcome; then
// the API confirms the session and the connection. Every page comes from
// tributary itself and no request carries a Referer.
//
// Environment: TRIBUTARY_URL, TRIBUTARY_KEY, CHROMIUM (default
// /usr/bin/chromium), SCREENSHOT_DIR (default target/ci-artifacts).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const url = process.env.TRIBUTARY_URL;
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
    assert.equal(target.origin, new URL(url).origin, `the page fetched ${request.url()}`);
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
