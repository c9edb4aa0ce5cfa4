import fs from 'node:fs';
import http from 'node:http';
import { FieldNode, Kind, OperationDefinitionNode, parse, print, VariableDefinitionNode } from 'graphql';
import { routes } from '../src/app/rest/v1/routes';
import type { RouteSpec } from '../src/app/rest/v1/route-spec';

/**
 * The growth section (issue #38): every documented list, REST and GraphQL (page envelope on /v1, the
 * connection with totalCount on /graphql), by each of its sorts in both directions and with each of its
 * documented filters, its first page and its 10th page reached by cursor, each sent one at a time.
 * The lists are read from the route table, so a new list or filter is measured without a line here;
 * only the sample values of the filters are chosen below, from the bench's data set.
 */

export interface GrowthRow {
  list: string;
  door: 'REST' | 'GraphQL';
  request: string;
  /** null: a write (bench/writes.ts), which has no page. */
  page: 1 | 10 | null;
  p50Ms: number | null;
  p99Ms: number | null;
  samples: number;
  /** TIMEOUT (a 503 from the statement timeout), an error status, or fewer than 10 pages. */
  note: string;
}

export interface GrowthOptions {
  base: string;
  /** Requests measured per page (after 2 unmeasured). */
  requests: number;
  only?: RegExp;
  log: (line: string) => void;
  /** The rows so far, after each request's pages (a long run keeps what it measured if stopped). */
  progress?: (rows: GrowthRow[]) => void;
  addressOf: (label: string) => string;
  uuidOf: (label: string) => string;
}

interface Sent {
  status: number;
  body: string;
  ms: number;
}

interface Measured {
  /** The request of a page, given the cursor of the page before (undefined: the first page). */
  at: (cursor: string | undefined) => { path: string; method: 'GET' | 'POST'; body?: string };
  /** The cursor of the next page, from an answer's body. */
  next: (body: unknown) => string | undefined;
}

/** A request whose answer takes longer than this is measured 3 times, not `requests` times. */
const SLOW_MS = 2000;

/** The route's page variables: they are set by the walk, not sampled. */
const PAGING = new Set(['limit', 'page', 'after', 'first', 'direction', 'order_by', 'assets_limit', 'include_assets']);

/** The bench data set's values for each documented filter (bench/dataset.ts makes them). */
function sampleValues(o: GrowthOptions, path: string): Record<string, string> {
  const taker = o.addressOf('taker1');
  return {
    collection_id: o.uuidOf('c2'),
    asset_contract: o.addressOf('contract2'),
    token_address: o.addressOf('contract2'),
    token_id: '3',
    owner_id: path === '/v1/assets' || path === '/v1/search/assets' ? o.addressOf('holder65') : taker,
    owner_address: o.addressOf('owner2'),
    status: path.includes('offers') ? 'active' : path.includes('orders') ? 'completed' : path.includes('collections') ? 'verified' : 'listed',
    chain_id: '1',
    category_id: 'art',
    kind: 'item',
    currency: 'ETH',
    trait: 'rarity:3',
    period: '7d',
    is_trending: '1',
    query: 'asset',
    types: 'listing.created',
  };
}

/** REST's words for an enum value, and back: `current_price` / CURRENT_PRICE; the periods are spelt apart. */
const PERIODS: Record<string, string> = { all: 'ALL', '7d': 'D7', '30d': 'D30', '1h': 'H1', '6h': 'H6', '24h': 'H24' };
const graphqlValue = (type: string, value: string): unknown =>
  type === 'StatisticsPeriod' ? PERIODS[value] : /^[A-Z]\w*(OrderBy|Status|Kind|Direction)$/.test(type) || type === 'SortDirection' ? value.toUpperCase() : type === 'Int' ? Number(value) : value;

interface ListRoute {
  spec: RouteSpec;
  operation: OperationDefinitionNode;
  root: FieldNode;
  /** Each variable's GraphQL type name (named type, no wrappers). */
  types: Map<string, string>;
  /** Each variable's declared type, wrappers included (`String!`): a required argument refuses a nullable variable. */
  declared: Map<string, string>;
  /** Each variable's argument name on the root field. */
  argumentOf: Map<string, string>;
  sorts: string[];
  filters: string[];
}

