import { Field, ObjectType } from 'type-graphql';
import type { ClassType } from 'type-graphql';

/**
 * Relay's connection shape beside the page envelope: every list answers `edges { cursor node }`,
 * `pageInfo` and `totalCount` as well as `{ cursor remaining result }`, from the same page.
 */

/** What a page knows to answer as a connection; the lists set it (list-page.ts toPage, the event feed). */
export interface PageConnection {
  /** The cursor of the item at this index of `result`: given as `after`, the list continues right after that item. */
  cursorAt(index: number): string;
  /** The page starts after some item (it was asked for with a cursor or a page number past the first). */
  hasPrevious: boolean;
  /** Every item matching the list's filters, whatever the position; counted only when `totalCount` is asked. */
  total?: number;
}

@ObjectType({ simpleResolvers: true, description: "Relay's page information of a connection" })
export class PageInfo {
  @Field(() => Boolean, { description: 'More items follow this page (the envelope\'s `remaining` > 0)' })
  hasNextPage: boolean;

  @Field(() => Boolean, { description: 'The page starts after some item: it was asked for with `after`, or `page` past the first' })
  hasPreviousPage: boolean;

  @Field(() => String, { nullable: true, description: "The first edge's cursor; null when the page is empty" })
  startCursor: string | null;

  @Field(() => String, { nullable: true, description: "The last edge's cursor (pass it as `after` to read on); null when the page is empty" })
  endCursor: string | null;
}

export interface Edge<T> {
  cursor: string;
  node: T;
}

const edgeTypes = new Map<ClassType, ClassType>();

/** The edge type of an item type (`AssetEdge`), one per item type however many lists return it. */
export function edgeType<T extends object>(itemType: ClassType<T>): ClassType<Edge<T>> {
  let edge = edgeTypes.get(itemType);
  if (!edge) {
    @ObjectType(`${itemType.name}Edge`, { simpleResolvers: true })
    class EdgeClass implements Edge<T> {
      @Field(() => String, { description: 'This item\'s position: pass it as `after` to get the items right after it' })
      cursor: string;

      @Field(() => itemType)
      node: T;
    }
    edgeTypes.set(itemType, (edge = EdgeClass));
  }
  return edge as ClassType<Edge<T>>;
}

/**
 * A list made whole, without paging arguments (a page no list query made): each item's cursor is its
 * index in it, and no item comes before the first.
 */
const WHOLE_LIST: PageConnection = { cursorAt: (index) => String(index), hasPrevious: false };

export function edgesOf<T>(items: readonly T[], connection: PageConnection | undefined): Edge<T>[] {
  const c = connection ?? WHOLE_LIST;
  return items.map((node, index) => ({ cursor: c.cursorAt(index), node }));
}

export function pageInfoOf(count: number, hasNextPage: boolean, connection: PageConnection | undefined): PageInfo {
  const c = connection ?? WHOLE_LIST;
  return {
    hasNextPage,
    hasPreviousPage: c.hasPrevious,
    startCursor: count ? c.cursorAt(0) : null,
    endCursor: count ? c.cursorAt(count - 1) : null,
  };
}

/** `totalCount`: counted with the page when it is asked (see pagination.ts remainingSelected); a whole list counts itself. */
export function totalCountOf(count: number, remaining: number, connection: PageConnection | undefined): number {
  if (!connection) return count + remaining;
  if (connection.total === undefined) throw new Error('totalCount was selected but the list did not count it (countRemaining must be remainingSelected(info))');
  return connection.total;
}
