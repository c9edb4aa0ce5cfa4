import { EntityManager } from 'typeorm';
import { NotFoundError, Problems } from '../../common/errors';
import { exactDecimal, fromUnits, toUnits } from '../../common/decimal';
import { AUCTION_MIN_INCREMENT_PERCENT } from '../../config';
import type { EventLog } from '../event/event.log';
import { completeSales } from '../order/sale';
import type { SaleAsset } from '../order/sale.types';
import { settlement } from '../order/settlement.settings';

/** An asset row locked for the rest of the transaction, as it stands once a due english auction is settled. */
export interface LockedAsset extends SaleAsset {
  owner: string;
  /** The sale that settled the asset's english auction in this lock, if its close was due and it had a bid. */
  settled: AuctionSale | null;
}

export interface AuctionSale {
  listingId: string;
  offerId: string;
  orderId: string;
  closingDate: Date;
}

const ASSET_COLUMNS = `a.id, a.owner, a.collection_id AS "collectionId", a.chain_id AS "chainId", a.token_address AS "tokenAddress", a.token_id::text AS "tokenId"`;

/** An english auction whose close is due and not yet settled (a subset of ix_listings_expiry_due). */
const AUCTION_DUE = `l.order_type = 'english_auction' AND l.status = 'active' AND NOT l.expiry_swept AND l.closing_date <= $2`;

/**
 * Locks the asset row for the rest of the transaction; every change of owner or listing goes through it.
 * An english auction of the asset whose close has passed is settled first, so no write acts on an asset
 * that its auction has sold (the returned owner is then the winner).
 */
export async function lockAsset(m: EntityManager, events: EventLog, assetId: string, now: Date): Promise<LockedAsset> {
  const locked = (await lockAssets(m, events, [assetId], now)).get(assetId);
  if (!locked) throw new NotFoundError(`no asset with id ${assetId}`);
  return locked;
}

/**
 * lockAsset for many assets in one statement, in id order: every writer that holds more than one asset
 * takes them in this order, so two of them never wait on each other in a cycle (the others hold one
 * asset, through lockAsset). The due auctions among them are settled one by one. By id; assets that do not
 * exist are absent.
 */
export async function lockAssets(m: EntityManager, events: EventLog, assetIds: readonly string[], now: Date): Promise<Map<string, LockedAsset>> {
  if (!assetIds.length) return new Map();
  const rows: (Omit<LockedAsset, 'settled'> & { auctionDue: boolean })[] = await m.query(
    `SELECT ${ASSET_COLUMNS}, EXISTS (SELECT 1 FROM listings l WHERE l.asset_id = a.id AND ${AUCTION_DUE}) AS "auctionDue"
     FROM assets a WHERE a.id = ANY($1::uuid[]) ORDER BY a.id FOR UPDATE`,
    [assetIds, now],
  );
  const locked = new Map<string, LockedAsset>();
  for (const { auctionDue, ...asset } of rows) {
    const settled = auctionDue ? await settleAuction(m, events, asset, now) : null;
    // A sale that awaits the chain leaves the owner as it is (settlement.ts).
    locked.set(asset.id, { ...asset, owner: settled && !settlement.onChain ? settled.buyer : asset.owner, settled });
  }
  return locked;
}

/**
 * The close of the asset's english auction, the asset locked: the highest bid standing at the closing date
 * in its currency (the earliest of equal ones) buys the asset at its price, as if the seller had accepted it then; without
 * one the auction expired. The listing row is locked and checked again, so of racing settlements (sweepers
 * in several processes, a write on the asset) only the first writes anything.
 */
async function settleAuction(m: EntityManager, events: EventLog, asset: Omit<LockedAsset, 'settled'>, now: Date): Promise<(AuctionSale & { buyer: string }) | null> {
  const [listing] = await m.query(
    `SELECT l.id, l.closing_date AS "closingDate" FROM listings l WHERE l.asset_id = $1 AND ${AUCTION_DUE} FOR UPDATE`,
    [asset.id, now],
  );
  if (!listing) return null;
  const [winner] = await m.query(
    `SELECT o.id, o.kind, o.taker, o.price::text AS price, o.currency AS "currencyAddress" FROM offers o JOIN listings l ON l.id = $2
     WHERE o.asset_id = $1 AND o.status = 'active' AND o.currency = l.currency AND o.price >= l.start_price AND o.start_time <= l.closing_date
       AND o.end_time > l.closing_date AND o.filled < o.quantity AND o.taker <> $3
     ORDER BY o.price DESC, o.created_at, o.id LIMIT 1`,
    [asset.id, listing.id, asset.owner],
  );
  if (!winner) {
    await m.query('UPDATE listings SET expiry_swept = true WHERE id = $1', [listing.id]);
    events.add('listing.expired', 'listing', listing.id, { status: 'expired' });
    return null;
  }
  const [orderId] = await completeSales(m, events, [{ taker: winner, asset, seller: asset.owner, terms: { offerAt: listing.closingDate, settles: listing.id } }], now);
  return { listingId: listing.id, offerId: winner.id, orderId, closingDate: listing.closingDate, buyer: winner.taker };
}

/**
 * Settles up to `limit` english auctions whose close is due, the oldest first. Assets another transaction
 * holds are skipped: it settles them itself (lockAsset), or a later sweep does.
 */
export async function settleDueAuctions(m: EntityManager, events: EventLog, now: Date, limit: number): Promise<void> {
  const due: Omit<LockedAsset, 'settled'>[] = await m.query(
    `SELECT ${ASSET_COLUMNS} FROM listings l JOIN assets a ON a.id = l.asset_id
     WHERE ${AUCTION_DUE.replace('$2', '$1')} ORDER BY l.closing_date LIMIT $2 FOR UPDATE OF a SKIP LOCKED`,
    [now, limit],
  );
  for (const asset of due) await settleAuction(m, events, asset, now);
}

/**
 * What an english auction's next bid must reach: its start price, and above its best bid by the increment,
 * in whole units of its currency (`decimals`: 18 for the native currency, 6 for USDC).
 */
export function minimumBid(startPrice: string, bestBid: string | null, incrementPercent: number, decimals = 18): string {
  const start = toUnits(startPrice);
  if (bestBid === null) return fromUnits(start);
  const unit = 10n ** BigInt(18 - decimals);
  const best = toUnits(bestBid);
  const basisPoints = BigInt(Math.round(incrementPercent * 100));
  // Rounded up to the currency's unit, and at least one unit above the best bid (an increment of 0 still outbids).
  const raised = (((best * (10000n + basisPoints) + 9999n) / 10000n + unit - 1n) / unit) * unit;
  return fromUnits([start, best + unit, raised].reduce((a, b) => (b > a ? b : a)));
}

/** A bid on an english auction below its minimum is a 422 naming the price and the least acceptable bid. */
export function checkBid(
  problems: Problems,
  price: string,
  auction: { startPrice: string; bestBid: string | null; currencyDecimals?: number },
  incrementPercent = AUCTION_MIN_INCREMENT_PERCENT,
): void {
  const minimum = minimumBid(auction.startPrice, auction.bestBid, incrementPercent, auction.currencyDecimals);
  if (toUnits(price) >= toUnits(minimum)) return;
  const why = auction.bestBid === null ? 'its start price' : `its best bid ${exactDecimal(auction.bestBid)} plus ${incrementPercent}%`;
  problems.add('price', `a bid on this english auction must be at least ${minimum} (${why}), got ${exactDecimal(price)}`);
}
