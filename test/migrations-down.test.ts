import { DataSource } from 'typeorm';
import { createDataSource } from '../src/db/data-source';
import { migrations } from '../src/db/migrations';
import { settlement } from '../src/modules/order/settlement.settings';
import { openWindow, saveListing, saveOffer, saveOwnedAsset } from './factories/market';
import { freshDatabase } from './setup/global-setup';
import { startServer, TestServer } from './setup/server';

/**
 * The way back: the newest migrations' `down`s, one by one, on a database with rows in the tables they
 * change, then up again (docs/operations.md "Reverting migrations"). PostgreSQL only: it needs a database
 * of its own (the embedded one is the run's, shared by every file).
 */
const onPostgres = process.env.DATABASE_URL ? describe : describe.skip;

const NATIVE = '0x0000000000000000000000000000000000000000';
const WETH = '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2';

let db: { url: string; drop: () => Promise<void> };
let ds: DataSource;
afterAll(async () => {
  settlement.use({ mode: 'offchain', deadlineSeconds: 3600 });
  await ds?.destroy();
  await db?.drop();
});

const lastMigration = async (): Promise<string> => (await ds.query('SELECT name FROM migrations ORDER BY timestamp DESC LIMIT 1'))[0].name;
const columnsOf = async (table: string): Promise<string[]> =>
  (await ds.query(`SELECT column_name AS name FROM information_schema.columns WHERE table_name = $1 ORDER BY column_name`, [table])).map((c: { name: string }) => c.name);
const tableExists = async (table: string): Promise<boolean> => (await ds.query('SELECT to_regclass($1) IS NOT NULL AS found', [table]))[0].found;
const triggerDefinition = async (name: string): Promise<string> => (await ds.query('SELECT pg_get_triggerdef(oid) AS def FROM pg_trigger WHERE tgname = $1', [name]))[0].def;
const statusOf = async (table: 'listings' | 'offers' | 'orders', id: string): Promise<string | undefined> => (await ds.query(`SELECT status FROM ${table} WHERE id = $1`, [id]))[0]?.status;

