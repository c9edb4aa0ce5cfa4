import http from 'node:http';

/**
 * One request at a time against the running server, each timed alone from its first byte sent to its
 * last byte read, on one kept-alive connection: the latency of a single request, which is what a
 * target such as issue #31's "a search within 20 ms" is about (autocannon's rows measure 32 connections
 * queueing for two cores).
 */
export interface SequentialFigures {
  requests: number;
  p50Ms: number;
  p99Ms: number;
  /** The mean, for requests per second one after another. */
  meanMs: number;
  /** Answers that were not 2xx, or whose body held GraphQL errors. */
  errors: number;
}

export interface SequentialRequest {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
}

function once(agent: http.Agent, r: SequentialRequest): Promise<{ ms: number; ok: boolean }> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = http.request(r.url, { method: r.method, headers: r.headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        const ok = (res.statusCode ?? 500) < 300 && !Buffer.concat(chunks).includes('"errors"');
        resolve({ ms, ok });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(r.body);
  });
}

/** `requests` requests one after another, after `warmup` unmeasured ones. */
export async function sequentialLatency(r: SequentialRequest, requests: number, warmup: number): Promise<SequentialFigures> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    for (let i = 0; i < warmup; i += 1) await once(agent, r);
    const times: number[] = [];
    let errors = 0;
    for (let i = 0; i < requests; i += 1) {
      const { ms, ok } = await once(agent, r);
      times.push(ms);
      if (!ok) errors += 1;
    }
    const sorted = [...times].sort((a, b) => a - b);
    const at = (q: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] * 10) / 10;
    return { requests, p50Ms: at(0.5), p99Ms: at(0.99), meanMs: times.reduce((a, b) => a + b, 0) / times.length, errors };
  } finally {
    agent.destroy();
  }
}
