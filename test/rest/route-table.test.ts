import { routes } from '../../src/app/rest/v1/routes';
import type { RouteSpec } from '../../src/app/rest/v1/route-spec';
import { HttpResult, startServer, TestServer } from '../setup/server';

/**
 * Issue #40's guard: every /v1 route of the route table, with each kind of mistake a careful client makes,
 * answers the one status and code docs/api.md gives ("Errors"), with the field named in `details`. A new
 * route joins the table, and so this test, by being added to routes.ts.
 */
let server: TestServer;
let key: string;
beforeAll(async () => {
  server = await startServer();
  key = (await server.key()).key;
});
afterAll(() => server.close());

const label = (spec: RouteSpec) => `${spec.method.toUpperCase()} ${spec.path}`;

/** A malformed value of each path parameter, by its name. */
const MALFORMED: Record<string, string> = {
  id: 'not-an-id!',
  address: 'Not A Slug!',
  token_address: 'nope',
  token_id: 'x1',
};
/** A well-formed value of each path parameter (it names nothing: the answer is then about the mistake alone). */
const WELL_FORMED: Record<string, string> = {
  id: '00000000-0000-4000-8000-000000000000',
  address: '0x00000000000000000000000000000000000000aa',
  token_address: '0x00000000000000000000000000000000000000aa',
  token_id: '1',
};

function pathWith(spec: RouteSpec, values: Record<string, string>): string {
  return spec.path.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(values[name]));
}

const pathParams = (spec: RouteSpec) => [...spec.path.matchAll(/:(\w+)/g)].map((m) => m[1]);
/** The /v1/chains/{id} routes take a chain id ("1"), not a UUID. */
const wellFormed = (spec: RouteSpec) => (spec.path.startsWith('/v1/chains/') ? { ...WELL_FORMED, id: '1' } : WELL_FORMED);
const hasBody = (spec: RouteSpec) => spec.method === 'post' || spec.method === 'put';
/** Bodies with their required fields, so that the mistake under test is the request's only one. */
const REQUIRED_BODY: Record<string, Record<string, unknown>> = {
  '/v1/collections/:address/sweep': { count: 1, max_total: 1, max_unit_price: 1 },
  '/v1/webhooks/:id/replay': { after: '0' },
};
/** The query parameters a route requires. */
const REQUIRED_QUERY: Record<string, string> = { '/v1/search/assets': 'query=x&', '/v1/search/collections': 'query=x&' };

async function call(spec: RouteSpec, path: string, body?: unknown): Promise<HttpResult> {
  return server.rest(spec.method.toUpperCase(), path, hasBody(spec) && !spec.upload ? (body ?? {}) : undefined, key);
}

function expectNamed(res: HttpResult, status: number, code: string, field: string): void {
  expect({ status: res.status, code: res.body.error?.code }).toEqual({ status, code });
  expect(res.body.error.details.map((d: { field?: string }) => d.field)).toContain(field);
}

describe('a malformed path parameter is a 400 naming it, on every route', () => {
  const cases = routes.flatMap((spec) => pathParams(spec).map((param) => [label(spec), spec, param] as const));
  test.each(cases)('%s with a malformed %#', async (_label, spec, param) => {
    const res = await call(spec, pathWith(spec, { ...wellFormed(spec), [param]: MALFORMED[param] }), REQUIRED_BODY[spec.path]);
    expectNamed(res, 400, 'BAD_REQUEST', param);
  });
});

describe('a repeated query parameter, an out-of-range limit and an unknown query parameter are 400s naming them, on every route', () => {
  const lists = routes.filter((spec) => spec.method === 'get' && /\$limit: Int/.test(spec.operation));
  test.each(lists.map((spec) => [label(spec), spec] as const))('%s', async (_label, spec) => {
    const path = `${pathWith(spec, wellFormed(spec))}?${REQUIRED_QUERY[spec.path] ?? ''}`;
    expectNamed(await call(spec, `${path}limit=5&limit=6`), 400, 'BAD_REQUEST', 'limit');
    expectNamed(await call(spec, `${path}limit=0`), 400, 'BAD_REQUEST', 'limit');
    // The event feed's limit goes to MAX_EVENTS; every other list's to 100.
    if (spec.path !== '/v1/events') expectNamed(await call(spec, `${path}limit=101`), 400, 'BAD_REQUEST', 'limit');
  });

  test.each(routes.map((spec) => [label(spec), spec] as const))('%s ?colour=red', async (_label, spec) => {
    const res = await call(spec, `${pathWith(spec, wellFormed(spec))}?colour=red`);
    expectNamed(res, 400, 'BAD_REQUEST', 'colour');
  });
});

describe('a body with an unknown field or a field of the wrong JSON type is a 400 naming it, on every route with a JSON body', () => {
  const writes = routes.filter((spec) => hasBody(spec) && !spec.upload);
  test.each(writes.map((spec) => [label(spec), spec] as const))('%s {"colour": "red"}', async (_label, spec) => {
    const res = await call(spec, pathWith(spec, wellFormed(spec)), { ...REQUIRED_BODY[spec.path], colour: 'red' });
    expectNamed(res, 400, 'BAD_REQUEST', 'colour');
  });

  test.each(writes.map((spec) => [label(spec), spec] as const))('%s with an array for an object', async (_label, spec) => {
    const res = await call(spec, pathWith(spec, wellFormed(spec)), [1]);
    expect({ status: res.status, code: res.body.error?.code }).toEqual({ status: 400, code: 'BAD_REQUEST' });
  });
});
