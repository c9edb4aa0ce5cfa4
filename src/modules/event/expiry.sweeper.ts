import { DataSource } from 'typeorm';
import { logger } from '../../common/logger';
import { updateReturning } from '../../common/sql';
import { settleDueAuctions } from '../listing/auction';
import { compactListedAssetCounts } from '../listing/listed-counts';
import { compactAssetCounts } from '../asset/asset-counts';
import { failOverdueSettlements } from '../order/settlement';
import { compactTradeListCounts } from '../trade/list-counts';
import { advanceSalesBounds, salesBoundsHour } from '../statistics/sales-bounds';
import { compactTrendingCounts } from '../statistics/statistics.trend';
import { withEvents } from './event.log';

/** Longest sleep between looks: a listing created meanwhile (by any process) is swept this late at worst. */
export const SWEEP_MAX_SLEEP_MS = 500;
/** Expiries swept per transaction; a larger backlog is swept in several, one after another. */
const SWEEP_BATCH = 500;
/** When what is due is held by another sweeper (or a write), look again this much later. */
const HELD_RETRY_MS = 50;
const ERROR_RETRY_MS = 1000;

/** What may still expire and has no expiry event yet: each matches a partial index of the migration. */
const LISTING_DUE = `status = 'active' AND NOT expiry_swept AND closing_date IS NOT NULL`;
const OFFER_DUE = `status = 'active' AND NOT expiry_swept`;
/** English auctions close by settleDueAuctions (a sale, or their expiry event), never by the plain sweep. */
const PLAIN_LISTING = `order_type <> 'english_auction'`;
/**
 * A bid standing at the close of an english auction not yet settled waits for the settlement, which may
 * make it the winner: it must not be written expired first.
 */
const NOT_AWAITING_CLOSE = `NOT EXISTS (SELECT 1 FROM listings l WHERE l.asset_id = offers.asset_id AND l.order_type = 'english_auction'
  AND l.status = 'active' AND NOT l.expiry_swept AND l.closing_date < offers.end_time)`;

/** The earliest expiry without its event, from the first entry of each partial index; null when there is none. */
async function nextDue(ds: DataSource): Promise<Date | null> {
  const [row] = await ds.query(
    `SELECT LEAST((SELECT min(closing_date) FROM listings WHERE ${LISTING_DUE}),
                  (SELECT min(end_time) FROM offers WHERE ${OFFER_DUE}),
                  (SELECT min(settlement_deadline) FROM orders WHERE status = 'pending')) AS due`,
  );
  return row.due ? new Date(row.due) : null;
}

/**
 * Settles the english auctions that have closed by `now` (docs/api.md "Auctions"), fails the orders whose
 * settlement on chain is overdue (docs/chain.md "Settlement on chain") and writes the expiry
 * events of what has expired by then, in one transaction with the marks that say they are written. Rows
 * another sweeper or a write holds are skipped (it writes them); a row marked, sold, accepted or cancelled
 * meanwhile no longer matches when locked. Returns how many events were written.
 */
export async function sweepExpired(ds: DataSource, now: Date): Promise<number> {
  return withEvents(ds, async (m, events) => {
    await settleDueAuctions(m, events, now, SWEEP_BATCH);
    await failOverdueSettlements(m, events, now, SWEEP_BATCH);
    const sweep = (table: string, due: string, time: string) =>
      updateReturning<{ id: string }>(
        m,
        `WITH due AS (SELECT id FROM ${table} WHERE ${due} AND ${time} <= $1 ORDER BY ${time} LIMIT $2 FOR UPDATE SKIP LOCKED)
         UPDATE ${table} t SET expiry_swept = true FROM due WHERE t.id = due.id RETURNING t.id`,
        [now, SWEEP_BATCH],
      );
    const listings = await sweep('listings', `${LISTING_DUE} AND ${PLAIN_LISTING}`, 'closing_date');
    const offers = await sweep('offers', `${OFFER_DUE} AND ${NOT_AWAITING_CLOSE}`, 'end_time');
    // The stored status stays `active` (the API computes expiry from its clock); the event says what happened.
    for (const { id } of listings) events.add('listing.expired', 'listing', id, { status: 'expired' });
    for (const { id } of offers) events.add('offer.expired', 'offer', id, { status: 'expired' });
    return events.size;
  });
}

export interface ExpirySweeper {
  /**
   * Ends the loop: at once when it sleeps, after the sweep under way otherwise, waiting at most `waitMs`
   * for it (a sweep cut short by the database closing rolls back, and the next process writes it).
   */
  stop(waitMs?: number): Promise<void>;
}

/**
 * Writes `listing.expired` / `offer.expired` within a second of the expiry, and settles english auctions as
 * they close. Every gateway process runs one; they share the work through row locks and the `expiry_swept`
 * mark, so each expiry is written once.
 * Between sweeps it sleeps until the next due expiry, at most SWEEP_MAX_SLEEP_MS (expiries created by other
 * processes meanwhile are not known here). The time is the real one, never the test clock: a sweep writes
 * for every process on the database.
 */
export function startExpirySweeper(ds: DataSource, maxSleepMs = SWEEP_MAX_SLEEP_MS): ExpirySweeper {
  let stopped = false;
  let wake: (() => void) | undefined;
  let timer: NodeJS.Timeout | undefined;
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      wake = resolve;
      timer = setTimeout(resolve, ms);
      timer.unref();
    });

  // The hour the statistics' sales bounds last moved to (by this process or another), checked once per hour.
  let salesBoundsMoved: number | undefined;

  const step = async (): Promise<number> => {
    // The deltas of the counts of offers, orders, listed assets, assets and trending collections, folded once they pile up (a market that writes stays at a few hundred rows).
    await compactTradeListCounts(ds);
    await compactListedAssetCounts(ds);
    await compactAssetCounts(ds);
    await compactTrendingCounts(ds);
    const clockNow = new Date();
    const hour = salesBoundsHour(clockNow);
    if (hour !== salesBoundsMoved && (await advanceSalesBounds(ds, clockNow))) salesBoundsMoved = hour;
    const due = await nextDue(ds);
    const now = Date.now();
    if (due === null || due.getTime() > now) return due === null ? maxSleepMs : Math.min(maxSleepMs, due.getTime() - now + 1);
    const written = await sweepExpired(ds, new Date(now));
    if (written) logger.debug('expiry events written', { count: written });
    return written ? 0 : HELD_RETRY_MS;
  };

  const loop = (async () => {
    let failing = false;
    while (!stopped) {
      let wait: number;
      try {
        wait = await step();
        failing = false;
      } catch (err) {
        // The database may be away for a while: say so once, and keep trying.
        if (!failing && !stopped) logger.warn('expiry sweep failed; retrying', { error: err instanceof Error ? err.message : String(err) });
        failing = true;
        wait = ERROR_RETRY_MS;
      }
      if (wait > 0 && !stopped) await sleep(wait);
    }
  })();

  return {
    async stop(waitMs = 30_000) {
      stopped = true;
      clearTimeout(timer);
      wake?.();
      let giveUp: NodeJS.Timeout | undefined;
      await Promise.race([loop, new Promise<void>((resolve) => (giveUp = setTimeout(resolve, waitMs)))]);
      clearTimeout(giveUp);
    },
  };
}
