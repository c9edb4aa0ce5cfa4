import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue #38: statistics count their collections (`remaining`, `totalCount`) from a kept count instead of
 * every collection's row: `collection_counts`, per chain, the number of collections, kept by triggers on
 * `collections` in the writing transaction (a statement's inserted or deleted rows, grouped by chain; a
 * chain changed moves one). A collection is created rarely (a key registers it): one row per chain is no
 * contention worth deltas. Filled from the collections already there.
 */
export class CollectionCounts1765800000100 implements MigrationInterface {
  name = 'CollectionCounts1765800000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "collection_counts" ("chain_id" varchar PRIMARY KEY, "collections" bigint NOT NULL DEFAULT 0)`);
    await q.query(`INSERT INTO collection_counts (chain_id, collections) SELECT chain_id, count(*) FROM collections GROUP BY chain_id`);
    await q.query(`CREATE FUNCTION "collection_counts_insert"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO collection_counts AS k (chain_id, collections)
        SELECT c.chain_id, count(*) FROM inserted_collections c GROUP BY c.chain_id ORDER BY c.chain_id
        ON CONFLICT (chain_id) DO UPDATE SET collections = k.collections + EXCLUDED.collections;
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER "collections_counts_insert" AFTER INSERT ON "collections" REFERENCING NEW TABLE AS inserted_collections
      FOR EACH STATEMENT EXECUTE FUNCTION "collection_counts_insert"()`);
    await q.query(`CREATE FUNCTION "collection_counts_delete"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE collection_counts k SET collections = k.collections - d.n
        FROM (SELECT c.chain_id, count(*) AS n FROM deleted_collections c GROUP BY c.chain_id ORDER BY c.chain_id) d
        WHERE k.chain_id = d.chain_id;
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER "collections_counts_delete" AFTER DELETE ON "collections" REFERENCING OLD TABLE AS deleted_collections
      FOR EACH STATEMENT EXECUTE FUNCTION "collection_counts_delete"()`);
    await q.query(`CREATE FUNCTION "collection_counts_chain"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE collection_counts SET collections = collections - 1 WHERE chain_id = OLD.chain_id;
        INSERT INTO collection_counts AS k (chain_id, collections) VALUES (NEW.chain_id, 1)
        ON CONFLICT (chain_id) DO UPDATE SET collections = k.collections + 1;
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER "collections_counts_chain" AFTER UPDATE OF "chain_id" ON "collections" FOR EACH ROW
      WHEN (OLD.chain_id IS DISTINCT FROM NEW.chain_id) EXECUTE FUNCTION "collection_counts_chain"()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER "collections_counts_chain" ON "collections"`);
    await q.query(`DROP TRIGGER "collections_counts_delete" ON "collections"`);
    await q.query(`DROP TRIGGER "collections_counts_insert" ON "collections"`);
    await q.query(`DROP FUNCTION "collection_counts_chain"()`);
    await q.query(`DROP FUNCTION "collection_counts_delete"()`);
    await q.query(`DROP FUNCTION "collection_counts_insert"()`);
    await q.query(`DROP TABLE "collection_counts"`);
  }
}
