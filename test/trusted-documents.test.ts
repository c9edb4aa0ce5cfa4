import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApolloClient, gql, HttpLink, InMemoryCache } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { generatePersistedQueryManifest } from '@apollo/generate-persisted-query-manifest';
import { generatePersistedQueryIdsFromManifest } from '@apollo/persisted-query-lists';
import { OperationDefinitionNode, parse, print } from 'graphql';
import { runDocumentsCommand } from '../src/tools/documents';
import { randomAddress, startServer, TestServer, toResult } from './setup/server';
import { subscribe } from './setup/subscriber';
import { clock } from '../src/common/clock';
import { saveCollection } from './factories/marketplace';

/**
 * Issue #29, point 4: trusted documents. The operations of a persisted-query manifest (the file
 * @apollo/generate-persisted-query-manifest writes) are registered with `npm run documents -- register`,
 * stored in the database, and sent by clients as their id alone (extensions.persistedQuery, as Apollo
 * Client's persisted query link sends them); TRUSTED_DOCUMENTS=require runs nothing else on /graphql.
 */

/** Operation names of this run: the database is shared by the run's test files, and registrations stay. */
const RUN = randomUUID().replace(/-/g, '').slice(0, 12);

interface ManifestOperation {
  id: string;
  name: string;
  type: string;
  body: string;
}

/** A manifest entry as the generator writes it: the printed document, its SHA-256, its operation's name and type. */
function operation(text: string): ManifestOperation {
  const body = print(parse(text));
  const op = parse(body).definitions[0] as OperationDefinitionNode;
  return { id: createHash('sha256').update(body).digest('hex'), name: op.name!.value, type: op.operation, body };
}

const manifestOf = (operations: unknown[]) => ({ format: 'apollo-persisted-query-manifest', version: 1, operations });

const COLLECTION = operation(`query TrustedCollection_${RUN}($address: Address!) { collection(address: $address, includeAssets: false) { name owner } }`);
const CREATE = operation(`mutation TrustedCreateCollection_${RUN}($input: CreateCollectionInput!) { createCollection(input: $input, includeAssets: false) { id name } }`);
const EVENTS = operation(`subscription TrustedEvents_${RUN} { events { id type } }`);
/** Registered only by the test that shows another server finding it. */
const LATE = operation(`query TrustedLate_${RUN}($address: Address!) { collection(address: $address, includeAssets: false) { slug } }`);
const UNREGISTERED = `query Unregistered_${RUN}($address: Address!) { collection(address: $address, includeAssets: false) { name } }`;

let dir: string;
let allow: TestServer;
let require1: TestServer;
let require2: TestServer;
let off: TestServer;
let owner: { key: string; address: string };
let collection: { contractAddress: string; name: string; owner: string };

function captureIo() {
  const out: string[] = [];
  const err: string[] = [];
  return { out: (line: string) => out.push(line), err: (line: string) => err.push(line), stdout: out, stderr: err };
}

/** `npm run documents -- ...args` on the run's database (DATABASE_URL set for the command, then put back). */
async function documents(...args: string[]) {
  const saved = process.env.DATABASE_URL;
  process.env.DATABASE_URL = process.env.TEST_DATABASE_URL;
  const io = captureIo();
  try {
    const code = await runDocumentsCommand(args, io);
    return { code, out: io.stdout, err: io.stderr };
  } finally {
    if (saved === undefined) delete process.env.DATABASE_URL;
    else process.env.DATABASE_URL = saved;
  }
}

function writeManifest(name: string, content: unknown): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return file;
}

const persisted = (op: ManifestOperation) => ({ persistedQuery: { version: 1, sha256Hash: op.id } });