const namedType = (v: VariableDefinitionNode): string => {
  let t = v.type;
  while (t.kind !== Kind.NAMED_TYPE) t = t.type;
  return t.name.value;
};

/** The documented lists: the GET routes that answer a page (a `cursor` and a page or after variable). */
function listRoutes(enumValues: (type: string) => string[]): ListRoute[] {
  const lists: ListRoute[] = [];
  for (const spec of routes) {
    // A list of the caller's own (webhooks) needs a key: not a market read.
    if (spec.method !== 'get' || spec.path.includes(':') || spec.path === '/v1/webhooks') continue;
    const operation = parse(spec.operation).definitions[0] as OperationDefinitionNode;
    const root = operation.selectionSet.selections[0] as FieldNode;
    const types = new Map((operation.variableDefinitions ?? []).map((v) => [v.variable.name.value, namedType(v)]));
    const declared = new Map((operation.variableDefinitions ?? []).map((v) => [v.variable.name.value, print(v.type)]));
    if (!types.has('page') && !types.has('after')) continue;
    const argumentOf = new Map<string, string>();
    for (const arg of root.arguments ?? []) if (arg.value.kind === Kind.VARIABLE) argumentOf.set(arg.value.name.value, arg.name.value);
    const orderType = types.get('order_by');
    lists.push({
      spec,
      operation,
      root,
      types,
      declared,
      argumentOf,
      sorts: orderType ? enumValues(orderType).map((v) => v.toLowerCase()) : [],
      filters: [...types.keys()].filter((name) => !PAGING.has(name)),
    });
  }
  return lists;
}

/** The requests of one list: its default order, each sort both ways, each filter alone, and the issue's combinations. */
function variants(list: ListRoute, samples: Record<string, string>): Record<string, string>[] {
  const out: Record<string, string>[] = [];
  const required: string[] = list.filters.filter((f) => f === 'query');
  const base: Record<string, string> = Object.fromEntries(required.map((f) => [f, samples[f]]));
  out.push({ ...base });
  for (const sort of list.sorts) for (const direction of ['asc', 'desc']) out.push({ ...base, order_by: sort, direction });
  for (const filter of list.filters) if (!required.includes(filter) && samples[filter] !== undefined) out.push({ ...base, [filter]: samples[filter] });
  const path = list.spec.path;
  if (path === '/v1/assets') out.push({ status: 'listed', order_by: 'current_price', direction: 'asc' });
  if (path === '/v1/offers') out.push({ status: 'active', order_by: 'end_time', direction: 'asc' });
  // Two ranges of an index each (issue #38): expired offers (none in the data set: every offer ends in 30 days)
  // and an account's orders (sold or bought: the taker's purchases), first by default and by price.
  if (path === '/v1/offers') out.push({ status: 'expired' }, { status: 'expired', order_by: 'price', direction: 'asc' });
  if (path === '/v1/orders') out.push({ owner_id: samples.owner_id, order_by: 'price', direction: 'asc' });
  // Counts within a price range (prices from 0.05 to 2 in both): a narrow range, one of nearly every row, and one of half of them.
  if (path === '/v1/offers' || path === '/v1/orders') out.push({ max_price: '0.1' }, { min_price: '0.1' }, { min_price: '0.5', max_price: '1.5' });
  if (path === '/v1/statistics') {
    out.push({ period: '7d', order_by: 'floor_price' });
    out.push({ period: '30d', order_by: 'total_holders' });
    // Not trending (most collections): each sort walks as unfiltered and drops the trending ones.
    out.push({ is_trending: '0' }, { period: '7d', is_trending: '0', direction: 'asc' }, { period: '30d', order_by: 'total_holders', is_trending: '0' });
  }
  return out;
}

