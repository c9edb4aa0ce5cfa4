import { Args, Ctx, Query, Resolver } from 'type-graphql';
import type { Context } from '../../common/request/context';
import { readEvents } from './event.service';
import { EventArgs, EventFeed } from './event.types';

@Resolver()
export class EventResolver {
  @Query(() => EventFeed, { description: 'The change feed: events after a position, in commit order, like GET /v1/events' })
  events(@Args() args: EventArgs, @Ctx() ctx: Context) {
    return readEvents(ctx, args);
  }
}
