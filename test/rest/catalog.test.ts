import { HttpResult, startServer, TestServer } from '../setup/server';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

interface CatalogItem {
  category_id: string;
  category_name: string;
}
interface CatalogPage {
  cursor: string | null;
  remaining: number;
  result: CatalogItem[];
}

// Seeded by the initial migration: fixed lists, so whole-list assertions are safe.
const CATEGORY_NAMES = [
  'Art', 'Collectibles', 'Domain Names', 'Gaming', 'Memberships', 'Music', 'Photography', 'PFPs', 'Sports', 'Virtual Worlds',
];
const TAG_NAMES = ['3D', 'AI', 'Animated', 'Generative', 'Metaverse', 'On-chain', 'Pixel Art', 'Rare', 'Utility'];

/** The order PostgreSQL gives `ORDER BY name` in the database's collation, read back for comparison. */
async function sortedInDatabase(table: 'categories' | 'tags', direction: 'ASC' | 'DESC'): Promise<string[]> {
  const rows: { name: string }[] = await server.ds.query(`SELECT name FROM "${table}" ORDER BY name ${direction}, id ${direction}`);
  return rows.map((r) => r.name);
}

/** Follows `cursor` from the first page to the last and returns every page. */
async function allPages(path: string, query: string): Promise<CatalogPage[]> {
  const pages: CatalogPage[] = [];
  let page: string | null = null;
  do {
    const res: HttpResult<CatalogPage> = await server.rest<CatalogPage>('GET', `${path}?${query}${page ? `&page=${encodeURIComponent(page)}` : ''}`);
    expect(res.status).toBe(200);
    pages.push(res.body);
    page = res.body.cursor;
  } while (page && pages.length < 20);
  return pages;
}

describe.each([
  ['/v1/categories', 'categories', CATEGORY_NAMES],
  ['/v1/tags', 'tags', TAG_NAMES],
] as const)('GET %s', (path, table, names) => {
  test('when listed without parameters, then the page envelope holds every item with the documented field names', async () => {
    const res = await server.rest<CatalogPage>('GET', path);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Object.keys(res.body).sort()).toEqual(['cursor', 'remaining', 'result']);
    expect(res.body.cursor).toBeNull();
    expect(res.body.remaining).toBe(0);
    expect(res.body.result).toHaveLength(names.length);
    for (const item of res.body.result) {
      expect(Object.keys(item).sort()).toEqual(['category_id', 'category_name']);
      expect(typeof item.category_id).toBe('string');
      expect(typeof item.category_name).toBe('string');
    }
    expect(res.body.result.map((i) => i.category_name).sort()).toEqual([...names].sort());
  });

  test('when ordered by name ascending, then the items come in ascending name order', async () => {
    const res = await server.rest<CatalogPage>('GET', `${path}?order_by=name&direction=asc`);
    expect(res.status).toBe(200);
    expect(res.body.result.map((i) => i.category_name)).toEqual(await sortedInDatabase(table, 'ASC'));
  });

  test('when ordered by name descending, then the items come in descending name order', async () => {
    const res = await server.rest<CatalogPage>('GET', `${path}?order_by=name&direction=desc`);
    expect(res.status).toBe(200);
    expect(res.body.result.map((i) => i.category_name)).toEqual(await sortedInDatabase(table, 'DESC'));
  });

  test('when paged by cursor with limit 3, then every item is seen once, in order, and the last page has a null cursor', async () => {
    const pages = await allPages(path, 'order_by=name&direction=asc&limit=3');
    expect(pages.length).toBe(Math.ceil(names.length / 3));
    pages.forEach((page, i) => {
      const seenAfter = pages.slice(0, i + 1).reduce((n, p) => n + p.result.length, 0);
      expect(page.remaining).toBe(names.length - seenAfter);
      expect(page.result.length).toBeLessThanOrEqual(3);
    });
    expect(pages[pages.length - 1].cursor).toBeNull();
    expect(pages[pages.length - 1].remaining).toBe(0);
    expect(pages.flatMap((p) => p.result.map((i) => i.category_name))).toEqual(await sortedInDatabase(table, 'ASC'));
  });

  test('when paged by page number descending, then the pages join up to the whole list', async () => {
    const first = await server.rest<CatalogPage>('GET', `${path}?order_by=name&direction=desc&limit=4&page=1`);
    const second = await server.rest<CatalogPage>('GET', `${path}?order_by=name&direction=desc&limit=4&page=2`);
    const third = await server.rest<CatalogPage>('GET', `${path}?order_by=name&direction=desc&limit=4&page=3`);
    expect([first.status, second.status, third.status]).toEqual([200, 200, 200]);
    expect(first.body.remaining).toBe(names.length - 4);
    expect(third.body.remaining).toBe(0);
    expect(third.body.cursor).toBeNull();
    const joined = [first, second, third].flatMap((r) => r.body.result.map((i) => i.category_name));
    expect(joined).toEqual(await sortedInDatabase(table, 'DESC'));
  });

  test('when the cursor of a page is passed as page, then the next page starts right after it', async () => {
    const first = await server.rest<CatalogPage>('GET', `${path}?order_by=name&direction=asc&limit=2`);
    expect(first.body.cursor).toEqual(expect.any(String));
    const next = await server.rest<CatalogPage>(
      'GET',
      `${path}?order_by=name&direction=asc&limit=2&page=${encodeURIComponent(first.body.cursor!)}`,
    );
    const byPageNumber = await server.rest<CatalogPage>('GET', `${path}?order_by=name&direction=asc&limit=2&page=2`);
    expect(next.status).toBe(200);
    expect(next.body.result).toEqual(byPageNumber.body.result);
    expect(next.body.remaining).toBe(names.length - 4);
  });

  test('when order_by is not name, then a 400 lists the allowed value', async () => {
    const res = await server.rest('GET', `${path}?order_by=created_at`);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('BAD_REQUEST');
    expect(res.body.error.message).toContain('order_by');
    expect(res.body.error.message).toContain('name');
  });
});
