import DataLoader from 'dataloader';
import { Any, DataSource, EntityTarget, FindOptionsWhere, ObjectLiteral } from 'typeorm';
import { loaderBatchSize } from './metrics';
import { Params, selectColumns } from './sql';

/**
 * A DataLoader that also hands out what it has already loaded without a promise (`get`). A list that
 * loads its items' relations in one go before returning (see prefetchAssetRelations) lets every item's
 * field resolvers answer synchronously: no promise per item and field for GraphQL to wait on, which was
 * a large part of the time and garbage of big responses.
 */
export class PeekLoader<K, V, C = K> extends DataLoader<K, V, C> {
  private readonly settled: Map<C, V>;
  private readonly keyOf: (key: K) => C;

  constructor(batch: DataLoader.BatchLoadFn<K, V>, options?: DataLoader.Options<K, V, C>) {
    const settled = new Map<C, V>();
    const keyOf = options?.cacheKeyFn ?? ((key: K) => key as unknown as C);
    super(async (keys) => {
      const values = await batch(keys);
      keys.forEach((key, i) => {
        const value = values[i];
        if (!(value instanceof Error)) settled.set(keyOf(key), value);
      });
      return values;
    }, options);
    this.settled = settled;
    this.keyOf = keyOf;
  }

  /** The value when it has been loaded (null: loaded, and there is none); otherwise the promise of it. */
  get(key: K): V | Promise<V> {
    const value = this.settled.get(this.keyOf(key));
    return value !== undefined ? value : this.load(key);
  }

  prime(key: K, value: V | PromiseLike<V> | Error): this {
    if (!(value instanceof Error) && !isPromiseLike(value) && !this.settled.has(this.keyOf(key))) this.settled.set(this.keyOf(key), value);
    return super.prime(key, value);
  }

  clear(key: K): this {
    this.settled.delete(this.keyOf(key));
    return super.clear(key);
  }

  clearAll(): this {
    this.settled.clear();
    return super.clearAll();
  }
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}

/** `fn` of a value that may still be coming: synchronously when it is there. */
export function whenLoaded<T, R>(value: T | Promise<T>, fn: (value: T) => R): R | Promise<R> {
  return value instanceof Promise ? value.then(fn) : fn(value);
}

/** A batch function that records its batch sizes (gateway_dataloader_batch_size{loader}). */
export function observed<K, V>(loader: string, batch: (keys: readonly K[]) => Promise<V[]>): (keys: readonly K[]) => Promise<V[]> {
  const sizes = loaderBatchSize.labels(loader);
  return (keys) => {
    sizes.observe(keys.length);
    return batch(keys);
  };
}

/** Rows in the order of `keys`, null where a key has no row. */
export function byKey<K, V>(keys: readonly K[], rows: V[], keyOf: (row: V) => K): (V | null)[] {
  const map = new Map(rows.map((row) => [keyOf(row), row]));
  return keys.map((key) => map.get(key) ?? null);
}

/** A loader of entities by primary key through their repository: one `WHERE id = ANY(...)` per tick, in key order, null when absent. */
export function entitiesById<T extends { id: string }>(ds: DataSource, entity: EntityTarget<T>): PeekLoader<string, T | null> {
  const repository = ds.getRepository(entity);
  return new PeekLoader<string, T | null>(
    observed(`${repository.metadata.tableName}ById`, async (ids) => byKey(ids, await repository.findBy({ id: Any([...ids]) } as FindOptionsWhere<T>), (row) => row.id)),
  );
}

/**
 * A loader of plain rows by primary key (raw SQL over the entity's columns, or `columns` over `t`: a read
 * model's, no hydration): one `WHERE id = ANY(...)` per tick, results in key order, null when absent. The
 * hot read models' (assets, collections).
 */
export function rowsById<T extends ObjectLiteral>(
  ds: DataSource,
  entity: EntityTarget<T>,
  keyType: 'uuid' | 'text',
  columns = selectColumns(ds.getMetadata(entity), 't'),
): PeekLoader<string, T | null> {
  const metadata = ds.getMetadata(entity);
  return new PeekLoader<string, T | null>(observed(`${metadata.tableName}ById`, async (ids) => {
    const p = new Params();
    const rows: T[] = await ds.query(
      `SELECT ${columns} FROM "${metadata.tableName}" t WHERE t.id = ANY(${p.add(ids)}::${keyType}[])`,
      p.values,
    );
    const byId = new Map(rows.map((r) => [String(r.id), r]));
    return ids.map((id) => byId.get(id) ?? null);
  }));
}

/** Loads pages of children for many parents, grouping the parents that ask with the same page arguments. */
export function pagesByParent<Args, P>(
  name: string,
  load: (args: Args, parentIds: string[]) => Promise<Map<string, P>>,
): DataLoader<{ parentId: string; args: Args }, P, string> {
  return new DataLoader(
    observed(name, async (keys: readonly { parentId: string; args: Args }[]) => {
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
    }),
    { cacheKeyFn: (key) => `${JSON.stringify(key.args)}|${key.parentId}` },
  );
}
