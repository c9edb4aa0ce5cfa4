import { randomUUID } from 'node:crypto';
import { EntityManager } from 'typeorm';
import { ConflictError } from '../../common/errors';
import { updateReturning } from '../../common/sql';
import { AssetStatus } from '../asset/asset.entity';
import { setAssetsStatus } from '../asset/asset.status';
import type { EventLog } from '../event/event.log';
import { settlement } from './settlement.settings';
import { isBuy, Sale, SaleAsset, SaleEvents, SaleOffer, Selling } from './sale.types';
import { endOtherOffers, fillOfferUnits, reserveOfferUnits } from './sale.offers';

/**
 * Sales, inside the caller's transaction with their assets' rows already locked, each step one statement
 * for the whole batch, so a batch costs the same statements whatever its size: each offer fills one more
 * unit (and becomes accepted when its quantity is filled), each asset passes to its taker and is unlisted,
 * its active listing is sold (an expired one marked expired), the taker's own other offers on the asset
 * are cancelled (one does not bid for what one owns), so are the other bids of an english auction it
 * ends, and a completed order records price, seller, buyer and unit; the statistics' rollups follow the
 * orders (triggers). Offers' rows are updated under their locks, so concurrent acceptances fill each unit
 * once. A buy (SaleBuy) fills no offer: it must sell the listing it names (its order has unit 1, no offer,
 * and that listing). With settlement on chain (SETTLEMENT=chain) the sales are only reserved here
 * (reserveSales): their orders are pending until the follower sees the transfers (settlement.ts).
 * A batch sells each asset once and fills each offer once; any sale refused (one's own asset, an offer no
 * longer active, a listing no longer active) is a 409 for the whole batch: callers check what may have
 * changed behind the locks first. Returns the order ids, in the order of the sales; the events are added
 * sale by sale.
 */
export async function completeSales(m: EntityManager, events: EventLog, sales: readonly Sale[], now: Date): Promise<string[]> {
  if (!sales.length) return [];
  const batch = sales.map(selling);
  if (new Set(batch.map((s) => s.asset.id)).size < batch.length) throw new Error('a batch of sales sells each asset once');
  const offerIds = batch.flatMap((s) => (s.offer ? [s.offer.id] : []));
  if (new Set(offerIds).size < offerIds.length) throw new Error('a batch of sales fills each offer once');
  const shown = await saleCurrencies(m, batch.map((s) => ({ chainId: s.asset.chainId, address: s.currency })));
  for (const s of batch) s.shown = shown.get(currencyKey(s.asset.chainId, s.currency));
  // The figures the writes keep per collection (floor bounds by the listings' triggers, holders by the
  // assets', volume by the rollups') are locked first, in key order: each trigger would lock them after
  // rows of its own (a listing, an owner's holdings, an hour's rollup), and two sales of one collection that
  // wrote those in other orders were a deadlock (30 parallel accepts and buys of one collection lost one).
  await m.query(`SELECT 1 FROM collection_figures f WHERE f.collection_id = ANY($1::uuid[]) ORDER BY f.collection_id FOR UPDATE`, [
    [...new Set(batch.map((s) => s.asset.collectionId))],
  ]);
  if (settlement.onChain) await reserveSales(m, batch, now);
  else await completeAtOnce(m, batch, now);
  for (const s of batch) for (const entry of s.events.entries) events.add(...entry);
  return batch.map((s) => s.orderId);
}

function selling(sale: Sale): Selling {
  const { taker, asset, seller } = sale;
  const offer = isBuy(taker) ? null : taker;
  if (seller === taker.taker) throw offer ? selfTrade(offer, asset) : selfBuy(taker.taker, asset);
  return {
    ...sale,
    offer,
    // The order's id is chosen here so the sale's events can name it (history reads them alone).
    orderId: randomUUID(),
    price: sale.terms?.price ?? taker.price,
    // An offer pays in its own currency (a listing that sets the price is in it, see createOffer); a buy in the listing's.
    currency: taker.currencyAddress,
    shown: undefined,
    events: new SaleEvents(),
  };
}

