import { ArgsType, Field, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { PageArgs, PageType } from '../../common/pagination';
import { Node } from '../../common/graphql/node';

export enum WebhookStatus {
  ACTIVE = 'active',
  DISABLED = 'disabled',
}
registerEnumType(WebhookStatus, { name: 'WebhookStatus' });

export enum WebhookDeliveryStatus {
  PENDING = 'pending',
  DELIVERED = 'delivered',
  FAILED = 'failed',
  CANCELLED = 'cancelled',
}
registerEnumType(WebhookDeliveryStatus, {
  name: 'WebhookDeliveryStatus',
  description: 'pending: being tried; delivered: a 2xx came back; failed: given up (the endpoint was disabled); cancelled: a replay moved the endpoint elsewhere',
});

/** An endpoint that receives the events matching its filters, signed with its secret. */
@ObjectType({ simpleResolvers: true, implements: Node })
export class Webhook {
  @Field(() => ID)
  id: string;

  @Field(() => String)
  url: string;

  @Field(() => [String], { description: 'The event types it receives; empty: every type' })
  eventTypes: string[];

  @Field(() => ID, { nullable: true, description: 'Only events of this collection' })
  collectionId: string | null;

  @Field(() => ID, { nullable: true, description: 'Only events of this asset' })
  assetId: string | null;

  @Field(() => WebhookStatus)
  status: WebhookStatus;

  @Field(() => String, { nullable: true, description: 'Why delivery stopped, while disabled' })
  disabledReason: string | null;

  @Field(() => Date, { nullable: true })
  disabledAt: Date | null;

  @Field(() => ID, { description: 'The event position this endpoint has been served up to (delivered or not matching)' })
  cursor: string;

  @Field(() => String, {
    nullable: true,
    description: 'The signing secret: returned once, by createWebhook (POST /v1/webhooks); null everywhere else',
  })
  secret: string | null;

  @Field(() => Date)
  createdAt: Date;

  @Field(() => Date)
  updatedAt: Date;
}

@ObjectType({ simpleResolvers: true })
export class WebhookPage extends PageType(Webhook) {}

/** One POST of a delivery. */
@ObjectType({ simpleResolvers: true })
export class WebhookAttempt {
  @Field(() => Date)
  attemptedAt: Date;

  @Field(() => Int, { description: 'Milliseconds from the request to the answer (or the error)' })
  durationMs: number;

  @Field(() => Int, { nullable: true, description: 'The receiver\'s HTTP status; null when none came back' })
  httpStatus: number | null;

  @Field(() => String, { nullable: true, description: 'What went wrong: a non-2xx status, a timeout, a refused connection' })
  error: string | null;
}

/** One event on its way to one endpoint, with every attempt so far. */
@ObjectType({ simpleResolvers: true })
export class WebhookDelivery {
  @Field(() => ID)
  id: string;

  @Field(() => ID, { description: 'The event\'s id (its position in the log)' })
  eventId: string;

  @Field(() => String)
  eventType: string;

  @Field(() => WebhookDeliveryStatus)
  status: WebhookDeliveryStatus;

  @Field(() => Int)
  attemptCount: number;

  @Field(() => [WebhookAttempt], { description: 'Oldest first' })
  attempts: WebhookAttempt[];

  @Field(() => Date, { nullable: true, description: 'When the next attempt is due, while pending' })
  nextAttemptAt: Date | null;

  @Field(() => Date, { nullable: true, description: 'When it was delivered or given up' })
  completedAt: Date | null;

  @Field(() => Date)
  createdAt: Date;
}

@ObjectType({ simpleResolvers: true })
export class WebhookDeliveryPage extends PageType(WebhookDelivery) {}

@InputType({ description: 'A webhook: where to post, and which events' })
export class CreateWebhookInput {
  @Field(() => String, { description: 'An http or https URL on a public address' })
  url: string;

  @Field(() => [String], { nullable: true, description: 'Event types to receive (e.g. listing.created); all when absent or empty' })
  eventTypes?: string[] | null;

  @Field(() => String, { nullable: true, description: 'Only events of this collection (its id or contract address)' })
  collectionId?: string | null;

  @Field(() => ID, { nullable: true, description: 'Only events of this asset' })
  assetId?: string | null;
}

@ArgsType()
export class WebhookDeliveryArgs extends PageArgs {
  @Field(() => ID)
  webhookId: string;
}
