import { Pool } from 'pg';

/**
 * Many connections to one database at once, as the server's pool makes them: with the embedded
 * database this checks that each connection's protocol exchanges and transactions stay whole.
 */
describe('the database under concurrent connections', () => {
  let pool: Pool;
  beforeAll(() => {
    pool = new Pool({ connectionString: process.env.TEST_DATABASE_URL, max: 10 });
  });
  afterAll(() => pool.end());

  test('when 200 parameterised queries run on 10 connections at once, then each gets its own answer', async () => {
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) => pool.query('SELECT $1::int * 2 AS doubled, $2::text AS tag', [i, `q${i}`])),
    );
    answers.forEach((res, i) => expect(res.rows[0]).toEqual({ doubled: i * 2, tag: `q${i}` }));
  });

  test('when replies are large and concurrent, then each arrives whole', async () => {
    const sizes = [100, 20_000, 300_000, 5_000, 1_000_000];
    const answers = await Promise.all(sizes.map((n) => pool.query("SELECT repeat('x', $1::int) AS text, $1::int AS n", [n])));
    answers.forEach((res, i) => {
      expect(res.rows[0].n).toBe(sizes[i]);
      expect(res.rows[0].text).toBe('x'.repeat(sizes[i]));
    });
  });

  test('when transactions increment one counter concurrently under FOR UPDATE, then no increment is lost', async () => {
    await pool.query('CREATE TABLE IF NOT EXISTS test_counter (id int PRIMARY KEY, n int NOT NULL)');
    await pool.query('INSERT INTO test_counter VALUES (1, 0) ON CONFLICT (id) DO UPDATE SET n = 0');
    await Promise.all(
      Array.from({ length: 40 }, async () => {
        const client = await pool.connect();
        try {
          await client.query('BEGIN');
          const { rows } = await client.query('SELECT n FROM test_counter WHERE id = 1 FOR UPDATE');
          await client.query('UPDATE test_counter SET n = $1 WHERE id = 1', [rows[0].n + 1]);
          await client.query('COMMIT');
        } finally {
          client.release();
        }
      }),
    );
    const { rows } = await pool.query('SELECT n FROM test_counter WHERE id = 1');
    expect(rows[0].n).toBe(40);
    await pool.query('DROP TABLE test_counter');
  });
});
