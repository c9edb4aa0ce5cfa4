import { Problems } from './errors';

/**
 * The sizes of everything a client may send, in one place (docs/input-limits.md lists them).
 * Field-specific lengths are checked by the services' Problems collectors; the generic bounds below
 * are checked on every value a request carries (GraphQL variables and literals, REST bodies, CSV rows)
 * before any resolver runs.
 */
export const MAX_LENGTH = {
  collectionName: 200,
  assetName: 500,
  description: 100_000,
  url: 2048,
  username: 100,
  /** 0x + 40 hex digits; addresses are checked by their pattern too. */
  address: 42,
  slug: 200,
  signature: 1024,
} as const;

/** Any one string anywhere in a request, including inside JSON values (metadata, description). */
export const MAX_STRING_LENGTH = 100_000;
/** Any one array in a request (e.g. 10,000 fees are refused here, before the service looks at them). */
export const MAX_ARRAY_ITEMS = 1000;
/** Nesting of objects and arrays inside a JSON value (metadata, description). */
export const MAX_JSON_DEPTH = 32;

/** A string PostgreSQL cannot store in text/jsonb: NUL, or a UTF-16 surrogate without its partner. */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why a string cannot be taken, or undefined when it can. */
export function stringProblem(value: string): string | undefined {
  if (value.length > MAX_STRING_LENGTH) return `must be at most ${MAX_STRING_LENGTH} characters, got ${value.length}`;
  const bad = UNSTORABLE.exec(value);
  if (!bad) return undefined;
  return bad[0] === '\u0000'
    ? 'must not contain the NUL character (\\u0000)'
    : `must not contain a lone UTF-16 surrogate (\\u${bad[0].charCodeAt(0).toString(16)})`;
}

/** Only the values JSON can carry are walked: an upload (a stream) is not the client's text. */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * Walks a value a client sent and adds a problem, named by its path (`input.metadata.a.b`), for each
 * string PostgreSQL cannot store or that is too long, each number that is not finite, each array over
 * MAX_ARRAY_ITEMS and each nesting deeper than MAX_JSON_DEPTH. `depth` counts the objects and arrays
 * around the value (a variable's own value is at depth 0).
 */
export function checkStorable(problems: Problems, field: string, value: unknown, depth = 0): void {
  if (typeof value === 'string') {
    const problem = stringProblem(value);
    if (problem) problems.add(field, problem);
  } else if (typeof value === 'number') {
    if (!Number.isFinite(value)) problems.add(field, `must be a finite number, got ${value}`);
  } else if (Array.isArray(value) || isPlainObject(value)) {
    if (depth > MAX_JSON_DEPTH) {
      problems.add(field, `is nested deeper than ${MAX_JSON_DEPTH} levels`);
      return;
    }
    if (Array.isArray(value)) {
      if (value.length > MAX_ARRAY_ITEMS) {
        problems.add(field, `must have at most ${MAX_ARRAY_ITEMS} items, got ${value.length}`);
        return;
      }
      value.forEach((item, i) => checkStorable(problems, `${field || 'input'}[${i}]`, item, depth + 1));
    } else {
      for (const [key, item] of Object.entries(value)) {
        const keyProblem = stringProblem(key);
        if (keyProblem) problems.add(field || 'input', `a key ${keyProblem}`);
        else checkStorable(problems, field ? `${field}.${key}` : key, item, depth + 1);
      }
    }
  }
}

/**
 * Checks every value of a request's variables (see checkStorable); the problems name the field as the
 * services do (`name`, `fees[3].address`: the `input` variable's own name is left out).
 */
export function checkVariables(variables: Record<string, unknown>): Problems {
  const problems = new Problems();
  for (const [name, value] of Object.entries(variables)) {
    const keyProblem = stringProblem(name);
    if (keyProblem) problems.add('variables', `a variable name ${keyProblem}`);
    else checkStorable(problems, name === 'input' ? '' : name, value, 0);
  }
  return problems;
}
