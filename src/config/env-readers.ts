/**
 * Readers of one environment variable each, for the settings (config.ts and its areas): a value that does
 * not read as the setting's kind stops the start, naming the variable and what it takes.
 */

/** A non-negative integer. */
export function intFromEnv(name: string, fallback: number, env: NodeJS.ProcessEnv): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) {
    throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  }
  return value;
}

/** A percentage from 0 to 100 with at most two decimals ("5", "2.5"). */
export function percentFromEnv(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d{1,3}(\.\d{1,2})?$/.test(raw) || Number(raw) > 100) {
    throw new Error(`${name} must be a percentage from 0 to 100 with at most two decimals, got "${raw}"`);
  }
  return Number(raw);
}

/** on/true/1 or off/false/0. */
export function onOff(name: string, raw: string | undefined, fallback: boolean): boolean {
  if (raw === undefined || raw === '') return fallback;
  if (['on', 'true', '1'].includes(raw.toLowerCase())) return true;
  if (['off', 'false', '0'].includes(raw.toLowerCase())) return false;
  throw new Error(`${name} must be on or off, got "${raw}"`);
}

/** One of the allowed words. */
export function oneOf<T extends string>(name: string, raw: string | undefined, allowed: readonly T[], fallback: T): T {
  if (raw === undefined || raw === '') return fallback;
  if ((allowed as readonly string[]).includes(raw)) return raw as T;
  throw new Error(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
}
