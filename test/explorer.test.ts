import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Browser, chromium, Page } from 'playwright-core';
import { randomAddress, startServer, TestServer } from './setup/server';

/**
 * The explorers a developer opens in a browser, with no route to the internet: GET /graphql tries Apollo
 * Sandbox (from Apollo's CDN) and falls back to the gateway's own GraphiQL; GET /v1/docs is Swagger UI.
 * The browser tests drive Debian's chromium with playwright-core; every request off this machine is
 * aborted, so they prove what works offline. A screenshot of each page goes to SCREENSHOT_DIR (CI keeps
 * it with the run's logs). Without chromium they are skipped, saying so; in CI (CI=true) they must run.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const hasChromium = fs.existsSync(CHROMIUM);
const inCi = process.env.CI === 'true';
const SCREENSHOTS = process.env.SCREENSHOT_DIR ?? path.join(os.tmpdir(), 'nftgw-screenshots');
const database = process.env.DATABASE_URL ? 'postgres' : 'embedded';
const shotName = (page: string) => `${page}-${database}-node${process.versions.node.split('.')[0]}.png`;
/** The flags that keep chromium off the network on its own (stack-notes.md). */
const CHROMIUM_FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

const OWNER = randomAddress();
const CONTRACT = randomAddress();
const NAME = `Explorer Collection ${CONTRACT.slice(-6)}`;

let server: TestServer;
let production: TestServer;
beforeAll(async () => {
  [server, production] = await Promise.all([startServer(), startServer({ production: true })]);
});
afterAll(() => Promise.all([server.close(), production.close()]));

