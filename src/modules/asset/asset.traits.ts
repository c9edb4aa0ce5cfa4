import DataLoader from 'dataloader';
import { DataSource, EntityManager } from 'typeorm';
import { Field, Float, Int, ObjectType } from 'type-graphql';
import { observed } from '../../common/batch';
import { BadRequestError, FieldProblem } from '../../common/errors';
import { Params } from '../../common/sql';
import { Node } from '../../common/graphql/node';

/**
 * Traits: the `metadata.attributes` convention (`[{"trait_type": "Background", "value": "Blue"}, ...]`).
 * Each asset's traits are rows of `asset_traits` (the index the trait filter uses), and each collection's
 * count per trait a row of `collection_traits`; both are written in the transaction that writes the
 * assets. An attribute is indexed when it is an object whose `trait_type` is a string and whose `value`
 * is a string, number or boolean (its JSON text), each 1 to 200 characters; anything else is only metadata.
 */
export const TRAIT_MAX_LENGTH = 200;

@ObjectType({ simpleResolvers: true, implements: Node, description: "A trait (metadata.attributes) of a collection's assets, with how many of them carry it" })
export class Trait {
  /** Its collection: with its type and value, its key (its Node id). */
  collectionId: string;

  @Field(() => String)
  traitType: string;

  @Field(() => String)
  value: string;

  @Field(() => Int, { description: 'How many assets of the collection carry this trait' })
  count: number;

  @Field(() => Float, { description: "count / the collection's number of assets (0 to 1): the smaller, the rarer" })
  rarity: number;
}

/** A trait's rarity over collection_traits `ct`, given its collection's number of assets (`size`): as Trait.rarity says. */
export const traitRaritySql = (ct: string, size: string) => `${ct}.asset_count::float8 / GREATEST(${size}, 1)`;

/** The rows of one trait query: a trait of a parent (an asset or a collection). */
interface TraitRow extends Trait {
  parentId: string;
}

/**
 * Indexes the traits of these newly written assets and adds them to their collections' counts: one
 * statement. Callers hold the collection's mint lock, so counts of one collection are never raced.
 */
export async function indexAssetTraits(m: EntityManager, assetIds: readonly string[]): Promise<void> {
  if (!assetIds.length) return;
  await m.query(
    `WITH added AS (
       INSERT INTO asset_traits (asset_id, collection_id, trait_type, value)
       SELECT DISTINCT a.id, a.collection_id, attr->>'trait_type', attr->>'value'
       FROM assets a
       CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(a.metadata->'attributes') = 'array' THEN a.metadata->'attributes' ELSE '[]'::jsonb END) attr
       WHERE a.id = ANY($1::uuid[]) AND jsonb_typeof(attr) = 'object' AND jsonb_typeof(attr->'trait_type') = 'string'
         AND jsonb_typeof(attr->'value') IN ('string', 'number', 'boolean')
         AND length(attr->>'trait_type') BETWEEN 1 AND $2 AND length(attr->>'value') BETWEEN 1 AND $2
       ON CONFLICT DO NOTHING
       RETURNING collection_id, trait_type, value)
     INSERT INTO collection_traits (collection_id, trait_type, value, asset_count)
     SELECT collection_id, trait_type, value, count(*) FROM added GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
     ON CONFLICT (collection_id, trait_type, value) DO UPDATE SET asset_count = collection_traits.asset_count + excluded.asset_count`,
    [assetIds, TRAIT_MAX_LENGTH],
  );
}

/**
 * Indexes the traits of these assets again after their metadata changed (a fetched tokenURI document): the
 * traits they no longer carry are taken off, the new ones added, and their collections' counts moved by the
 * difference, in one statement (the counts that go up in key order, as indexAssetTraits does; a count that
 * goes down is an existing row, updated in place, as the check keeps counts >= 0). The asset rows must be
 * locked by the caller.
 */
