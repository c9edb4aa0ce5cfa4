import WebSocket from 'ws';
import { Client, createClient } from 'graphql-ws';

/** What the events row measures: the live feed to many subscribers while writers commit. */
export interface EventsFigures {
  /** Events delivered per second, summed over the subscribers (events x subscribers / seconds). */
  deliveriesPerSec: number;
  /** Events written per second by the writers. */
  writesPerSec: number;
  events: number;
  p50Ms: number;
  p99Ms: number;
  /** Subscribers that missed, repeated or reordered an event (0 when the feed is right). */
  wrongSubscribers: number;
}

const SUBSCRIPTION = 'subscription ($after: ID, $types: [String!]) { events(after: $after, types: $types) { position occurredAt } }';

function percentile(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] : 0;
}

/**
 * `subscribers` graphql-ws subscriptions (each on its own WebSocket) to collection.created events;
 * `writers` parallel loops create collections through POST /v1/collections for `seconds`. Latency is
 * receipt minus the event's occurred_at: occurred_at is the writing transaction's now(), its start,
 * so the figure bounds the time from commit to receipt from above (it includes the write itself).
 * Client and database share the machine's clock.
 */
export async function benchEvents(base: string, key: string, options: { subscribers: number; writers: number; seconds: number }): Promise<EventsFigures> {
  const url = `${base.replace(/^http/, 'ws')}/graphql`;
  const clients: Client[] = [];
  const received: { id: number; latency: number }[][] = [];
  let acked = 0;
  for (let i = 0; i < options.subscribers; i += 1) {
    const mine: { id: number; latency: number }[] = [];
    received.push(mine);
    const client = createClient({ url, webSocketImpl: WebSocket, retryAttempts: 0, on: { connected: () => (acked += 1) } });
    clients.push(client);
    client.subscribe<{ events: { position: string; occurredAt: string } }>(
      { query: SUBSCRIPTION, variables: { types: ['collection.created'] } },
      {
        next: (r) => {
          if (r.data) mine.push({ id: Number(r.data.events.position), latency: Date.now() - Date.parse(r.data.events.occurredAt) });
        },
        error: () => undefined,
        complete: () => undefined,
      },
    );
  }
  while (acked < options.subscribers) await new Promise((r) => setTimeout(r, 20));
  // Subscriptions without `after` start at the head: warm-up writes until every one has received one, so all are live.
  while (received.some((r) => r.length === 0)) {
    await createCollection(base, key);
    await new Promise((r) => setTimeout(r, 200));
  }
  await new Promise((r) => setTimeout(r, 500));
  const warmedUp = Math.max(...received.flat().map((e) => e.id));
  for (const r of received) r.length = 0;

  const started = Date.now();
  const deadline = started + options.seconds * 1000;
  let written = 0;
  await Promise.all(
    Array.from({ length: options.writers }, async () => {
      while (Date.now() < deadline) if (await createCollection(base, key)) written += 1;
    }),
  );
  const writeSeconds = (Date.now() - started) / 1000;
  // Until every subscriber has every event (or 30 s more).
  const until = Date.now() + 30_000;
  while (received.some((r) => r.length < written) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  const seconds = (Date.now() - started) / 1000;
  await Promise.all(clients.map((c) => c.dispose()));

  for (const r of received) r.splice(0, r.length, ...r.filter((e) => e.id > warmedUp));
  const wrongSubscribers = received.filter((r) => r.length !== written || r.some((e, i) => i > 0 && e.id <= r[i - 1].id)).length;
  const latencies = received.flat().map((e) => e.latency).sort((a, b) => a - b);
  return {
    deliveriesPerSec: Math.round(latencies.length / seconds),
    writesPerSec: Math.round(written / writeSeconds),
    events: written,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    wrongSubscribers,
  };
}

async function createCollection(base: string, key: string): Promise<boolean> {
  const address = `0x${Array.from({ length: 40 }, () => Math.floor(Math.random() * 16).toString(16)).join('')}`;
  const res = await fetch(`${base}/v1/collections`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'access-token': key },
    body: JSON.stringify({ contract_address: address, chain_id: '1' }),
  });
  await res.text();
  return res.ok;
}
