import fc from 'fast-check';
import { GraphQLSchema } from 'graphql';
import { randomBytes } from 'node:crypto';
import { FuzzRequest, mutationCases, restCases, violation } from './properties';

export interface FuzzTarget {
  url: string;
  /** A user's key and an admin's: each case is sent with one of them or none. */
  keys: string[];
}

export interface RouteCount {
  label: string;
  /** Cases sent (a failing route stops at its first failure, then shrinks it). */
  cases: number;
  failed: boolean;
}

export interface FuzzReport {
  passed: number;
  failed: number;
  /** Per /v1 route and per mutation, in order: how many cases it got. */
  routes: RouteCount[];
  /** Per failing route or mutation: its shrunk counterexample and why it fails. */
  failures: string[];
  healthy: boolean;
}

async function send(target: FuzzTarget, request: FuzzRequest, key: string | undefined): Promise<{ status: number; text: string }> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...request.headers };
  if (key) headers['access-token'] = key;
  const res = await fetch(`${target.url}${request.path}`, {
    method: request.method,
    headers,
    body: request.raw ?? (request.body === undefined ? undefined : JSON.stringify(request.body)),
  });
  return { status: res.status, text: await res.text() };
}

/** One collection per key (a real import target for the upload cases); none when creating one fails. */
async function ownCollections(target: FuzzTarget): Promise<string[]> {
  const ids: string[] = [];
  for (const key of target.keys) {
    const address = `0x${randomBytes(20).toString('hex')}`;
    const { status, text } = await send(target, { label: 'setup', method: 'POST', path: '/v1/collections', body: { contract_address: address, chain_id: '1', name: `fuzz ${address.slice(0, 10)}` } }, key);
    const id = status === 201 || status === 200 ? (JSON.parse(text) as { id?: string }).id : undefined;
    if (id) ids.push(id);
  }
  return ids;
}

/** /healthz answers and a plain query still runs. */
export async function healthy(target: FuzzTarget): Promise<boolean> {
  const health = await fetch(`${target.url}/healthz`);
  const query = await send(target, { label: 'health', method: 'POST', path: '/graphql', body: { query: '{ collections(limit: 1) { remaining } }' } }, undefined);
  return health.status === 200 && query.status === 200 && !JSON.parse(query.text).errors;
}

/**
 * Runs `runs` cases per /v1 route and per GraphQL mutation (fast-check, shrinking each failure), then
 * checks the server is still healthy. A case passes when its response keeps the properties of violation();
 * a route stops at its first failing case, which is shrunk and reported.
 */
export async function fuzz(schema: GraphQLSchema, target: FuzzTarget, options: { runs: number; seed?: number; shrink?: boolean; only?: RegExp; onRoute?: (route: RouteCount) => void }): Promise<FuzzReport> {
  const report: FuzzReport = { passed: 0, failed: 0, routes: [], failures: [], healthy: false };
  const own = await ownCollections(target);
  for (const { label, arbitrary } of [...restCases(schema, own), ...mutationCases(schema, own)]) {
    if (options.only && !options.only.test(label)) continue;
    const withKey = fc.tuple(arbitrary, fc.constantFrom(undefined, ...target.keys));
    const result = await fc.check(
      fc.asyncProperty(withKey, async ([request, key]) => {
        const { status, text } = await send(target, request, key);
        const problem = violation(request, status, text);
        if (problem) throw new Error(problem);
      }),
      { numRuns: options.runs, seed: options.seed, endOnFailure: options.shrink === false },
    );
    // fast-check stops a route at its first failing case and shrinks it: that case is the route's one failure.
    const failedCases = result.failed ? 1 : 0;
    report.failed += failedCases;
    report.passed += result.numRuns - failedCases;
    if (result.failed) {
      report.failures.push(`${label}: ${(result.errorInstance as Error | undefined)?.message ?? 'failed'}\n  shrunk case: ${fc.stringify(result.counterexample)}`);
    }
    // numRuns: the cases sent, the failing one included (shrinking's retries are not counted).
    const route = { label, cases: result.numRuns, failed: result.failed };
    report.routes.push(route);
    options.onRoute?.(route);
  }
  report.healthy = await healthy(target);
  return report;
}
