import { DataSource, QueryRunner } from 'typeorm';
import { createDataSource } from '../src/db/data-source';
import { readStatement } from '../src/db/read-statement';
import { PLANNED_PER_CALL } from '../src/common/sql';

/**
 * Named statements (src/db/named-statements.ts), on both databases: on the embedded one every
 * connection shares PGlite's one session, where PGliteServer answers a second Parse of a name itself.
 */

async function preparedOn(runner: QueryRunner): Promise<string[]> {
  const rows: { statement: string }[] = await runner.query('SELECT statement FROM pg_prepared_statements ORDER BY prepare_time');
  return rows.map((r) => r.statement);
}

describe('named statements', () => {
  let ds: DataSource;
  afterEach(async () => {
    if (ds?.isInitialized) await ds.destroy();
  });

  test('when one parameterised text runs many times with different values, then each result is its own and the text is prepared once', async () => {
    ds = createDataSource({ url: process.env.TEST_DATABASE_URL!, poolSize: 1, queryTimeoutMs: 30000 });
    await ds.initialize();
    const runner = ds.createQueryRunner();
    try {
      // More runs than PostgreSQL's five custom plans, so the cached plan is used too.
      for (let i = 0; i < 12; i += 1) {
        const [row] = await runner.query('SELECT $1::int * 2 AS doubled, $2::text AS label', [i, `run ${i}`]);
        expect(row).toEqual({ doubled: i * 2, label: `run ${i}` });
      }
      const prepared = await preparedOn(runner);
      expect(prepared.filter((s) => s.includes('$1::int * 2'))).toHaveLength(1);
    } finally {
      await runner.release();
    }
  });

  test('when a text is to be planned for its values (a price range), then it runs unnamed, each time planned anew', async () => {
    ds = createDataSource({ url: process.env.TEST_DATABASE_URL!, poolSize: 1, queryTimeoutMs: 30000 });
    await ds.initialize();
    const runner = ds.createQueryRunner();
    try {
      for (let i = 0; i < 8; i += 1) {
        const [row] = await runner.query(`SELECT $1::int * 3 AS tripled ${PLANNED_PER_CALL}`, [i]);
        expect(row.tripled).toBe(i * 3);
      }
      expect((await preparedOn(runner)).filter((s) => s.includes('$1::int * 3'))).toEqual([]);
    } finally {
      await runner.release();
    }
  });

  test('when more distinct texts come than the name budget, then the rest still run, unnamed', async () => {
    ds = createDataSource({ url: process.env.TEST_DATABASE_URL!, poolSize: 1, queryTimeoutMs: 30000, maxNamedStatements: 2 });
    await ds.initialize();
    const runner = ds.createQueryRunner();
    try {
      for (let i = 0; i < 5; i += 1) {
        const [row] = await runner.query(`SELECT $1::int + ${i} AS n`, [10]);
        expect(row.n).toBe(10 + i);
      }
      // Sorted: on PGlite two statements can share a prepare_time (its clock counts milliseconds).
      const prepared = (await preparedOn(runner)).filter((s) => s.startsWith('SELECT $1::int + ')).sort();
      expect(prepared).toEqual(['SELECT $1::int + 0 AS n', 'SELECT $1::int + 1 AS n']);
    } finally {
      await runner.release();
    }
  });

  test('when many connections prepare the same text at once, then every one of them gets its own answer', async () => {
    ds = createDataSource({ url: process.env.TEST_DATABASE_URL!, poolSize: 6, queryTimeoutMs: 30000 });
    await ds.initialize();
    const text = `SELECT $1::int + 1000 AS n, pg_backend_pid() AS pid, '${Math.random()}' AS unique_text`;
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => ds.query(text, [i])));
    expect(results.map(([row]) => row.n)).toEqual(Array.from({ length: 30 }, (_, i) => 1000 + i));
  });

  test('when a SQL plan reads without parameters (readStatement), then its text is prepared once, each read counted for its request', async () => {
    ds = createDataSource({ url: process.env.TEST_DATABASE_URL!, poolSize: 1, queryTimeoutMs: 30000 });
    await ds.initialize();
    const scope = { requestId: 'named-plan', sqlStatements: 0 };
    for (let i = 0; i < 7; i += 1) {
      const rows = await readStatement<{ n: number }>({ scope, ds, rootDs: ds }, 'SELECT 40 + 2 AS n, 1 AS plan_without_parameters', []);
      expect(rows).toEqual([{ n: 42, plan_without_parameters: 1 }]);
    }
    expect(scope.sqlStatements).toBe(7);
    const runner = ds.createQueryRunner();
    try {
      expect((await preparedOn(runner)).filter((s) => s.includes('plan_without_parameters'))).toHaveLength(1);
    } finally {
      await runner.release();
    }
  });

  test('when a statement without parameters runs, then it is not prepared', async () => {
    ds = createDataSource({ url: process.env.TEST_DATABASE_URL!, poolSize: 1, queryTimeoutMs: 30000 });
    await ds.initialize();
    const runner = ds.createQueryRunner();
    try {
      await runner.query('SELECT 41 + 1 AS n; SELECT 2 AS m');
      expect((await preparedOn(runner)).filter((s) => s.includes('41 + 1'))).toEqual([]);
    } finally {
      await runner.release();
    }
  });
});
