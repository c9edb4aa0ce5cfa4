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

/** A decimal of at most 18 decimals ("1.5", "-0.5") as a whole number of its smallest unit (1500000000000000000n). */
export function toUnits(text: string): bigint {
  const negative = text.startsWith('-');
  const [whole, fraction = ''] = (negative ? text.slice(1) : text).split('.');
  const units = BigInt(whole) * UNIT + BigInt(fraction.padEnd(DECIMALS, '0').slice(0, DECIMALS) || '0');
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
