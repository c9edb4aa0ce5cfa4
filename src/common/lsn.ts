/** A PostgreSQL WAL position ("16/B374D848") as a number, to compare; undefined when `text` is not one. */
export function parseLsn(text: string): bigint | undefined {
  const match = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(text.trim());
  return match ? (BigInt(`0x${match[1]}`) << 32n) + BigInt(`0x${match[2]}`) : undefined;
}
