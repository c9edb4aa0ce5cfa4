import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { GatewayProcess, startGatewayProcess } from './setup/gateway-process';
import { subscribe } from './setup/subscriber';

const CRITTERS = '0xb47e3cd837ddf8e4c57f05d70ab865de6e193bbb';

/**
 * Issue #28: the README's tour, run as a newcomer runs it: `npm start` on an empty embedded database
 * loads the demo market (the demo is for the embedded database only, so this test starts one in a new
 * data directory whatever the run's database is), and the tour's first query shows a listing's price.
 */
const TOUR = '{ collections(limit: 2) { result { name assets(limit: 2) { result { tokenId name listing { currentPrice currentPriceDecimal } } } } } }';

let dataDir: string;
let gateway: GatewayProcess;
beforeAll(async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'gw-demo-'));
  gateway = await startGatewayProcess({ DATABASE_URL: '', DATA_DIR: dataDir, SEED_DEMO: 'true', LOG_LEVEL: 'info' });
}, 120_000);
afterAll(async () => {
  await gateway?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

interface TourAnswer {
  data: { collections: { result: { name: string; assets: { result: { tokenId: string; listing: { currentPrice: number; currentPriceDecimal: string } | null }[] } }[] } };
}

test("when the README's first query is sent to a fresh demo, then it shows the market's collection and a listing's price", async () => {
  expect(gateway.output()).toContain('Demo data loaded');
  const res = await fetch(`${gateway.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: TOUR }) });
  expect(res.status).toBe(200);
  const { data } = (await res.json()) as TourAnswer;

  expect(data.collections.result.map((c) => c.name)).toEqual(['Crypto Critters', 'Polygon Pixels']);
  const listings = data.collections.result.flatMap((c) => c.assets.result).flatMap((a) => (a.listing ? [a.listing] : []));
  expect(listings.length).toBeGreaterThanOrEqual(1);
  for (const listing of listings) {
    expect(listing.currentPrice).toBeGreaterThan(0);
    expect(Number(listing.currentPriceDecimal)).toBeCloseTo(listing.currentPrice, 12);
  }
});

test('when a fresh database is migrated at start, then the log has one line for it, naming the migrations applied', async () => {
  const lines = gateway.output().split('\n').filter((line) => /migration/i.test(line));
  expect(lines).toHaveLength(1);
  const line = JSON.parse(lines[0]) as { level: string; message: string; count: number; names: string[] };
  expect(line).toMatchObject({ level: 'info', message: 'migrations applied' });
  expect(line.names[0]).toBe('InitialSchema1763800000000');
  expect(line.names).toHaveLength(line.count);
});

test('when the demo collections are read over REST, then their slugs are the slugs the API makes', async () => {
  const res = await fetch(`${gateway.url}/v1/collections?order_by=name&direction=asc`);
  const body = (await res.json()) as { result: { name: string; slug: string }[] };
  expect(body.result.map((c) => c.slug)).toEqual(['base-badges', 'crypto-critters', 'polygon-pixels']);
});

test('when a keep-alive connection idles 6 s (longer than a balancer\'s usual 5 s), then the service has kept it open and answers the next request on it', async () => {
  // One socket, kept by the client for a minute: whether it survives the idle time is the service's choice.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1, timeout: 60_000 });
  const get = () =>
    new Promise<{ status: number; reused: boolean }>((resolve, reject) => {
      const req = http.get(`${gateway.url}/v1/categories?limit=1`, { agent }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode!, reused: req.reusedSocket }));
      });
      req.on('error', reject);
    });
  try {
    expect(await get()).toEqual({ status: 200, reused: false });
    await new Promise((resolve) => setTimeout(resolve, 6000));
    expect(await get()).toEqual({ status: 200, reused: true });
  } finally {
    agent.destroy();
  }
}, 30_000);

const get = async <T = any>(path: string): Promise<T> => {
  const res = await fetch(`${gateway.url}${path}`);
  expect(res.status).toBe(200);
  return (await res.json()) as T;
};

describe('issue #39: the demo shows the whole product on the first start', () => {
  test('when assets are filtered by a trait, then the demo assets carrying it come back, and the market collection has trait floors', async () => {
    const { result } = await get<{ result: { token_address: string; token_id: string; traits: { trait_type: string; value: string }[] }[] }>(
      '/v1/assets?trait=rarity:rare&limit=50',
    );
    expect(result).toHaveLength(3);
    for (const asset of result) expect(asset.token_id).toBe('1');
    const common = await get<{ result: unknown[] }>('/v1/assets?trait=rarity:common&limit=50');
    expect(common.result).toHaveLength(12);
    const one = await get<{ traits: { trait_type: string; value: string; count: number }[] }>(`/v1/assets/${CRITTERS}/1?chain_id=1`);
    expect(one.traits).toEqual(expect.arrayContaining([expect.objectContaining({ trait_type: 'rarity', value: 'rare', count: 1 })]));
    const depth = await get<{ trait_floors: { trait_type: string; value: string }[] }>(`/v1/collections/${CRITTERS}/depth?chain_id=1`);
    expect(depth.trait_floors.length).toBeGreaterThan(0);
  });

  test("when a sold asset's history is read, then it shows its creation, its listing and its sale", async () => {
    const { result } = await get<{ result: { type: string }[] }>(`/v1/assets/${CRITTERS}/4/history?chain_id=1&limit=50`);
    expect(result.map((h) => h.type)).toEqual(expect.arrayContaining(['asset.created', 'listing.created', 'listing.sold']));
  });

  test('when the change feed is read from its start, then it holds the demo market\'s events', async () => {
    const { result } = await get<{ result: { type: string }[] }>('/v1/events?limit=100');
    const types = new Set(result.map((e) => e.type));
    for (const type of ['collection.created', 'asset.created', 'listing.created', 'offer.created', 'order.completed']) expect(types).toContain(type);
  });

  test("when the market collection's chart is read, then it shows the demo's sales", async () => {
    const { series } = await get<{ series: { buckets: { sales: number }[] } }>(`/v1/collections/${CRITTERS}/history?chain_id=1&interval=1h`);
    expect(series.buckets.reduce((n, b) => n + b.sales, 0)).toBe(2);
  });

  test("when a subscription replays the market collection's feed from its start, then it receives the demo's events", async () => {
    const s = subscribe(gateway.url, { after: '0', collectionId: CRITTERS });
    try {
      await s.until(() => s.events.some((e) => e.type === 'offer.created'), 15_000, 'the replay');
      expect(s.events.map((e) => e.type)).toEqual(expect.arrayContaining(['collection.created', 'asset.created', 'listing.created']));
    } finally {
      await s.stop();
    }
  });

  test('when the server starts again on the same data, then the demo is not written twice', async () => {
    const before = await get<{ result: { id: string }[] }>('/v1/events?limit=100');
    await gateway.stop();
    gateway = await startGatewayProcess({ DATABASE_URL: '', DATA_DIR: dataDir, SEED_DEMO: 'true', LOG_LEVEL: 'info' });
    expect(gateway.output()).not.toContain('Demo data loaded');
    // Nothing to apply: no migration line at all.
    expect(gateway.output()).not.toMatch(/migration/i);
    const after = await get<{ result: { id: string }[] }>('/v1/events?limit=100');
    expect(after.result.map((e) => e.id)).toEqual(before.result.map((e) => e.id));
    const collections = await get<{ result: unknown[] }>('/v1/collections?limit=10');
    expect(collections.result).toHaveLength(3);
  }, 120_000);
});
