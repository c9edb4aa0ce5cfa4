import { compareDecimals } from './decimal';
import { BadRequestError, Problems } from './errors';
import { MAX_LENGTH } from './limits';

const URL_SCHEMES = new Set(['http:', 'https:', 'ipfs:', 'ar:']);

/** A link a client gives us: http(s), ipfs or ar, at most MAX_LENGTH.url characters. */
export function checkUrl(problems: Problems, field: string, value: string | null | undefined): void {
  if (value === undefined || value === null) return;
  let ok = value.length <= MAX_LENGTH.url;
  if (ok) {
    try {
      ok = URL_SCHEMES.has(new URL(value).protocol);
    } catch {
      ok = false;
    }
  }
  if (!ok) problems.add(field, `must be an http, https, ipfs or ar URL of at most ${MAX_LENGTH.url} characters, got ${JSON.stringify(value.slice(0, 80))}`);
}

export function checkText(
  problems: Problems,
  field: string,
  value: string | null | undefined,
  options: { required?: boolean; max: number },
): void {
  if (value === undefined || value === null) {
    if (options.required) problems.add(field, 'is required');
    return;
  }
  if (options.required && value.trim() === '') problems.add(field, 'must not be empty');
  else if (value.length > options.max) problems.add(field, `must be at most ${options.max} characters, got ${value.length}`);
}

export function required(problems: Problems, field: string, value: unknown): boolean {
  if (value === undefined || value === null) {
    problems.add(field, 'is required');
    return false;
  }
  return true;
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const ADDRESS = /^0x[0-9a-f]{40}$/i;

/**
 * An id a client names a row by (a path's `{id}`, an `offerId`): a UUID, lower-cased. Anything else is of
 * the wrong form, a 400 naming the field (decisions.md), not a 404: no row could ever have it.
 */
export function uuidOf(field: string, value: string, noun: string): string {
  if (UUID.test(value)) return value.toLowerCase();
  const message = `must be ${noun} id (a UUID), got ${JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value)}`;
  throw new BadRequestError(`${field}: ${message}`, [{ field, message }]);
}

/**
 * The one rule for a price a client gives (a listing's, an offer's, a most-you-would-pay): greater than 0.
 * Prices are well-formed decimals by then (the Price scalar); 0, -1 and "-1" alike break this rule, a 422
 * naming the field (docs/api.md, "Identifiers and values").
 */
export function checkPositivePrice(problems: Problems, field: string, value: string | null | undefined): void {
  if (value != null && compareDecimals(value, '0') <= 0) problems.add(field, `must be greater than 0, got ${value}`);
}

/** A chain named in a path or argument: its EIP-155 id, a decimal number; other text is a 400 naming the field. */
export function chainIdOf(field: string, value: string): string {
  if (/^[1-9][0-9]{0,19}$/.test(value)) return value;
  const message = `must be a chain id (its EIP-155 number, "1" for Ethereum; GET /v1/chains lists them), got ${JSON.stringify(value.slice(0, 60))}`;
  throw new BadRequestError(`${field}: ${message}`, [{ field, message }]);
}
