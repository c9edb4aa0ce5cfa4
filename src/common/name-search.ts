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

/**
 * How many matching rows a search ranks at most (its candidates): a query that matches most names (every
 * bench asset is named `Asset <c>/<t>`) would otherwise rank all of them before cutting a page.
 */
export const SEARCH_CANDIDATES = 1000;

/**
 * The walk of the names that start with the query over names kept elsewhere than the list's rows (a listed
 * asset's on its active listing: listedByNameSql), where the list's filters leave a small share of its table:
 * SQL selecting the row addresses (ctid) of the list's first `limit` rows that pass its filters and whose name
 * meets `starts(column)` (the query's condition on a column that holds the row's name), in the order of the
 * names' pattern index (lower-cased name with ~<~, then id).
 */
export type StartsWalk = (starts: (column: string) => string, limit: string) => string;

export interface NameSearch {
  /**
   * The condition a list adds to its filters: the row is one of the search's candidates among the rows of
   * `from` (the list's FROM, main table `alias`) that pass `filters` (the list's other conditions, over `alias`).
   * `bounded`: the filters leave few rows (one owner's), which are read by their filters' index and ranked.
   * `walk`: the names that start with the query are read by it (not when `bounded`).
   */
  where(from: string, filters: readonly string[], bounded?: boolean, walk?: StartsWalk): string;
  /** Best first: sort DESC. */
  sort: SortKey;
}

/** Whether nameSearch takes this query (1 to MAX_QUERY_LENGTH characters besides surrounding spaces, nothing a text may not hold). */
export function isSearchQuery(raw: unknown): boolean {
  if (typeof raw !== 'string') return false;
  const query = raw.trim().toLowerCase();
  return query.length > 0 && query.length <= MAX_QUERY_LENGTH && stringProblem(query) === undefined;
}

/** `%`, `_` and the escape character stand for themselves in a LIKE pattern. */
const likeEscaped = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * Matching and ranking by name, for the `name` of the table aliased `alias` (read lower-cased: the indexes of
 * migration 1765405000000 are on lower(name)), in any script. A query of one or two characters matches the names it
 * starts; a longer one also names that hold it anywhere, and names similar to it (pg_trgm's `%`:
 * similarity of at least pg_trgm.similarity_threshold, 0.3, which a typo or two keeps). Ranked by how the
 * name matches (3 equal, 2 starts with, 1 holds it, 0 similar only) plus the similarity, rounded to 4
 * decimals so that a cursor holds the exact value; ties by id.
 *
 * Only the first SEARCH_CANDIDATES matches are ranked (and counted), taken by what an index gives cheaply:
 * the names that start with the query in the order of the pattern index (the equal name comes first), then,
 * when those are fewer, names that hold the query or are similar to it, as the trigram index finds them.
 * Every name that starts with the query ranks above every other match, so a page of the candidates is the
 * page of all matches whenever the query matches at most SEARCH_CANDIDATES names.
 */
export function nameSearch(p: Params, alias: string, raw: string, field = 'query'): NameSearch {
  const query = raw.trim().toLowerCase();
  if (!isSearchQuery(raw)) {
    throw new BadRequestError(`${field} must have 1 to ${MAX_QUERY_LENGTH} characters besides spaces, got "${raw.slice(0, 40)}"`, [
      { field, message: `must have 1 to ${MAX_QUERY_LENGTH} characters` },
    ]);
  }
  const name = `lower(${alias}.name)`;
  // Lower-cased by PostgreSQL too, as the names are (JavaScript's and PostgreSQL's lower() may differ).
  const q = `lower(${p.add(query)})`;
  const prefix = `lower(${p.add(`${likeEscaped(query)}%`)})`;
  const fuzzy = [...query].length >= FUZZY_FROM;
  const inside = fuzzy ? `lower(${p.add(`%${likeEscaped(query)}%`)})` : undefined;
  const startsOf = (column: string) => `lower(${column}) LIKE ${prefix}`;
  const starts = startsOf(`${alias}.name`);
  const kind = `CASE WHEN ${name} = ${q} THEN 3 WHEN ${starts} THEN 2${fuzzy ? ` WHEN ${name} LIKE ${inside} THEN 1` : ''} ELSE 0 END`;
  const where = (from: string, filters: readonly string[], bounded = false, walk?: StartsWalk) => {
    // By their row addresses (ctid: a TID scan fetches them; one statement, so one snapshot, reads them and the
    // page), which was 2 to 5 ms faster than looking 1,000 ids up again in the primary key. Among few rows the
    // name's conditions are kept off the name indexes (IS TRUE): a statement's generic plan (its pattern
    // unknown) joined the owner's 200 rows with the 1,000,000 that the trigram index finds for `asset%` (1.3 s).
    const rows = (condition: string) => `SELECT ${alias}.ctid FROM ${from} WHERE ${[...filters, bounded ? `(${condition}) IS TRUE` : condition].join(' AND ')}`;
    const limit = p.add(SEARCH_CANDIDATES);
    // The pattern index's order (~<~), so that the first candidates are read from it and not sorted.
    const first = walk && !bounded ? walk(startsOf, limit) : `${rows(starts)} ORDER BY ${name} USING ~<~, ${alias}.id LIMIT ${limit}`;
    if (!fuzzy) return `${alias}.ctid = ANY(ARRAY(${first}))`;
    // The other matches only fill what the names that start with the query leave (LIMIT 0 reads none).
    const others = `${rows(`NOT ${starts} AND (${name} LIKE ${inside} OR ${name} % ${q})`)} LIMIT ${limit} - (SELECT count(*) FROM starts)`;
    return `${alias}.ctid = ANY(ARRAY(WITH starts AS MATERIALIZED (${first}) SELECT ctid FROM starts UNION ALL (${others})))`;
  };
  return { where, sort: { expression: `(${kind} + round(similarity(${name}, ${q})::numeric, 4))`, sqlType: 'numeric' } };
}
