/** Prices are amounts of a currency with 18 decimals: exact decimal text in and out, never a binary float. */
export const DECIMALS = 18;
const UNIT = 10n ** BigInt(DECIMALS);

/**
 * A decimal's text as PostgreSQL gives it ("5.000000000000000000"), in its shortest exact form ("5"):
 * no trailing zeros after the point, and no point without decimals.
 */
export function exactDecimal(text: string): string {
  return text.includes('.') ? text.replace(/\.?0+$/, '') : text;
}

/**
 * A decimal ("1.5", "-0.5") as a whole number of its currency's smallest unit: 18 decimals unless told
 * (1500000000000000000n; USDC's 6: 1500000n). Decimals beyond `decimals` are cut off.
 */
export function toUnits(text: string, decimals: number = DECIMALS): bigint {
  const negative = text.startsWith('-');
  const [whole, fraction = ''] = (negative ? text.slice(1) : text).split('.');
  const units = BigInt(whole) * 10n ** BigInt(decimals) + BigInt(fraction.padEnd(decimals, '0').slice(0, decimals) || '0');
  return negative ? -units : units;
}

/** -1, 0 or 1 as `a` is below, equal to or above `b`, exactly. */
export function compareDecimals(a: string, b: string): number {
  const x = toUnits(a);
  const y = toUnits(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** The inverse of toUnits: a whole number of the smallest unit as its shortest exact decimal text. */
export function fromUnits(units: bigint): string {
  const whole = units / UNIT;
  const fraction = (units % UNIT).toString().padStart(DECIMALS, '0');
  return exactDecimal(`${whole}.${fraction}`);
}

/**
 * Marks a decimal's text for jsonWithExactNumbers. PostgreSQL stores no NUL in text or jsonb, so no value
 * read from the database starts with one.
 */
const NUMBER_MARK = '\u0000';

/** A decimal's text, marked to be written by jsonWithExactNumbers as a JSON number of exactly its digits. */
export const exactNumber = (text: string): string => NUMBER_MARK + text;

/** JSON of a REST response, with each marked decimal written as a number of exactly its digits. */
export function jsonWithExactNumbers(value: unknown): string {
  const text = JSON.stringify(value);
  return text.includes('"\\u0000') ? text.replace(/"\\u0000(-?[0-9]+(?:\.[0-9]+)?)"/g, '$1') : text;
}

/** The extension of a GraphQL field of stored JSON whose numbers have `_decimal` twins: REST writes them with withExactTwins. */
export const DECIMAL_TWINS = 'decimalTwins';

/**
 * A resource stored as JSON (an event's `data`) with each number that has an exact `<name>_decimal` twin
 * marked to be written with the twin's digits: a JSON reader on the way from the database made the number
 * a double.
 */
export function withExactTwins(data: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...data };
  for (const [key, twin] of Object.entries(data)) {
    if (!key.endsWith('_decimal') || typeof twin !== 'string') continue;
    const name = key.slice(0, -'_decimal'.length);
    if (typeof out[name] === 'number') out[name] = exactNumber(twin);
  }
  return out;
}
