import http from 'node:http';
import vm from 'node:vm';
import { AddressInfo } from 'node:net';
import { MetadataSettings } from '../src/config';
import { MetadataWorker } from '../src/modules/metadata/metadata.worker';
import { Claimed, Outcome, recordOutcomes } from '../src/modules/metadata/metadata.queue';
import { PostgresQueryRunner } from 'typeorm/driver/postgres/PostgresQueryRunner';
import { updateReturning } from '../src/common/sql';
import { exclusive } from './setup/exclusive';
import { testMetadataSettings } from './factories/metadata';
import { randomAddress, startServer, TestServer } from './setup/server';

/**
 * Metadata ingestion (docs/metadata.md): assets created with a token_uri get the document behind it, through
 * a local HTTP server that plays the hosts (good, slow, huge, not JSON, 404 then good, redirecting inward)
 * and the IPFS gateway; refreshes and their events.
 */

/** A local host of metadata documents; counts the requests per path. */
class MetadataHost {
  readonly hits = new Map<string, number>();
  /** Documents the tests change (path /doc/<name>). */
  readonly docs = new Map<string, Record<string, unknown>>();
  private server!: http.Server;
  url = '';
  /** Where /redirect-private sends the client. */
  redirectTarget = '';

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => this.answer(req, res));
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  hitsOf(path: string): number {
    return this.hits.get(path) ?? 0;
  }

  private answer(req: http.IncomingMessage, res: http.ServerResponse): void {
    const path = req.url ?? '/';
    const count = (this.hits.get(path) ?? 0) + 1;
    this.hits.set(path, count);
    const json = (body: unknown, status = 200): void => void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const good = /^\/(?:good|race|ipfs\/\w+)\/(\w+)$/.exec(path);
    if (good) return json(goodDocument(good[1]));
    if (path.startsWith('/doc/')) return json(this.docs.get(path.slice(5)) ?? {}, this.docs.has(path.slice(5)) ? 200 : 404);
    if (path === '/slow') {
      const timer = setTimeout(() => json(goodDocument('slow')), 3000);
      res.on('close', () => clearTimeout(timer));
      return;
    }
    if (path === '/huge') return json({ name: 'huge', padding: 'x'.repeat(200_000) });
    if (path === '/html') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>not json</html>');
    if (path === '/flaky') return count === 1 ? json({ error: 'not pinned yet' }, 404) : json(goodDocument('flaky'));
    if (path === '/redirect-private' || path === '/ipfs/redirect-private') return void res.writeHead(302, { location: this.redirectTarget }).end();
    json({ error: 'no such document' }, 404);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

function goodDocument(n: string) {
  return {
    name: `Good #${n}`,
    description: `The document of ${n}`,
    image: `ipfs://QmImage/${n}.png`,
    animation_url: `https://example.com/${n}.mp4`,
    external_url: `https://example.com/token/${n}`,
    attributes: [
      { trait_type: 'Background', value: n === 'slow' ? 'Slow' : 'Blue' },
      { trait_type: 'Level', value: 5, display_type: 'number' },
    ],
  };
}

function settings(host: MetadataHost, overrides: Partial<MetadataSettings> = {}): MetadataSettings {
  return testMetadataSettings(host.url, overrides);
}

async function waitFor<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, withinMs = 8000): Promise<T> {
  const until = Date.now() + withinMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > until) throw new Error(`${what}: not reached within ${withinMs} ms; last ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const host = new MetadataHost();
let server: TestServer;
let owner: { key: string; address: string };
let collection: { id: string; contract_address: string; chain: { id: string } };

/** The worker of the tests (the server runs none of its own, so a test can swap it for one of other settings). */
let worker: MetadataWorker;

/** Files whose fetch workers share the database take turns (test/chain-metadata.test.ts runs one too). */
let release: () => void;

beforeAll(async () => {
  release = await exclusive('metadata-workers');
  await host.start();
  server = await startServer({ metadata: settings(host, { fetch: false }) });
  worker = new MetadataWorker(server.ds, settings(host));
  owner = await server.key();
  collection = (await server.rest('POST', '/v1/collections', { contract_address: randomAddress(), chain_id: '1', name: 'Fetched' }, owner.key)).body;
});
afterAll(async () => {
  await worker.stop();
  await server.close();
  await host.close();
  release?.();
});

async function createWithUri(tokenUri: string, overrides: Record<string, unknown> = {}, target = collection) {
  const res = await server.rest(
    'POST',
    '/v1/assets',
    { collection_id: target.id, token_address: target.contract_address, chain_id: target.chain.id, owner: owner.address, token_uri: tokenUri, ...overrides },
    owner.key,
  );
  if (res.status !== 200) throw new Error(`POST /v1/assets failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { token_id: string; id: string; metadata_status: string; name: string };
}

