// The README's shell examples, pasted as a partner pastes them: every
// ```sh block that calls the API (one with `curl`) runs in bash, in the
// README's order, as one terminal session (each block's variables carry
// into the next), against the real server (spec-tests/run starts it, with
// Xero played by fake-platforms.mjs).
//
// What is filled in, as a reader fills it in:
// - an assignment whose value is a placeholder ending in `...`
//   (`KEY=trb_...`, `XERO_TENANT_ID=...`) gets the value below;
// - `http://127.0.0.1:8080` becomes the test server's address.
// Nothing else changes. A block passes when bash exits 0 with `set -e -o
// pipefail` and `curl` answering an HTTP error fails (`--fail-with-body`),
// so an answer of 4xx or 5xx anywhere fails the test with its body shown;
// and a value the README says a line prints (a trailing comment such as
// `# "Linked"`) must be in the block's output.
// Where a block prints a link session's `linkUrl` ("open it in a
// browser"), the test opens it in Chromium and consents as the README says
// (Continue, Allow, choose an organization), then waits for the first
// link's sync as a person would before pasting the next block.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const url = process.env.TRIBUTARY_URL;
const key = process.env.TRIBUTARY_KEY;
assert.ok(url && key && process.env.FAKE_PLATFORMS_URL, 'TRIBUTARY_URL, TRIBUTARY_KEY and FAKE_PLATFORMS_URL must be set (see spec-tests/run)');

/** The placeholders' values: the server's key, and the credentials and organisation fake-platforms.mjs knows. */
const FILLED = {
  KEY: key,
  XERO_CLIENT_ID: 'spec-client',
  XERO_CLIENT_SECRET: 'spec-secret',
  XERO_TENANT_ID: '70784a63-d24b-46a9-a4db-0e70a274b056',
  XERO_ACCESS_TOKEN: 'eyJhbGciOiJub25lIn0.eyJhdXRoZW50aWNhdGlvbl9ldmVudF9pZCI6ImV2LXNwZWMifQ.signature',
  XERO_REFRESH_TOKEN: 'rt-readme',
};
const PLACEHOLDER = /(^|\s)([A-Z][A-Z0-9_]*)=(\S*\.\.\.)(?=\s|$)/gm;
const ASSIGNMENT = /(?:^|\s)([A-Z][A-Z0-9_]*)=/gm;
const auth = { authorization: `Basic ${Buffer.from(key).toString('base64')}` };

let context;
let page;
let work;

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'tributary-readme-'));
  context = await chromium.launchPersistentContext(join(work, 'profile'), {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  page = context.pages()[0] ?? (await context.newPage());
});

after(async () => {
  await context?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** The README's ```sh blocks that call the API, with their line numbers. */
function apiBlocks() {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const blocks = [];
  for (const match of readme.matchAll(/^```sh\n([\s\S]*?)^```$/gm)) {
    if (!/\bcurl\b/.test(match[1])) continue;
    blocks.push({ line: readme.slice(0, match.index).split('\n').length, text: match[1] });
  }
  return blocks;
}

/** `text` as the reader runs it: placeholders filled, the server's address in. */
function filled(text) {
  return text
    .replace(PLACEHOLDER, (_, space, name, placeholder) => {
      assert.ok(name in FILLED, `the README's placeholder ${name}=${placeholder} has no value in readme.test.mjs`);
      return `${space}${name}='${FILLED[name]}'`;
    })
    .replaceAll('http://127.0.0.1:8080', url);
}

async function api(path) {
  const response = await fetch(`${url}${path}`, { headers: auth });
  const text = await response.text();
  assert.equal(response.status, 200, `${path}: ${text}`);
  return JSON.parse(text);
}

/** Waits until no company has a sync queued or running. */
async function syncsSettled() {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const companies = await api('/companies?pageSize=5000');
    let busy = 0;
    for (const company of companies.results) {
      const history = await api(`/companies/${company.companyId}/data/history?pageSize=5000`);
      busy += history.results.filter((operation) => ['Queued', 'Fetching'].includes(operation.status)).length;
    }
    if (busy === 0) return;
    assert.ok(Date.now() < deadline, `${busy} syncs still running after 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}

/** The end customer's part: the sandbox's consent in the hosted pages. */
async function consent(linkUrl) {
  await page.goto(linkUrl);
  await page.getByRole('button', { name: /^Continue to / }).click();
  await page.getByRole('button', { name: 'Allow' }).click();
  await page.getByRole('heading', { name: 'Choose the organization' }).waitFor();
  await page.getByRole('radio').first().check();
  await page.getByRole('button', { name: 'Connect this organization' }).click();
  await page.getByRole('heading', { name: 'Connected' }).waitFor();
}

test("every shell example in the README works as pasted", async () => {
  const blocks = apiBlocks();
  assert.ok(blocks.length >= 5, `only ${blocks.length} README blocks call the API`);
  const names = new Set();
  for (const block of blocks) for (const [, name] of block.text.matchAll(ASSIGNMENT)) names.add(name);
  const state = join(work, 'state.sh');
  writeFileSync(state, '');
  for (const block of blocks) {
    const script = [
      'set -e -o pipefail',
      `source '${state}'`,
      'curl() { command curl --fail-with-body "$@"; }',
      filled(block.text),
      `{ declare -p ${[...names].join(' ')} 2>/dev/null || true; } > '${state}'`,
    ].join('\n');
    const run = spawnSync('bash', ['-c', script], { encoding: 'utf8', timeout: 120_000 });
    const shown = `README.md line ${block.line}:\n${block.text}\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`;
    assert.equal(run.status, 0, `the block failed as pasted\n${shown}`);
    for (const [, printed] of block.text.matchAll(/#\s*("[^"]*")\s*$/gm)) {
      assert.ok(run.stdout.includes(printed), `the README says ${printed} is printed\n${shown}`);
    }
    console.log(`README.md line ${block.line}: ran as pasted`);
    const linkUrl = run.stdout.match(/https?:\/\/\S+\/link\/\S+/);
    if (linkUrl) {
      await consent(linkUrl[0]);
      await syncsSettled();
    }
  }
});
