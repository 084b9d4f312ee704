// Three platforms' authorization servers and the parts of their APIs the
// link flow touches, played on loopback for the Chromium link-flow check
// (spec-tests/run starts it and points tributary's TRIBUTARY_<KEY>_* URLs at
// it), each under its own prefix and shaped from its documentation (the
// "Linking" section of src/platforms/<platform>/NOTES.md):
//
// - /xero: the authorize endpoint redirects back with a code and the state;
//   the token endpoint takes HTTP Basic client credentials, the code once,
//   the same redirect_uri and the PKCE verifier, and answers an access token
//   (a JWT carrying `authentication_event_id`); GET /connections lists the
//   consent's two organisations, DELETE /connections/{id} disconnects one.
// - /quickbooks: the redirect back carries `realmId`; HTTP Basic at the
//   token endpoint; the query endpoint answers empty lists.
// - /shopify: the redirect back carries `shop`, `timestamp` and `hmac` (hex
//   HMAC-SHA256 of the other parameters, sorted, keyed with the client
//   secret); the client's credentials in the token request's body; the
//   GraphQL endpoint answers empty order and customer connections.
//
// GET /_seen reports what it received, for the test's assertions.
// Environment: FAKE_PLATFORMS_PORT.

import { createServer } from 'node:http';
import { createHash, createHmac, randomUUID } from 'node:crypto';

export const CLIENT_ID = 'spec-client';
export const CLIENT_SECRET = 'spec-secret';
export const REALM = '9130357096634567';
export const SHOP = 'maple-goods.myshopify.com';

const codes = new Map();
const seen = { tokenRequests: [], disconnected: [], connectionLookups: [] };
const b64url = (buffer) => Buffer.from(buffer).toString('base64url');
const basic = `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`;

function json(response, status, body) {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(body === undefined ? '' : JSON.stringify(body));
}

async function readBody(request) {
  let body = '';
  for await (const chunk of request) body += chunk;
  return body;
}

