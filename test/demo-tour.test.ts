import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { GatewayProcess, startGatewayProcess } from './setup/gateway-process';

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
  gateway = await startGatewayProcess({ DATABASE_URL: '', DATA_DIR: dataDir, SEED_DEMO: 'true' });
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
