import { Args, Ctx, FieldResolver, ID, Info, Query, Resolver, Root, Subscription } from 'type-graphql';
import type { GraphQLResolveInfo } from 'graphql';
import { selectedFields } from '../../common/graphql/selection';
import { Parent } from '../../common/graphql/parent';
import { nodeId } from '../../common/graphql/node';
import type { Context } from '../../common/request/context';
import { BadRequestError } from '../../common/errors';
import { rootDataSource } from '../../common/request/scope';
import { eventFilterOf, eventHead, positionOf, readEvents, refuseBeyondHead } from './event.service';
import { EventStream } from './event.stream';
import { EventArgs, EventFeed, EventSubscriptionArgs, MarketEvent } from './event.types';
import { EventWakeup } from './event.wakeup';

/** The context of an operation over the WebSocket door: the process's wake-up of live subscriptions. */
export interface SubscriptionContext extends Context {
  eventWakeup?: EventWakeup;
}

/**
 * Checks the arguments (400 / 404 before anything is streamed; an `after` beyond the log's head is a 400), then the stream: replay after `after`,
 * or from the head of the log now, and live from there.
 */
async function subscribeToEvents({ args, context }: { args: EventSubscriptionArgs; context: SubscriptionContext }): Promise<EventStream> {
  if (!context.eventWakeup) throw new BadRequestError('subscriptions are served over WebSocket (graphql-ws) on /graphql');
  const filter = await eventFilterOf(context, args);
  // On the primary: a read replica behind it may not have the position the client was given yet.
  const head = await eventHead(rootDataSource(context.ds));
  const after = args.after != null ? positionOf(args.after) : head;
  refuseBeyondHead(after, head);
  return new EventStream(context.ds, filter, after, context.eventWakeup, context.scope.requestId);
}

@Resolver(() => MarketEvent)
export class EventResolver {
  @Query(() => EventFeed, { description: 'The change feed: events after a position, in commit order, like GET /v1/events' })
  events(@Args() args: EventArgs, @Ctx() ctx: Context, @Info() info: GraphQLResolveInfo) {
    args.countTotal = selectedFields(info).has('totalCount');
    return readEvents(ctx, args);
  }

  @Subscription(() => MarketEvent, {
    name: 'events',
    description:
      'The change feed, live (graphql-ws on /graphql): with `after`, the stored events after it, then each event as it commits; ' +
      'every event once, in log order. Resume after a disconnect with `after` = the id of the last event received.',
    subscribe: subscribeToEvents as never,
  })
  eventsSubscription(@Root() event: MarketEvent, @Args() _args: EventSubscriptionArgs): MarketEvent {
    return event;
  }

  @FieldResolver(() => ID, { description: 'Its Node id; `after` takes it as it takes the position' })
  id(@Parent() event: MarketEvent): string {
    return nodeId('MarketEvent', event.position);
  }
}
