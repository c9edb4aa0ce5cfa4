import { ArgsType, Extensions, Field, ID, Int, ObjectType } from 'type-graphql';
import type { LimitRange } from '../../common/pagination';
import { Edge, edgesOf, edgeType, PageConnection, PageInfo, pageInfoOf, totalCountOf } from '../../common/connection';
import { GraphQLJSONObject } from 'graphql-scalars';
import { DECIMAL_TWINS } from '../../common/decimal';
import { Node } from '../../common/graphql/node';

export const MAX_EVENTS = 1000;
const EVENT_LIMIT_RANGE: LimitRange = { min: 1, max: MAX_EVENTS };

/** One state change, at its position in the log's single order. */
@ObjectType({ simpleResolvers: true, implements: Node })
export class MarketEvent {
  @Field(() => ID, { description: 'The position in the log: every event after a position has a higher one, in commit order' })
  position: string;

  @Field(() => String, { description: 'e.g. listing.created, offer.accepted, asset.transferred, order.completed' })
  type: string;

  @Field(() => Date)
  occurredAt: Date;

  @Field(() => String, { nullable: true })
  chainId: string | null;

  @Field(() => ID, { nullable: true })
  collectionId: string | null;

  @Field(() => ID, { nullable: true })
  assetId: string | null;

  @Field(() => GraphQLJSONObject, {
    description:
      'The changed resource as stored when the change committed (snake_case columns), its values as the API writes them: ' +
      'ISO timestamps, token ids as strings, each price a number (a double) with its exact twin `<name>_decimal`',
  })
  @Extensions({ [DECIMAL_TWINS]: true })
  data: Record<string, unknown>;
}

const MarketEventEdge = edgeType(MarketEvent);

@ObjectType({ simpleResolvers: true })
export class EventFeed {
  @Field(() => [MarketEvent])
  result: MarketEvent[];

  @Field(() => ID, { description: 'Pass as `after` to read on: the position of the last event returned (or of the given `after`)' })
  cursor: string;

  @Field(() => Boolean, { description: 'More events follow now; read again with `after: cursor`' })
  hasMore: boolean;

  /** Each event's cursor is its position, a value of `after`. */
  declare connection?: PageConnection;

  @Field(() => [MarketEventEdge], { description: 'The events (`result`), each with its position as its cursor' })
  get edges(): Edge<MarketEvent>[] {
    return edgesOf(this.result, this.connection);
  }

  @Field(() => PageInfo, { description: 'endCursor: the last event\'s position (null when none came: read on with the same `after`)' })
  get pageInfo(): PageInfo {
    return pageInfoOf(this.result.length, this.hasMore, this.connection);
  }

  @Field(() => Int, { description: 'How many events match the filters, before and after this read' })
  get totalCount(): number {
    return totalCountOf(this.result.length, 0, this.connection);
  }
}

/** The filters of the feed, the same for the query and the subscription. */
@ArgsType()
export class EventFilterArgs {
  @Field(() => [String], { nullable: true, description: 'Only these types' })
  types?: string[] | null;

  @Field(() => String, { nullable: true, description: 'Only events of this collection (its id or contract address)' })
  collectionId?: string | null;

  @Field(() => ID, { nullable: true, description: 'Only events of this asset' })
  assetId?: string | null;
}

@ArgsType()
export class EventArgs extends EventFilterArgs {
  @Field(() => ID, {
    nullable: true,
    description:
      'Read the events after this position (an event\'s position or id, or a cursor); from the start when absent; beyond the head of the log: BAD_REQUEST',
  })
  after?: string | null;

  @Field(() => Int, { defaultValue: 100, description: `Events per read, 1 to ${MAX_EVENTS}` })
  @Extensions({ limitRange: EVENT_LIMIT_RANGE })
  limit: number;

  @Field(() => Int, { nullable: true, description: `As \`limit\` (1 to ${MAX_EVENTS}), for Relay's connection; not with \`limit\`` })
  @Extensions({ limitRange: EVENT_LIMIT_RANGE })
  first?: number | null;

  /** Not an argument: the read counts every event matching the filters (`totalCount` is selected). */
  countTotal?: boolean;
}

@ArgsType()
export class EventSubscriptionArgs extends EventFilterArgs {
  @Field(() => ID, {
    nullable: true,
    description:
      'Replay the stored events after this position (an event\'s position or id), then go on live; when absent, only events committed from now on; ' +
      'beyond the head of the log: BAD_REQUEST',
  })
  after?: string | null;
}