/** The sales complete at once (off-chain settlement): units filled, listings sold, owners moved, other offers ended, orders written. */
async function completeAtOnce(m: EntityManager, batch: readonly Selling[], now: Date): Promise<void> {
  const units = await fillOfferUnits(m, batch, now);
  const soldListings = await closeListings(m, batch, now, 'sold');
  await m.query(
    `UPDATE assets a SET owner = v.owner, status = 'unlisted', updated_at = $3 FROM unnest($1::uuid[], $2::text[]) v(id, owner) WHERE a.id = v.id`,
    [batch.map((s) => s.asset.id), batch.map((s) => s.taker.taker), now],
  );
  batch.forEach((s, i) =>
    s.events.add('asset.transferred', 'asset', s.asset.id, {
      previous_owner: s.seller,
      order_id: s.orderId,
      price: s.price,
      currency: s.shown,
      offer_id: s.offer?.id ?? null,
      listing_id: soldListings[i]?.id ?? null,
    }),
  );
  await endOtherOffers(
    m,
    batch.map((s, i) => ({ assetId: s.asset.id, buyer: s.taker.taker, offerId: s.offer?.id ?? null, orderType: soldListings[i]?.orderType ?? null, events: s.events })),
    now,
  );
  await insertOrders(
    m,
    batch.map((s, i) => ({ sale: s, unit: units.get(s.orderId) ?? 1, listingId: soldListings[i]?.id ?? null })),
    now,
    null,
  );
  for (const s of batch) s.events.add('order.completed', 'order', s.orderId);
}

interface ClosedListing {
  id: string;
  assetId: string;
  status: string;
  swept: boolean;
  orderType: string;
}

/**
 * Each asset's active listing ends with its sale, its row locked: `status` (sold, or pending while the sale
 * awaits the chain: `listing.sold` or `listing.pending`), or expired when its closing date has passed (unless
 * it is the english auction the sale settles: `listing.expired`, unless the expiry sweeper wrote it already).
 * A buy must end the listing it names (409 otherwise). Returns the listing each sale sold (or holds), if any.
 */
async function closeListings(m: EntityManager, batch: readonly Selling[], now: Date, status: 'sold' | 'pending'): Promise<(ClosedListing | null)[]> {
  const rows = await updateReturning<ClosedListing>(
    m,
    `WITH sold AS (SELECT * FROM unnest($1::uuid[], $2::uuid[]) v(asset_id, settles)),
     held AS (SELECT l.id, l.expiry_swept, sold.settles FROM listings l JOIN sold ON sold.asset_id = l.asset_id
              WHERE l.status = 'active' ORDER BY l.id FOR UPDATE OF l)
     UPDATE listings l SET status = CASE WHEN l.closing_date <= $3 AND l.id IS DISTINCT FROM held.settles THEN 'expired' ELSE $4::varchar END,
       expiry_swept = l.expiry_swept OR COALESCE(l.closing_date <= $3, false), updated_at = $3
     FROM held WHERE l.id = held.id
     RETURNING l.id, l.asset_id AS "assetId", l.status, held.expiry_swept AS swept, l.order_type AS "orderType"`,
    [batch.map((s) => s.asset.id), batch.map((s) => s.terms?.settles ?? null), now, status],
  );
  const closed = new Map(rows.map((r) => [r.assetId, r]));
  return batch.map((s) => {
    const listing = closed.get(s.asset.id);
    const ended = listing?.status === status ? listing : null;
    if (isBuy(s.taker) && ended?.id !== s.taker.listingId) throw new ConflictError(`listing ${s.taker.listingId} is no longer active`);
    // The listing's own `currency` stays in its data; the sale's (another one when an owner accepts an offer in it) is beside the price.
    if (ended) s.events.add(`listing.${status}`, 'listing', ended.id, { order_id: s.orderId, price: s.price, sale_currency: s.shown });
    else if (listing && !listing.swept) s.events.add('listing.expired', 'listing', listing.id);
    return ended;
  });
}

/** An order to write: its sale, the unit it fills and the listing it sold (or holds). */
interface NewOrder {
  sale: Selling;
  unit: number;
  listingId: string | null;
}

/** The orders, in one statement: completed, or pending until `deadline` for sales that await the chain. */
async function insertOrders(m: EntityManager, orders: readonly NewOrder[], now: Date, deadline: Date | null): Promise<void> {
  const column = <T>(value: (o: NewOrder) => T) => orders.map(value);
  await m.query(
    `INSERT INTO orders (id, offer_id, unit, listing_id, asset_id, collection_id, chain_id, token_address, token_id, price, seller, buyer, currency,
       created_at, updated_at, status, settlement_deadline)
     SELECT v.id, v.offer_id, v.unit, v.listing_id, v.asset_id, v.collection_id, v.chain_id, v.token_address, v.token_id, v.price, v.seller, v.buyer, v.currency,
       $1, $1, $2, $3
     FROM unnest($4::uuid[], $5::uuid[], $6::int[], $7::uuid[], $8::uuid[], $9::uuid[], $10::text[], $11::text[], $12::numeric[], $13::numeric[], $14::text[],
       $15::text[], $16::text[]) WITH ORDINALITY
       v(id, offer_id, unit, listing_id, asset_id, collection_id, chain_id, token_address, token_id, price, seller, buyer, currency, n)
     ORDER BY v.n`,
    [
      now,
      deadline ? 'pending' : 'completed',
      deadline,
      column((o) => o.sale.orderId),
      column((o) => o.sale.offer?.id ?? null),
      column((o) => o.unit),
      column((o) => o.listingId),
      column((o) => o.sale.asset.id),
      column((o) => o.sale.asset.collectionId),
      column((o) => o.sale.asset.chainId),
      column((o) => o.sale.asset.tokenAddress),
      column((o) => o.sale.asset.tokenId),
      column((o) => o.sale.price),
      column((o) => o.sale.seller),
      column((o) => o.sale.taker.taker),
      column((o) => o.sale.currency),
    ],
  );
}

