import { Arg, Args, Ctx, ID, Info, Mutation, Query, Resolver } from 'type-graphql';
import type { GraphQLResolveInfo } from 'graphql';
import type { Context } from '../../common/request/context';
import { PageArgs, remainingSelected } from '../../common/pagination';
import { createWebhook, deleteWebhook, enableWebhook, getWebhook, listDeliveries, listWebhooks, replayWebhook } from './webhook.service';
import { CreateWebhookInput, Webhook, WebhookDeliveryArgs, WebhookDeliveryPage, WebhookPage } from './webhook.types';

/** Webhooks of the caller's API key: each key sees and changes only its own (another's is a 404). */
@Resolver()
export class WebhookResolver {
  @Mutation(() => Webhook, { description: 'Registers an endpoint for the events matching its filters; the answer carries its signing secret, once' })
  createWebhook(@Arg('input', () => CreateWebhookInput) input: CreateWebhookInput, @Ctx() ctx: Context) {
    return createWebhook(ctx, input);
  }

  @Query(() => WebhookPage, { description: 'The webhooks of the caller\'s API key' })
  webhooks(@Args() args: PageArgs, @Ctx() ctx: Context, @Info() info: GraphQLResolveInfo) {
    args.countRemaining = remainingSelected(info);
    return listWebhooks(ctx, args);
  }

  @Query(() => Webhook, { description: 'One webhook of the caller\'s API key' })
  webhook(@Arg('id', () => ID) id: string, @Ctx() ctx: Context) {
    return getWebhook(ctx, id);
  }

  @Mutation(() => Webhook, { description: 'Removes a webhook with its deliveries; returns it as it was' })
  deleteWebhook(@Arg('id', () => ID) id: string, @Ctx() ctx: Context) {
    return deleteWebhook(ctx, id);
  }

  @Mutation(() => Webhook, { description: 'Activates a disabled webhook: delivery resumes with the event that failed' })
  enableWebhook(@Arg('id', () => ID) id: string, @Ctx() ctx: Context) {
    return enableWebhook(ctx, id);
  }

  @Mutation(() => Webhook, { description: 'Delivers again every matching event after `after` (an event\'s position or id)' })
  replayWebhook(@Arg('id', () => ID) id: string, @Arg('after', () => ID) after: string, @Ctx() ctx: Context) {
    return replayWebhook(ctx, id, after);
  }

  @Query(() => WebhookDeliveryPage, { description: 'A webhook\'s deliveries, each with its attempts (newest first by default)' })
  webhookDeliveries(@Args() args: WebhookDeliveryArgs, @Ctx() ctx: Context, @Info() info: GraphQLResolveInfo) {
    args.countRemaining = remainingSelected(info);
    return listDeliveries(ctx, args);
  }
}