const restAsset = async (tokenId: string, target = collection) =>
  (await server.rest('GET', `/v1/assets/${target.contract_address}/${tokenId}`)).body;

/** The asset through REST once its fetch has ended (fetched or failed). */
const settled = (tokenId: string, target = collection) =>
  waitFor(`asset ${tokenId} settled`, () => restAsset(tokenId, target), (a) => a.metadata_status === 'fetched' || a.metadata_status === 'failed', 20_000);

const ASSET_QUERY = /* GraphQL */ `
  query ($address: Address!, $id: TokenId!) {
    asset(tokenAddress: $address, tokenId: $id) {
      name description imageUrl animationUrl externalLink metadata metadataStatus metadataError metadataFetchedAt
      traits { traitType value count }
    }
  }`;

const metadataEvents = async (assetId: string): Promise<number> =>
  (await server.ds.query(`SELECT count(*)::int AS n FROM events WHERE type = 'asset.metadata_updated' AND asset_id = $1`, [assetId]))[0].n;

describe('an asset created with a token_uri', () => {
  it('when its document is served, then both doors show its name, image, links and traits, and a trait filter finds it', async () => {
    const created = await createWithUri(`${host.url}/good/1`);
    expect(created.metadata_status).toBe('pending');
    expect(created.name).toBe(`#${created.token_id}`);

    const asset = await settled(created.token_id);
    expect(asset).toMatchObject({
      name: 'Good #1',
      description: 'The document of 1',
      image_url: 'ipfs://QmImage/1.png',
      animation_url: 'https://example.com/1.mp4',
      external_link: 'https://example.com/token/1',
      metadata_status: 'fetched',
      metadata_error: null,
    });
    expect(asset.metadata.token_uri).toBe(`${host.url}/good/1`);
    expect(asset.metadata.attributes).toHaveLength(2);
    expect(new Date(asset.metadata_fetched_at).getTime()).toBeGreaterThan(Date.now() - 60_000);
    expect(asset.traits.map((t: { trait_type: string; value: string }) => `${t.trait_type}:${t.value}`).sort()).toEqual(['Background:Blue', 'Level:5']);

    const gql = await server.gql(ASSET_QUERY, { address: collection.contract_address, id: created.token_id });
    expect(gql.body.data.asset).toMatchObject({ name: 'Good #1', imageUrl: 'ipfs://QmImage/1.png', metadataStatus: 'FETCHED', metadataError: null });
    expect(gql.body.data.asset.traits).toHaveLength(2);

    const found = await server.rest('GET', `/v1/assets?collection_id=${collection.id}&trait=Background:Blue`);
    expect(found.body.result.map((a: { token_id: string }) => a.token_id)).toContain(created.token_id);
    expect(await metadataEvents(created.id)).toBe(1);
    // Where and when it came from is recorded with the raw document.
    const [row] = await server.ds.query(`SELECT state, fetched_from, document->>'name' AS name FROM asset_metadata_queue WHERE asset_id = $1`, [created.id]);
    expect(row).toEqual({ state: 'fetched', fetched_from: `${host.url}/good/1`, name: 'Good #1' });
  });

  it('when the token_uri is ipfs://, then it is read through IPFS_GATEWAY', async () => {
    const created = await createWithUri('ipfs://QmCollection/7');
    const asset = await settled(created.token_id);
    expect(asset).toMatchObject({ name: 'Good #7', metadata_status: 'fetched' });
    expect(host.hitsOf('/ipfs/QmCollection/7')).toBe(1);
  });

  it('when the token_uri is a data: URI (plain or base64), then it is read in place', async () => {
    const plain = await createWithUri(`data:application/json,${encodeURIComponent(JSON.stringify({ name: 'Plain data', image: 'https://example.com/p.png' }))}`);
    const base64 = await createWithUri(`data:application/json;base64,${Buffer.from(JSON.stringify({ name: 'Base64 data', attributes: [{ trait_type: 'Kind', value: 'inline' }] })).toString('base64')}`);
    expect(await settled(plain.token_id)).toMatchObject({ name: 'Plain data', image_url: 'https://example.com/p.png', metadata_status: 'fetched' });
    const b = await settled(base64.token_id);
    expect(b).toMatchObject({ name: 'Base64 data', metadata_status: 'fetched' });
    expect(b.traits).toEqual([expect.objectContaining({ trait_type: 'Kind', value: 'inline' })]);
  });

  it('when the first answer is 404 and the next one the document, then it is retried and fetched', async () => {
    const created = await createWithUri(`${host.url}/flaky`);
    expect(await settled(created.token_id)).toMatchObject({ name: 'Good #flaky', metadata_status: 'fetched', metadata_error: null });
    expect(host.hitsOf('/flaky')).toBe(2);
  });

  it.each([
    ['slow', '/slow', /no document within 400 ms \(after 3 attempts\)/],
    ['huge', '/huge', /larger than 65536 bytes/],
    ['not JSON', '/html', /text\/html, not JSON/],
  ])('when the host is %s, then the asset ends failed with the reason, and keeps its placeholder', async (_what, path, reason) => {
    const created = await createWithUri(`${host.url}${path}`);
    const asset = await settled(created.token_id);
    expect(asset).toMatchObject({ metadata_status: 'failed', name: `#${created.token_id}` });
    expect(asset.metadata_error).toMatch(reason);
    const gql = await server.gql(ASSET_QUERY, { address: collection.contract_address, id: created.token_id });
    expect(gql.body.data.asset).toMatchObject({ metadataStatus: 'FAILED', metadataError: asset.metadata_error });
  });

  it('when the token_uri has an unsupported scheme, then the create is refused naming the field', async () => {
    const res = await server.rest(
      'POST',
      '/v1/assets',
      { collection_id: collection.id, token_address: collection.contract_address, chain_id: '1', owner: owner.address, token_uri: 'file:///etc/passwd' },
      owner.key,
    );
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'token_uri' })]);
  });
});

