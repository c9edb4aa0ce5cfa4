import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Search by name (docs/api.md, "Search"): pg_trgm (a trusted extension since PostgreSQL 13: a database
 * owner may create it; PGlite loads it in db/embedded.ts) and, on the lower-cased names of collections
 * and assets, a trigram index (substrings of 3 characters or more, and similarity) and a pattern index
 * (prefixes, for queries of one or two characters, which have no trigram to look up).
 */
export class NameSearch1765405000000 implements MigrationInterface {
  name = 'NameSearch1765405000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
    for (const table of ['collections', 'assets']) {
      await q.query(`CREATE INDEX "ix_${table}_name_trgm" ON "${table}" USING gin (lower("name") gin_trgm_ops)`);
      await q.query(`CREATE INDEX "ix_${table}_name_prefix" ON "${table}" (lower("name") text_pattern_ops)`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['collections', 'assets']) {
      await q.query(`DROP INDEX "ix_${table}_name_prefix"`);
      await q.query(`DROP INDEX "ix_${table}_name_trgm"`);
    }
  }
}