/**
 * Sales that await the chain (SETTLEMENT=chain): each order is written pending until its deadline, its
 * listing is held (`pending`) and a unit of its offer reserved, so nothing sells the asset again; the owner
 * stays the seller until the follower sees the transfer (settlement.ts completes or fails it).
 */
async function reserveSales(m: EntityManager, batch: readonly Selling[], now: Date): Promise<void> {
  const reserved = await pendingOrdersOf(m, batch.map((s) => s.asset.id));
  for (const s of batch) {
    const waiting = reserved.get(s.asset.id);
    if (waiting) throw reservedError(s.asset, waiting);
  }
  const units = await reserveOfferUnits(m, batch, now);
  const heldListings = await closeListings(m, batch, now, 'pending');
  await setAssetsStatus(m, batch.map((s) => s.asset.id), AssetStatus.UNLISTED, now);
  const deadline = new Date(now.getTime() + settlement.deadlineSeconds * 1000);
  await insertOrders(
    m,
    batch.map((s, i) => ({ sale: s, unit: units.get(s.orderId) ?? 1, listingId: heldListings[i]?.id ?? null })),
    now,
    deadline,
  );
  for (const s of batch) s.events.add('order.pending', 'order', s.orderId);
}

const currencyKey = (chainId: string, address: string) => `${chainId}/${address}`;

/** The currencies of sales as events show them ({address, symbol, decimals}, as the API does), by chain and address (currencyKey). */
async function saleCurrencies(m: EntityManager, wanted: readonly { chainId: string; address: string }[]): Promise<Map<string, unknown>> {
  const rows: { chainId: string; address: string; symbol: string; decimals: number }[] = await m.query(
    `SELECT c.chain_id AS "chainId", c.address, c.symbol, c.decimals FROM currencies c
     JOIN (SELECT DISTINCT * FROM unnest($1::text[], $2::text[]) v(chain_id, address)) v ON c.chain_id = v.chain_id AND c.address = v.address`,
    [wanted.map((w) => w.chainId), wanted.map((w) => w.address)],
  );
  return new Map(rows.map(({ chainId, address, symbol, decimals }) => [currencyKey(chainId, address), { address, symbol, decimals }]));
}

/** A sale's currency as events show it ({address, symbol, decimals}, as the API does). */
export async function saleCurrency(m: EntityManager, chainId: string, address: string): Promise<unknown> {
  return (await saleCurrencies(m, [{ chainId, address }])).get(currencyKey(chainId, address));
}

/** The pending orders (sales that await their transfer on chain) of these assets, by asset id. */
export async function pendingOrdersOf(m: EntityManager, assetIds: readonly string[]): Promise<Map<string, { id: string; deadline: Date }>> {
  const rows: { assetId: string; id: string; deadline: Date }[] = await m.query(
    `SELECT asset_id AS "assetId", id, settlement_deadline AS deadline FROM orders WHERE asset_id = ANY($1::uuid[]) AND status = 'pending'`,
    [assetIds],
  );
  return new Map(rows.map(({ assetId, ...order }) => [assetId, order]));
}

/** The 409 of an asset reserved by a pending order: neither sold nor listed again until the order completes or fails. */
export function reservedError(asset: Pick<SaleAsset, 'tokenAddress' | 'tokenId'>, waiting: { id: string; deadline: Date }): ConflictError {
  return new ConflictError(
    `asset ${asset.tokenAddress}/${asset.tokenId} is reserved by order ${waiting.id}, which awaits its transfer on chain until ${waiting.deadline.toISOString()}`,
  );
}


/** An owner accepting an offer that the owner made: no sale, no order, no volume. */
export function selfTrade(offer: SaleOffer, asset: SaleAsset): ConflictError {
  return new ConflictError(
    `offer ${offer.id} was made by ${offer.taker}, who owns asset ${asset.tokenAddress}/${asset.tokenId} now; one cannot sell to oneself`,
  );
}

/** A buyer buying a listing of an asset the buyer owns: no sale, no order, no volume. */
export function selfBuy(buyer: string, asset: SaleAsset): ConflictError {
  return new ConflictError(`${buyer} owns asset ${asset.tokenAddress}/${asset.tokenId}; one cannot buy one's own listing`);
}
