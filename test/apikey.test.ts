import { ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomAddress, startServer, TestServer } from './setup/server';
import { saveCollection } from './factories/marketplace';
import { OWN_WORK_ONLY } from './setup/gateway-process';
import { runApiKeyCommand } from '../src/tools/apikey';
import { ApiKeyRole } from '../src/modules/apikey/api-key.entity';
import { createApiKey } from '../src/modules/apikey/api-key.service';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

interface CommandRun {
  code: number;
  out: string[];
  err: string[];
}

/** `npm run apikey -- <argv>` in this process, against the run's database. */
async function apikey(...argv: string[]): Promise<CommandRun> {
  const out: string[] = [];
  const err: string[] = [];
  const saved = process.env.DATABASE_URL;
  process.env.DATABASE_URL = process.env.TEST_DATABASE_URL;
  try {
    const code = await runApiKeyCommand(argv, { out: (line) => out.push(line), err: (line) => err.push(line) });
    return { code, out, err };
  } finally {
    if (saved === undefined) delete process.env.DATABASE_URL;
    else process.env.DATABASE_URL = saved;
  }
}

/** The key and its id from the output of `create`. */
function createdKey(run: CommandRun): { key: string; id: string } {
  const id = /key ([0-9a-f-]{36}) for/.exec(run.out.join('\n'))?.[1];
  const keyLines = run.out.filter((line) => /^\S{20,}$/.test(line));
  expect(keyLines).toHaveLength(1);
  expect(id).toBeDefined();
  return { key: keyLines[0], id: id! };
}

const newCollection = () => ({ contract_address: randomAddress(), chain_id: '1', name: 'Key test' });

describe('npm run apikey', () => {
  test('when a key is created, then it is printed once, works for a write, and only its sha256 digest is stored', async () => {
    const address = randomAddress();
    const run = await apikey('create', '--address', address.toUpperCase().replace('0X', '0x'));
    expect(run.code).toBe(0);
    const { key, id } = createdKey(run);
    expect(run.out.filter((line) => line.includes(key))).toHaveLength(1);

    const res = await server.rest('POST', '/v1/collections', newCollection(), key);
    expect(res.status).toBe(200);
    expect(res.body.owner).toBe(address);

    const [stored] = await server.ds.query('SELECT key_hash, address, role, row_to_json(k)::text AS whole FROM api_keys k WHERE id = $1', [id]);
    expect(stored).toMatchObject({ key_hash: createHash('sha256').update(key).digest('hex'), address, role: 'user' });
    expect(stored.whole).not.toContain(key);
  });

  test('when a key is revoked by its id, then it gets 401', async () => {
    const { key, id } = createdKey(await apikey('create', '--address', randomAddress()));
    expect((await server.rest('POST', '/v1/collections', newCollection(), key)).status).toBe(200);

    const run = await apikey('revoke', id);
    expect(run.code).toBe(0);

    const res = await server.rest('POST', '/v1/collections', newCollection(), key);
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('UNAUTHENTICATED');
    const [row] = await server.ds.query('SELECT revoked_at FROM api_keys WHERE id = $1', [id]);
    expect(row.revoked_at).not.toBeNull();
  });

  test('when the address is malformed, then the command exits with 2 and says why', async () => {
    const run = await apikey('create', '--address', '0x1234');
    expect(run.code).toBe(2);
    expect(run.out).toEqual([]);
    expect(run.err.join('\n')).toMatch(/--address/);
  });

  test('when asked for --help (or -h, or help), then it prints the usage on stdout and exits with 0', async () => {
    for (const argv of [['--help'], ['-h'], ['help']]) {
      const run = await apikey(...argv);
      expect(run).toEqual({ code: 0, out: [expect.stringContaining('npm run apikey -- create --address')], err: [] });
    }
  });

  test('when the command is unknown, then the usage goes to stderr with exit code 2', async () => {
    const run = await apikey('rotate');
    expect(run.code).toBe(2);
    expect(run.out).toEqual([]);
    expect(run.err.join('\n')).toContain('usage:');
  });

  test("when an admin key is created, then it may update another account's collection", async () => {
    const { key: ownerKey } = await server.key();
    const collection = await saveCollection(server, ownerKey);
    const run = await apikey('create', '--admin', '--address', randomAddress());
    expect(run.code).toBe(0);
    const { key: adminKey, id } = createdKey(run);
    const [stored] = await server.ds.query('SELECT role FROM api_keys WHERE id = $1', [id]);
    expect(stored.role).toBe('admin');

    const res = await server.rest('PUT', `/v1/collections/${collection.contractAddress}`, { name: 'Renamed by admin' }, adminKey);
    expect(res.status).toBe(200);
    expect(res.body.name).toBe('Renamed by admin');
    const [row] = await server.ds.query('SELECT name FROM collections WHERE id = $1', [collection.id]);
    expect(row.name).toBe('Renamed by admin');
  });
});

