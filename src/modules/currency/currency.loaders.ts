import { DataSource } from 'typeorm';
import { observed, PeekLoader } from '../../common/batch';
import { Params } from '../../common/sql';
import { modelColumns } from '../../common/read-model-sql';
import { Currency, NATIVE_CURRENCY } from './currency.entity';
import { CURRENCY_READ } from './currency.read';

declare module '../../common/request/context' {
  interface Loaders {
    /** The currencies of each chain: the native one first, then the tokens by symbol. */
    currenciesByChain: PeekLoader<string, Currency[]>;
    /** Whether some chain has a currency of this address or symbol (any letter case): a list's `currency` filter. */
    currencyFilterKnown: PeekLoader<string, boolean>;
  }
}

export function createCurrencyLoaders(ds: DataSource) {
  return {
    currenciesByChain: new PeekLoader<string, Currency[]>(
      observed('currenciesByChain', async (chainIds) => {
        const p = new Params();
        const rows: Currency[] = await ds.query(
          `SELECT ${modelColumns(CURRENCY_READ, 't')} FROM currencies t WHERE t.chain_id = ANY(${p.add(chainIds)}::text[])
           ORDER BY t.chain_id, t.address <> '${NATIVE_CURRENCY}', upper(t.symbol)`,
          p.values,
        );
        return chainIds.map((id) => rows.filter((r) => r.chainId === id));
      }),
    ),
    currencyFilterKnown: new PeekLoader<string, boolean>(
      observed('currencyFilterKnown', async (refs) => {
        const p = new Params();
        const rows: { ref: string }[] = await ds.query(
          `SELECT ref FROM unnest(${p.add(refs)}::text[]) ref
           WHERE EXISTS (SELECT 1 FROM currencies c WHERE c.address = lower(ref) OR upper(c.symbol) = upper(ref))`,
          p.values,
        );
        const known = new Set(rows.map((r) => r.ref));
        return refs.map((ref) => known.has(ref));
      }),
    ),
  };
}
