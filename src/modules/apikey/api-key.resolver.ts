import { Arg, Ctx, Field, ID, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import type { Caller, Context } from '../../common/request/context';
import { isAdmin } from '../../common/request/context';
import { ForbiddenError } from '../../common/errors';
import { AddressScalar } from '../../common/scalars';
import { ApiKey, ApiKeyRole } from './api-key.entity';
import { createApiKey, revokeApiKey } from './api-key.service';

@ObjectType()
export class CreatedApiKey {
  @Field(() => String, { description: 'The key itself: shown this once, only its digest is stored' })
  key: string;

  @Field(() => ApiKey)
  apiKey: ApiKey;
}

@ObjectType({ simpleResolvers: true, description: 'The account the calling API key acts as' })
export class Viewer {
  @Field(() => AddressScalar, { description: "The key's account: the owner of what it creates, the maker of its listings and offers" })
  address: string;

  @Field(() => ApiKeyRole)
  role: ApiKeyRole;

  @Field(() => String, { nullable: true, description: 'The label the key was made with' })
  keyLabel: string | null;
}

const viewerOf = (caller: Caller): Viewer => ({ address: caller.address, role: caller.role, keyLabel: caller.keyLabel ?? null });

async function requireAdmin(ctx: Context) {
  const caller = await ctx.requireCaller();
  if (!isAdmin(caller)) throw new ForbiddenError('only an admin key may manage API keys');
  return caller;
}

@Resolver()
export class ApiKeyResolver {
  @Query(() => Viewer, { nullable: true, description: 'The account the API key of the request acts as; null without a key' })
  async viewer(@Ctx() ctx: Context): Promise<Viewer | null> {
    const caller = await ctx.caller();
    return caller && viewerOf(caller);
  }

  @Query(() => Viewer, { description: 'The account the API key of the request acts as; without a key, UNAUTHENTICATED (GET /v1/me)' })
  async me(@Ctx() ctx: Context): Promise<Viewer> {
    return viewerOf(await ctx.requireCaller());
  }

  @Mutation(() => CreatedApiKey, { description: 'Admin only: creates a key for an account' })
  async createApiKey(
    @Arg('address', () => AddressScalar) address: string,
    @Arg('role', () => ApiKeyRole, { defaultValue: ApiKeyRole.USER }) role: ApiKeyRole,
    @Arg('label', () => String, { nullable: true }) label: string | null,
    @Ctx() ctx: Context,
  ) {
    await requireAdmin(ctx);
    return createApiKey(ctx.ds.manager, { address, role, label });
  }

  @Mutation(() => ApiKey, { description: 'Admin only: revokes a key by its id' })
  async revokeApiKey(@Arg('id', () => ID) id: string, @Ctx() ctx: Context) {
    await requireAdmin(ctx);
    return revokeApiKey(ctx.ds, id);
  }
}
