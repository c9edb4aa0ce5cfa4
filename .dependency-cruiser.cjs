/**
 * The layers of src/, one way only (README "Architecture"):
 *   main, tools -> app (HTTP, Apollo, REST) -> modules/<noun> -> common + db + config
 * and inside app/: entry (index.ts, entry/) -> rest -> graphql -> http (docs/architecture.md).
 * `npm run lint` runs this check; CI fails on a violation.
 */
module.exports = {
  forbidden: [
    {
      name: 'no-import-loop',
      comment: 'An import loop hides which layer leans on which; break it by moving the shared part down.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'nothing-imports-entry-points',
      comment: 'main.ts and the commands in tools/ start things; nothing builds on them.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(main\\.ts|tools/)' },
      to: { path: '^src/(main\\.ts|tools/)' },
    },
    {
      name: 'modules-do-not-import-app',
      comment: 'A module is reached by the app (HTTP, Apollo, the REST router); it never reaches up into it.',
      severity: 'error',
      from: { path: '^src/modules/' },
      to: { path: '^src/app/' },
    },
    {
      name: 'foundation-does-not-import-up',
      comment: 'common/ and config.ts (with config/) are the ground floor: they know no module and no app.',
      severity: 'error',
      from: { path: '^src/(common/|config\\.ts|config/)' },
      to: { path: '^src/(app|modules)/' },
    },
    {
      name: 'db-knows-only-entities',
      comment: 'The data source lists the entities of the modules (TypeORM needs them), and nothing else of theirs.',
      severity: 'error',
      from: { path: '^src/db/' },
      to: { path: '^src/(app/|modules/(?!.*\\.entity\\.ts$))' },
    },
    {
      name: 'app-http-knows-no-door',
      comment: 'app/http/ is what both doors share (CORS, metrics, rate limit, response writing): it knows neither GraphQL nor REST nor the entry.',
      severity: 'error',
      from: { path: '^src/app/http/' },
      to: { path: '^src/app/(graphql|rest|entry)/|^src/app/index\\.ts$' },
    },
    {
      name: 'app-graphql-knows-no-rest-or-entry',
      comment: 'REST is a caller of the GraphQL executor, and the entry a caller of both: app/graphql/ reaches neither.',
      severity: 'error',
      from: { path: '^src/app/graphql/' },
      to: { path: '^src/app/(rest|entry)/|^src/app/index\\.ts$' },
    },
    {
      name: 'app-rest-knows-no-entry',
      comment: 'The entry (app/entry/, app/index.ts) calls REST; REST does not reach back.',
      severity: 'error',
      from: { path: '^src/app/rest/' },
      to: { path: '^src/app/entry/|^src/app/index\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^(dist|node_modules)/' },
  },
};
