import { HttpResult, TestServer, toResult } from '../setup/server';

/** The importable columns without `token_id` (the service mints the ids). */
export const CSV_COLUMNS = ['name', 'description', 'image_url', 'animation_url', 'external_link', 'metadata', 'owner'];

export type CsvRecord = Record<string, string>;

/** A cell as CSV writes it: quoted when it holds a comma, a quote or a line break. */
export function csvCell(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** A CSV file: the header row, then one line per record (missing cells are empty). */
export function buildCsv(records: CsvRecord[], options: { columns?: string[]; eol?: string } = {}): string {
  const columns = options.columns ?? CSV_COLUMNS;
  const eol = options.eol ?? '\n';
  const lines = [columns.join(','), ...records.map((r) => columns.map((c) => csvCell(r[c] ?? '')).join(','))];
  return lines.join(eol) + eol;
}

/** A valid row owned by `owner`; the n-th of a file when `n` is given. */
export function csvRecord(owner: string, overrides: CsvRecord = {}, n = 1): CsvRecord {
  return {
    name: `Imported ${n}`,
    description: `Row ${n} of an import`,
    image_url: `https://example.com/${n}.png`,
    animation_url: '',
    external_link: '',
    metadata: JSON.stringify({ attributes: [{ trait_type: 'row', value: n }] }),
    owner,
    ...overrides,
  };
}

/** `count` valid rows owned by `owner`. */
export function csvRecords(owner: string, count: number): CsvRecord[] {
  return Array.from({ length: count }, (_, i) => csvRecord(owner, {}, i + 1));
}


const authHeaders = (key?: string): Record<string, string> => (key ? { 'access-token': key } : {});

/** POST /v1/assets/import form-urlencoded, as interface.md documents it: `file` is the CSV text. */
export async function importFormUrlencoded(server: TestServer, collectionId: string, csv: string, key?: string): Promise<HttpResult> {
  const res = await fetch(`${server.url}/v1/assets/import`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...authHeaders(key) },
    body: new URLSearchParams({ collection_id: collectionId, file: csv }).toString(),
  });
  return toResult(res);
}

/** POST /v1/assets/import as multipart: a `collection_id` field and a `file` part. */
export async function importMultipart(server: TestServer, collectionId: string, file: string | Uint8Array, key?: string): Promise<HttpResult> {
  const form = new FormData();
  form.append('collection_id', collectionId);
  form.append('file', new Blob([file], { type: 'text/csv' }), 'assets.csv');
  const res = await fetch(`${server.url}/v1/assets/import`, { method: 'POST', headers: authHeaders(key), body: form });
  return toResult(res);
}

export const IMPORT_ASSETS = /* GraphQL */ `
  mutation ($collectionId: String!, $file: Upload!) {
    importAssets(collectionId: $collectionId, file: $file) { data { count firstTokenId lastTokenId } message }
  }`;

/** importAssets through a GraphQL multipart request (operations, map, file part). */
export async function importGraphql(
  server: TestServer,
  collectionId: string,
  file: string | Uint8Array,
  key?: string,
  options: { preflight?: boolean } = {},
): Promise<HttpResult> {
  const form = new FormData();
  form.append('operations', JSON.stringify({ query: IMPORT_ASSETS, variables: { collectionId, file: null } }));
  form.append('map', JSON.stringify({ 0: ['variables.file'] }));
  form.append('0', new Blob([file], { type: 'text/csv' }), 'assets.csv');
  const headers: Record<string, string> = { ...authHeaders(key) };
  if (options.preflight ?? true) headers['apollo-require-preflight'] = 'true';
  const res = await fetch(`${server.url}/graphql`, { method: 'POST', headers, body: form });
  return toResult(res);
}

/** The token ids of a collection's assets, ascending, read from the database. */
export async function tokenIdsOf(server: TestServer, collectionId: string): Promise<string[]> {
  const rows: { token_id: string }[] = await server.ds.query(
    'SELECT token_id::text AS token_id FROM assets a WHERE collection_id = $1 ORDER BY a.token_id',
    [collectionId],
  );
  return rows.map((r) => r.token_id);
}
