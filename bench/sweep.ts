/**
 * The sweep row of `npm run bench` (W9): sweeps of `count` of one collection's cheapest listings, one at a
 * time, each timed alone. A sweep sells what it buys, so between two sweeps the buyer lists what it bought
 * again at the prices it paid (untimed), and the next sweep is made by the other of two accounts: every
 * sweep finds the same cheapest listings, on a fresh data set or a reused one (--reuse-db).
 */
export interface SweepFigures {
  sweeps: number;
  /** Sweeps per second, one after another (1 / mean latency). */
  perSec: number;
  p50Ms: number;
  p99Ms: number;
  /** Sweeps that bought fewer than `count`, or failed. */
  errors: number;
  sqlPerSweep: number | null;
  bytes: number;
}

const SWEEP = `mutation ($input: SweepCollectionInput!) {
  sweepCollection(input: $input) { orders { id assetId priceDecimal } skipped { reason } totalDecimal } }`;
const LIST = 'mutation ($input: CreateListingInput!) { createListing(input: $input) { id } }';

type Bought = { assetId: string; priceDecimal: string };

async function post(base: string, path: string, key: string, body: unknown): Promise<{ status: number; text: string; sql: number | null }> {
  const res = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json', 'access-token': key }, body: JSON.stringify(body) });
  const sql = res.headers.get('x-sql-statements');
  return { status: res.status, text: await res.text(), sql: sql === null ? null : Number(sql) };
}

/** One sweep through `door`: what it bought (empty when it failed), its statements and size. */
async function sweepOnce(base: string, door: 'REST' | 'GraphQL', key: string, contract: string, count: number) {
  const limits = { count, max_total: 1_000_000, max_unit_price: 1_000_000 };
  if (door === 'REST') {
    const res = await post(base, `/v1/collections/${contract}/sweep`, key, limits);
    const orders: { asset_id: string; price_decimal: string }[] = res.status === 200 ? JSON.parse(res.text).orders : [];
    return { ...res, bought: orders.map((o) => ({ assetId: o.asset_id, priceDecimal: o.price_decimal })) };
  }
  const input = { collectionId: contract, count, maxTotal: limits.max_total, maxUnitPrice: limits.max_unit_price };
  const res = await post(base, '/graphql', key, { query: SWEEP, variables: { input } });
  const bought: Bought[] = JSON.parse(res.text).data?.sweepCollection?.orders ?? [];
  return { ...res, bought };
}

export async function benchSweeps(
  base: string,
  keys: readonly [string, string],
  options: { door: 'REST' | 'GraphQL'; contract: string; count: number; sweeps: number },
): Promise<SweepFigures> {
  const latencies: number[] = [];
  let errors = 0;
  let sql: number | null = null;
  let bytes = 0;
  for (let i = 0; i < options.sweeps; i += 1) {
    const key = keys[i % 2];
    const started = process.hrtime.bigint();
    const res = await sweepOnce(base, options.door, key, options.contract, options.count);
    latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
    sql ??= res.sql;
    bytes = Buffer.byteLength(res.text);
    if (res.bought.length !== options.count) {
      errors += 1;
      process.stderr.write(`  sweep ${i + 1}: bought ${res.bought.length} of ${options.count} (HTTP ${res.status}) ${res.text.slice(0, 200)}\n`);
    }
    // Listed again by the buyer at the price paid, for the other account's next sweep.
    for (const b of res.bought) await post(base, '/graphql', key, { query: LIST, variables: { input: { assetId: b.assetId, startPrice: b.priceDecimal } } });
  }
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (q: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]);
  const mean = latencies.reduce((a, b) => a + b, 0) / latencies.length;
  return { sweeps: latencies.length, perSec: Math.round(1000 / mean), p50Ms: at(0.5), p99Ms: at(0.99), errors, sqlPerSweep: sql, bytes };
}