/** POST /graphql with a body as Apollo Client's persisted query link sends it (no query), or any body given. */
async function post(server: TestServer, body: Record<string, unknown>, key?: string) {
  const res = await fetch(`${server.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { 'access-token': key } : {}) },
    body: JSON.stringify(body),
  });
  return toResult(res);
}

const byId = (server: TestServer, op: ManifestOperation, variables: Record<string, unknown>, key?: string) =>
  post(server, { operationName: op.name, variables, extensions: persisted(op) }, key);

/** GET /graphql by id, as the link sends it with useGETForHashedQueries. */
async function getById(server: TestServer, op: ManifestOperation, variables: Record<string, unknown>, headers: Record<string, string> = {}) {
  const params = new URLSearchParams({ operationName: op.name, variables: JSON.stringify(variables), extensions: JSON.stringify(persisted(op)) });
  return toResult(await fetch(`${server.url}/graphql?${params}`, { headers: { 'content-type': 'application/json', ...headers } }));
}

const codeOf = (res: { body: { errors?: { extensions?: { code?: string } }[] } }) => res.body.errors?.[0]?.extensions?.code;
const storedIds = async (ids: string[]) =>
  ((await allow.ds.query(`SELECT id FROM trusted_documents WHERE id = ANY($1) ORDER BY id`, [ids])) as { id: string }[]).map((r) => r.id);

/** gateway_request_roads_total of the GraphQL door by `entry/executor` (the metrics of the test process, shared by its servers). */
async function roads(server: TestServer): Promise<Record<string, number>> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const [, entry, executor, value] of text.matchAll(/^gateway_request_roads_total\{door="graphql",entry="(\w+)",executor="([\w-]+)"\} (\d+)/gm)) {
    out[`${entry}/${executor}`] = Number(value);
  }
  return out;
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trusted-documents-'));
  [allow, require1, require2, off] = await Promise.all([
    startServer(),
    startServer({ trustedDocuments: 'require' }),
    startServer({ trustedDocuments: 'require' }),
    startServer({ trustedDocuments: 'off' }),
  ]);
  owner = await allow.key();
  collection = await saveCollection(allow, owner.key);
  const registered = await documents('register', writeManifest('app.json', manifestOf([COLLECTION, CREATE, EVENTS])));
  if (registered.code !== 0) throw new Error(`registration failed: ${registered.err.join('\n')}`);
});
afterAll(async () => {
  fs.rmSync(dir, { recursive: true, force: true });
  await Promise.all([allow, require1, require2, off].map((s) => s?.close()));
});

describe('npm run documents', () => {
  test('when a manifest is registered, then each operation is stored with its name, type and body, and the command says how many', async () => {
    const first = operation(`query CliFirst_${RUN} { categories(limit: 1) { result { id } } }`);
    const second = operation(`mutation CliSecond_${RUN}($id: ID!) { cancelOffer(id: $id) { id } }`);

    const run = await documents('register', writeManifest('cli.json', manifestOf([first, second])));

    expect(run.code).toBe(0);
    expect(run.out).toEqual([`Database: ${new URL(process.env.TEST_DATABASE_URL!).toString()}`, 'Registered 2 new operations.']);
    const rows = await allow.ds.query(`SELECT id, name, type, body FROM trusted_documents WHERE id = ANY($1) ORDER BY name`, [[first.id, second.id]]);
    expect(rows).toEqual([first, second].sort((a, b) => a.name.localeCompare(b.name)).map(({ id, name, type, body }) => ({ id, name, type, body })));
  });

  test('when the same manifest is registered again, then nothing changes and it says so', async () => {
    const op = operation(`query CliAgain_${RUN} { categories(limit: 1) { result { id name } } }`);
    const file = writeManifest('again.json', manifestOf([op]));
    await documents('register', file);
    const [before] = await allow.ds.query(`SELECT registered_at FROM trusted_documents WHERE id = $1`, [op.id]);

    const again = await documents('register', file);

    expect(again.code).toBe(0);
    expect(again.out[1]).toBe('Registered 0 new operations; 1 were registered already.');
    const after = await allow.ds.query(`SELECT registered_at FROM trusted_documents WHERE id = $1`, [op.id]);
    expect(after).toEqual([before]);
  });

  test('when some operations of a manifest are wrong, then it exits 1, names each by its name and id with the problem, and stores none of them', async () => {
    const good = operation(`query CliGood_${RUN} { categories(limit: 1) { result { id } } }`);
    const wrongId = { ...operation(`query CliWrongId_${RUN} { categories(limit: 2) { result { id } } }`), id: 'a'.repeat(64) };
    const unknownField = operation(`query CliUnknownField_${RUN} { categories(limit: 1) { result { nope } } }`);
    const tooDeep = operation(
      `query CliTooDeep_${RUN} { collection(address: "${randomAddress()}") { assets { result { collection { assets { result { collection { assets { result { collection { name } } } } } } } } } } }`,
    );
    const wrongName = { ...operation(`query CliNamed_${RUN} { categories(limit: 3) { result { id } } }`), name: `CliOtherName_${RUN}` };

    const run = await documents('register', writeManifest('bad.json', manifestOf([good, wrongId, unknownField, tooDeep, wrongName])));

    expect(run.code).toBe(1);
    expect(run.out).toEqual([]);
    const err = run.err.join('\n');
    expect(err).toContain(`operation "${wrongId.name}" (${wrongId.id}): id is not the SHA-256 of body`);
    expect(err).toContain(`operation "${unknownField.name}" (${unknownField.id}): Cannot query field "nope" on type "Category".`);
    expect(err).toContain(`operation "${tooDeep.name}" (${tooDeep.id}): operation is nested 11 levels deep; the limit is 10`);
    expect(err).toContain(`operation "${wrongName.name}" (${wrongName.id}): name is "${wrongName.name}" but the body's operation is named "CliNamed_${RUN}"`);
    expect(err).not.toContain(good.id);
    expect(run.err[run.err.length - 1]).toBe(`${path.join(dir, 'bad.json')}: 4 of its operations cannot be registered; nothing was registered.`);
    expect(await storedIds([good.id, unknownField.id, tooDeep.id, wrongName.id])).toEqual([]);
  });

  test('when the file is not a manifest, then it exits 1 and says what a manifest is; an unreadable file is a usage error', async () => {
    const notJson = await documents('register', writeManifest('not.json', '{"format":'));
    const otherFormat = await documents('register', writeManifest('other.json', { format: 'something-else', version: 1, operations: [] }));
    const missing = await documents('register', path.join(dir, 'missing.json'));

    expect(notJson.code).toBe(1);
    expect(notJson.err[0]).toMatch(/the manifest is not JSON/);
    expect(otherFormat.code).toBe(1);
    expect(otherFormat.err[0]).toContain('"format": "apollo-persisted-query-manifest"');
    expect(missing.code).toBe(2);
    expect(missing.err[0]).toContain('cannot read');
  });

  test('when documents are listed and one is removed, then the list shows it and the removal deletes only it', async () => {
    const kept = operation(`query CliKept_${RUN} { categories(limit: 4) { result { id } } }`);
    const gone = operation(`query CliGone_${RUN} { categories(limit: 5) { result { id } } }`);
    await documents('register', writeManifest('list.json', manifestOf([kept, gone])));

    const listed = await documents('list');
    const removed = await documents('remove', gone.id);
    const removedAgain = await documents('remove', gone.id);

    expect(listed.code).toBe(0);
    expect(listed.out.find((line) => line.startsWith(gone.id))).toMatch(new RegExp(`^${gone.id}  query\\s+  CliGone_${RUN}  \\d{4}-\\d\\d-\\d\\dT`));
    expect(removed.code).toBe(0);
    expect(removed.out[1]).toContain(`Removed query CliGone_${RUN} (${gone.id})`);
    expect(removedAgain.code).toBe(1);
    expect(removedAgain.err).toContain(`no registered operation has the id ${gone.id}`);
    expect(await storedIds([kept.id, gone.id])).toEqual([kept.id]);
  });

  test('when asked for help, then the usage is the answer (stdout, exit 0); a wrong command is a usage error (exit 2)', async () => {
    const help = await documents('--help');
    const wrong = await documents('publish', 'x.json');

    expect(help.code).toBe(0);
    expect(help.out.join('\n')).toContain('npm run documents -- register <manifest.json>');
    expect(wrong.code).toBe(2);
    expect(wrong.err.join('\n')).toContain('usage:');
  });
});