export async function reindexAssetTraits(m: EntityManager, assetIds: readonly string[]): Promise<void> {
  if (!assetIds.length) return;
  await m.query(
    `WITH wanted AS (
       SELECT DISTINCT a.id AS asset_id, a.collection_id, attr->>'trait_type' AS trait_type, attr->>'value' AS value
       FROM assets a
       CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(a.metadata->'attributes') = 'array' THEN a.metadata->'attributes' ELSE '[]'::jsonb END) attr
       WHERE a.id = ANY($1::uuid[]) AND jsonb_typeof(attr) = 'object' AND jsonb_typeof(attr->'trait_type') = 'string'
         AND jsonb_typeof(attr->'value') IN ('string', 'number', 'boolean')
         AND length(attr->>'trait_type') BETWEEN 1 AND $2 AND length(attr->>'value') BETWEEN 1 AND $2),
     removed AS (
       DELETE FROM asset_traits t WHERE t.asset_id = ANY($1::uuid[])
         AND NOT EXISTS (SELECT 1 FROM wanted w WHERE w.asset_id = t.asset_id AND w.trait_type = t.trait_type AND w.value = t.value)
       RETURNING t.collection_id, t.trait_type, t.value),
     added AS (
       INSERT INTO asset_traits (asset_id, collection_id, trait_type, value)
       SELECT w.asset_id, w.collection_id, w.trait_type, w.value FROM wanted w
       WHERE NOT EXISTS (SELECT 1 FROM asset_traits t WHERE t.asset_id = w.asset_id AND t.trait_type = w.trait_type AND t.value = w.value)
       ON CONFLICT DO NOTHING
       RETURNING collection_id, trait_type, value),
     delta AS (
       SELECT collection_id, trait_type, value, sum(d)::int AS d
       FROM (SELECT *, -1 AS d FROM removed UNION ALL SELECT *, 1 FROM added) x GROUP BY 1, 2, 3),
     lowered AS (
       UPDATE collection_traits ct SET asset_count = ct.asset_count + delta.d FROM delta
       WHERE delta.d < 0 AND ct.collection_id = delta.collection_id AND ct.trait_type = delta.trait_type AND ct.value = delta.value
       RETURNING 1)
     INSERT INTO collection_traits (collection_id, trait_type, value, asset_count)
     SELECT collection_id, trait_type, value, d FROM delta WHERE d > 0 ORDER BY 1, 2, 3
     ON CONFLICT (collection_id, trait_type, value) DO UPDATE SET asset_count = collection_traits.asset_count + excluded.asset_count`,
    [assetIds, TRAIT_MAX_LENGTH],
  );
}

/** Wanted traits: values per trait type. An asset matches when, for every type, it carries one of its values. */
export type TraitFilter = Map<string, string[]>;

/** `Background:Blue` (split at the first colon) from the query parameter `trait`, repeatable; 400 when malformed. */
export function parseTraitParams(values: readonly string[], field = 'trait'): TraitFilter {
  return traitFilterOf(
    values.map((text) => {
      const colon = text.indexOf(':');
      if (colon < 1 || colon === text.length - 1) {
        throw new BadRequestError(`${field} must be written type:value, e.g. Background:Blue; got ${JSON.stringify(text)}`, [
          { field, message: 'type:value' },
        ]);
      }
      return { traitType: text.slice(0, colon), value: text.slice(colon + 1) };
    }),
  );
}

export function traitFilterOf(traits: readonly { traitType: string; value: string }[]): TraitFilter {
  const filter: TraitFilter = new Map();
  for (const { traitType, value } of traits) {
    const values = filter.get(traitType) ?? [];
    if (!values.includes(value)) values.push(value);
    filter.set(traitType, values);
  }
  return filter;
}

/** Problems of traits given in a body (a trait offer): each type and value 1..200 characters. */
export function traitProblems(traits: readonly { traitType?: string | null; value?: string | null }[], field: string): FieldProblem[] {
  const problems: FieldProblem[] = [];
  traits.forEach((t, i) => {
    for (const [key, text] of [['trait_type', t.traitType], ['value', t.value]] as const) {
      if (typeof text !== 'string' || text.length < 1 || text.length > TRAIT_MAX_LENGTH) {
        problems.push({ field: `${field}[${i}].${key}`, message: `must be 1 to ${TRAIT_MAX_LENGTH} characters` });
      }
    }
  });
  return problems;
}

/**
 * SQL that is true when the asset `assetId` (an SQL expression) matches the filter: one
 * `IN (SELECT ... FROM asset_traits)` per trait type, each an index scan of ix_asset_traits_trait.
 */