/** What each of the newest migrations' `down` must leave, by name (a migration without an entry is only reverted). */
const AFTER_DOWN: Record<string, () => Promise<void>> = {
  CollectionTrendingCounts1765900000000: async () => {
    expect(await tableExists('collection_trending_counts')).toBe(false);
    expect(await ds.query(`SELECT tgname FROM pg_trigger WHERE tgname LIKE 'collection_sales_lows_trending_%'`)).toEqual([]);
  },
  OrdersSalesRollupStatement1765890000000: async () => {
    // The row trigger of native sales is back; the statement's function is gone.
    expect(await triggerDefinition('orders_sales_rollup')).toMatch(/FOR EACH ROW .*currency.*collection_sales_hourly_add/);
    expect(await ds.query(`SELECT proname FROM pg_proc WHERE proname = 'orders_sales_rollup_insert'`)).toEqual([]);
  },
  OrdersCountedSales1765880000000: async () => {
    expect(await ds.query(`SELECT indexname FROM pg_indexes WHERE indexname = 'ix_orders_counted_created'`)).toEqual([]);
  },
  ListingAssetNames1765870000000: async () => {
    expect(await columnsOf('listings')).not.toContain('asset_name');
    expect(await ds.query(`SELECT tgname FROM pg_trigger WHERE tgname IN ('listings_asset_name', 'assets_listings_name')`)).toEqual([]);
    expect(await ds.query(`SELECT indexname FROM pg_indexes WHERE indexname LIKE 'ix_listings_%name_prefix'`)).toEqual([]);
  },
  CollectionTrendOthers1765860000000: async () => {
    // The kept trend sums keep their index of the trending collections alone.
    expect(await ds.query(`SELECT indexname FROM pg_indexes WHERE indexname LIKE 'ix_collection_sales_lows%trending' ORDER BY 1`)).toEqual([
      { indexname: 'ix_collection_sales_lows_chain_trending' },
      { indexname: 'ix_collection_sales_lows_trending' },
    ]);
  },
  CollectionTrendSums1765850000000: async () => {
    // The lows without the trend sums, their trigger keeping the lows alone.
    expect(await ds.query(`SELECT column_name FROM information_schema.columns WHERE table_name = 'collection_sales_lows' ORDER BY 1`)).toEqual(
      ['chain_id', 'collection_id', 'period', 'sales_low', 'volume_low'].map((column_name) => ({ column_name })),
    );
    expect(await ds.query(`SELECT indexname FROM pg_indexes WHERE indexname LIKE '%trending'`)).toEqual([]);
    const [{ source }] = await ds.query(`SELECT prosrc AS source FROM pg_proc WHERE proname = 'collection_sales_lows_change'`);
    expect(source).not.toContain('trend_volume');
  },
  CollectionListCounts1765840000000: async () => {
    // Back to one row per chain, kept by the chain trigger.
    expect(await ds.query(`SELECT column_name FROM information_schema.columns WHERE table_name = 'collection_counts' ORDER BY 1`)).toEqual([
      { column_name: 'chain_id' },
      { column_name: 'collections' },
    ]);
    expect((await ds.query(`SELECT tgname FROM pg_trigger WHERE tgname LIKE 'collections_counts_%' ORDER BY 1`)).map((t: { tgname: string }) => t.tgname)).toEqual([
      'collections_counts_chain',
      'collections_counts_delete',
      'collections_counts_insert',
    ]);
  },
  TradePriceCounts1765830000000: async () => {
    expect(await tableExists('trade_price_counts')).toBe(false);
    expect(await ds.query(`SELECT tgname FROM pg_trigger WHERE tgname LIKE '%_price_counts_%'`)).toEqual([]);
    expect(await ds.query(`SELECT proname FROM pg_proc WHERE proname = 'price_bucket'`)).toEqual([]);
  },
  OfferExpiryWalks1765810000000: async () => {
    const indexes: { indexname: string; indexdef: string }[] = await ds.query(
      `SELECT indexname, indexdef FROM pg_indexes WHERE indexname LIKE 'ix_offers_swept%' OR indexname LIKE 'ix_offers_live%' OR indexname = 'ix_offers_expiry_due' ORDER BY 1`,
    );
    expect(indexes.map((i) => [i.indexname, /\(end_time\) WHERE/.test(i.indexdef)])).toEqual([
      ['ix_offers_expiry_due', true],
      ['ix_offers_swept_end', true],
    ]);
  },
  CollectionCounts1765800000100: async () => {
    expect(await tableExists('collection_counts')).toBe(false);
    expect(await ds.query(`SELECT tgname FROM pg_trigger WHERE tgname LIKE 'collections_counts_%'`)).toEqual([]);
  },
  CollectionSalesLows1765800000000: async () => {
    expect(await tableExists('collection_sales_lows')).toBe(false);
    expect(await ds.query(`SELECT tgname FROM pg_trigger WHERE tgname LIKE '%sales_lows%' OR tgname = 'collection_sales_hourly_lows'`)).toEqual([]);
  },
  TradeRangeIndexes1765760000300: async () => {
    const names = (rows: { indexname: string }[]) => rows.map((r) => r.indexname).sort();
    expect(names(await ds.query(`SELECT indexname FROM pg_indexes WHERE indexname LIKE 'ix_orders_seller%' OR indexname LIKE 'ix_orders_buyer%'`))).toEqual([
      'ix_orders_buyer',
      'ix_orders_seller',
    ]);
  },
  CollectionSalesBounds1765760000000: async () => {
    expect(await tableExists('collection_sales_bounds')).toBe(false);
    expect(await tableExists('collection_sales_bound_windows')).toBe(false);
    expect(await ds.query(`SELECT tgname FROM pg_trigger WHERE tgname LIKE '%sales_bounds%'`)).toEqual([]);
  },
  TokenRoyalties1765750000001: async () => {
    expect(await columnsOf('assets')).not.toContain('royalty_fees');
  },
  ChainOwnershipTransfers1765750000000: async () => {
    expect(await tableExists('chain_ownership_transfers')).toBe(false);
    expect(await columnsOf('collections')).not.toContain('owner_checked_block');
  },
  AssetSorts1765730000000: async () => {
    expect(await tableExists('asset_counts')).toBe(false);
    expect(await ds.query(`SELECT indexname FROM pg_indexes WHERE indexname IN ('ix_assets_name', 'ix_assets_token_id', 'ix_assets_updated')`)).toEqual([]);
    expect(await ds.query(`SELECT tgname FROM pg_trigger WHERE tgname LIKE 'asset_counts_%'`)).toEqual([]);
  },
  TokenOwnerTradeIndexes1765720000000: async () => {
    const indexes = await ds.query(`SELECT indexname FROM pg_indexes WHERE indexname IN ('ix_offers_taker', 'ix_offers_taker_created', 'ix_orders_token_address_created') ORDER BY 1`);
    expect(indexes.map((i: { indexname: string }) => i.indexname)).toEqual(['ix_offers_taker']);
  },
  CollectionFloorHigh1765710000000: async () => {
    expect(await columnsOf('collection_figures')).not.toContain('floor_high');
    expect(await columnsOf('collection_figures')).toContain('floor_low');
  },
  MetadataTraceContext1765700000000: async () => {
    expect(await columnsOf('asset_metadata_queue')).not.toContain('traceparent');
  },
  CollectionOwnerVerification1765690000000: async () => {
    expect(await tableExists('collection_claim_nonces')).toBe(false);
    expect(await columnsOf('collections')).not.toContain('owner_verification');
  },
  ListedAssetCounts1765680000000: async () => {
    expect(await tableExists('listed_asset_counts')).toBe(false);
    expect(await ds.query(`SELECT tgname FROM pg_trigger WHERE tgname LIKE 'listings_listed_counts_%'`)).toEqual([]);
  },
  CollectionFloorBounds1765670000000: async () => {
    expect(await columnsOf('collection_figures')).not.toContain('floor_low');
    expect(await ds.query(`SELECT tgname FROM pg_trigger WHERE tgname LIKE 'listings_floor_%'`)).toEqual([]);
  },
  ListingApprovals1765660000000: async () => {
    expect(await tableExists('chain_approvals')).toBe(false);
    expect(await columnsOf('chain_sync')).not.toContain('operator');
  },
  ChainMetadataUpdates1765650000000: async () => {
    expect(await tableExists('chain_metadata_update_ranges')).toBe(false);
    expect(await tableExists('chain_collection_royalties')).toBe(false);
  },
  ListingPriceBounds1765640000000: async () => {
    expect(await columnsOf('listings')).not.toContain('price_low');
    expect(await ds.query(`SELECT tgname FROM pg_trigger WHERE tgname IN ('offers_bids_insert', 'listings_price_bounds')`)).toEqual([]);
  },
  CollectionFigures1765630000000: async () => {
    expect(await tableExists('collection_figures')).toBe(false);
    expect(await tableExists('collection_holdings')).toBe(false);
  },
  TradeListCounts1765620000001: async () => {
    expect(await tableExists('trade_list_counts')).toBe(false);
  },
  TradeListIndexes1765620000000: async () => {
    const indexes = await ds.query(`SELECT indexname FROM pg_indexes WHERE indexname IN ('ix_offers_price', 'ix_orders_price', 'ix_collections_name', 'ix_orders_collection_created') ORDER BY 1`);
    expect(indexes.map((i: { indexname: string }) => i.indexname)).toEqual(['ix_orders_collection_created']);
  },
  EventTraceContext1765586000000: async () => {
    expect(await columnsOf('events')).not.toContain('traceparent');
  },
};