describe('TRUSTED_DOCUMENTS=allow (the default)', () => {
  test('when a registered id is sent alone by POST and by GET, then its operation runs on the lean door, as its text would', async () => {
    const variables = { address: collection.contractAddress };
    const before = await roads(allow);

    const posted = await byId(allow, COLLECTION, variables);
    const got = await getById(allow, COLLECTION, variables);

    const after = await roads(allow);
    const asText = await allow.gql(COLLECTION.body, variables);
    expect(posted.status).toBe(200);
    expect(posted.body).toEqual({ data: { collection: { name: collection.name, owner: collection.owner } } });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(posted.body);
    expect(asText.body).toEqual(posted.body);
    const lean = Object.entries(after)
      .filter(([road]) => road.startsWith('lean/'))
      .reduce((sum, [road, n]) => sum + n - (before[road] ?? 0), 0);
    expect(lean).toBe(2);
  });

  test('when a document is sent as text, or as an automatic persisted query, then it runs as before; an unknown id alone is PERSISTED_QUERY_NOT_FOUND', async () => {
    const variables = { address: collection.contractAddress };
    const text = await allow.gql(UNREGISTERED, variables);
    const hash = createHash('sha256').update(UNREGISTERED).digest('hex');
    const unknown = await post(allow, { variables, extensions: { persistedQuery: { version: 1, sha256Hash: hash } } });
    const apq = await post(allow, { query: UNREGISTERED, variables, extensions: { persistedQuery: { version: 1, sha256Hash: hash } } });

    expect(text.status).toBe(200);
    expect(text.body).toEqual({ data: { collection: { name: collection.name } } });
    expect(codeOf(unknown)).toBe('PERSISTED_QUERY_NOT_FOUND');
    expect(unknown.status).toBeLessThan(500);
    expect(apq.body).toEqual(text.body);
  });
});

