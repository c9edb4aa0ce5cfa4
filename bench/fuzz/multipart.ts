import fc from 'fast-check';
import { MAX_IMPORT_BYTES } from '../../src/modules/import/csv-rows';
import { badlyQuotedCsv, hostileString } from './hostile';
import type { FuzzRequest } from './properties';

/**
 * Hostile multipart bodies for the two upload doors: the REST CSV import (`POST /v1/assets/import`, the
 * route table's `upload` routes) and the GraphQL multipart request (`operations`, `map`, files) of
 * `importAssets`. Each case is a well-formed request broken in one or more ways: the declared boundary
 * differs from the one used or is missing, parts are dropped, repeated or reordered, field names are
 * huge, `operations`/`map` are not the JSON they must be, the file is binary garbage or over the size
 * limit, the body is cut short.
 */

interface Part {
  name: string;
  filename?: string;
  contentType?: string;
  data: Buffer;
  /** A part without its Content-Disposition header. */
  bare?: boolean;
}

const CRLF = '\r\n';

function encode(boundary: string, parts: Part[], closing: boolean): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    let head = `--${boundary}${CRLF}`;
    if (!part.bare) head += `Content-Disposition: form-data; name="${part.name}"${part.filename === undefined ? '' : `; filename="${part.filename}"`}${CRLF}`;
    if (part.contentType) head += `Content-Type: ${part.contentType}${CRLF}`;
    chunks.push(Buffer.from(`${head}${CRLF}`, 'utf8'), part.data, Buffer.from(CRLF));
  }
  if (closing) chunks.push(Buffer.from(`--${boundary}--${CRLF}`));
  return Buffer.concat(chunks);
}

const text = (s: string) => Buffer.from(s, 'utf8');

/** A valid CSV of the import's columns, one row. */
const GOOD_CSV = 'name,description,image_url,token_id\nfuzz,a fuzzed asset,https://example.com/a.png,1\n';

/** File contents: a good CSV, CSVs with hostile cells or broken quoting, binary garbage, nothing, or over the size limit. */
const fileData: fc.Arbitrary<Buffer> = fc.oneof(
  { weight: 3, arbitrary: fc.constant(text(GOOD_CSV)) },
  { weight: 4, arbitrary: badlyQuotedCsv.map(text) },
  { weight: 3, arbitrary: fc.array(hostileString, { minLength: 1, maxLength: 8 }).map((cells) => text(`name,description,token_id,metadata\n${cells.join(',')}\n`)) },
  { weight: 3, arbitrary: fc.uint8Array({ maxLength: 2048 }).map((bytes) => Buffer.from(bytes)) },
  { weight: 1, arbitrary: fc.constantFrom(Buffer.alloc(0), text('\ufeff'), text('name\n'), Buffer.from([0xed, 0xa0, 0x80, 0x2c, 0x00])) },
  { weight: 1, arbitrary: fc.constant(Buffer.alloc(MAX_IMPORT_BYTES + 10, 'a')) },
);

const fieldName: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('x'.repeat(100_000), 'y'.repeat(5_000), '', '"', 'a"b', '\u0000', 'file\r\nX-Injected: 1', '0', '1'),
  fc.string({ maxLength: 20 }),
);

/** The parts of a correct request, then broken: some dropped, one repeated, extra parts with odd names, shuffled. */
function brokenParts(correct: fc.Arbitrary<Part[]>): fc.Arbitrary<Part[]> {
  const extra: fc.Arbitrary<Part> = fc.record({
    name: fieldName,
    filename: fc.option(fc.constantFrom('a.csv', '', '../../etc/passwd', 'x'.repeat(5000)), { nil: undefined }),
    contentType: fc.option(fc.constantFrom('text/csv', 'application/octet-stream', '\u0000', 'multipart/mixed; boundary=zz'), { nil: undefined }),
    data: fc.oneof(fc.constant(text('x')), fileData),
    bare: fc.boolean(),
  });
  return fc
    .record({
      parts: correct,
      keep: fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }),
      repeat: fc.option(fc.nat(3), { nil: undefined }),
      extras: fc.array(extra, { maxLength: 2 }),
      order: fc.array(fc.nat(), { maxLength: 6 }),
      untouched: fc.boolean(),
    })
    .map(({ parts, keep, repeat, extras, order, untouched }) => {
      if (untouched) return parts;
      let out = parts.filter((_, i) => keep[i] !== false || i >= keep.length);
      if (repeat !== undefined && parts[repeat]) out.push(parts[repeat]);
      out = [...out, ...extras];
      // A few swaps, so that a file may come before the fields that describe it.
      for (const n of order) if (out.length > 1) [out[n % out.length], out[0]] = [out[0], out[n % out.length]];
      return out;
    });
}

