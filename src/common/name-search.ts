import { BadRequestError } from './errors';
import { stringProblem } from './limits';
import type { SortKey } from './pagination';
import { Params } from './sql';

/** The longest search query, in characters. */
export const MAX_QUERY_LENGTH = 100;
/** From this length a query also matches inside names and by similarity (it has a trigram to look up). */
const FUZZY_FROM = 3;

/** The order of search results (a cursor's orderBy). */
export const RELEVANCE = 'RELEVANCE';

export interface NameSearch {
  /** The rows whose name matches. */
  where: string;
  /** Best first: sort DESC. */
  sort: SortKey;
}

/** `%`, `_` and the escape character stand for themselves in a LIKE pattern. */
const likeEscaped = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * Matching and ranking by name, for `column` (a name, read lower-cased: the indexes of migration
 * 1765405000000 are on lower(name)), in any script. A query of one or two characters matches the names it
 * starts; a longer one also names that hold it anywhere, and names similar to it (pg_trgm's `%`:
 * similarity of at least pg_trgm.similarity_threshold, 0.3, which a typo or two keeps). Ranked by how the
 * name matches (3 equal, 2 starts with, 1 holds it, 0 similar only) plus the similarity, rounded to 4
 * decimals so that a cursor holds the exact value; ties by id.
 */
export function nameSearch(p: Params, column: string, raw: string, field = 'query'): NameSearch {
  const query = raw.trim().toLowerCase();
  if (query.length === 0 || query.length > MAX_QUERY_LENGTH || stringProblem(query) !== undefined) {
    throw new BadRequestError(`${field} must have 1 to ${MAX_QUERY_LENGTH} characters besides spaces, got "${raw.slice(0, 40)}"`, [
      { field, message: `must have 1 to ${MAX_QUERY_LENGTH} characters` },
    ]);
  }
  const name = `lower(${column})`;
  // Lower-cased by PostgreSQL too, as the names are (JavaScript's and PostgreSQL's lower() may differ).
  const q = `lower(${p.add(query)})`;
  const prefix = `lower(${p.add(`${likeEscaped(query)}%`)})`;
  const fuzzy = [...query].length >= FUZZY_FROM;
  const inside = fuzzy ? `lower(${p.add(`%${likeEscaped(query)}%`)})` : undefined;
  const where = fuzzy ? `(${name} LIKE ${inside} OR ${name} % ${q})` : `${name} LIKE ${prefix}`;
  const kind = `CASE WHEN ${name} = ${q} THEN 3 WHEN ${name} LIKE ${prefix} THEN 2${fuzzy ? ` WHEN ${name} LIKE ${inside} THEN 1` : ''} ELSE 0 END`;
  return { where, sort: { expression: `(${kind} + round(similarity(${name}, ${q})::numeric, 4))`, sqlType: 'numeric' } };
}