describe('TRUSTED_DOCUMENTS=require', () => {
  test('when a document is sent as text, then it is refused with 400 PERSISTED_QUERY_NOT_TRUSTED, by POST and by GET, before it runs', async () => {
    const posted = await require1.gql(UNREGISTERED, { address: collection.contractAddress });
    const params = new URLSearchParams({ query: UNREGISTERED, variables: JSON.stringify({ address: collection.contractAddress }) });
    const got = await toResult(await fetch(`${require1.url}/graphql?${params}`, { headers: { 'content-type': 'application/json' } }));
    const introspection = await require1.gql('query IntrospectionQuery { __schema { queryType { name } } }');

    for (const res of [posted, got, introspection]) {
      expect(res.status).toBe(400);
      expect(res.body.data).toBeUndefined();
      expect(res.body.errors).toEqual([
        { message: expect.stringContaining('TRUSTED_DOCUMENTS=require'), extensions: { code: 'PERSISTED_QUERY_NOT_TRUSTED', details: [], requestId: expect.any(String) } },
      ]);
    }
  });

  test('when an id that no registered document has is sent, then it is refused with 400 PERSISTED_QUERY_NOT_TRUSTED, by POST and by GET', async () => {
    const unknown = operation(UNREGISTERED);

    const posted = await byId(require1, unknown, { address: collection.contractAddress });
    const got = await getById(require1, unknown, { address: collection.contractAddress });

    for (const res of [posted, got]) {
      expect(res.status).toBe(400);
      expect(codeOf(res)).toBe('PERSISTED_QUERY_NOT_TRUSTED');
      expect(res.body.errors[0].message).toContain(unknown.id);
    }
  });

  test('when a registered id is sent, then it runs, by POST and by GET, and so does its exact text', async () => {
    const variables = { address: collection.contractAddress };
    const expected = { data: { collection: { name: collection.name, owner: collection.owner } } };

    const posted = await byId(require1, COLLECTION, variables);
    const got = await getById(require1, COLLECTION, variables);
    const asText = await require1.gql(COLLECTION.body, variables);

    expect([posted, got, asText].map((r) => [r.status, r.body])).toEqual([
      [200, expected],
      [200, expected],
      [200, expected],
    ]);
  });

  test('when a registered id comes in a request the lean door leaves to express (here with an Idempotency-Key), then express runs the same document', async () => {
    const variables = { address: collection.contractAddress };
    const expected = { data: { collection: { name: collection.name, owner: collection.owner } } };
    const toExpress = { 'idempotency-key': `trusted-read-${RUN}` };
    const before = await roads(require1);

    const got = await getById(require1, COLLECTION, variables, toExpress);
    const posted = await toResult(
      await fetch(`${require1.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...toExpress },
        body: JSON.stringify({ operationName: COLLECTION.name, variables, extensions: persisted(COLLECTION) }),
      }),
    );

    const after = await roads(require1);
    expect([got, posted].map((r) => [r.status, r.body])).toEqual([
      [200, expected],
      [200, expected],
    ]);
    const lean = Object.entries(after).filter(([road, n]) => road.startsWith('lean/') && n !== (before[road] ?? 0));
    expect(lean).toEqual([]);
  });

  test('when a registered mutation is sent by its id with a key, then it writes', async () => {
    const contractAddress = randomAddress();
    const name = `Trusted ${RUN}`;

    const res = await byId(require1, CREATE, { input: { contractAddress, chainId: '1', name } }, owner.key);

    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.createCollection.name).toBe(name);
    const rows = await require1.ds.query(`SELECT name, owner FROM collections WHERE contract_address = $1`, [contractAddress]);
    expect(rows).toEqual([{ name, owner: owner.address }]);
  });

  test('when a manifest is registered while a server runs, then that server serves its ids at once, without a restart', async () => {
    const variables = { address: collection.contractAddress };
    const before = await byId(require2, LATE, variables);

    const registered = await documents('register', writeManifest('late.json', manifestOf([LATE])));
    const after = await byId(require2, LATE, variables);

    expect(codeOf(before)).toBe('PERSISTED_QUERY_NOT_TRUSTED');
    expect(registered.code).toBe(0);
    expect(after.status).toBe(200);
    expect(after.body.data).toEqual({ collection: { slug: expect.any(String) } });
  });

  test('when a document is removed, then a running server stops serving it once it asks the table again, a minute after it last did', async () => {
    const removable = operation(`query TrustedRemovable_${RUN} { categories(limit: 6) { result { id } } }`);
    await documents('register', writeManifest('removable.json', manifestOf([removable])));
    expect((await byId(require1, removable, {})).status).toBe(200);

    const removed = await documents('remove', removable.id);
    const withinTheMinute = await byId(require1, removable, {});
    const later = new Date(Date.now() + 61_000);
    clock.set(later);
    try {
      // The use past the minute asks the table in the background; the answers after it know.
      let after = await byId(require1, removable, {});
      for (let i = 0; i < 50 && after.status === 200; i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        after = await byId(require1, removable, {});
      }

      expect(removed.code).toBe(0);
      expect(withinTheMinute.status).toBe(200);
      expect(after.status).toBe(400);
      expect(codeOf(after)).toBe('PERSISTED_QUERY_NOT_TRUSTED');
    } finally {
      clock.reset();
    }
  });

  test('when a /v1 route is called, then it runs its own document as always', async () => {
    const res = await require1.rest('GET', `/v1/collections/${collection.contractAddress}`);

    expect(res.status).toBe(200);
    expect(res.body.name).toBe(collection.name);
  });

  test('when a subscription is sent over the WebSocket, then only a registered one is started', async () => {
    const refused = subscribe(require1.url, {}, `subscription Unregistered_${RUN} { events { id } }`);
    const started = subscribe(require1.url, {}, EVENTS.body);
    try {
      await refused.until(() => refused.errors.length > 0, 5000, 'the refusal');
      await started.until(() => started.connected, 5000, 'the connection');
      // Long enough for a refusal of the registered one to arrive, which comes as fast as the other's did.
      await new Promise((resolve) => setTimeout(resolve, 300));

      expect(refused.errors[0]).toMatchObject({ extensions: { code: 'PERSISTED_QUERY_NOT_TRUSTED' } });
      expect(started.errors).toEqual([]);
      expect(started.completed).toBe(false);
    } finally {
      await Promise.all([refused.stop(), started.stop()]);
    }
  });
});

describe("a client built with Apollo's tooling", () => {
  test('when the manifest @apollo/generate-persisted-query-manifest writes is registered, then Apollo Client\'s persisted query link reads by GET and writes by POST, ids only, in require mode', async () => {
    const source = path.join(dir, 'client');
    fs.mkdirSync(source);
    const page = `query ToolPage_${RUN}($address: Address!) { collection(address: $address, includeAssets: false) { id name ...ToolOwner_${RUN} } }
      fragment ToolOwner_${RUN} on Collection { owner }`;
    const create = `mutation ToolCreate_${RUN}($input: CreateCollectionInput!) { createCollection(input: $input, includeAssets: false) { id name } }`;
    fs.writeFileSync(path.join(source, 'page.graphql'), page);
    fs.writeFileSync(path.join(source, 'create.graphql'), create);
    const manifest = await generatePersistedQueryManifest({ documents: [`${source}/*.graphql`] }, undefined);
    const registered = await documents('register', writeManifest('tooling.json', manifest));
    /** Each request the client sends: its method and whether it carries a document's text. */
    const sent: { method: string; withText: boolean }[] = [];
    const recording: typeof fetch = (input, init) => {
      const url = new URL(String(input));
      const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as { query?: string }) : {};
      sent.push({ method: init?.method ?? 'GET', withText: url.searchParams.has('query') || body.query !== undefined });
      return fetch(input, init);
    };
    const persistedIds = generatePersistedQueryIdsFromManifest({ loadManifest: () => manifest });
    const client = new ApolloClient({
      cache: new InMemoryCache(),
      link: new PersistedQueryLink({ ...persistedIds, useGETForHashedQueries: true }).concat(
        new HttpLink({ uri: `${require1.url}/graphql`, headers: { 'access-token': owner.key }, fetch: recording }),
      ),
    });
    const contractAddress = randomAddress();

    const read = await client.query({ query: gql(page), variables: { address: collection.contractAddress } });
    const written = await client.mutate({ mutation: gql(create), variables: { input: { contractAddress, chainId: '1', name: `Tool ${RUN}` } } });

    expect(registered.code).toBe(0);
    expect(read.data).toEqual({ collection: { __typename: 'Collection', id: expect.any(String), name: collection.name, owner: collection.owner } });
    expect((written.data as { createCollection: { name: string } }).createCollection.name).toBe(`Tool ${RUN}`);
    expect(sent).toEqual([
      { method: 'GET', withText: false },
      { method: 'POST', withText: false },
    ]);
    const rows = await require1.ds.query(`SELECT name FROM collections WHERE contract_address = $1`, [contractAddress]);
    expect(rows).toEqual([{ name: `Tool ${RUN}` }]);
  });
});

describe('TRUSTED_DOCUMENTS=off', () => {
  test('when a registered id is sent alone, then the server does not know it (the table is not read)', async () => {
    const res = await byId(off, COLLECTION, { address: collection.contractAddress });

    expect(codeOf(res)).toBe('PERSISTED_QUERY_NOT_FOUND');
  });
});
