import type { EventLog } from '../event/event.log';
import type { Offer } from '../offer/offer.types';

/** The parts of a sale (sale.ts completeSales): who takes which asset from whom, on what terms. */

/** The asset of a sale: the one an item offer names, or the one an owner sells to a collection or trait offer. */
export interface SaleAsset {
  id: string;
  collectionId: string;
  chainId: string;
  tokenAddress: string;
  tokenId: string;
}

/** What a sale needs of the offer it fills. */
export type SaleOffer = Pick<Offer, 'id' | 'kind' | 'taker' | 'price' | 'currencyAddress'>;

/** A buy now: the taker buys the asset's active listing `listingId` at `price`, with no offer (the order's offer is null). */
export interface SaleBuy {
  buy: true;
  listingId: string;
  taker: string;
  price: string;
  /** The listing's currency, which a buy pays in. */
  currencyAddress: string;
}

export const isBuy = (taker: SaleOffer | SaleBuy): taker is SaleBuy => 'buy' in taker;

/** How a sale departs from an owner's plain acceptance at the offer's price. */
export interface SaleTerms {
  /** The price paid; the offer's price unless the listing sets it (an offer taken at once pays the listing's price). */
  price?: string;
  /** The moment the offer's window must hold; now unless an english auction's close settles it. */
  offerAt?: Date;
  /** The closed english auction this sale settles: it is sold, not expired, though its closing date has passed. */
  settles?: string;
}

/** One sale of a batch: the taker (an offer, or a buy) takes the asset, whose row the caller has locked, from its seller. */
export interface Sale {
  taker: SaleOffer | SaleBuy;
  asset: SaleAsset;
  seller: string;
  terms?: SaleTerms;
}

/** A sale of the batch as its steps see it: its order's id, price and currency fixed. */
export interface Selling extends Sale {
  offer: SaleOffer | null;
  orderId: string;
  price: string;
  currency: string;
  shown: unknown;
  /** The sale's own events, kept apart so that a batch's events read sale by sale, as sales made one at a time would. */
  events: SaleEvents;
}

/** Anything events are added to: the transaction's log, or one sale's share of it. */
export type EventSink = Pick<EventLog, 'add'>;

/** One sale's events, in the order they happened, added to the transaction's log once the batch is done. */
export class SaleEvents implements EventSink {
  readonly entries: Parameters<EventLog['add']>[] = [];
  add(...entry: Parameters<EventLog['add']>): void {
    this.entries.push(entry);
  }
}