const describe = (params: Record<string, string>) =>
  Object.entries(params)
    .map(([k, v]) => `${k}=${v.length > 20 ? `${v.slice(0, 8)}…` : v}`)
    .join('&') || '(defaults)';

function restRequest(list: ListRoute, params: Record<string, string>): Measured {
  return {
    at: (cursor) => {
      const query = new URLSearchParams({ ...params, limit: '20' });
      if (cursor) query.set(list.types.has('page') ? 'page' : 'after', cursor);
      return { path: `${list.spec.path}?${query}`, method: 'GET' };
    },
    next: (body) => ((body as { cursor?: string | null }).cursor ?? undefined) || undefined,
  };
}

/** The same list on /graphql as a connection: `first`/`after`, totalCount, edges and pageInfo. */
function graphqlRequest(list: ListRoute, params: Record<string, string>): Measured | undefined {
  const rootName = list.root.name.value;
  if (!list.argumentOf.has('page')) return undefined;
  const used = Object.keys(params).filter((name) => list.argumentOf.has(name));
  const definitions = used.map((name) => `$${name}: ${list.declared.get(name)}`);
  const args = used.map((name) => `${list.argumentOf.get(name)}: $${name}`);
  const document = print(
    parse(`query Growth($first: Int, $after: String${definitions.map((d) => `, ${d}`).join('')}) {
      ${rootName}(first: $first, after: $after${args.map((a) => `, ${a}`).join('')}) {
        totalCount edges { cursor node { id } } pageInfo { endCursor hasNextPage } } }`),
  );
  // A list variable (`trait: [String!]`) takes the one sample value as a list of one.
  const value = (name: string) => graphqlValue(list.types.get(name)!, params[name]);
  const variables = Object.fromEntries(used.map((name) => [name, list.declared.get(name)!.startsWith('[') ? [value(name)] : value(name)]));
  return {
    at: (cursor) => ({ path: '/graphql', method: 'POST', body: JSON.stringify({ query: document, variables: { ...variables, first: 20, after: cursor ?? null } }) }),
    next: (body) => {
      const page = (body as { data?: Record<string, { pageInfo?: { endCursor?: string; hasNextPage?: boolean } }> }).data?.[rootName]?.pageInfo;
      return page?.hasNextPage ? page.endCursor : undefined;
    },
  };
}

function send(agent: http.Agent, base: string, r: { path: string; method: 'GET' | 'POST'; body?: string }): Promise<Sent> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const headers: Record<string, string> = { accept: 'application/json' };
    if (r.body) headers['content-type'] = 'application/json';
    const req = http.request(`${base}${r.path}`, { method: r.method, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), ms: Number(process.hrtime.bigint() - started) / 1e6 }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(r.body);
  });
}

const failure = (sent: Sent): string | undefined => {
  if (sent.status === 503) return 'TIMEOUT';
  if (sent.status >= 300) return `status ${sent.status}`;
  if (sent.body.includes('"errors"')) return 'errors';
  return undefined;
};

async function measurePage(agent: http.Agent, o: GrowthOptions, request: { path: string; method: 'GET' | 'POST'; body?: string }) {
  const first = await send(agent, o.base, request);
  const problem = failure(first);
  if (problem) return { p50Ms: null, p99Ms: null, samples: 0, note: problem };
  // A slow answer is its own warm-up's worth: the first counts, and two more (on ten million assets a
  // walk of every list at `requests` samples each would take hours).
  const slow = first.ms > SLOW_MS;
  const times: number[] = slow ? [first.ms] : [];
  if (!slow) await send(agent, o.base, request);
  const count = slow ? 3 : o.requests;
  while (times.length < count) times.push((await send(agent, o.base, request)).ms);
  times.sort((a, b) => a - b);
  const at = (q: number) => Math.round(times[Math.min(times.length - 1, Math.floor(q * times.length))] * 10) / 10;
  return { p50Ms: at(0.5), p99Ms: at(0.99), samples: count, note: slow ? 'slow: 3 samples' : '' };
}