describe('hosts on private addresses, with METADATA_ALLOW_PRIVATE off', () => {
  const target = new MetadataHost();

  beforeAll(async () => {
    await target.start();
    host.redirectTarget = `${target.url}/secret`;
    // The configured gateway may be local (the operator's IPFS node); nothing else on a private address is.
    await worker.stop();
    worker = new MetadataWorker(server.ds, settings(host, { allowPrivate: false }));
  });
  afterAll(async () => {
    await worker.stop();
    worker = new MetadataWorker(server.ds, settings(host));
    await target.close();
  });

  it('when the token_uri is on a loopback address, then it fails without a request leaving', async () => {
    const asset = await settled((await createWithUri(`${target.url}/secret`)).token_id);
    expect(asset.metadata_status).toBe('failed');
    expect(asset.metadata_error).toMatch(/private, loopback or link-local/);
    expect(target.hitsOf('/secret')).toBe(0);
  });

  it('when the gateway redirects to a private address, then the hop is refused and the target never receives it', async () => {
    const asset = await settled((await createWithUri('ipfs://redirect-private')).token_id);
    expect(host.hitsOf('/ipfs/redirect-private')).toBe(1);
    expect(asset.metadata_status).toBe('failed');
    expect(asset.metadata_error).toMatch(/private, loopback or link-local/);
    expect(target.hitsOf('/secret')).toBe(0);
  });
});

