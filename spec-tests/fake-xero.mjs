// Xero's identity server and the parts of its API the link flow touches,
// played on loopback for the Chromium link-flow check (spec-tests/run starts
// it and points tributary's TRIBUTARY_XERO_* URLs at it). Shaped from Xero's
// documentation (src/platforms/xero/NOTES.md, "Linking"): the authorize
// endpoint redirects back with a code and the state; the token endpoint takes
// HTTP Basic client credentials, the code once, the same redirect_uri and
// the PKCE verifier, and answers an access token (a JWT carrying
// `authentication_event_id`); GET /connections lists the consent's tenants
// (two organisations) and DELETE /connections/{id} disconnects one.
// GET /_seen reports what it received, for the test's assertions.
//
// Environment: FAKE_XERO_PORT.

import { createServer } from 'node:http';
import { createHash, randomUUID } from 'node:crypto';

const CLIENT_ID = 'spec-xero-client';
const CLIENT_SECRET = 'spec-xero-secret';
const codes = new Map();
const seen = { tokenRequests: [], disconnected: [], connectionLookups: [] };

const b64url = (buffer) => Buffer.from(buffer).toString('base64url');

function json(response, status, body) {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(body === undefined ? '' : JSON.stringify(body));
}

async function readBody(request) {
  let body = '';
  for await (const chunk of request) body += chunk;
  return body;
}

const server = createServer(async (request, response) => {
  const url = new URL(request.url, 'http://localhost');
  if (url.pathname === '/authorize' && request.method === 'GET') {
    const query = url.searchParams;
    if (query.get('client_id') !== CLIENT_ID || !query.get('redirect_uri')) return json(response, 400, { error: 'invalid_request' });
    const code = randomUUID();
    codes.set(code, { redirectUri: query.get('redirect_uri'), challenge: query.get('code_challenge'), used: false });
    const back = new URL(query.get('redirect_uri'));
    back.searchParams.set('code', code);
    back.searchParams.set('state', query.get('state') ?? '');
    response.writeHead(302, { location: back.toString() });
    return response.end();
  }
  if (url.pathname === '/token' && request.method === 'POST') {
    const form = new URLSearchParams(await readBody(request));
    seen.tokenRequests.push(Object.fromEntries([...form.entries()].filter(([name]) => name !== 'code' && name !== 'code_verifier')));
    const expected = `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`;
    if (request.headers.authorization !== expected) return json(response, 401, { error: 'invalid_client' });
    const issued = codes.get(form.get('code'));
    if (!issued || issued.used) return json(response, 400, { error: 'invalid_grant' });
    issued.used = true;
    if (form.get('redirect_uri') !== issued.redirectUri) return json(response, 400, { error: 'invalid_grant' });
    if (issued.challenge && b64url(createHash('sha256').update(form.get('code_verifier') ?? '').digest()) !== issued.challenge) {
      return json(response, 400, { error: 'invalid_grant' });
    }
    const claims = b64url(JSON.stringify({ authentication_event_id: 'ev-spec' }));
    return json(response, 200, {
      access_token: `eyJhbGciOiJub25lIn0.${claims}.signature`,
      refresh_token: `rt-${randomUUID()}`,
      expires_in: 1800,
      token_type: 'Bearer',
    });
  }
  if (url.pathname === '/connections' && request.method === 'GET') {
    seen.connectionLookups.push(url.searchParams.get('authEventId'));
    return json(response, 200, [
      { id: 'c0000000-0000-4000-8000-000000000001', authEventId: 'ev-spec', tenantId: '70784a63-d24b-46a9-a4db-0e70a274b056', tenantType: 'ORGANISATION', tenantName: 'Maple Florists' },
      { id: 'c0000000-0000-4000-8000-000000000002', authEventId: 'ev-spec', tenantId: '11111111-2222-4333-8444-555555555555', tenantType: 'ORGANISATION', tenantName: 'Maple Florists (Demo)' },
    ]);
  }
  if (url.pathname.startsWith('/connections/') && request.method === 'DELETE') {
    seen.disconnected.push(url.pathname.slice('/connections/'.length));
    return json(response, 204);
  }
  if (url.pathname === '/api.xro/2.0/Invoices') return json(response, 200, { Invoices: [] });
  if (url.pathname === '/api.xro/2.0/Contacts') return json(response, 200, { Contacts: [] });
  if (url.pathname === '/_seen') return json(response, 200, seen);
  return json(response, 404, { Type: null, Title: 'Resource Not Found' });
});

server.listen(Number(process.env.FAKE_XERO_PORT), '127.0.0.1');
