import http from 'node:http';
import type { GrowthRow } from './growth';

/**
 * The writes of the growth section (issue #38): the five writes a market's users make, each timed alone,
 * one at a time, through REST on the data set of the run's scale: create a listing (fixed price), buy it,
 * make an offer, accept it, bid on an english auction. Each round is one seller of the data set (a holder,
 * with a key of their own) and the run's buyer: the seller lists an unlisted asset and the buyer buys it; the
 * buyer offers for a second and the seller accepts; the seller puts a third up for an english auction
 * (untimed) and the buyer bids, then both are cancelled (untimed). A round leaves two assets sold to the
 * buyer; the next run takes other holders, so a reused database never runs out of unlisted assets.
 */

export interface Party {
  address: string;
  key: string;
}

export interface WritesOptions {
  base: string;
  /** One per round: the first two rounds warm up, unmeasured. */
  sellers: Party[];
  buyer: Party;
  log: (line: string) => void;
}

export const WRITES = ['create a listing', 'buy it', 'make an offer', 'accept the offer', 'bid on an english auction'] as const;
type Write = (typeof WRITES)[number];

interface Answer {
  status: number;
  body: Record<string, unknown>;
  ms: number;
}

function call(agent: http.Agent, base: string, method: string, path: string, key: string, body?: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = { accept: 'application/json', 'access-token': key };
    if (payload) headers['content-type'] = 'application/json';
    const started = process.hrtime.bigint();
    const req = http.request(`${base}${path}`, { method, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        const text = Buffer.concat(chunks).toString();
        let parsed: Record<string, unknown> = {};
        try {
          parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
        } catch {
          parsed = { text };
        }
        resolve({ status: res.statusCode ?? 0, body: parsed, ms });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

interface Asset {
  id: string;
  token_address: string;
  token_id: string;
}

const DAY_MS = 24 * 3600 * 1000;

/** An answer that refused a write, in a few words: its status, code and message. */
const refusal = (answer: Answer): string => {
  const error = answer.body.error as { code?: string; message?: string } | undefined;
  return `HTTP ${answer.status} ${error?.code ?? ''} ${(error?.message ?? JSON.stringify(answer.body)).slice(0, 120)}`.replace(/\s+/g, ' ');
};

/** One round: the five timed writes of one seller, or why the round could not be made. */
async function round(agent: http.Agent, o: WritesOptions, seller: Party): Promise<{ times: Partial<Record<Write, number>>; failed?: string }> {
  const times: Partial<Record<Write, number>> = {};
  const owned = await call(agent, o.base, 'GET', `/v1/assets?owner_id=${seller.address}&status=unlisted&limit=3`, seller.key);
  const assets = ((owned.body.result as Asset[] | undefined) ?? []).slice(0, 3);
  if (owned.status !== 200 || assets.length < 3) return { times, failed: `seller ${seller.address} has ${assets.length} unlisted assets (HTTP ${owned.status})` };
  const [listed, offered, auctioned] = assets;
  const timed = async (write: Write, method: string, path: string, party: Party, body?: unknown): Promise<Answer> => {
    const answer = await call(agent, o.base, method, path, party.key, body);
    if (answer.status >= 300) throw new Error(`${write}: ${refusal(answer)}`);
    times[write] = answer.ms;
    return answer;
  };
  const untimed = async (what: string, method: string, path: string, party: Party, body?: unknown) => {
    const answer = await call(agent, o.base, method, path, party.key, body);
    if (answer.status >= 300) throw new Error(`${what}: ${refusal(answer)}`);
    return answer;
  };
  // An offer's window: from a minute ago (the server's clock may be a little behind) to a day on.
  const window = () => ({ start_time: new Date(Date.now() - 60_000).toISOString(), end_time: new Date(Date.now() + DAY_MS).toISOString() });
  try {
    const listing = await timed('create a listing', 'POST', '/v1/assets/listing', seller, { asset_id: listed.id, start_price: '1' });
    await timed('buy it', 'POST', `/v1/listings/${listing.body.id as string}/buy`, o.buyer, {});
    const offer = await timed('make an offer', 'POST', '/v1/offers', o.buyer, { asset_id: offered.id, price: '0.5', ...window() });
    await timed('accept the offer', 'POST', '/v1/offers/accept', seller, { offer_id: offer.body.id });
    await untimed('english auction', 'POST', '/v1/assets/listing', seller, {
      asset_id: auctioned.id,
      order_type: 'english_auction',
      start_price: '1',
      expiration_time: { duration_seconds: 86400 },
    });
    // Above the data set's offers (0.05 to 2), which stand as the auction's bids.
    const bid = await timed('bid on an english auction', 'POST', '/v1/offers', o.buyer, { asset_id: auctioned.id, price: '3', ...window() });
    await untimed('the bid withdrawn', 'DELETE', `/v1/offers/${bid.body.id as string}`, o.buyer);
    await untimed('the auction cancelled', 'DELETE', `/v1/assets/listing/${auctioned.token_address}/${auctioned.token_id}`, seller);
  } catch (err) {
    return { times, failed: (err as Error).message };
  }
  return { times };
}

/** The writes' rows (list `writes`, no page): p50 and p99 of each over the measured rounds. */
export async function runWrites(o: WritesOptions): Promise<GrowthRow[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const samples = new Map<Write, number[]>(WRITES.map((w) => [w, []]));
  const failures: string[] = [];
  try {
    for (let i = 0; i < o.sellers.length; i += 1) {
      const { times, failed } = await round(agent, o, o.sellers[i]);
      if (failed) {
        failures.push(failed);
        o.log(`  writes, round ${i + 1}: ${failed}`);
      }
      // The first two rounds warm up, unmeasured.
      if (i >= 2) for (const w of WRITES) if (times[w] !== undefined) samples.get(w)!.push(times[w]!);
    }
  } finally {
    agent.destroy();
  }
  return WRITES.map((w) => {
    const times = samples.get(w)!.sort((a, b) => a - b);
    const at = (q: number) => (times.length ? Math.round(times[Math.min(times.length - 1, Math.floor(q * times.length))] * 10) / 10 : null);
    const missing = o.sellers.length - 2 - times.length;
    return {
      list: 'writes',
      door: 'REST',
      request: w,
      page: null,
      p50Ms: at(0.5),
      p99Ms: at(0.99),
      samples: times.length,
      note: times.length === 0 ? `failed: ${failures[0] ?? 'no rounds'}` : missing > 0 ? `${missing} rounds failed` : '',
    };
  });
}
