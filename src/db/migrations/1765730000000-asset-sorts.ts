import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue #38: the assets list sorted by name, token id and last update, and its counts, at a cost that does not
 * grow with the market.
 * - An index per sort, on the sort's column then the id (the list's ORDER BY `t.name DESC, t.id DESC` and its
 *   keyset condition `(t.name, t.id) < (...)`, in the column's own collation), walked either way: at
 *   10,000,000 assets each page was a sort of the whole table.
 * - `asset_counts`: how many assets each chain has, as rows of deltas that add up to the counts (as
 *   listed_asset_counts, migration 1765680000000): triggers append each statement's change in the transaction
 *   that writes it, so writers never wait for each other; `folded` rows are compactAssetCounts's
 *   (modules/asset/asset-counts.ts, from the expiry sweeper's loop), one per chain. The unfiltered list's (and
 *   a chain's) `totalCount` and `remaining` read it instead of counting every asset. Filled from the assets.
 */
export class AssetSorts1765730000000 implements MigrationInterface {
  name = 'AssetSorts1765730000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX "ix_assets_name" ON "assets" ("name", "id")`);
    await q.query(`CREATE INDEX "ix_assets_token_id" ON "assets" ("token_id", "id")`);
    await q.query(`CREATE INDEX "ix_assets_updated" ON "assets" ("updated_at", "id")`);
    await q.query(`CREATE TABLE "asset_counts" (
      "chain_id" varchar(20) NOT NULL,
      "n" bigint NOT NULL,
      "folded" boolean NOT NULL DEFAULT false)`);
    await q.query(`CREATE INDEX "ix_asset_counts_chain" ON "asset_counts" ("chain_id")`);
    // Statement-level: an import's or a backfill's batch of thousands of rows is one row per chain.
    for (const { event, referencing, rows, sign } of [
      { event: 'INSERT', referencing: 'NEW TABLE', rows: 'inserted_assets', sign: 1 },
      { event: 'DELETE', referencing: 'OLD TABLE', rows: 'deleted_assets', sign: -1 },
    ]) {
      const name = `asset_counts_${event.toLowerCase()}`;
      await q.query(`CREATE FUNCTION "${name}"() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          INSERT INTO asset_counts (chain_id, n) SELECT chain_id, ${sign} * count(*) FROM ${rows} GROUP BY chain_id;
          RETURN NULL;
        END $$`);
      await q.query(`CREATE TRIGGER "${name}" AFTER ${event} ON "assets" REFERENCING ${referencing} AS ${rows} FOR EACH STATEMENT EXECUTE FUNCTION "${name}"()`);
    }
    // No code moves an asset to another chain; should a statement do it, the counts follow.
    await q.query(`CREATE FUNCTION "asset_counts_move"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO asset_counts (chain_id, n) VALUES (OLD.chain_id, -1), (NEW.chain_id, 1);
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER "asset_counts_move" AFTER UPDATE OF "chain_id" ON "assets" FOR EACH ROW
      WHEN (OLD.chain_id IS DISTINCT FROM NEW.chain_id) EXECUTE FUNCTION "asset_counts_move"()`);
    await q.query(`INSERT INTO asset_counts (chain_id, n, folded) SELECT chain_id, count(*), true FROM assets GROUP BY chain_id`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const name of ['asset_counts_move', 'asset_counts_delete', 'asset_counts_insert']) {
      await q.query(`DROP TRIGGER "${name}" ON "assets"`);
      await q.query(`DROP FUNCTION "${name}"()`);
    }
    await q.query(`DROP TABLE "asset_counts"`);
    await q.query(`DROP INDEX "ix_assets_updated"`);
    await q.query(`DROP INDEX "ix_assets_token_id"`);
    await q.query(`DROP INDEX "ix_assets_name"`);
  }
}