describe('the explorer pages over HTTP', () => {
  test('when a browser asks for /graphql, then the Sandbox page first loads the local explorer fallback from this server', async () => {
    const res = await server.rest('GET', '/graphql', undefined, undefined, { accept: 'text/html' });
    expect(res.status).toBe(200);
    expect(res.body).toMatch(/EmbeddedSandbox/);
    const head = String(res.body).split('</head>')[0];
    expect(head).toContain('<script src="/graphql/explorer/fallback.js"></script>');
    const fallback = await fetch(`${server.url}/graphql/explorer/fallback.js`);
    expect(fallback.status).toBe(200);
    expect(fallback.headers.get('content-type')).toMatch(/javascript/);
    expect(await fallback.text()).toContain('/graphql/explorer');
  });

  test('when /graphql/explorer is asked, then its page and every file it loads come from this server', async () => {
    const page = await fetch(`${server.url}/graphql/explorer`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    const sources = [...html.matchAll(/(?:src|href)="([^"]+\.(?:js|css))"/g)].map((m) => m[1]);
    expect(sources).toEqual([
      '/graphql/explorer/assets/graphiql.css',
      '/graphql/explorer/assets/react.js',
      '/graphql/explorer/assets/react-dom.js',
      '/graphql/explorer/assets/graphiql.js',
      '/graphql/explorer/start.js',
    ]);
    for (const source of sources) {
      const res = await fetch(`${server.url}${source}`);
      expect([source, res.status]).toEqual([source, 200]);
      expect(res.headers.get('content-type')).toMatch(source.endsWith('.css') ? /^text\/css/ : /javascript/);
      expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(100);
    }
  });

  test('when the gateway runs in production, then there is neither Sandbox nor the local explorer', async () => {
    const landing = await production.rest('GET', '/graphql', undefined, undefined, { accept: 'text/html' });
    expect(String(landing.body)).not.toMatch(/EmbeddedSandbox/);
    for (const url of ['/graphql/explorer', '/graphql/explorer/assets/graphiql.js', '/graphql/explorer/fallback.js']) {
      const res = await fetch(`${production.url}${url}`, { headers: { accept: 'text/html' } });
      expect([url, res.status]).toEqual([url, expect.any(Number)]);
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(await res.text()).not.toMatch(/GraphiQL|graphiql/);
    }
  });

  test('when operationName names no operation of the document (an explorer may send a stale one), then the answer is a coded 400, not a 500', async () => {
    for (const operationName of ['Deleted', '']) {
      const res = await server.rest('POST', '/graphql', { query: '{ categories(limit: 1) { result { id } } }', operationName });
      expect(res.status).toBe(400);
      expect(res.body.errors[0]).toMatchObject({ message: `Unknown operation named "${operationName}".`, extensions: { code: 'BAD_REQUEST' } });
    }
  });
});

const describeInBrowser = hasChromium || inCi ? describe : describe.skip;
if (!hasChromium && !inCi) {
  console.warn(`explorer.test.ts: the browser tests are skipped: no chromium at ${CHROMIUM} (apt-get install -y chromium; CI installs it)`);
}

describeInBrowser('the explorers in headless chromium, offline', () => {
  jest.setTimeout(120_000);
  let browser: Browser;
  let page: Page;
  /** Every request the page tried off this machine (aborted). */
  const offMachine: string[] = [];

  beforeAll(async () => {
    if (!hasChromium) throw new Error(`CI runs the browser tests, but there is no chromium at ${CHROMIUM}: .ci/run installs it with apt-get`);
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    // Swagger UI renders the whole description before the first click: seconds on a busy 2-core runner.
    page.setDefaultTimeout(60_000);
    await page.route('**/*', (route) => {
      const { hostname, href } = new URL(route.request().url());
      if (hostname === '127.0.0.1' || hostname === 'localhost') return route.continue();
      offMachine.push(href);
      return route.abort('internetdisconnected');
    });
    const { key } = await server.key({ address: OWNER });
    const created = await server.rest('POST', '/v1/collections', { contract_address: CONTRACT, chain_id: '1', name: NAME }, key);
    expect(created.status).toBe(200);
  });
  afterAll(() => browser?.close());

  test('when /graphql is opened and Sandbox cannot load, then GraphiQL opens, reads the schema, and runs a typed query with variables', async () => {
    await page.goto(`${server.url}/graphql`);
    await page.waitForURL(`${server.url}/graphql/explorer`, { timeout: 15_000 });
    expect(offMachine.some((url) => url.includes('embeddable-sandbox.cdn.apollographql.com'))).toBe(true);

    // The docs come from introspecting the gateway: the root types, then Query's fields with their descriptions.
    await page.getByLabel('Show Documentation Explorer').click();
    const docs = page.locator('.graphiql-doc-explorer');
    await docs.getByText('Root Types').waitFor();
    await docs.getByText('Subscription', { exact: true }).waitFor();
    await docs.getByText('Query', { exact: true }).click();
    await docs.getByText('Collections, filtered and paged like GET /v1/collections').waitFor();

    await typeQuery(page, 'query ExplorerCollection($address: Address!) {\n  collection(address: $address, chainId: "1") {\n    name\n    owner\n  }\n}\n');
    await typeInto(page, VISIBLE_TOOL_EDITOR, JSON.stringify({ address: CONTRACT }));
    await page.getByLabel('Execute query (Ctrl-Enter)').click();
    const response = page.locator('.graphiql-response');
    await response.getByText(`"${NAME}"`).waitFor();
    expect(await response.innerText()).toContain(`"owner": "${OWNER}"`);
    await page.screenshot({ path: path.join(SCREENSHOTS, shotName('graphql-explorer')) });
  });

  test('when the Sandbox script never arrives (a network that drops packets), then GraphiQL opens after a few seconds', async () => {
    const hanging = await browser.newPage();
    const held: string[] = [];
    // Requests off the machine are neither answered nor refused: the page waits, as behind a firewall that drops them.
    await hanging.route('**/*', (route) => {
      const { hostname, href } = new URL(route.request().url());
      if (hostname === '127.0.0.1' || hostname === 'localhost') return route.continue();
      held.push(href);
      return new Promise<void>(() => {});
    });
    const started = Date.now();
    await hanging.goto(`${server.url}/graphql`, { waitUntil: 'commit' });
    await hanging.waitForURL(`${server.url}/graphql/explorer`, { timeout: 20_000, waitUntil: 'commit' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(5000);
    expect(held.some((url) => url.includes('embeddable-sandbox.cdn.apollographql.com'))).toBe(true);
    await hanging.locator('.graphiql-container').waitFor();
    await hanging.close();
  });

  test('when a subscription runs in GraphiQL, then an event committed after it arrives on the page over the WebSocket', async () => {
    await page.goto(`${server.url}/graphql/explorer`);
    await typeQuery(page, 'subscription ExplorerEvents { events(types: ["collection.created"]) { type data } }');
    await page.getByLabel('Execute query (Ctrl-Enter)').click();
    // The subscription is open when GraphiQL offers to stop it.
    await page.getByLabel('Stop query (Ctrl-Enter)').waitFor();
    const { key } = await server.key({ address: OWNER });
    const later = `${NAME} live`;
    const created = await server.rest('POST', '/v1/collections', { contract_address: randomAddress(), chain_id: '1', name: later }, key);
    expect(created.status).toBe(200);
    const response = page.locator('.graphiql-response');
    await response.getByText('"collection.created"').waitFor();
    expect(await response.innerText()).toContain(later);
    await page.getByLabel('Stop query (Ctrl-Enter)').click();
  });

  test('when an API key is set in Headers, then a mutation run in GraphiQL acts as its account, and History lists the runs', async () => {
    const address = randomAddress();
    const { key } = await server.key({ address });
    await page.goto(`${server.url}/graphql/explorer`);
    await page.getByText('Headers', { exact: true }).click();
    await typeInto(page, VISIBLE_TOOL_EDITOR, JSON.stringify({ 'access-token': key }));
    const contract = randomAddress();
    await typeQuery(page, `mutation ExplorerCreate { createCollection(input: { contractAddress: "${contract}", chainId: "1", name: "Keyed" }) { name owner } }`);
    await page.getByLabel('Execute query (Ctrl-Enter)').click();
    await page.locator('.graphiql-response').getByText(`"owner": "${address}"`).waitFor();
    const stored = await server.rest('GET', `/v1/collections/${contract}?chain_id=1`);
    expect(stored.body).toMatchObject({ name: 'Keyed', owner: address });
    // History keeps the runs of this browser, the earlier tests' too.
    await page.getByLabel('Show History').click();
    const history = page.locator('.graphiql-history');
    await history.getByText('ExplorerCreate').waitFor();
    await history.getByText('ExplorerCollection').waitFor();
  });

  test('when /v1/docs is opened, then Swagger UI renders the description and tries a route against this server', async () => {
    await page.goto(`${server.url}/v1/docs`);
    const operation = page.locator('#operations-collections-getV1CollectionsAddress');
    await operation.locator('.opblock-summary-control').click();
    await operation.getByRole('button', { name: 'Try it out' }).click();
    await operation.locator('[data-param-name="address"] input').fill(CONTRACT);
    await operation.getByRole('button', { name: 'Execute' }).click();
    const answer = operation.locator('.live-responses-table').getByText(NAME).first();
    await answer.waitFor();
    await answer.scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(SCREENSHOTS, shotName('v1-docs')), fullPage: false });
  });

  test('then nothing the pages needed came from off this machine: every such request was aborted and the pages worked', () => {
    expect(offMachine.every((url) => !url.startsWith(server.url))).toBe(true);
    console.info(`explorer.test.ts: screenshots in ${SCREENSHOTS}; requests aborted off this machine: ${offMachine.length}`);
  });
});

/** The editor of the Variables or Headers tab, whichever is shown. */
const VISIBLE_TOOL_EDITOR = '.graphiql-editor-tool .graphiql-editor:not(.hidden) .CodeMirror';

/** Replaces the query editor's text as typed text (insertText: no auto-closed brackets). */
async function typeQuery(page: Page, text: string): Promise<void> {
  await typeInto(page, '.graphiql-query-editor .CodeMirror', text);
}

async function typeInto(page: Page, selector: string, text: string): Promise<void> {
  await page.locator(selector).first().click();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Backspace');
  await page.keyboard.insertText(text);
  // GraphiQL reads the operation's name from the editor after a short pause; run before it, and it sends the previous name.
  await page.waitForTimeout(400);
}