/** Reverts the newest migrations one by one until `name` is the last one run, checking each as AFTER_DOWN says. */
async function undoUntil(name: string): Promise<void> {
  for (let last = await lastMigration(); last !== name; last = await lastMigration()) {
    expect(migrations.map((m) => m.name)).toContain(last);
    await ds.undoLastMigration({ transaction: 'each' });
    await AFTER_DOWN[last]?.();
  }
}

/** The newest migration of the code: where `up` ends. */
const NEWEST = migrations[migrations.length - 1].name;

/** Rows the newest migrations touch, written through the API: a sale completed off chain, a sale pending on chain, an asset whose tokenURI is pending. */
async function marketRows(api: TestServer) {
  const sold = await saveOwnedAsset(api);
  const buyer = await api.key();
  const soldListing = await saveListing(api, sold.owner.key, sold.asset.id, { startPrice: 5 });
  const soldOffer = await saveOffer(api, buyer.key, sold.asset.id, { price: 2 });
  const completed = await api.rest('POST', '/v1/offers/accept', { offer_id: soldOffer.id }, sold.owner.key);
  expect(completed.body.status).toBe('completed');

  settlement.use({ mode: 'chain', deadlineSeconds: 3600 });
  const held = await saveOwnedAsset(api);
  const heldListing = await saveListing(api, held.owner.key, held.asset.id, { startPrice: 5 });
  const heldOffer = await saveOffer(api, buyer.key, held.asset.id, { price: 3 });
  const pending = await api.rest('POST', '/v1/offers/accept', { offer_id: heldOffer.id }, held.owner.key);
  expect(pending.body.status).toBe('pending');
  settlement.use({ mode: 'offchain', deadlineSeconds: 3600 });

  await api.ds.query(`INSERT INTO chain_token_uris_pending (asset_id, chain_id) VALUES ($1, '1')`, [sold.asset.id]);
  return { sold, soldListing, completed: completed.body, held, heldListing, heldOffer, pending: pending.body };
}

