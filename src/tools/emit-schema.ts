import 'reflect-metadata';
import fs from 'node:fs';
import path from 'node:path';
import { buildAppSchema, schemaSdl } from '../app/graphql/schema';

/** Writes schema.graphql at the project root from the TypeGraphQL schema (`npm run schema`). */
async function main(): Promise<void> {
  const target = path.resolve(__dirname, '../../../schema.graphql');
  fs.writeFileSync(target, schemaSdl(await buildAppSchema()));
  process.stdout.write(`wrote ${target}\n`);
}

void main();
