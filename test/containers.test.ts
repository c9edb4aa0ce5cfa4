import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * The Dockerfile and compose.yaml cannot be built on the machines that run these tests (no Docker
 * engine): what can be checked is that they stay true to the code: the settings they set are ones the
 * service reads, and the image runs as it should.
 */
const root = path.resolve(__dirname, '..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? sourceFiles(full) : full.endsWith('.ts') ? [full] : [];
  });
}

/** Every environment variable the service reads (config.ts reads them all; a few commands read their own). */
function settingsTheCodeReads(): Set<string> {
  const names = new Set<string>();
  for (const file of sourceFiles(path.join(root, 'src'))) {
    for (const m of readFileSync(file, 'utf8').matchAll(/\benv\.([A-Z][A-Z0-9_]+)|FromEnv\('([A-Z][A-Z0-9_]+)'/g)) names.add(m[1] ?? m[2]);
  }
  return names;
}

/** The `environment:` keys of one compose service (the file's plain two-space YAML). */
function composeEnvironment(service: string): string[] {
  const lines = read('compose.yaml').split('\n');
  const start = lines.indexOf(`  ${service}:`);
  expect(start).toBeGreaterThan(-1);
  const names: string[] = [];
  let inEnvironment = false;
  for (const line of lines.slice(start + 1)) {
    if (/^ {2}\S/.test(line) || /^\S/.test(line)) break;
    if (/^ {4}\S/.test(line)) inEnvironment = line.trim() === 'environment:';
    else if (inEnvironment) {
      const m = /^ {6}([A-Z][A-Z0-9_]*):/.exec(line);
      if (m) names.push(m[1]);
    }
  }
  return names;
}

test('when compose.yaml sets the gateway\'s environment, then every name is a setting the service reads', () => {
  const known = settingsTheCodeReads();
  const names = composeEnvironment('gateway');

  expect(names).toContain('DATABASE_URL');
  expect(names.filter((n) => !known.has(n))).toEqual([]);
});

test('when the Dockerfile is read, then it builds in stages, installs production packages only, runs as non-root and checks /readyz', () => {
  const dockerfile = read('Dockerfile');
  const known = settingsTheCodeReads();

  expect(dockerfile.match(/^FROM /gm)?.length).toBeGreaterThanOrEqual(2);
  expect(dockerfile).toMatch(/npm ci --omit=dev/);
  expect(dockerfile).toMatch(/^USER node$/m);
  expect(dockerfile).toMatch(/^HEALTHCHECK [\s\S]*\/readyz/m);
  expect(dockerfile).toMatch(/^CMD \["node", .*"dist\/src\/main\.js"\]$/m);
  const envNames = [...dockerfile.matchAll(/^ENV (.*)$/gm)].flatMap((m) => [...m[1].matchAll(/([A-Z_]+)=/g)].map((n) => n[1]));
  expect(envNames.filter((n) => n !== 'NODE_ENV' && !known.has(n))).toEqual([]);
});

test('when the Dockerfile and CI are read, then the image and the extra test runs are Node LTS lines that package.json engines names', () => {
  const engines: string = JSON.parse(read('package.json')).engines.node;
  const named = [...engines.matchAll(/\^(\d+)\./g)].map((m) => Number(m[1]));
  const images = [...read('Dockerfile').matchAll(/^FROM node:(\d+)-bookworm-slim/gm)].map((m) => Number(m[1]));
  expect(images).toHaveLength(2);
  const ciLines = read('.ci/run').match(/^LTS_NODES=\$\{LTS_NODES:-([\d ]+)\}$/m)?.[1].split(' ').map(Number);
  expect(ciLines).toEqual([24, 26]);
  // Each line is even (LTS) and from 24 on (Node 20 ended on 2026-04-30; it stays named only as the machine's Node CI also runs).
  for (const major of [...images, ...ciLines!]) {
    expect(named).toContain(major);
    expect(major % 2 === 0 && major >= 24).toBe(true);
  }
});