onPostgres('migrations down and up again', () => {
  let rows: Awaited<ReturnType<typeof marketRows>>;
  beforeAll(async () => {
    db = await freshDatabase('gw_migrations');
    const api = await startServer({}, { url: db.url });
    try {
      rows = await marketRows(api);
    } finally {
      await api.close();
    }
    ds = createDataSource({ url: db.url, poolSize: 2, queryTimeoutMs: 30000 });
    await ds.initialize();
  }, 60_000);

  test('when the newest migrations are reverted one by one, then each leaves the schema before it, and the market rows stay where the older schema can hold them', async () => {
    const counts = async () => (await ds.query(`SELECT (SELECT count(*)::int FROM listings) AS listings, (SELECT count(*)::int FROM offers) AS offers, (SELECT count(*)::int FROM orders) AS orders`))[0];
    const before = await counts();

    // The migrations newer than AssetMetadata, newest first, each checked after its `down` where it has a check.
    await undoUntil('AssetMetadata1765520000000');

    expect(await lastMigration()).toBe('AssetMetadata1765520000000');
    await ds.undoLastMigration({ transaction: 'each' });
    expect(await tableExists('asset_metadata_queue')).toBe(false);
    expect(await tableExists('metadata_refreshes')).toBe(false);
    expect(await columnsOf('assets')).not.toContain('metadata_status');

    expect(await lastMigration()).toBe('ChainStepChecks1765500000000');
    await ds.undoLastMigration({ transaction: 'each' });
    const chainKeys = await ds.query(`SELECT conname FROM pg_constraint WHERE conname IN ('chain_transfers_chain_id_fkey', 'chain_token_uris_pending_chain_id_fkey') ORDER BY 1`);
    expect(chainKeys.map((k: { conname: string }) => k.conname)).toEqual(['chain_token_uris_pending_chain_id_fkey', 'chain_transfers_chain_id_fkey']);

    expect(await lastMigration()).toBe('NativeSettledRollups1765495000000');
    await ds.undoLastMigration({ transaction: 'each' });
    expect(await triggerDefinition('orders_sales_rollup_completed')).not.toContain('currency');

    expect(await lastMigration()).toBe('Currencies1765490000000');
    await ds.undoLastMigration({ transaction: 'each' });
    expect(await tableExists('currencies')).toBe(false);
    for (const table of ['listings', 'offers', 'orders']) expect(await columnsOf(table)).not.toContain('currency');
    expect(await triggerDefinition('orders_sales_rollup')).not.toContain('currency');
    expect(await counts()).toEqual(before);

    expect(await lastMigration()).toBe('ChainTokenUris1765470000000');
    await ds.undoLastMigration({ transaction: 'each' });
    expect(await tableExists('chain_token_uris_pending')).toBe(false);
    expect((await ds.query('SELECT count(*)::int AS n FROM assets WHERE id = $1', [rows.sold.asset.id]))[0].n).toBe(1);

    expect(await lastMigration()).toBe('SettlementOnChain1765460000000');
    await ds.undoLastMigration({ transaction: 'each' });
    expect(await columnsOf('orders')).not.toContain('settlement_deadline');
    expect(await columnsOf('offers')).not.toContain('reserved');
    expect(await columnsOf('listings')).not.toContain('inactive_reason');
    // The sale that awaited the chain never happened for the older schema: its order goes, its listing is for sale again.
    expect(await statusOf('orders', rows.pending.id)).toBeUndefined();
    expect(await statusOf('listings', rows.heldListing.id)).toBe('active');
    expect((await ds.query('SELECT status FROM assets WHERE id = $1', [rows.held.asset.id]))[0].status).toBe('listed');
    expect(await statusOf('offers', rows.heldOffer.id)).toBe('active');
    // The completed sale stays.
    expect(await statusOf('orders', rows.completed.id)).toBe('completed');
    expect(await statusOf('listings', rows.soldListing.id)).toBe('sold');
    expect(await counts()).toEqual({ ...before, orders: before.orders - 1 });
  });

  test('when the migrations run up again, then the rows are there as the current schema shows them (native prices) and the API sells again', async () => {
    await ds.runMigrations({ transaction: 'each' });
    expect(await lastMigration()).toBe(NEWEST);
    // Each collection's kept figures were filled from the rows there.
    const [figures] = await ds.query(
      `SELECT count(*)::int AS collections, count(*) FILTER (WHERE f.holders > 0)::int AS held, count(*) FILTER (WHERE f.sales > 0)::int AS sold,
         count(*) FILTER (WHERE f.holders <> (SELECT count(DISTINCT a.owner) FROM assets a WHERE a.collection_id = c.id)
           OR (f.volume, f.sales) <> (SELECT COALESCE(sum(o.price), 0), count(o.id) FROM orders o
                                       WHERE o.collection_id = c.id AND o.status = 'completed' AND o.seller <> o.buyer))::int AS wrong
       FROM collections c LEFT JOIN collection_figures f ON f.collection_id = c.id`,
    );
    expect(figures).toMatchObject({ wrong: 0 });
    expect(figures.held).toBeGreaterThan(0);
    expect(figures.sold).toBeGreaterThan(0);
    // Every listing carries its asset's name again (filled in batches after the triggers came).
    const [names] = await ds.query(
      `SELECT count(*)::int AS listings, count(*) FILTER (WHERE l.asset_name IS DISTINCT FROM a.name)::int AS wrong FROM listings l JOIN assets a ON a.id = l.asset_id`,
    );
    expect(names.listings).toBeGreaterThan(0);
    expect(names.wrong).toBe(0);
    expect(await ds.query(`SELECT indexname FROM pg_indexes WHERE indexname LIKE 'ix_listings_currency_name_prefix%'`)).toEqual([{ indexname: 'ix_listings_currency_name_prefix' }]);
    const [order] = await ds.query('SELECT status, currency, settlement_deadline FROM orders WHERE id = $1', [rows.completed.id]);
    expect(order).toEqual({ status: 'completed', currency: NATIVE, settlement_deadline: null });

    const api = await startServer({}, { url: db.url });
    try {
      const listing = await api.rest('GET', `/v1/assets/${rows.held.asset.tokenAddress}/${rows.held.asset.tokenId}?chain_id=1`);
      expect(listing.body.listing).toMatchObject({ id: rows.heldListing.id, status: 'active', currency: { address: NATIVE, symbol: 'ETH' } });
      const sold = await api.rest('POST', '/v1/offers/accept', { offer_id: rows.heldOffer.id }, rows.held.owner.key);
      expect(sold.body).toMatchObject({ status: 'completed', currency: { symbol: 'ETH' } });
    } finally {
      await api.close();
    }
  });

  test('when listings, offers or orders are priced in an ERC-20 token, then reverting currencies is refused naming them, and nothing changes', async () => {
    const api = await startServer({}, { url: db.url });
    let offerId: string;
    try {
      const owned = await saveOwnedAsset(api);
      const buyer = await api.key();
      const offer = await api.rest('POST', '/v1/offers', { asset_id: owned.asset.id, price: 1, currency: 'WETH', start_time: openWindow().startTime, end_time: openWindow().endTime }, buyer.key);
      expect(offer.status).toBe(200);
      offerId = offer.body.id;
    } finally {
      await api.close();
    }
    await undoUntil('Currencies1765490000000');

    await expect(ds.undoLastMigration({ transaction: 'each' })).rejects.toThrow(/priced in an ERC-20 token: 0 listings, 1 offers, 0 orders/);

    expect(await lastMigration()).toBe('Currencies1765490000000');
    expect(await tableExists('currencies')).toBe(true);
    expect((await ds.query('SELECT currency FROM offers WHERE id = $1', [offerId]))[0].currency).toBe(WETH);
    await ds.runMigrations({ transaction: 'each' });
    expect(await lastMigration()).toBe(NEWEST);
  });
});