/** The Content-Type header and the body's boundary: mostly agreeing, sometimes not. */
const framing = fc.record({
  used: fc.oneof({ weight: 5, arbitrary: fc.constant('----fuzzBoundary7MA4YWxk') }, { weight: 1, arbitrary: fc.constantFrom('x'.repeat(71), 'a b', '"q"', '') }),
  declared: fc.oneof(
    { weight: 6, arbitrary: fc.constant<'same'>('same') },
    { weight: 1, arbitrary: fc.constantFrom('multipart/form-data', 'multipart/form-data; boundary=', 'multipart/form-data; boundary=other', 'multipart/form-data; boundary="unclosed', 'multipart/mixed; boundary=----fuzzBoundary7MA4YWxk', 'text/plain', 'application/json', 'application/x-www-form-urlencoded') },
  ),
  closing: fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  cut: fc.oneof({ weight: 6, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.double({ min: 0, max: 1, noNaN: true }) }),
  garbage: fc.oneof({ weight: 12, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.uint8Array({ maxLength: 4096 }).map((b) => Buffer.from(b)) }),
});

function request(label: string, path: string, parts: fc.Arbitrary<Part[]>, headers: fc.Arbitrary<Record<string, string>>): fc.Arbitrary<FuzzRequest> {
  return fc.record({ parts: brokenParts(parts), framing, headers }).map(({ parts, framing: f, headers: extra }) => {
    let raw = f.garbage ?? encode(f.used, parts, f.closing);
    if (f.cut !== undefined) raw = raw.subarray(0, Math.floor(raw.length * f.cut));
    const contentType = f.declared === 'same' ? `multipart/form-data; boundary=${f.used}` : f.declared;
    return { label, method: 'POST', path, raw, headers: { ...extra, 'content-type': contentType } };
  });
}

/** The collection to import into: one of the fuzzer's own (a real import), or hostile text. */
function collectionIds(own: string[]): fc.Arbitrary<string> {
  return own.length ? fc.oneof(fc.constantFrom(...own), hostileString) : hostileString;
}

/** REST import (multipart) per upload route: its fields and its file part; sometimes form-urlencoded instead. */
export function restUploadCase(label: string, path: string, fileField: string, own: string[]): fc.Arbitrary<FuzzRequest> {
  const parts = fc.record({ id: collectionIds(own), file: fileData, filename: fc.constantFrom('assets.csv', '', 'a\u0000.csv') }).map(({ id, file, filename }): Part[] => [
    { name: 'collection_id', data: text(id) },
    { name: fileField, filename, contentType: 'text/csv', data: file },
  ]);
  const urlencoded = fc.record({ id: collectionIds(own), csv: fc.oneof(fc.constant(GOOD_CSV), badlyQuotedCsv, hostileString), other: fc.dictionary(fieldName, hostileString, { maxKeys: 2 }) }).map(
    ({ id, csv, other }): FuzzRequest => ({
      label,
      method: 'POST',
      path,
      raw: text(new URLSearchParams({ ...other, collection_id: id, [fileField]: csv }).toString()),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    }),
  );
  return fc.oneof({ weight: 5, arbitrary: request(label, path, parts, fc.constant({})) }, { weight: 1, arbitrary: urlencoded });
}

const IMPORT = 'mutation ($c: String!, $file: Upload!) { importAssets(collectionId: $c, file: $file) { data { count } message } }';

/** GraphQL multipart request (graphql-multipart-request-spec) of importAssets, with broken operations and map. */
export function graphqlUploadCase(label: string, own: string[]): fc.Arbitrary<FuzzRequest> {
  const operations = fc.oneof(
    { weight: 4, arbitrary: collectionIds(own).map((c) => JSON.stringify({ query: IMPORT, variables: { c, file: null } })) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        'not json',
        '',
        '[]',
        '{}',
        'null',
        JSON.stringify([{ query: IMPORT, variables: { c: 'x', file: null } }]),
        JSON.stringify({ query: 1, variables: { file: null } }),
        JSON.stringify({ query: IMPORT, variables: 'file' }),
        JSON.stringify({ query: IMPORT, variables: { c: 'x', file: { nested: null } } }),
        JSON.stringify({ query: '{ chains { id } }', variables: { file: null } }),
        '{"query": "mutation {',
      ),
    },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)) },
  );
  const map = fc.oneof(
    { weight: 4, arbitrary: fc.constant(JSON.stringify({ 0: ['variables.file'] })) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        'not json',
        '',
        '[]',
        'null',
        JSON.stringify({ 0: 'variables.file' }),
        JSON.stringify({ 0: ['variables.nope.deeper'] }),
        JSON.stringify({ 0: ['variables'] }),
        JSON.stringify({ 0: ['__proto__.polluted'] }),
        JSON.stringify({ 1: ['variables.file'] }),
        JSON.stringify({ 0: ['variables.file'], 1: ['variables.file'] }),
        JSON.stringify({ 0: [] }),
        JSON.stringify({ ['x'.repeat(10_000)]: ['variables.file'] }),
      ),
    },
  );
  const parts = fc.record({ operations, map, file: fileData, fileName: fc.constantFrom('0', '0', '1', 'x'.repeat(2000)) }).map(({ operations: o, map: m, file, fileName }): Part[] => [
    { name: 'operations', data: text(o) },
    { name: 'map', data: text(m) },
    { name: fileName, filename: 'assets.csv', contentType: 'text/csv', data: file },
  ]);
  // Apollo's CSRF prevention wants this header on multipart requests; sometimes it is missing.
  const headers = fc.oneof({ weight: 5, arbitrary: fc.constant({ 'apollo-require-preflight': 'true' }) }, { weight: 1, arbitrary: fc.constant({}) });
  return request(label, '/graphql', parts, headers);
}