export function traitFilterSql(p: Params, assetId: string, filter: TraitFilter): string[] {
  return [...filter].map(
    ([traitType, values]) =>
      `${assetId} IN (SELECT at.asset_id FROM asset_traits at WHERE at.trait_type = ${p.add(traitType)} AND at.value = ANY(${p.add(values)}::text[]))`,
  );
}

/** A trait's key: its collection, type and value. */
export type TraitKey = Pick<Trait, 'collectionId' | 'traitType' | 'value'>;

/**
 * The traits with these keys that some asset carries, with their counts and rarity as Asset.traits and
 * Collection.traits give them: one statement.
 */
export async function traitsByKeys(ds: DataSource, keys: readonly TraitKey[]): Promise<Trait[]> {
  const rows: Trait[] = await ds.query(
    `SELECT ct.collection_id AS "collectionId", ct.trait_type AS "traitType", ct.value, ct.asset_count AS count,
            ${traitRaritySql('ct', 'n.assets')} AS rarity
     FROM collection_traits ct JOIN collection_asset_counts n ON n.collection_id = ct.collection_id
     WHERE (ct.collection_id, ct.trait_type, ct.value) IN (SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[])) AND ct.asset_count > 0`,
    [keys.map((k) => k.collectionId), keys.map((k) => k.traitType), keys.map((k) => k.value)],
  );
  return rows.map((t) => ({ ...t, count: Number(t.count), rarity: Number(t.rarity) }));
}

declare module '../../common/request/context' {
  interface Loaders {
    traitsByAssetId: DataLoader<string, Trait[]>;
    traitCountsByCollectionId: DataLoader<string, Trait[]>;
  }
}

function grouped(keys: readonly string[], rows: TraitRow[]): Trait[][] {
  const byParent = new Map<string, Trait[]>(keys.map((k) => [k, []]));
  for (const { parentId, ...trait } of rows) byParent.get(parentId)?.push({ ...trait, count: Number(trait.count), rarity: Number(trait.rarity) });
  return keys.map((k) => byParent.get(k)!);
}

/** Each asset's traits with their counts and rarity; each collection's trait counts: one statement per batch. */
export function createTraitLoaders(ds: DataSource) {
  // A collection's number of assets as collection_asset_counts keeps it (counting read every asset).
  const sizes = `(SELECT n.collection_id, n.assets AS size FROM collection_asset_counts n WHERE n.collection_id = ANY(SELECT DISTINCT p.collection_id FROM parents p))`;
  return {
    traitsByAssetId: new DataLoader<string, Trait[]>(
      observed('traitsByAssetId', async (ids) =>
        grouped(
          ids,
          await ds.query(
            `WITH parents AS (SELECT at.asset_id, ct.collection_id, ct.trait_type, ct.value, ct.asset_count
                FROM asset_traits at JOIN collection_traits ct USING (collection_id, trait_type, value) WHERE at.asset_id = ANY($1::uuid[]))
             SELECT ct.asset_id AS "parentId", ct.collection_id AS "collectionId", ct.trait_type AS "traitType", ct.value, ct.asset_count AS count,
                    ${traitRaritySql('ct', 's.size')} AS rarity
             FROM parents ct JOIN ${sizes} s USING (collection_id) ORDER BY ct.trait_type, ct.value`,
            [ids],
          ),
        ),
      ),
    ),
    traitCountsByCollectionId: new DataLoader<string, Trait[]>(
      observed('traitCountsByCollectionId', async (ids) =>
        grouped(
          ids,
          await ds.query(
            `WITH parents AS (SELECT ct.* FROM collection_traits ct WHERE ct.collection_id = ANY($1::uuid[]) AND ct.asset_count > 0)
             SELECT ct.collection_id AS "parentId", ct.collection_id AS "collectionId", ct.trait_type AS "traitType", ct.value, ct.asset_count AS count,
                    ${traitRaritySql('ct', 's.size')} AS rarity
             FROM parents ct JOIN ${sizes} s USING (collection_id) ORDER BY ct.trait_type, ct.value`,
            [ids],
          ),
        ),
      ),
    ),
  };
}
