import { startServer, TestServer, toResult } from '../setup/server';
import { MAX_ALIASES, MAX_DIRECTIVES, MAX_TOKENS } from '../../src/app/graphql/protections';

let server: TestServer;
let production: TestServer;
beforeAll(async () => {
  [server, production] = await Promise.all([startServer(), startServer({ production: true })]);
});
afterAll(() => Promise.all([server.close(), production.close()]));

function aliases(n: number): string {
  return `{ ${Array.from({ length: n }, (_, i) => `c${i}: collections(limit: 1) { result { id } }`).join(' ')} }`;
}

test('when a document uses 15 aliases, then it runs', async () => {
  const res = await server.gql(aliases(MAX_ALIASES));
  expect(res.body.errors).toBeUndefined();
});

test('when a document uses 16 aliases, then it is a 400 BAD_REQUEST before any SQL', async () => {
  const res = await server.gql(aliases(MAX_ALIASES + 1));
  expect(res.status).toBe(400);
  expect(res.body.errors![0].extensions.code).toBe('BAD_REQUEST');
  expect(res.body.errors![0].message).toBe('the document uses 16 aliases; the limit is 15');
  expect(res.sql).toBe(0);
});

test('when a document uses 51 directives, then it is a 400 BAD_REQUEST before any SQL', async () => {
  const fields = Array.from({ length: MAX_DIRECTIVES + 1 }, () => '__typename @include(if: true)').join(' ');
  const res = await server.gql(`{ collections(limit: 1) { result { id } } ${fields} }`);
  expect(res.status).toBe(400);
  expect(res.body.errors![0].message).toBe('the document uses 51 directives; the limit is 50');
  expect(res.sql).toBe(0);
});

test('when a document has more than 2,000 tokens, then the parser refuses it with 400 before any SQL', async () => {
  const res = await server.gql(`{ collections(limit: 1) { result { id ${'name '.repeat(MAX_TOKENS)} } } }`);
  expect(res.status).toBe(400);
  expect(res.body.errors![0].extensions.code).toBe('BAD_REQUEST');
  expect(res.body.errors![0].message).toContain('more that 2000 tokens');
  expect(res.sql).toBe(0);
});

test('when a batched JSON array is posted, then it is a 400 BAD_REQUEST saying one operation per request', async () => {
  const res = await toResult(
    await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([{ query: '{ __typename }' }, { query: '{ __typename }' }]),
    }),
  );
  expect(res.status).toBe(400);
  expect(res.body.errors[0].extensions.code).toBe('BAD_REQUEST');
  expect(res.body.errors[0].message).toMatch(/batch/i);
});

test('when a GET query comes without a preflight header, then CSRF prevention refuses it with 400', async () => {
  const res = await fetch(`${server.url}/graphql?query=${encodeURIComponent('{ __typename }')}`);
  expect(res.status).toBe(400);
  expect(await res.text()).toContain('CSRF');
});

test('when introspection is asked in production, then it is refused before any SQL', async () => {
  const res = await production.gql('{ __schema { types { name } } }');
  expect(res.status).toBe(400);
  expect(res.body.errors![0].extensions.code).toBe('BAD_REQUEST');
  expect(res.body.errors![0].message).toContain('introspection');
  expect(res.sql).toBe(0);
});

test('when introspection is asked in development, then the schema is returned', async () => {
  const res = await server.gql('{ __schema { queryType { name } } }');
  expect(res.body.data).toEqual({ __schema: { queryType: { name: 'Query' } } });
});

test('when a field is misspelt in production, then the message suggests no field name', async () => {
  const [dev, prod] = await Promise.all([server.gql('{ collections(limit: 1) { result { nme } } }'), production.gql('{ collections(limit: 1) { result { nme } } }')]);
  expect(dev.body.errors![0].message).toContain('Did you mean');
  expect(prod.body.errors![0].message).not.toContain('Did you mean');
  expect(prod.body.errors![0].message).toContain('Cannot query field "nme"');
});

test('when the landing page is asked in production, then no Sandbox is served', async () => {
  const [dev, prod] = await Promise.all(
    [server, production].map((s) => fetch(`${s.url}/graphql`, { headers: { accept: 'text/html' } }).then((r) => r.text())),
  );
  expect(dev).toContain('embeddable-sandbox');
  expect(prod).not.toContain('embeddable-sandbox');
});