/** Page 1, then the cursor walk to page 10 (unmeasured), then page 10 measured. */
async function measureList(agent: http.Agent, o: GrowthOptions, name: string, door: GrowthRow['door'], request: string, m: Measured): Promise<GrowthRow[]> {
  const rows: GrowthRow[] = [];
  const first = await measurePage(agent, o, m.at(undefined));
  rows.push({ list: name, door, request, page: 1, ...first });
  // A first page that fails (a timeout at 10 s) is not walked ten times more, nor one that takes seconds
  // (it misses any latency goal already; its walk would cost minutes).
  if (first.p50Ms === null) return [...rows, { list: name, door, request, page: 10, p50Ms: null, p99Ms: null, samples: 0, note: first.note }];
  if (first.p50Ms > SLOW_MS) return [...rows, { list: name, door, request, page: 10, p50Ms: null, p99Ms: null, samples: 0, note: 'not walked: page 1 over 2 s' }];
  let cursor: string | undefined;
  let pages = 1;
  let problem: string | undefined;
  for (; pages < 10; pages += 1) {
    const sent = await send(agent, o.base, m.at(cursor));
    problem = failure(sent);
    if (problem) break;
    cursor = m.next(JSON.parse(sent.body));
    if (!cursor) break;
  }
  if (cursor && pages === 10) rows.push({ list: name, door, request, page: 10, ...(await measurePage(agent, o, m.at(cursor))) });
  else rows.push({ list: name, door, request, page: 10, p50Ms: null, p99Ms: null, samples: 0, note: problem ?? `${pages} pages only` });
  return rows;
}

export async function runGrowth(o: GrowthOptions, enumValues: (type: string) => string[]): Promise<GrowthRow[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const rows: GrowthRow[] = [];
  try {
    for (const list of listRoutes(enumValues)) {
      const samples = sampleValues(o, list.spec.path);
      for (const params of variants(list, samples)) {
        const request = describe(params);
        const label = `${list.spec.path} ${request}`;
        if (o.only && !o.only.test(label)) continue;
        o.log(`growth: ${label}`);
        rows.push(...(await measureList(agent, o, list.spec.path, 'REST', request, restRequest(list, params))));
        const graphql = graphqlRequest(list, params);
        if (graphql) rows.push(...(await measureList(agent, o, list.root.name.value, 'GraphQL', request, graphql)));
        o.progress?.(rows);
      }
    }
  } finally {
    agent.destroy();
  }
  return rows;
}

/** The rows as a table; with the rows of another scale, side by side with the growth ratio of p50. */
export function growthTable(rows: GrowthRow[], label: string, other?: { label: string; rows: GrowthRow[] }): string {
  const key = (r: GrowthRow) => `${r.door} ${r.list} ${r.request} ${r.page}`;
  const before = new Map((other?.rows ?? []).map((r) => [key(r), r]));
  const figure = (r: GrowthRow | undefined) => (!r ? '-' : r.p50Ms === null ? r.note : `${r.p50Ms} / ${r.p99Ms}`);
  const header = other
    ? `| list | door | request | page | ${other.label} p50 / p99 ms | ${label} p50 / p99 ms | growth (p50) | note |\n|---|---|---|---|---|---|---|---|`
    : `| list | door | request | page | p50 / p99 ms | note |\n|---|---|---|---|---|---|`;
  const lines = rows.map((r) => {
    if (!other) return `| ${r.list} | ${r.door} | ${r.request} | ${r.page ?? '-'} | ${figure(r)} | ${r.p50Ms === null ? '' : r.note} |`;
    const b = before.get(key(r));
    const ratio = b?.p50Ms && r.p50Ms !== null ? `${(r.p50Ms / b.p50Ms).toFixed(2)}x` : '-';
    return `| ${r.list} | ${r.door} | ${r.request} | ${r.page ?? '-'} | ${figure(b)} | ${figure(r)} | ${ratio} | ${r.p50Ms === null ? '' : r.note} |`;
  });
  return [header, ...lines].join('\n');
}

export function readGrowth(file: string): { label: string; rows: GrowthRow[] } {
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}
