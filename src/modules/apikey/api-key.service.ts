import { createHash, randomBytes } from 'node:crypto';
import { DataSource, EntityManager, In, IsNull } from 'typeorm';
import { NotFoundError } from '../../common/errors';
import { ApiKey, ApiKeyRole } from './api-key.entity';
import type { Caller } from '../../common/request/context';


const KEY_PREFIX = 'nftgw_';

export function digestOf(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** Creates a key for an account and returns it; only its digest is stored, so this is the one chance to see it. */
export async function createApiKey(
  manager: EntityManager,
  input: { address: string; role: ApiKeyRole; label?: string | null },
): Promise<{ key: string; apiKey: ApiKey }> {
  const key = KEY_PREFIX + randomBytes(24).toString('base64url');
  const repo = manager.getRepository(ApiKey);
  const apiKey = await repo.save(
    repo.create({
      keyHash: digestOf(key),
      prefix: key.slice(0, 12),
      address: input.address,
      role: input.role,
      label: input.label ?? null,
    }),
  );
  return { key, apiKey };
}

/** Ends a key, named by its id or by the key itself. */
export async function revokeApiKey(ds: DataSource, idOrKey: string): Promise<ApiKey> {
  const repo = ds.getRepository(ApiKey);
  const isUuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(idOrKey);
  const found = await repo.findOneBy(isUuid ? { id: idOrKey, revokedAt: IsNull() } : { keyHash: digestOf(idOrKey), revokedAt: IsNull() });
  if (!found) throw new NotFoundError(`no active API key ${isUuid ? `with id ${idOrKey}` : 'matches the given key'}`);
  found.revokedAt = new Date();
  return repo.save(found);
}

/** Keys by id (never their digests). */
export function apiKeysByIds(ds: DataSource, ids: readonly string[]): Promise<ApiKey[]> {
  return ds.getRepository(ApiKey).find({
    select: { id: true, prefix: true, address: true, role: true, label: true, createdAt: true, revokedAt: true },
    where: { id: In([...ids]) },
  });
}

/** What a request with a key that is not (or no longer) valid is told, on every door. */
export const UNKNOWN_KEY = 'the API key is unknown or revoked';

export async function callerForKey(ds: DataSource, key: string): Promise<Caller | null> {
  const found = await ds.getRepository(ApiKey).findOneBy({ keyHash: digestOf(key), revokedAt: IsNull() });
  return found ? { address: found.address, role: found.role, keyId: found.id, keyLabel: found.label } : null;
}

/** The key a request carries: `access-token: <key>` or `Authorization: Bearer <key>`. */
export function keyFromHeaders(headers: Record<string, string | string[] | undefined>): string | undefined {
  const direct = headers['access-token'];
  if (typeof direct === 'string' && direct.trim()) return direct.trim();
  const auth = headers.authorization;
  if (typeof auth === 'string') {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (match) return match[1];
  }
  return undefined;
}
