import fc from 'fast-check';

/** Strings meant to break things: PostgreSQL's unstorable text, numbers in text, long and odd strings. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('\u0000', 'a\u0000b', '\ud800', 'x\udfff', '1e309', 'NaN', '-1', 'Infinity', '', ' ', "'; DROP TABLE assets; --", '%', '\\', '0x', '0x' + 'f'.repeat(40), '99999999999999999999999999999999999999999999999999999999999999999999999999999999', '00000000-0000-0000-0000-000000000000', '2026-13-45T99:99:99Z', 'x'.repeat(3000), 'a"b', '"'),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ maxLength: 10 }),
);

/** An ISO timestamp as the cursors spell it, of any day number: 30 February, year 0000, month 13. */
const anyTimestamp: fc.Arbitrary<string> = fc
  .tuple(fc.integer({ min: 0, max: 9999 }), fc.integer({ min: 0, max: 13 }), fc.integer({ min: 0, max: 32 }), fc.integer({ min: 0, max: 25 }))
  .map(([y, m, d, h]) => `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}T${String(h).padStart(2, '0')}:00:00.000Z`);

/** A sort value a forged cursor may carry: of the wrong type, out of PostgreSQL's range, or not storable. */
const cursorValue: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom('a\u0000b', 'x\ud800', 9999999999, '9999999999', 2 ** 31, -(2 ** 31) - 1, '0000-01-01T00:00:00.000Z', '2024-02-30T00:00:00.000Z', '+275760-09-13T00:00:00.000Z', '1e400', 'NaN', '1'.repeat(100), null, true, {}, [], 1.5),
  },
  { weight: 2, arbitrary: anyTimestamp },
  { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.double(), hostileString) },
);

const cursorId: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom('00000000-0000-4000-8000-000000000000', 'a\u0000', '\u0000', '1', '99999999999999999999', '', 1, null),
  fc.uuid(),
  hostileString,
);

/**
 * `order_by`, `direction` and a `page` cursor that agree on the ordering (so the cursor gets past that
 * check) and carry a forged sort value or id. `orderBys`: the route's order_by values; none when the
 * route has no order_by (the cursor then names one of the orderings such lists use).
 */
export function forgedCursorQuery(orderBys: string[]): fc.Arbitrary<Record<string, string>> {
  return fc
    .record({
      orderBy: fc.constantFrom(...(orderBys.length ? orderBys : ['created_at', 'position', 'name'])),
      direction: fc.constantFrom('asc', 'desc'),
      value: cursorValue,
      id: cursorId,
    })
    .map(({ orderBy, direction, value, id }) => ({
      ...(orderBys.length ? { order_by: orderBy } : {}),
      direction,
      page: Buffer.from(JSON.stringify([orderBy, direction, value, id])).toString('base64url'),
    }));
}

/** A CSV of the import's columns whose cells break the quoting rules: `a"b`, `"a"b`, a quote never closed. */
export const badlyQuotedCsv: fc.Arbitrary<string> = fc
  .array(fc.array(fc.oneof(fc.constantFrom('a"b', '"a"b', '"open', '"', 'x""y', '"ok"', '"two\nlines"', '" "x'), fc.string({ maxLength: 6 })), { minLength: 4, maxLength: 4 }), { minLength: 0, maxLength: 3 })
  .chain((rows) => fc.constantFrom('name,description,image_url,owner', 'na"me,description,image_url,owner').map((header) => [header, ...rows.map((cells) => cells.join(','))].join('\n') + '\n'));

/** Internal IPv4 networks, by their first octets and length. */
const INTERNAL_V4: [number[], number][] = [
  [[0], 8],
  [[10], 8],
  [[100, 64], 10],
  [[127], 8],
  [[169, 254], 16],
  [[172, 16], 12],
  [[192, 168], 16],
];

const hex = (n: number) => n.toString(16);

/**
 * A webhook URL that points inward by construction, with why: an IPv6 form that carries an internal IPv4
 * (IPv4-compatible, -mapped, -translated, NAT64, local-use NAT64, 6to4, Teredo), the IPv4 itself in
 * another spelling, or IPv6 outside global unicast.
 */
export const internalWebhookTarget: fc.Arbitrary<{ url: string; why: string }> = fc.oneof(
  fc
    .record({ net: fc.constantFrom(...INTERNAL_V4), host: fc.nat(), form: fc.nat(10), port: fc.constantFrom('', ':80', ':8080') })
    .map(({ net: [start, bits], host, form, port }) => {
      const base = ((start[0] << 24) | ((start[1] ?? 0) << 16)) >>> 0;
      const address = (base | (host & (2 ** (32 - bits) - 1))) >>> 0;
      const octets = [address >>> 24, (address >>> 16) & 255, (address >>> 8) & 255, address & 255];
      const v4 = octets.join('.');
      const [hi, lo] = [hex(address >>> 16), hex(address & 0xffff)];
      const forms: [string, string][] = [
        [`[::${v4}]`, 'IPv4-compatible'],
        [`[::${hi}:${lo}]`, 'IPv4-compatible, in hex'],
        [`[::ffff:${v4}]`, 'IPv4-mapped'],
        [`[::ffff:0:${v4}]`, 'IPv4-translated'],
        [`[64:ff9b::${v4}]`, 'NAT64'],
        [`[64:ff9b::${hi}:${lo}]`, 'NAT64, in hex'],
        [`[64:ff9b:1::${v4}]`, 'local-use NAT64'],
        [`[2002:${hi}:${lo}::1]`, '6to4'],
        [`[2001:0:${hi}:${lo}::1]`, 'Teredo server'],
        [`[2001:0:808:808::${hex((~address >>> 16) & 0xffff)}:${hex(~address & 0xffff)}]`, 'Teredo client'],
        [`0x${address.toString(16)}`, 'IPv4 as one hex number'],
      ];
      const [host6, why] = forms[form % forms.length];
      return { url: `http://${host6}${port}/hook`, why: `${why} of ${v4}` };
    }),
  fc.constantFrom<[string, string]>(['[fec0::1]', 'site-local'], ['[fc00::1]', 'unique local'], ['[fe80::1]', 'link-local'], ['[::]', 'unspecified'], ['[::1]', 'loopback'], ['[ff02::1]', 'multicast'], ['[100::1]', 'discard-only'], ['[2001:db8::1]', 'documentation']).map(([host, why]) => ({ url: `https://${host}/hook`, why })),
);
