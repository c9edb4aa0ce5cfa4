import { startServer, TestServer } from './setup/server';

/**
 * Broken multipart bodies the fuzzer (bench/fuzz/multipart.ts) found to crash the process or answer 500,
 * each a BAD_REQUEST now, with the server still answering afterwards.
 */
const BOUNDARY = '----hostileBoundary';
const IMPORT = 'mutation ($c: String!, $file: Upload!) { importAssets(collectionId: $c, file: $file) { data { count } } }';

let server: TestServer;
let key: string;
beforeAll(async () => {
  server = await startServer();
  key = (await server.key()).key;
});
afterAll(() => server.close());

async function post(path: string, body: string, contentType: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': contentType, 'access-token': key, 'apollo-require-preflight': 'true' },
    body,
  });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) };
}

const codeOf = (path: string, body: any) => (path === '/graphql' ? body.errors?.[0]?.extensions?.code : body.error?.code);

async function stillServing(): Promise<number> {
  return (await server.gql('{ chains { id } }')).status;
}

const filePart = (name: string) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"; filename="a.csv"\r\nContent-Type: text/csv\r\n\r\nname,token_id\nx,1\n`;
const graphqlHead = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="operations"\r\n\r\n${JSON.stringify({ query: IMPORT, variables: { c: 'x', file: null } })}\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="map"\r\n\r\n{"0":["variables.file"]}\r\n`;

test.each([
  ['/v1/assets/import', 'a body cut short in the file part', filePart('file'), `multipart/form-data; boundary=${BOUNDARY}`],
  ['/v1/assets/import', 'a declared boundary that is empty', filePart('file'), 'multipart/form-data; boundary='],
  ['/v1/assets/import', 'no boundary at all', filePart('file'), 'multipart/form-data'],
  ['/graphql', 'a malformed part header after operations and map', `${graphqlHead}--${BOUNDARY}\r\n${'x'.repeat(100)}\r\n\r\n`, `multipart/form-data; boundary=${BOUNDARY}`],
  ['/graphql', 'a body cut short in the file part', `${graphqlHead}${filePart('0')}`, `multipart/form-data; boundary=${BOUNDARY}`],
  ['/graphql', 'a declared boundary that is empty', graphqlHead, 'multipart/form-data; boundary='],
  ['/graphql', 'no parts, only the closing boundary', `--${BOUNDARY}--`, `multipart/form-data; boundary=${BOUNDARY}`],
])('when %s gets a multipart request with %s, then it is a coded BAD_REQUEST (never INTERNAL) and the server keeps serving', async (path, _what, body, contentType) => {
  const response = await post(path, body, contentType);

  // GraphQL: refused before execution is HTTP 400; refused inside importAssets (operations and map were read) is the field's error in a 200.
  expect(path === '/graphql' ? [200, 400] : [400]).toContain(response.status);
  expect(codeOf(path, response.body)).toBe('BAD_REQUEST');
  expect(JSON.stringify(response.body)).not.toMatch(/graphql-upload|at Object\.|node_modules/);
  expect(await stillServing()).toBe(200);
});
