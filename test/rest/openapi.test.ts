import SwaggerParser from '@apidevtools/swagger-parser';
import { routes } from '../../src/app/rest/v1/routes';
import { openApiPath } from '../../src/app/rest/v1/openapi';
import { ResponseChecker, Doc } from '../setup/openapi-check';
import { startServer, TestServer } from '../setup/server';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

/** A JSON document, read field by field. */
type Json = any;

async function documentOf(): Promise<Json> {
  const res = await fetch(`${server.url}/v1/openapi.json`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('application/json');
  return res.json();
}

describe('GET /v1/openapi.json', () => {
  test('when the description is fetched, then an independent validator finds it a valid OpenAPI 3.1 document', async () => {
    const doc = await documentOf();

    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeDefined();
    expect(doc.openapi).toBe('3.1.0');
  });

  test('when the route table is compared with the description, then every route is there with its method, and nothing else', async () => {
    const doc = await documentOf();

    const documented = Object.entries(doc.paths as Record<string, object>).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m} ${path}`));
    expect(documented.sort()).toEqual(routes.map((r) => `${r.method} ${openApiPath(r.path)}`).sort());
  });

  test('when a list route is described, then its parameters carry their enums, bounds and defaults', async () => {
    const doc = await documentOf();
    const params = Object.fromEntries(doc.paths['/v1/offers'].get.parameters.map((p: Json) => [p.name, p.schema]));

    expect(params.limit).toMatchObject({ minimum: 1, maximum: 100, default: 20 });
    expect(JSON.stringify(params.order_by)).toContain('"enum":["created_at","price","end_time"]');
    expect(params.order_by.default).toBe('created_at');
    expect(JSON.stringify(params.direction)).toContain('"enum":["asc","desc"]');
    expect(JSON.stringify(params.status)).toContain('"accepted"');
  });

  test('when a write is described, then it needs the access-token scheme and lists 401, 403, 409 and 422 with the error body', async () => {
    const doc = await documentOf();
    const create = doc.paths['/v1/collections'].post;

    expect(doc.components.securitySchemes.accessToken).toEqual({ type: 'apiKey', in: 'header', name: 'access-token' });
    expect(create.security).toEqual([{ accessToken: [] }, { bearer: [] }]);
    for (const status of ['200', '401', '403', '409', '422']) expect(create.responses[status]).toBeDefined();
    expect(create.responses['422'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
    expect(create.requestBody.content['application/json'].schema.properties).toHaveProperty('contract_address');
  });

  test('when a body drifts from its route\'s schema, then the check that every REST test runs refuses it', async () => {
    const checker = new ResponseChecker((await documentOf()) as Doc);
    const offer = (await server.rest('GET', '/v1/offers?limit=1')).body;

    expect(() => checker.check('GET', '/v1/offers', 200, { ...offer, extra: 1 }, 'application/json')).toThrow(/extra|additional/);
    expect(() => checker.check('GET', '/v1/offers', 200, { ...offer, remaining: 'many' }, 'application/json')).toThrow(/remaining/);
    expect(() => checker.check('GET', '/v1/offers', 418, {}, 'application/json')).toThrow(/does not list/);
  });
});

describe('GET /v1/docs', () => {
  test('when the reference is opened, then its page and its script come from this server, not a CDN', async () => {
    const page = await fetch(`${server.url}/v1/docs`);
    const html = await page.text();
    const scripts = [...html.matchAll(/src="([^"]+)"/g)].map((m) => m[1]);

    expect(page.status).toBe(200);
    expect(html).not.toMatch(/https?:\/\//);
    for (const src of scripts) {
      const res = await fetch(`${server.url}${src}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('javascript');
    }
    expect(await (await fetch(`${server.url}/v1/docs/init.js`)).text()).toContain('/v1/openapi.json');
  });
});
