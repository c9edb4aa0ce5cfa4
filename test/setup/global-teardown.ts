export default async function globalTeardown(): Promise<void> {
  const g = globalThis as unknown as Record<string, () => Promise<void>>;
  if (g.__dropTestDatabase) await g.__dropTestDatabase();
}
