import { ReadRelation, relatedModel, SqlScope } from '../../common/read-model';

/** How a currency is read: by its loaders (currency.loaders.ts) and by the SQL plans (a price's `currency`). */
export const CURRENCY_READ = relatedModel(
  'Currency',
  'currencies',
  'cur',
  {
    chainId: { sql: 'chain_id', kind: 'value' },
    address: { sql: 'address', kind: 'value' },
    symbol: { sql: 'symbol', kind: 'value' },
    decimals: { sql: 'decimals', kind: 'value' },
  },
  // REST shows a price's currency without its chain (the row's own); the native currency's address is 0x000…0.
  { rest: { shape: ['address', 'symbol', 'decimals'], omits: ['chainId'] } },
);

/**
 * The currency of a row's prices, as currencyOf reads it: the currencies row of its chain (`chain`, SQL over
 * the row) and its `currency` column; null when none.
 */
export const currencyRelation = (chain: (row: string, s: SqlScope) => string): ReadRelation => ({
  kind: 'one',
  type: 'Currency',
  table: 'currencies',
  where: (x, row, s) => `${x}.chain_id = ${chain(row, s)} AND ${x}.address = ${row}.currency`,
});