describe('refresh', () => {
  it('when a key refreshes an asset, then it is fetched again; asset.metadata_updated only when the document changed; a second ask within the interval is 429', async () => {
    host.docs.set('r1', { name: 'First', attributes: [{ trait_type: 'Mood', value: 'Calm' }] });
    const created = await createWithUri(`${host.url}/doc/r1`);
    const first = await settled(created.token_id);
    expect(first.name).toBe('First');
    expect(await metadataEvents(created.id)).toBe(1);

    // Unchanged: fetched again, no event.
    const other = await server.key();
    const again = await server.rest('POST', `/v1/assets/${collection.contract_address}/${created.token_id}/refresh`, undefined, other.key);
    expect(again.status).toBe(200);
    expect(again.body.metadata_status).toBe('pending');
    await waitFor('fetched again', () => restAsset(created.token_id), (a) => a.metadata_status === 'fetched' && a.metadata_fetched_at !== first.metadata_fetched_at);
    expect(host.hitsOf('/doc/r1')).toBe(2);
    expect(await metadataEvents(created.id)).toBe(0 + 1);

    // The same key again at once: refused with Retry-After, nothing queued.
    const tooSoon = await server.rest('POST', `/v1/assets/${collection.contract_address}/${created.token_id}/refresh`, undefined, other.key);
    expect(tooSoon.status).toBe(429);
    expect(tooSoon.body.error.code).toBe('RATE_LIMITED');
    expect(Number(tooSoon.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(tooSoon.headers.get('retry-after'))).toBeLessThanOrEqual(60);

    // Changed, refreshed through GraphQL by a third key: the new name and traits, and an event.
    host.docs.set('r1', { name: 'Second', attributes: [{ trait_type: 'Mood', value: 'Angry' }] });
    const third = await server.key();
    const gql = await server.gql(
      `mutation ($a: Address!, $id: TokenId!) { refreshAssetMetadata(tokenAddress: $a, tokenId: $id) { metadataStatus } }`,
      { a: collection.contract_address, id: created.token_id },
      third.key,
    );
    expect(gql.body).toEqual({ data: { refreshAssetMetadata: { metadataStatus: 'PENDING' } } });
    const gqlTooSoon = await server.gql(
      `mutation ($a: Address!, $id: TokenId!) { refreshAssetMetadata(tokenAddress: $a, tokenId: $id) { metadataStatus } }`,
      { a: collection.contract_address, id: created.token_id },
      third.key,
    );
    expect(gqlTooSoon.body.errors?.[0].extensions).toMatchObject({ code: 'RATE_LIMITED', retryAfter: expect.any(Number) });
    const second = await waitFor('changed', () => restAsset(created.token_id), (a) => a.name === 'Second' && a.metadata_status === 'fetched');
    expect(second.traits.map((t: { value: string }) => t.value)).toEqual(['Angry']);
    expect(await metadataEvents(created.id)).toBe(2);
    // The old trait is no longer counted: the collection's Mood:Calm count went back to 0.
    const [calm] = await server.ds.query(`SELECT asset_count FROM collection_traits WHERE collection_id = $1 AND trait_type = 'Mood' AND value = 'Calm'`, [collection.id]);
    expect(calm.asset_count).toBe(0);

    // On the feed, with the asset's data.
    const feed = await server.rest('GET', `/v1/events?types=asset.metadata_updated&asset_id=${created.id}`);
    expect(feed.body.result.map((e: { data: { name: string } }) => e.data.name)).toEqual(['First', 'Second']);
  });

  it('when no key is given, then 401; when the asset has no token_uri, then 409', async () => {
    const created = await createWithUri(`${host.url}/good/nokey`);
    expect((await server.rest('POST', `/v1/assets/${collection.contract_address}/${created.token_id}/refresh`)).status).toBe(401);
    const plain = await server.rest(
      'POST',
      '/v1/assets',
      { collection_id: collection.id, token_address: collection.contract_address, chain_id: '1', owner: owner.address, name: 'n', description: 'd', image_url: 'https://e.com/i.png', metadata: {} },
      owner.key,
    );
    const res = await server.rest('POST', `/v1/assets/${collection.contract_address}/${plain.body.token_id}/refresh`, undefined, owner.key);
    expect(res.status).toBe(409);
  });

  it("when a collection is refreshed, then only its owner or an admin may, and every asset with a token_uri is fetched again", async () => {
    const own = (await server.rest('POST', '/v1/collections', { contract_address: randomAddress(), chain_id: '1' }, owner.key)).body;
    const a = await createWithUri(`${host.url}/good/c1`, {}, own);
    const b = await createWithUri(`${host.url}/good/c2`, {}, own);
    await settled(a.token_id, own);
    await settled(b.token_id, own);

    const stranger = await server.key();
    expect((await server.rest('POST', `/v1/collections/${own.contract_address}/refresh`, undefined, stranger.key)).status).toBe(403);
    const byOwner = await server.rest('POST', `/v1/collections/${own.contract_address}/refresh`, undefined, owner.key);
    expect(byOwner.status).toBe(200);
    expect(byOwner.body).toEqual({ queued: 2 });
    await waitFor('both fetched twice', async () => [host.hitsOf('/good/c1'), host.hitsOf('/good/c2')], (hits) => hits.every((n) => n === 2));
    expect((await server.rest('POST', `/v1/collections/${own.contract_address}/refresh`, undefined, owner.key)).status).toBe(429);

    const admin = await server.key({ admin: true });
    const gql = await server.gql(`mutation ($a: Address!) { refreshCollectionMetadata(address: $a) { queued } }`, { a: own.contract_address }, admin.key);
    expect(gql.body).toEqual({ data: { refreshCollectionMetadata: { queued: 2 } } });
  });
});

describe('several workers on one queue', () => {
  it('when three workers race over the same pending tokens, then each document is fetched once', async () => {
    const own = (await server.rest('POST', '/v1/collections', { contract_address: randomAddress(), chain_id: '1' }, owner.key)).body;
    // Three workers, each with its own limits: only the database keeps them apart. A timeout long enough
    // that no slow answer on a busy machine is tried again (a retry would be a second fetch, rightly).
    await worker.stop();
    const patient = { timeoutMs: 10_000 };
    const workers = [settings(host, patient), settings(host, patient), settings(host, { ...patient, hostConcurrency: 2 })].map((s) => new MetadataWorker(server.ds, s));
    try {
      const created = await Promise.all(Array.from({ length: 30 }, (_, i) => createWithUri(`${host.url}/race/${i}`, {}, own)));
      await waitFor(
        'all fetched',
        async () => (await server.ds.query(`SELECT count(*)::int AS n FROM assets WHERE collection_id = $1 AND metadata_status = 'fetched'`, [own.id]))[0].n,
        (n) => n === created.length,
        // Other files' chain mints queue documents at hosts that never answer (nft.test): the workers meet
        // those first on a shared database, each up to its timeout, before these.
        90_000,
      );
      expect(Array.from({ length: 30 }, (_, i) => host.hitsOf(`/race/${i}`))).toEqual(Array(30).fill(1));
      const attempts = await server.ds.query(`SELECT DISTINCT q.attempts FROM asset_metadata_queue q JOIN assets a ON a.id = q.asset_id WHERE a.collection_id = $1`, [own.id]);
      expect(attempts).toEqual([{ attempts: 1 }]);
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
      worker = new MetadataWorker(server.ds, settings(host));
    }
  }, 180_000);
});

describe('many outcomes at once', () => {
  it('when documents and failures of one collection end together, then each asset gets its own outcome, its traits counted once, one event per changed document', async () => {
    const own = (await server.rest('POST', '/v1/collections', { contract_address: randomAddress(), chain_id: '1' }, owner.key)).body;
    const good = await Promise.all(Array.from({ length: 24 }, (_, i) => createWithUri(`${host.url}/good/batch${i}`, {}, own)));
    const bad = await Promise.all(Array.from({ length: 8 }, () => createWithUri(`${host.url}/html`, {}, own)));
    await waitFor(
      'all settled',
      async () => (await server.ds.query(`SELECT count(*)::int AS n FROM assets WHERE collection_id = $1 AND metadata_status IN ('fetched', 'failed')`, [own.id]))[0].n,
      (n) => n === good.length + bad.length,
      60_000,
    );
    const rows: { id: string; name: string; status: string; error: string | null }[] = await server.ds.query(
      `SELECT id, name, metadata_status AS status, metadata_error AS error FROM assets WHERE collection_id = $1`,
      [own.id],
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    good.forEach((a, i) => expect(byId.get(a.id)).toMatchObject({ name: `Good #batch${i}`, status: 'fetched', error: null }));
    for (const a of bad) expect(byId.get(a.id)).toMatchObject({ status: 'failed', error: expect.stringContaining('JSON') });
    const shown = (await server.rest('GET', `/v1/collections/${own.contract_address}`)).body;
    expect(shown.traits.map((t: { trait_type: string; value: string; count: number }) => [t.trait_type, t.value, t.count]).sort()).toEqual([
      ['Background', 'Blue', 24],
      ['Level', '5', 24],
    ]);
    const events: { n: number }[] = await server.ds.query(
      `SELECT count(*)::int AS n FROM events WHERE type = 'asset.metadata_updated' AND asset_id = ANY($1::uuid[]) GROUP BY asset_id`,
      [good.map((a) => a.id)],
    );
    expect(events).toEqual(Array(good.length).fill({ n: 1 }));
  }, 90_000);
});

describe('many fetches from one host at once', () => {
  beforeAll(async () => {
    await worker.stop();
    worker = new MetadataWorker(server.ds, settings(host, { concurrency: 16, hostConcurrency: 16 }));
  });
  afterAll(async () => {
    await worker.stop();
    worker = new MetadataWorker(server.ds, settings(host));
  });

  it('when 16 documents are in flight together, then the process warns of no listener leak (each fetch listens for the stop)', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    // Node's own warnings are emitted on the process of the main context (jest's global `process` is a copy).
    const realProcess = vm.runInThisContext('process') as NodeJS.Process;
    realProcess.on('warning', onWarning);
    try {
      const own = (await server.rest('POST', '/v1/collections', { contract_address: randomAddress(), chain_id: '1' }, owner.key)).body;
      // Each answers after 3 s, past the 400 ms limit: all 16 wait together, then fail.
      const slow = await Promise.all(Array.from({ length: 16 }, () => createWithUri(`${host.url}/slow`, {}, own)));
      await Promise.all(slow.map((a) => settled(a.token_id, own)));
    } finally {
      realProcess.off('warning', onWarning);
    }
    expect(host.hitsOf('/slow')).toBeGreaterThanOrEqual(16);
    expect(warnings.filter((w) => /MaxListeners/.test(w))).toEqual([]);
  }, 60_000);
});

describe('outcomes recorded in batches', () => {
  const original = PostgresQueryRunner.prototype.query;
  /** `count` assets of a collection of their own with a tokenURI each, claimed as a worker claims them (no worker runs meanwhile). */
  async function claimed(count: number): Promise<Claimed[]> {
    const own = (await server.rest('POST', '/v1/collections', { contract_address: randomAddress(), chain_id: '1' }, owner.key)).body;
    for (let i = 0; i < count; i += 1) await createWithUri(`${host.url}/good/counted${count}x${i}`, {}, own);
    return updateReturning<Claimed>(
      server.ds,
      `UPDATE asset_metadata_queue q SET lease_token = gen_random_uuid(), lease_until = now() + interval '1 hour', attempts = q.attempts + 1
       FROM assets a WHERE a.id = q.asset_id AND a.collection_id = $1
       RETURNING q.asset_id AS "assetId", q.source_url AS "sourceUrl", q.host_key AS "hostKey", q.attempts, q.document_hash AS "documentHash", q.lease_token AS token, q.traceparent`,
      [own.id],
    );
  }

  /** Documents for the first half, a retry and a final failure for the others; the statements recording them sent, by what they touch. */
  async function recordCounted(claims: Claimed[]) {
    const outcomes: Outcome[] = claims.map((claim, i) =>
      i < claims.length / 2
        ? { claim, document: goodDocument(`counted${i}`), from: claim.sourceUrl }
        : { claim, error: 'the host answered 503', retryAt: i % 2 ? new Date(Date.now() + 60_000) : null },
    );
    // Every statement a query runner of this process sends while they are recorded (no worker runs).
    const sent: string[] = [];
    const spy = jest.spyOn(PostgresQueryRunner.prototype, 'query').mockImplementation(function (this: PostgresQueryRunner, ...args: Parameters<PostgresQueryRunner['query']>) {
      sent.push(args[0]);
      return original.apply(this, args);
    });
    try {
      await recordOutcomes(server.ds, outcomes);
    } finally {
      spy.mockRestore();
    }
    const touching = (pattern: RegExp) => sent.filter((text) => pattern.test(text)).length;
    return { queue: touching(/asset_metadata_queue/), traits: touching(/asset_traits/), events: touching(/INSERT INTO events/) };
  }

  it('when 4 or 24 fetches end together, then their outcomes are written by the same statements, whatever their number', async () => {
    await worker.stop();
    try {
      const few = await claimed(4);
      const many = await claimed(24);
      const fewSent = await recordCounted(few);
      const manySent = await recordCounted(many);
      expect(manySent).toEqual(fewSent);
      // The queue rows locked, the failures' rows and the documents' rows; the traits once; the events once.
      expect(fewSent).toEqual({ queue: 3, traits: 1, events: 1 });
      const states: { state: string; n: number }[] = await server.ds.query(
        `SELECT q.state, count(*)::int AS n FROM asset_metadata_queue q WHERE q.asset_id = ANY($1::uuid[]) GROUP BY q.state ORDER BY q.state`,
        [many.map((c) => c.assetId)],
      );
      expect(states).toEqual([
        { state: 'failed', n: 6 },
        { state: 'fetched', n: 12 },
        { state: 'pending', n: 6 },
      ]);
      expect(await metadataEvents(many[0].assetId)).toBe(1);
    } finally {
      worker = new MetadataWorker(server.ds, settings(host));
    }
  });
});

describe('/metrics', () => {
  it('shows the queue depth, the oldest pending age and the outcomes', async () => {
    const text = await (await fetch(`${server.url}/metrics`)).text();
    expect(text).toMatch(/^gateway_metadata_queue_pending \d+$/m);
    expect(text).toMatch(/^gateway_metadata_queue_oldest_pending_seconds [\d.]+$/m);
    expect(text).toMatch(/^gateway_metadata_fetches_total\{outcome="fetched"\} \d+$/m);
    expect(text).toMatch(/^gateway_metadata_fetches_total\{outcome="failed"\} \d+$/m);
  });
});

describe('the service', () => {
  it('when started with METADATA_FETCH on, then it runs its own worker', async () => {
    await worker.stop();
    const service = await startServer({ metadata: settings(host) });
    try {
      const created = await createWithUri(`${host.url}/good/service`);
      expect(await settled(created.token_id)).toMatchObject({ name: 'Good #service', metadata_status: 'fetched' });
    } finally {
      await service.close();
    }
  });
});
