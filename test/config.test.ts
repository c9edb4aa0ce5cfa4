import { loadConfig } from '../src/config';

/**
 * loadConfig(env) reads every setting from the environment it is given, not from the process's: a caller
 * that starts a gateway with its own settings (a test, the bench, an embedding program) gets those.
 */
describe('settings read from the environment given', () => {
  const NUMBERS: [variable: string, read: (c: ReturnType<typeof loadConfig>) => unknown][] = [
    ['PORT', (c) => c.port],
    ['DB_POOL_SIZE', (c) => c.dbPoolSize],
    ['DB_STATEMENT_TIMEOUT_MS', (c) => c.dbStatementTimeoutMs],
    ['DB_POOL_IDLE_MS', (c) => c.dbPoolIdleMs],
    ['SHUTDOWN_GRACE_MS', (c) => c.shutdownGraceMs],
    ['GRAPHQL_MAX_ALIASES', (c) => c.maxAliases],
    ['RATE_LIMIT_POINTS', (c) => c.rateLimit?.keyedPoints],
    ['STATISTICS_MAX_AGE_MS', (c) => c.statisticsMaxAgeMs],
    ['WEBHOOK_TIMEOUT_MS', (c) => c.webhooks.timeoutMs],
    ['METADATA_TIMEOUT_MS', (c) => c.metadata.timeoutMs],
    ['CHAIN_POLL_MS', (c) => c.chains.pollMs],
  ];

  test('when a number is given in the environment passed, then the settings hold it whatever the process environment says', () => {
    const saved = { ...process.env };
    try {
      for (const [variable] of NUMBERS) process.env[variable] = '4242';
      const env = Object.fromEntries(NUMBERS.map(([variable], i) => [variable, String(5001 + i)]));
      const config = loadConfig(env);
      expect(NUMBERS.map(([variable, read]) => [variable, read(config)])).toEqual(NUMBERS.map(([variable], i) => [variable, 5001 + i]));
      // And nothing given: the defaults, not the process's values.
      const defaults = loadConfig({});
      expect(NUMBERS.filter(([, read]) => read(defaults) === 4242)).toEqual([]);
    } finally {
      process.env = saved;
    }
  });

  test('when a number in the environment passed is not one, then loading stops naming the variable', () => {
    expect(() => loadConfig({ DB_POOL_SIZE: 'ten' })).toThrow('DB_POOL_SIZE must be a non-negative integer, got "ten"');
    expect(() => loadConfig({ WEBHOOK_TIMEOUT_MS: '-1' })).toThrow('WEBHOOK_TIMEOUT_MS must be a non-negative integer, got "-1"');
  });
});
