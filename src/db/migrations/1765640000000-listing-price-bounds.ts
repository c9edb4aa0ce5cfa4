import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue #38: a listing's current price as stored, indexed columns, so that "listed assets by current price"
 * is an index walk instead of pricing every listed asset (modules/listing/listing.sql.ts, listedByPriceSql).
 *
 * `price_low` and `price_high` bound the current price at every moment the listing can be read as active,
 * whatever the clock says (frozen-clock tests read at any moment): a fixed price is its start price (low =
 * high); a dutch auction falls from its start price to its accept price (rounded down to its currency, as
 * currentPriceSql rounds); an english auction stands at its start price or a bid above it: low its start
 * price, high the highest active item offer on the asset in its currency at or above it, whatever the
 * offer's time window (validity over time is computed when read, so a bid that starts or ends later moves
 * nothing stored). A listing whose bounds are equal has a price that only writes change: it is read from
 * the index; the others are priced when read, only those whose bounds can reach the page. Both are null
 * only for a dutch auction without an accept price or a closing date (its price reads as null).
 *
 * Kept by triggers in the writing transaction, whatever path writes (the services, bulk writes, the chain
 * follower, imports, the bench's loader): the listing's own terms on insert and on a change of them, the
 * bids of english auctions on every statement that adds, ends, reprices or revives an item offer.
 * Concurrent writers: the offers' trigger locks the english auctions of its assets first and recomputes in
 * a statement of its own, which in READ COMMITTED sees what the lock's previous holder committed; an
 * english listing takes its asset's lock before it reads the bids, so an offer inserted meanwhile (whose
 * foreign key check holds a share lock on the asset) is either seen or sees the listing.
 */
