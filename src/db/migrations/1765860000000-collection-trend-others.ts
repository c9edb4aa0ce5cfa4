import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue #38: statistics of the collections not trending (`is_trending=0`) by holders, all-time volume and sales
 * and floor walk those sorts' indexes and drop the trending collections as they go: about a page of rows while
 * most collections are not trending, but on a market trending as a whole (by 30 days, a month of growing sales)
 * the walk read through nearly every collection to find a page of the others (2-2.5 s at 10,000,000 assets).
 * When they are few, they are read whole instead: the collections whose kept trend sums (migration 1765850000000)
 * do not trend, by a partial index by period (and chain) of them, corrected by the few hours' sales
 * (statistics.trend.ts notTrending).
 */
const KEPT_NOT_TRENDING = 'NOT (trend_volume > 0 AND trend_volume >= 1.5 * previous_volume)';

export class CollectionTrendOthers1765860000000 implements MigrationInterface {
  name = 'CollectionTrendOthers1765860000000';

  async up(q: QueryRunner): Promise<void> {
    for (const [name, columns] of [
      ['ix_collection_sales_lows_not_trending', '"period", "collection_id"'],
      ['ix_collection_sales_lows_chain_not_trending', '"period", "chain_id", "collection_id"'],
    ]) {
      await q.query(`CREATE INDEX "${name}" ON "collection_sales_lows" (${columns}) WHERE ${KEPT_NOT_TRENDING}`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "ix_collection_sales_lows_chain_not_trending"`);
    await q.query(`DROP INDEX "ix_collection_sales_lows_not_trending"`);
  }
}
