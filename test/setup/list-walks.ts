import type { TestServer } from './server';

/**
 * Every page of a REST list (`limit` items a page) by its cursor: the ids in order, and whether
 * each `remaining` was the rows after its page.
 */
export async function restWalk(server: TestServer, path: string, limit: number): Promise<{ ids: string[]; remainingExact: boolean }> {
  const pages: { ids: string[]; remaining: number }[] = [];
  let cursor: string | null = null;
  do {
    const res: { status: number; body: { result: { id: string }[]; remaining: number; cursor: string | null } } = await server.rest(
      'GET',
      `${path}&limit=${limit}${cursor ? `&page=${encodeURIComponent(cursor)}` : ''}`,
    );
    expect(res.status).toBe(200);
    pages.push({ ids: res.body.result.map((r) => r.id), remaining: res.body.remaining });
    cursor = res.body.cursor;
  } while (cursor);
  const ids = pages.flatMap((p) => p.ids);
  let seen = 0;
  return { ids, remainingExact: pages.every((p) => (seen += p.ids.length) + p.remaining === ids.length) };
}

/**
 * Every page of a GraphQL connection (its field aliased `list`, with `totalCount`, the edges' node ids and
 * `pageInfo`, taking `$after`) by its cursor: the ids in order, and each page's totalCount.
 */
export async function connectionWalk(server: TestServer, query: string, variables: Record<string, unknown>): Promise<{ ids: string[]; totals: number[] }> {
  const ids: string[] = [];
  const totals: number[] = [];
  let after: string | undefined;
  for (;;) {
    const res = await server.gql(query, { ...variables, after });
    expect(res.body.errors).toBeUndefined();
    const page = res.body.data.list;
    ids.push(...page.edges.map((e: { node: { id: string } }) => e.node.id));
    totals.push(page.totalCount);
    if (!page.pageInfo.hasNextPage) return { ids, totals };
    after = page.pageInfo.endCursor;
  }
}
