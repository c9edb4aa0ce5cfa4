import DataLoader from 'dataloader';
import { DataSource, EntityTarget, ObjectLiteral } from 'typeorm';
import { Params, selectColumns } from './sql';

/** A loader of rows by primary key: one `WHERE id = ANY(...)` per tick, results in key order, null when absent. */
export function rowsById<T extends ObjectLiteral>(
  ds: DataSource,
  entity: EntityTarget<T>,
  keyType: 'uuid' | 'text',
): DataLoader<string, T | null> {
  const metadata = ds.getMetadata(entity);
  return new DataLoader<string, T | null>(async (ids) => {
    const p = new Params();
    const rows: T[] = await ds.query(
      `SELECT ${selectColumns(metadata, 't')} FROM "${metadata.tableName}" t WHERE t.id = ANY(${p.add(ids)}::${keyType}[])`,
      p.values,
    );
    const byId = new Map(rows.map((r) => [String(r.id), r]));
    return ids.map((id) => byId.get(id) ?? null);
  });
}

/** Loads pages of children for many parents, grouping the parents that ask with the same page arguments. */
export function pagesByParent<Args, P>(
  load: (args: Args, parentIds: string[]) => Promise<Map<string, P>>,
): DataLoader<{ parentId: string; args: Args }, P, string> {
  return new DataLoader(
    async (keys) => {
      const groups = new Map<string, { args: Args; ids: string[] }>();
      for (const key of keys) {
        const argsKey = JSON.stringify(key.args);
        let group = groups.get(argsKey);
        if (!group) groups.set(argsKey, (group = { args: key.args, ids: [] }));
        group.ids.push(key.parentId);
      }
      const results = new Map<string, P>();
      await Promise.all(
        [...groups.entries()].map(async ([argsKey, group]) => {
          const pages = await load(group.args, [...new Set(group.ids)]);
          for (const [parentId, page] of pages) results.set(`${argsKey}|${parentId}`, page);
        }),
      );
      return keys.map((key) => results.get(`${JSON.stringify(key.args)}|${key.parentId}`) as P);
    },
    { cacheKeyFn: (key) => `${JSON.stringify(key.args)}|${key.parentId}` },
  );
}
