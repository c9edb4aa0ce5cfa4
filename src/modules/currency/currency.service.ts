import type { Context } from '../../common/request/context';
import { NotFoundError, Problems } from '../../common/errors';
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
