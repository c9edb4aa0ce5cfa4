import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A collection's figures that only writes change, kept in the transaction that writes them whatever path
 * writes (the services, imports, the chain follower, the demo seed, the bench's loader), so statistics
 * sorted by one of them walk an index instead of computing it for every collection (issue #38):
 *
 * - `collection_holdings`: how many assets each owner holds in each collection (rows at 0 are removed);
 *   statement-level triggers on assets apply the net change of a statement, one upsert per (collection,
 *   owner) in key order, so parallel writers add up (each waits for the other's row lock; none is lost).
 * - `collection_figures`: one row per collection (a trigger on collections adds it): `holders`, the owners
 *   holding at least one of its assets, changed when a holding goes from 0 or to 0 (its old value is its
 *   new one minus the change, read under the row's lock, so exact under concurrency); `volume` and
 *   `sales`, every sale that counts (native, completed, seller is not the buyer), followed from
 *   `collection_sales_hourly` by a trigger on it; `chain_id`, so a chain's collections walk their own index.
 *
 * Every table is filled from the rows already there.
 */
export class CollectionFigures1765630000000 implements MigrationInterface {
  name = 'CollectionFigures1765630000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "collection_figures" (
      "collection_id" uuid PRIMARY KEY REFERENCES "collections"("id") ON DELETE CASCADE,
      "chain_id" varchar NOT NULL,
      "holders" integer NOT NULL DEFAULT 0,
      "volume" numeric NOT NULL DEFAULT 0,
      "sales" integer NOT NULL DEFAULT 0)`);
    await q.query(`CREATE INDEX "ix_collection_figures_holders" ON "collection_figures" ("holders", "collection_id")`);
    await q.query(`CREATE INDEX "ix_collection_figures_chain_holders" ON "collection_figures" ("chain_id", "holders", "collection_id")`);
    await q.query(`CREATE INDEX "ix_collection_figures_volume" ON "collection_figures" ("volume", "collection_id")`);
    await q.query(`CREATE INDEX "ix_collection_figures_chain_volume" ON "collection_figures" ("chain_id", "volume", "collection_id")`);
    await q.query(`CREATE INDEX "ix_collection_figures_sales" ON "collection_figures" ("sales", "collection_id")`);
    await q.query(`CREATE INDEX "ix_collection_figures_chain_sales" ON "collection_figures" ("chain_id", "sales", "collection_id")`);

    await q.query(`CREATE FUNCTION "collection_figures_insert"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO collection_figures (collection_id, chain_id) SELECT id, chain_id FROM inserted_collections ORDER BY id;
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER "collections_figures_insert" AFTER INSERT ON "collections" REFERENCING NEW TABLE AS inserted_collections
      FOR EACH STATEMENT EXECUTE FUNCTION "collection_figures_insert"()`);
    await q.query(`CREATE FUNCTION "collection_figures_chain"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE collection_figures SET chain_id = NEW.chain_id WHERE collection_id = NEW.id;
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER "collections_figures_chain" AFTER UPDATE OF "chain_id" ON "collections" FOR EACH ROW
      WHEN (OLD.chain_id IS DISTINCT FROM NEW.chain_id) EXECUTE FUNCTION "collection_figures_chain"()`);

    await q.query(`CREATE TABLE "collection_holdings" (
      "collection_id" uuid NOT NULL REFERENCES "collections"("id") ON DELETE CASCADE,
      "owner" varchar(42) NOT NULL,
      "assets" integer NOT NULL,
      PRIMARY KEY ("collection_id", "owner"))`);
    // The net change of a statement per (collection, owner), applied in key order; a holding's old count is
    // its new one minus the change. Holdings at 0 are removed after (a writer waiting on one inserts it anew).
    // No CHECK on the counts: it would be checked on the row proposed for insertion (a change of -1), before
    // the conflict that turns it into an update.
    await q.query(`CREATE FUNCTION "collection_holdings_change"(ids uuid[], owners varchar[], changes integer[]) RETURNS void LANGUAGE plpgsql AS $$
      BEGIN
        WITH d AS (SELECT * FROM unnest(ids, owners, changes) AS d(collection_id, owner, n) WHERE n <> 0),
        held AS (
          INSERT INTO collection_holdings AS h (collection_id, owner, assets)
          SELECT collection_id, owner, n FROM d ORDER BY collection_id, owner
          ON CONFLICT (collection_id, owner) DO UPDATE SET assets = h.assets + EXCLUDED.assets
          RETURNING h.collection_id, h.owner, h.assets),
        holders AS (
          SELECT held.collection_id,
            sum(CASE WHEN held.assets > 0 AND held.assets = d.n THEN 1 WHEN held.assets = 0 THEN -1 ELSE 0 END) AS n
          FROM held JOIN d ON d.collection_id = held.collection_id AND d.owner = held.owner
          GROUP BY held.collection_id)
        INSERT INTO collection_figures AS f (collection_id, chain_id, holders)
        SELECT holders.collection_id, c.chain_id, holders.n FROM holders JOIN collections c ON c.id = holders.collection_id
        WHERE holders.n <> 0 ORDER BY holders.collection_id
        ON CONFLICT (collection_id) DO UPDATE SET holders = f.holders + EXCLUDED.holders;
        DELETE FROM collection_holdings h USING unnest(ids, owners) AS d(collection_id, owner)
        WHERE h.collection_id = d.collection_id AND h.owner = d.owner AND h.assets = 0;
      END $$`);
    await q.query(`CREATE FUNCTION "collection_holdings_insert"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM collection_holdings_change(array_agg(collection_id), array_agg(owner), array_agg(n))
        FROM (SELECT collection_id, owner, count(*)::int AS n FROM inserted_assets GROUP BY 1, 2) d;
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER "assets_holdings_insert" AFTER INSERT ON "assets" REFERENCING NEW TABLE AS inserted_assets
      FOR EACH STATEMENT EXECUTE FUNCTION "collection_holdings_insert"()`);
    await q.query(`CREATE FUNCTION "collection_holdings_delete"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM collection_holdings_change(array_agg(collection_id), array_agg(owner), array_agg(n))
        FROM (SELECT collection_id, owner, -count(*)::int AS n FROM deleted_assets GROUP BY 1, 2) d;
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER "assets_holdings_delete" AFTER DELETE ON "assets" REFERENCING OLD TABLE AS deleted_assets
      FOR EACH STATEMENT EXECUTE FUNCTION "collection_holdings_delete"()`);
    // A trigger with transition tables cannot name columns: every UPDATE of assets runs it, and a statement
    // that moves no asset to another owner or collection finds no change.
    await q.query(`CREATE FUNCTION "collection_holdings_update"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM collection_holdings_change(array_agg(collection_id), array_agg(owner), array_agg(n))
        FROM (SELECT collection_id, owner, sum(n)::int AS n FROM (
            SELECT o.collection_id, o.owner, -1 AS n FROM old_assets o JOIN new_assets w ON w.id = o.id
            WHERE w.owner IS DISTINCT FROM o.owner OR w.collection_id IS DISTINCT FROM o.collection_id
            UNION ALL
            SELECT w.collection_id, w.owner, 1 FROM old_assets o JOIN new_assets w ON w.id = o.id
            WHERE w.owner IS DISTINCT FROM o.owner OR w.collection_id IS DISTINCT FROM o.collection_id) x
          GROUP BY 1, 2) d
        HAVING count(*) > 0;
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER "assets_holdings_update" AFTER UPDATE ON "assets" REFERENCING OLD TABLE AS old_assets NEW TABLE AS new_assets
      FOR EACH STATEMENT EXECUTE FUNCTION "collection_holdings_update"()`);

    await q.query(`CREATE FUNCTION "collection_figures_sales"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP <> 'INSERT' THEN
          UPDATE collection_figures SET volume = volume - OLD.volume, sales = sales - OLD.sales WHERE collection_id = OLD.collection_id;
        END IF;
        IF TG_OP <> 'DELETE' THEN
          UPDATE collection_figures SET volume = volume + NEW.volume, sales = sales + NEW.sales WHERE collection_id = NEW.collection_id;
        END IF;
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER "collection_sales_hourly_figures" AFTER INSERT OR UPDATE OR DELETE ON "collection_sales_hourly"
      FOR EACH ROW EXECUTE FUNCTION "collection_figures_sales"()`);

    await q.query(`INSERT INTO collection_holdings (collection_id, owner, assets)
      SELECT collection_id, owner, count(*) FROM assets GROUP BY 1, 2`);
    await q.query(`INSERT INTO collection_figures (collection_id, chain_id, holders, volume, sales)
      SELECT c.id, c.chain_id,
        COALESCE((SELECT count(*) FROM collection_holdings h WHERE h.collection_id = c.id), 0),
        COALESCE((SELECT sum(r.volume) FROM collection_sales_hourly r WHERE r.collection_id = c.id), 0),
        COALESCE((SELECT sum(r.sales) FROM collection_sales_hourly r WHERE r.collection_id = c.id), 0)
      FROM collections c`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER "collection_sales_hourly_figures" ON "collection_sales_hourly"`);
    await q.query(`DROP TRIGGER "assets_holdings_update" ON "assets"`);
    await q.query(`DROP TRIGGER "assets_holdings_delete" ON "assets"`);
    await q.query(`DROP TRIGGER "assets_holdings_insert" ON "assets"`);
    await q.query(`DROP TRIGGER "collections_figures_chain" ON "collections"`);
    await q.query(`DROP TRIGGER "collections_figures_insert" ON "collections"`);
    await q.query(`DROP FUNCTION "collection_figures_sales"()`);
    await q.query(`DROP FUNCTION "collection_holdings_update"()`);
    await q.query(`DROP FUNCTION "collection_holdings_delete"()`);
    await q.query(`DROP FUNCTION "collection_holdings_insert"()`);
    await q.query(`DROP FUNCTION "collection_holdings_change"(uuid[], varchar[], integer[])`);
    await q.query(`DROP FUNCTION "collection_figures_chain"()`);
    await q.query(`DROP FUNCTION "collection_figures_insert"()`);
    await q.query(`DROP TABLE "collection_holdings"`);
    await q.query(`DROP TABLE "collection_figures"`);
  }
}
