import { startServer, TestServer } from './setup/server';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

describe('health and landing pages', () => {
  test('when /healthz is asked, then it answers 200', async () => {
    const res = await server.rest('GET', '/healthz');
    expect(res.status).toBe(200);
  });

  test('when /readyz is asked with the database up, then it answers 200 ready', async () => {
    const res = await server.rest('GET', '/readyz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ready' });
  });

  test('when a browser opens /graphql, then it gets the Apollo Sandbox page', async () => {
    const res = await server.rest('GET', '/graphql', undefined, undefined, { accept: 'text/html' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(typeof res.body).toBe('string');
    expect(res.body).toMatch(/sandbox/i);
    expect(res.body).toMatch(/apollo/i);
  });

  test('when an unknown route is asked, then it is a 404 with the REST error body', async () => {
    const res = await server.rest('GET', '/v1/no-such-thing');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      error: { code: 'NOT_FOUND', message: expect.stringContaining('/v1/no-such-thing'), details: [], request_id: expect.any(String) },
    });
    expect(res.body.error.request_id).toBe(res.headers.get('x-request-id'));
  });
});

describe('requests that cannot be read', () => {
  test('when a GraphQL multipart body is malformed, then the answer is a 400 naming the problem, not a 500', async () => {
    // An upload's key is checked before its body is read (an anonymous one is a 401 first).
    const { key } = await server.key();
    const res = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=xyz', 'apollo-require-preflight': 'true', 'access-token': key },
      body: '--xyz\r\nContent-Disposition: form-data; name="operations"\r\n\r\nnot json\r\n--xyz--\r\n',
    });
    const body = (await res.json()) as { errors: { message: string; extensions: { code: string } }[] };
    expect(res.status).toBe(400);
    expect(body.errors[0].extensions.code).toBe('BAD_REQUEST');
    expect(body.errors[0].message).toMatch(/operations/i);
  });
});
