import fs from 'node:fs';
import path from 'node:path';
import { buildAppSchema, schemaSdl } from '../src/app/graphql/schema';

test('when the GraphQL schema changes, then schema.graphql is regenerated (npm run schema) and committed', async () => {
  const committed = fs.readFileSync(path.join(__dirname, '..', 'schema.graphql'), 'utf8');
  expect(schemaSdl(await buildAppSchema())).toBe(committed);
});