/** The authorize endpoint: a code, then straight back with `extras`. */
function authorize(platform, query, response) {
  if (query.get('client_id') !== CLIENT_ID || !query.get('redirect_uri')) return json(response, 400, { error: 'invalid_request' });
  const code = randomUUID();
  codes.set(code, { platform, redirectUri: query.get('redirect_uri'), challenge: query.get('code_challenge'), used: false });
  const parameters = [['code', code], ['state', query.get('state') ?? '']];
  if (platform === 'quickbooks') parameters.push(['realmId', REALM]);
  if (platform === 'shopify') {
    parameters.push(['shop', SHOP], ['timestamp', '1764150000']);
    const message = [...parameters].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}=${v}`).join('&');
    parameters.push(['hmac', createHmac('sha256', CLIENT_SECRET).update(message).digest('hex')]);
  }
  const back = new URL(query.get('redirect_uri'));
  for (const [name, value] of parameters) back.searchParams.set(name, value);
  response.writeHead(302, { location: back.toString() });
  response.end();
}

/** The token endpoint's authorization-code grant. */
function exchange(platform, form, headers, response) {
  seen.tokenRequests.push({ platform, grant_type: form.get('grant_type'), redirect_uri: form.get('redirect_uri') });
  const clientOk = platform === 'shopify'
    ? form.get('client_id') === CLIENT_ID && form.get('client_secret') === CLIENT_SECRET
    : headers.authorization === basic;
  if (!clientOk) return json(response, 401, { error: 'invalid_client' });
  const issued = codes.get(form.get('code'));
  if (!issued || issued.used || issued.platform !== platform) return json(response, 400, { error: 'invalid_grant' });
  issued.used = true;
  if (form.get('redirect_uri') !== issued.redirectUri) return json(response, 400, { error: 'invalid_grant' });
  if (issued.challenge && b64url(createHash('sha256').update(form.get('code_verifier') ?? '').digest()) !== issued.challenge) {
    return json(response, 400, { error: 'invalid_grant' });
  }
  if (platform === 'shopify') return json(response, 200, { access_token: `shpat_${randomUUID()}`, scope: 'read_orders,read_customers,read_products' });
  const claims = b64url(JSON.stringify({ authentication_event_id: 'ev-spec' }));
  return json(response, 200, {
    access_token: platform === 'xero' ? `eyJhbGciOiJub25lIn0.${claims}.signature` : `at-${randomUUID()}`,
    refresh_token: `rt-${randomUUID()}`,
    expires_in: 3600,
    token_type: 'Bearer',
  });
}

const server = createServer(async (request, response) => {
  const url = new URL(request.url, 'http://localhost');
  if (url.pathname === '/_seen') return json(response, 200, seen);
  const [, platform, ...rest] = url.pathname.split('/');
  const path = `/${rest.join('/')}`;
  if (path === '/authorize' && request.method === 'GET') return authorize(platform, url.searchParams, response);
  if (path === '/token' && request.method === 'POST') {
    return exchange(platform, new URLSearchParams(await readBody(request)), request.headers, response);
  }
  if (platform === 'xero') {
    if (path === '/connections' && request.method === 'GET') {
      seen.connectionLookups.push(url.searchParams.get('authEventId'));
      return json(response, 200, [
        { id: 'c0000000-0000-4000-8000-000000000001', authEventId: 'ev-spec', tenantId: '70784a63-d24b-46a9-a4db-0e70a274b056', tenantType: 'ORGANISATION', tenantName: 'Maple Florists' },
        { id: 'c0000000-0000-4000-8000-000000000002', authEventId: 'ev-spec', tenantId: '11111111-2222-4333-8444-555555555555', tenantType: 'ORGANISATION', tenantName: 'Maple Florists (Demo)' },
      ]);
    }
    if (path.startsWith('/connections/') && request.method === 'DELETE') {
      seen.disconnected.push(path.slice('/connections/'.length));
      return json(response, 204);
    }
    if (path === '/api.xro/2.0/Invoices') return json(response, 200, { Invoices: [] });
    if (path === '/api.xro/2.0/Contacts') return json(response, 200, { Contacts: [] });
    if (path === '/api.xro/2.0/Accounts') return json(response, 200, { Accounts: [] });
    if (path === '/api.xro/2.0/TaxRates') return json(response, 200, { TaxRates: [] });
    if (path === '/api.xro/2.0/Payments') return json(response, 200, { Payments: [] });
    if (path === '/api.xro/2.0/CreditNotes') return json(response, 200, { CreditNotes: [] });
    if (path === '/api.xro/2.0/Items') return json(response, 200, { Items: [] });
    if (path === '/api.xro/2.0/Journals') return json(response, 200, { Journals: [] });
    if (path === '/api.xro/2.0/Organisation') return json(response, 200, { Organisations: [] });
  }
  if (platform === 'quickbooks' && path === `/v3/company/${REALM}/query`) return json(response, 200, { QueryResponse: {} });
  if (platform === 'quickbooks' && path === `/v3/company/${REALM}/companyinfo/${REALM}`) {
    return json(response, 200, { CompanyInfo: { Id: '1', CompanyName: 'Fake Company' } });
  }
  if (platform === 'quickbooks' && path === `/v3/company/${REALM}/preferences`) {
    return json(response, 200, { Preferences: { CurrencyPrefs: { HomeCurrency: { value: 'USD' } } } });
  }
  if (platform === 'shopify' && path.endsWith('/graphql.json') && request.method === 'POST') {
    const { query } = JSON.parse(await readBody(request));
    const empty = { pageInfo: { hasNextPage: false, endCursor: null }, nodes: [] };
    return json(response, 200, { data: query.includes('orders(') ? { orders: empty } : { customers: empty } });
  }
  return json(response, 404, { error: 'not found' });
});

server.listen(Number(process.env.FAKE_PLATFORMS_PORT), '127.0.0.1');