export class ListingPriceBounds1765640000000 implements MigrationInterface {
  name = 'ListingPriceBounds1765640000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "listings" ADD "price_low" numeric(38,18), ADD "price_high" numeric(38,18)`);
    // The highest bid an english auction can stand at: its bids' time windows are read with the clock.
    await q.query(`CREATE FUNCTION "listing_best_bid_bound"(for_asset uuid, in_currency varchar, from_price numeric) RETURNS numeric
      LANGUAGE sql STABLE AS $$
        SELECT GREATEST(from_price, (SELECT max(o.price) FROM offers o
          WHERE o.asset_id = for_asset AND o.status = 'active' AND o.currency = in_currency AND o.price >= from_price))
      $$`);
    await q.query(`CREATE FUNCTION "listing_price_bounds"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.order_type = 'dutch_auction' THEN
          IF NEW.accept_price IS NULL OR NEW.closing_date IS NULL THEN
            NEW.price_low := NULL;
            NEW.price_high := NULL;
          ELSE
            NEW.price_low := LEAST(trunc(NEW.accept_price, NEW.currency_decimals), trunc(NEW.start_price, NEW.currency_decimals));
            NEW.price_high := GREATEST(trunc(NEW.accept_price, NEW.currency_decimals), trunc(NEW.start_price, NEW.currency_decimals));
          END IF;
        ELSIF NEW.order_type = 'english_auction' THEN
          IF NEW.status = 'active' THEN
            PERFORM 1 FROM assets WHERE id = NEW.asset_id FOR UPDATE;
          END IF;
          NEW.price_low := NEW.start_price;
          -- A statement of its own after the lock: it sees the bids committed by the lock's previous holder.
          SELECT listing_best_bid_bound(NEW.asset_id, NEW.currency, NEW.start_price) INTO NEW.price_high;
        ELSE
          NEW.price_low := NEW.start_price;
          NEW.price_high := NEW.start_price;
        END IF;
        RETURN NEW;
      END $$`);
    await q.query(`CREATE TRIGGER "listings_price_bounds" BEFORE INSERT OR UPDATE OF
        "order_type", "start_price", "accept_price", "closing_date", "currency", "currency_decimals", "asset_id", "status"
      ON "listings" FOR EACH ROW EXECUTE FUNCTION "listing_price_bounds"()`);
    await q.query(`CREATE FUNCTION "listing_bids_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        touched uuid[];
      BEGIN
        IF TG_OP = 'INSERT' THEN
          SELECT array_agg(DISTINCT n.asset_id) INTO touched FROM new_offers n WHERE n.asset_id IS NOT NULL AND n.status = 'active';
        ELSIF TG_OP = 'UPDATE' THEN
          SELECT array_agg(DISTINCT x.asset_id) INTO touched FROM new_offers n JOIN old_offers o ON o.id = n.id
            CROSS JOIN LATERAL (VALUES (n.asset_id), (o.asset_id)) x(asset_id)
          WHERE x.asset_id IS NOT NULL
            AND (n.status, n.price, n.currency, n.asset_id) IS DISTINCT FROM (o.status, o.price, o.currency, o.asset_id);
        ELSE
          SELECT array_agg(DISTINCT o.asset_id) INTO touched FROM old_offers o WHERE o.asset_id IS NOT NULL AND o.status = 'active';
        END IF;
        -- A join, not = ANY: a bulk insert (the bench's loader) touches hundreds of thousands of assets at once.
        IF touched IS NULL THEN
          RETURN NULL;
        END IF;
        PERFORM 1 FROM listings l WHERE l.asset_id IN (SELECT unnest(touched)) AND l.order_type = 'english_auction' AND l.status = 'active'
          ORDER BY l.id FOR UPDATE;
        UPDATE listings l SET price_high = b.bound
        FROM (SELECT l2.id, listing_best_bid_bound(l2.asset_id, l2.currency, l2.start_price) AS bound FROM listings l2
              WHERE l2.asset_id IN (SELECT unnest(touched)) AND l2.order_type = 'english_auction' AND l2.status = 'active') b
        WHERE l.id = b.id AND l.price_high IS DISTINCT FROM b.bound;
        RETURN NULL;
      END $$`);
    // Transition tables need one trigger per event.
    await q.query(`CREATE TRIGGER "offers_bids_insert" AFTER INSERT ON "offers" REFERENCING NEW TABLE AS new_offers
      FOR EACH STATEMENT EXECUTE FUNCTION "listing_bids_changed"()`);
    await q.query(`CREATE TRIGGER "offers_bids_update" AFTER UPDATE ON "offers" REFERENCING OLD TABLE AS old_offers NEW TABLE AS new_offers
      FOR EACH STATEMENT EXECUTE FUNCTION "listing_bids_changed"()`);
    await q.query(`CREATE TRIGGER "offers_bids_delete" AFTER DELETE ON "offers" REFERENCING OLD TABLE AS old_offers
      FOR EACH STATEMENT EXECUTE FUNCTION "listing_bids_changed"()`);
    // Every listing, whatever its status (a listing made active again keeps exact bounds through the trigger).
    await q.query(`UPDATE "listings" SET "status" = "status"`);
    const active = `WHERE "status" = 'active'`;
    const fixed = `${active} AND "price_low" = "price_high"`;
    const moving = `${active} AND "price_low" < "price_high"`;
    await q.query(`CREATE INDEX "ix_listings_price_fixed" ON "listings" ("price_low", "asset_id") ${fixed}`);
    await q.query(`CREATE INDEX "ix_listings_price_fixed_collection" ON "listings" ("collection_id", "price_low", "asset_id") ${fixed}`);
    await q.query(`CREATE INDEX "ix_listings_price_fixed_currency" ON "listings" ("currency", "price_low", "asset_id") ${fixed}`);
    // Moving prices: by their lower bound for the cheapest first, by their upper bound for the dearest first.
    for (const bound of ['low', 'high']) {
      await q.query(`CREATE INDEX "ix_listings_price_moving_${bound}" ON "listings" ("price_${bound}") ${moving}`);
      await q.query(`CREATE INDEX "ix_listings_price_moving_collection_${bound}" ON "listings" ("collection_id", "price_${bound}") ${moving}`);
      await q.query(`CREATE INDEX "ix_listings_price_moving_currency_${bound}" ON "listings" ("currency", "price_${bound}") ${moving}`);
    }
    await q.query(`CREATE INDEX "ix_listings_price_unknown" ON "listings" ("asset_id") ${active} AND "price_low" IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const index of ['fixed', 'fixed_collection', 'fixed_currency', 'moving_low', 'moving_high', 'moving_collection_low', 'moving_collection_high', 'moving_currency_low', 'moving_currency_high', 'unknown']) {
      await q.query(`DROP INDEX "ix_listings_price_${index}"`);
    }
    await q.query(`DROP TRIGGER "offers_bids_delete" ON "offers"`);
    await q.query(`DROP TRIGGER "offers_bids_update" ON "offers"`);
    await q.query(`DROP TRIGGER "offers_bids_insert" ON "offers"`);
    await q.query(`DROP FUNCTION "listing_bids_changed"()`);
    await q.query(`DROP TRIGGER "listings_price_bounds" ON "listings"`);
    await q.query(`DROP FUNCTION "listing_price_bounds"()`);
    await q.query(`DROP FUNCTION "listing_best_bid_bound"(uuid, varchar, numeric)`);
    await q.query(`ALTER TABLE "listings" DROP COLUMN "price_high", DROP COLUMN "price_low"`);
  }
}