describe('GraphQL createApiKey and revokeApiKey', () => {
  test('when a user key asks to create or revoke a key, then it is FORBIDDEN', async () => {
    const { key } = await server.key();
    const created = await server.gql(CREATE_API_KEY, { address: randomAddress() }, key);
    expect(created.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(created.body.data).toBeNull();

    const { id } = createdKey(await apikey('create', '--address', randomAddress()));
    const revoked = await server.gql(REVOKE_API_KEY, { id }, key);
    expect(revoked.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const [row] = await server.ds.query('SELECT revoked_at FROM api_keys WHERE id = $1', [id]);
    expect(row.revoked_at).toBeNull();
  });

  test('when an admin key creates a key, then the new key works, until the admin revokes it', async () => {
    const { key: adminKey } = await server.key({ admin: true });
    const address = randomAddress();
    const created = await server.gql(CREATE_API_KEY, { address }, adminKey);
    expect(created.body.errors).toBeUndefined();
    const { key, apiKey } = created.body.data.createApiKey;
    expect(apiKey).toMatchObject({ address, role: 'USER', revokedAt: null });

    const write = await server.rest('POST', '/v1/collections', newCollection(), key);
    expect(write.status).toBe(200);
    expect(write.body.owner).toBe(address);

    const revoked = await server.gql(REVOKE_API_KEY, { id: apiKey.id }, adminKey);
    expect(revoked.body.errors).toBeUndefined();
    expect(revoked.body.data.revokeApiKey.revokedAt).toEqual(expect.any(String));
    expect((await server.rest('POST', '/v1/collections', newCollection(), key)).status).toBe(401);
  });
});

describe('who am I: GET /v1/me and viewer', () => {
  const VIEWER = '{ viewer { address role keyLabel } }';

  test('when a key asks, then both doors answer the address it acts as, its role and its label', async () => {
    const { key: adminKey } = await server.key({ admin: true });
    const address = randomAddress();
    const { key } = await createApiKey(server.ds.manager, { address, role: ApiKeyRole.USER, label: 'ci deploys' });

    const me = await server.rest('GET', '/v1/me', undefined, key);
    expect(me.status).toBe(200);
    expect(me.body).toEqual({ address, role: 'user', key_label: 'ci deploys' });
    const viewer = await server.gql(VIEWER, {}, key);
    expect(viewer.body).toEqual({ data: { viewer: { address, role: 'USER', keyLabel: 'ci deploys' } } });

    const admin = await server.rest('GET', '/v1/me', undefined, adminKey);
    expect(admin.body).toMatchObject({ role: 'admin', key_label: null });
  });

  test('when no key is given, then GET /v1/me is a 401 and viewer is null; a revoked key is a 401 on both', async () => {
    const me = await server.rest('GET', '/v1/me');
    expect(me.status).toBe(401);
    expect(me.body.error.code).toBe('UNAUTHENTICATED');
    const viewer = await server.gql(VIEWER);
    expect(viewer.status).toBe(200);
    expect(viewer.body).toEqual({ data: { viewer: null } });

    const { key } = await server.key();
    await server.ds.query('UPDATE api_keys SET revoked_at = now() WHERE key_hash = $1', [createHash('sha256').update(key).digest('hex')]);
    expect((await server.rest('GET', '/v1/me', undefined, key)).status).toBe(401);
    expect((await server.gql(VIEWER, {}, key)).status).toBe(401);
  });
});

describe('npm run apikey and the database it writes to', () => {
  let tmp: string;
  let savedTmp: string | undefined;
  let child: ChildProcess | undefined;
  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'apikey-'));
    savedTmp = process.env.TMPDIR;
    process.env.TMPDIR = tmp;
  });
  afterEach(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
    if (savedTmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = savedTmp;
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  /** The real server (src/main.ts) on the run's database, its records under this test's TMPDIR. */
  async function startMain(): Promise<void> {
    child = spawn(process.execPath, ['-r', path.resolve(__dirname, 'setup/ts-register.js'), path.resolve(__dirname, '../src/main.ts')], {
      // The run's database may be the embedded one, whose single session other test files hold at times.
      env: { ...process.env, TMPDIR: tmp, DATABASE_URL: process.env.TEST_DATABASE_URL, DB_POOL_WAIT_MS: '30000', PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...OWN_WORK_ONLY },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    await new Promise<void>((resolve, reject) => {
      child!.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('ready in')) resolve();
      });
      child!.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child!.once('exit', (code) => reject(new Error(`the server exited with ${code}: ${output}`)));
    });
  }

  /** The command as a user runs it in a shell without DATA_DIR or DATABASE_URL. */
  async function bareApikey(...argv: string[]): Promise<CommandRun> {
    const saved = { url: process.env.DATABASE_URL, dir: process.env.DATA_DIR };
    delete process.env.DATABASE_URL;
    delete process.env.DATA_DIR;
    const out: string[] = [];
    const err: string[] = [];
    try {
      const code = await runApiKeyCommand(argv, { out: (line) => out.push(line), err: (line) => err.push(line) });
      return { code, out, err };
    } finally {
      if (saved.url !== undefined) process.env.DATABASE_URL = saved.url;
      if (saved.dir !== undefined) process.env.DATA_DIR = saved.dir;
    }
  }

  test('when a key is created, then the command says which database it wrote to, without a password', async () => {
    const run = await apikey('create', '--address', randomAddress());

    expect(run.code).toBe(0);
    expect(run.out[0]).toBe(`Database: ${new URL(process.env.TEST_DATABASE_URL!).toString()}`);
  });

  test('when a server runs on another database and the command is run without DATA_DIR, then it refuses and says what to set', async () => {
    await startMain();
    const address = randomAddress();

    const refused = await bareApikey('create', '--address', address);
    const fixed = await apikey('create', '--address', address);

    expect(refused.code).toBe(1);
    expect(refused.out).toEqual([]);
    const message = refused.err.join('\n');
    expect(message).toContain(`A server (pid ${child!.pid}`);
    expect(message).toContain(`DATABASE_URL=${new URL(process.env.TEST_DATABASE_URL!).toString()} npm run apikey -- create --address ${address}`);
    expect(fixed.code).toBe(0);
    expect((await server.ds.query('SELECT count(*)::int AS n FROM api_keys WHERE address = $1', [address]))[0].n).toBe(1);
  });

  test('when that server has stopped, then its record no longer stands in the way', async () => {
    await startMain();
    child!.kill('SIGTERM');
    await once(child!, 'exit');

    expect(fs.readdirSync(path.join(tmp, 'nft-marketplace-gateway', 'servers'))).toEqual([]);
  });
});

const CREATE_API_KEY = /* GraphQL */ `
  mutation ($address: Address!) {
    createApiKey(address: $address) { key apiKey { id address role revokedAt } }
  }`;

const REVOKE_API_KEY = /* GraphQL */ `
  mutation ($id: ID!) {
    revokeApiKey(id: $id) { id revokedAt }
  }`;
