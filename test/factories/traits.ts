import { randomAddress, TestServer } from '../setup/server';
import { buildCsv, csvRecord, importFormUrlencoded } from './csv';
import { CollectionRow, saveCollection } from './marketplace';

export interface HeldAsset {
  id: string;
  tokenId: string;
  tokenAddress: string;
  owner: { key: string; address: string };
}

/**
 * A collection whose i-th asset (of `count`) is owned by its own fresh account and carries
 * `attributesOf(i)` as metadata.attributes; written by one CSV import of an admin's (traits are indexed
 * on import), each owner given a key.
 */
export async function collectionOfOwners(
  server: TestServer,
  count: number,
  attributesOf: (i: number) => { trait_type: string; value: unknown }[] = () => [],
): Promise<{ collection: CollectionRow; assets: HeldAsset[] }> {
  const admin = await server.key({ admin: true });
  const collection = await saveCollection(server, admin.key);
  const owners = Array.from({ length: count }, () => randomAddress());
  const records = owners.map((owner, i) => csvRecord(owner, { metadata: JSON.stringify({ attributes: attributesOf(i) }) }, i + 1));
  const res = await importFormUrlencoded(server, collection.id, buildCsv(records), admin.key);
  if (res.status !== 200) throw new Error(`import failed: ${JSON.stringify(res.body)}`);
  const rows: { id: string; token_id: string; token_address: string; owner: string }[] = await server.ds.query(
    'SELECT id, token_id::text, token_address, owner FROM assets WHERE collection_id = $1 ORDER BY token_id',
    [collection.id],
  );
  const keys = await Promise.all(owners.map((address) => server.key({ address })));
  const keyOf = new Map(keys.map((k) => [k.address, k]));
  const assets = rows.map((r) => ({ id: r.id, tokenId: r.token_id, tokenAddress: r.token_address, owner: keyOf.get(r.owner)! }));
  return { collection, assets };
}
