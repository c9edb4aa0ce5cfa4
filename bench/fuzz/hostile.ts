import fc from 'fast-check';

/** Strings meant to break things: PostgreSQL's unstorable text, numbers in text, long and odd strings. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('\u0000', 'a\u0000b', '\ud800', 'x\udfff', '1e309', 'NaN', '-1', 'Infinity', '', ' ', "'; DROP TABLE assets; --", '%', '\\', '0x', '0x' + 'f'.repeat(40), '99999999999999999999999999999999999999999999999999999999999999999999999999999999', '00000000-0000-0000-0000-000000000000', '2026-13-45T99:99:99Z', 'x'.repeat(3000)),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ maxLength: 10 }),
);