onPostgres('every migration down', () => {
  test('when every migration is reverted on a database without market rows, then the schema is empty but for the migrations table, and up again it is whole', async () => {
    const empty = await freshDatabase('gw_migrations_all');
    const all = createDataSource({ url: empty.url, poolSize: 2, queryTimeoutMs: 30000 });
    await all.initialize();
    try {
      // The test set-up's local chains and their currencies are rows of a migrated database: they go first.
      await all.query(`DELETE FROM currencies WHERE chain_id IN (SELECT id FROM chains WHERE name LIKE 'Local test chain %')`);
      await all.query(`DELETE FROM chains WHERE name LIKE 'Local test chain %'`);
      const applied = (await all.query('SELECT count(*)::int AS n FROM migrations'))[0].n;
      for (let i = 0; i < applied; i += 1) await all.undoLastMigration({ transaction: 'each' });
      const tables = await all.query(`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1`);
      expect(tables.map((t: { name: string }) => t.name)).toEqual(['migrations']);
      // Functions of an extension (pg_trgm, which the name search's down leaves installed) are not the migrations'.
      const functions = await all.query(`SELECT proname AS name FROM pg_proc p WHERE pronamespace = 'public'::regnamespace
        AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e') ORDER BY 1`);
      expect(functions.map((f: { name: string }) => f.name)).toEqual([]);
      await all.runMigrations({ transaction: 'each' });
      expect((await all.query('SELECT count(*)::int AS n FROM migrations'))[0].n).toBe(applied);
    } finally {
      await all.destroy();
      await empty.drop();
    }
  }, 120_000);
});
