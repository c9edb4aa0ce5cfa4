/** An ERC-20 token prices may be given in, besides those the currencies migration seeds (CURRENCIES). */
export interface CurrencySetting {
  chainId: string;
  symbol: string;
  /** Lower-case. */
  address: string;
  decimals: number;
}

/**
 * CURRENCIES=<chain_id>:<SYMBOL>:<address>:<decimals>,... (e.g. `1:USDT:0xdac17f958d2ee523a2206206994597c13d831ec7:6`):
 * tokens added to the currencies table at start (docs/market.md "Currencies"). A malformed entry stops the start.
 */
export function currencySettingsFromEnv(raw: string | undefined): CurrencySetting[] {
  const entries = (raw ?? '').split(',').map((e) => e.trim()).filter(Boolean);
  return entries.map((entry) => {
    const match = /^([1-9]\d{0,19}):([A-Za-z0-9.]{1,20}):(0x[0-9a-fA-F]{40}):(\d{1,2})$/.exec(entry);
    if (!match || Number(match[4]) > 18) {
      throw new Error(`CURRENCIES: each entry is <chain_id>:<SYMBOL>:<address>:<decimals 0..18>, e.g. 1:USDT:0xdac17f958d2ee523a2206206994597c13d831ec7:6; got "${entry}"`);
    }
    return { chainId: match[1], symbol: match[2], address: match[3].toLowerCase(), decimals: Number(match[4]) };
  });
}
