import type { DataSource } from 'typeorm';
import { Chain } from '../chain/chain.entity';
import type { Context } from '../../common/request/context';
import type { CurrencySetting } from '../../config';
import { NotFoundError, Problems, ValidationError } from '../../common/errors';
import { Params } from '../../common/sql';
import { ADDRESS } from '../../common/validate';
import { whenLoaded } from '../../common/batch';
import { keyOf } from '../../common/graphql/node';
import { Currency, NATIVE_CURRENCY } from './currency.entity';

/** The currencies of a chain (its EIP-155 id or Node id), the native one first; 404 for an unknown chain. */
export async function currenciesOfChain(ctx: Context, chain: string): Promise<Currency[]> {
  const chainId = keyOf('Chain', chain);
  if (!(await ctx.loaders.chainById.load(chainId))) throw new NotFoundError(`no chain ${chain}`);
  return ctx.loaders.currenciesByChain.load(chainId);
}

/** The currency of a stored price (a listing's, an offer's, an order's): its chain and the currency's address. */
export function currencyOf(ctx: Context, chainId: string, address: string): Currency | null | Promise<Currency | null> {
  return whenLoaded(ctx.loaders.currenciesByChain.get(chainId), (all) => all.find((c) => c.address === address) ?? null);
}

/**
 * The currency a write names for its prices on `chainId`: omitted (null), the native currency; else a
 * configured currency of that chain by its address (any letter case) or its symbol (any letter case).
 * Anything else is a problem of `field` (a 422) listing the chain's currencies.
 */
export async function currencyOfRequest(ctx: Context, problems: Problems, field: string, chainId: string, given: string | null | undefined): Promise<Currency | null> {
  const currencies = await ctx.loaders.currenciesByChain.load(chainId);
  const wanted = given?.trim();
  const found = wanted == null
    ? currencies.find((c) => c.address === NATIVE_CURRENCY)
    : ADDRESS.test(wanted)
      ? currencies.find((c) => c.address === wanted.toLowerCase())
      : currencies.find((c) => c.symbol.toUpperCase() === wanted.toUpperCase());
  if (!found) {
    const known = currencies.map((c) => `${c.symbol} (${c.address})`).join(', ');
    problems.add(field, `unknown currency ${JSON.stringify(given ?? 'native')} on chain ${chainId}; give the address or symbol of one of ${known || 'none'}`);
  }
  return found ?? null;
}

/** Decimals of a decimal's text, trailing zeros aside ("1.50" has 1). */
function decimalPlaces(text: string): number {
  const fraction = text.split('.')[1] ?? '';
  return fraction.replace(/0+$/, '').length;
}

/** A price given in `currency` has at most its decimals (USDC: 6); else a problem of `field`. */
export function checkPriceDecimals(problems: Problems, field: string, price: string | null | undefined, currency: Currency | null): void {
  if (price == null || !currency) return;
  const places = decimalPlaces(price);
  if (places > currency.decimals) {
    problems.add(field, `a price in ${currency.symbol} has at most ${currency.decimals} decimals, got ${price} (${places})`);
  }
}

/**
 * Adds the tokens of CURRENCIES to the currencies table at start, once: a token already there is kept as
 * it is, and must agree with the setting (its symbol and decimals fix the prices stored in it), else the
 * start fails naming it. So do an unknown chain and a symbol the chain already has for another address.
 */
export async function addConfiguredCurrencies(ds: DataSource, settings: readonly CurrencySetting[]): Promise<void> {
  for (const s of settings) {
    const described = `CURRENCIES: ${s.chainId}:${s.symbol}:${s.address}:${s.decimals}`;
    if (!(await ds.getRepository(Chain).existsBy({ id: s.chainId }))) throw new Error(`${described}: no chain ${s.chainId} (see the chains query)`);
    const currencies = ds.getRepository(Currency);
    const clash = await currencies
      .createQueryBuilder('c')
      .where('c.chainId = :chainId AND upper(c.symbol) = upper(:symbol) AND c.address <> :address', s)
      .getOne();
    if (clash) throw new Error(`${described}: chain ${s.chainId} has ${s.symbol} at ${clash.address} already`);
    // ON CONFLICT (chain_id, address) DO NOTHING: a token already there is kept as it is.
    await currencies
      .createQueryBuilder()
      .insert()
      .values({ chainId: s.chainId, address: s.address, symbol: s.symbol, decimals: s.decimals })
      .orUpdate([], ['chain_id', 'address'])
      .execute();
    const stored = await currencies.findOneByOrFail({ chainId: s.chainId, address: s.address });
    if (stored.symbol !== s.symbol || Number(stored.decimals) !== s.decimals) {
      throw new Error(`${described}: the token is configured already as ${stored.symbol} with ${stored.decimals} decimals`);
    }
  }
}

/**
 * SQL: a list's `currency` filter, the currency named by `given` on each row's chain: its address, or its
 * symbol on that chain (any letter case), so `USDC` names each chain's own USDC.
 */
export function currencyFilterSql(p: Params, currencyColumn: string, chainColumn: string, given: string): string {
  const ref = p.add(given.trim());
  return `${currencyColumn} IN (SELECT c.address FROM currencies c WHERE c.chain_id = ${chainColumn} AND (c.address = lower(${ref}) OR upper(c.symbol) = upper(${ref})))`;
}

/** A list's `currency` filter names a currency of some chain (address or symbol), else a 422 on `currency`; one statement per request. */
export async function checkCurrencyFilter(ctx: Context, given: string | null | undefined): Promise<void> {
  if (given == null) return;
  if (await ctx.loaders.currencyFilterKnown.load(given.trim())) return;
  throw new ValidationError([
    { field: 'currency', message: `no chain has a currency ${JSON.stringify(given)}; give the address or symbol of one (GET /v1/chains/{id}/currencies)` },
  ]);
}
