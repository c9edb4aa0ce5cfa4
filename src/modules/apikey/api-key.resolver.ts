import { Arg, Ctx, Field, ID, Mutation, ObjectType, Resolver } from 'type-graphql';
import type { Context } from '../../common/request/context';
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

async function requireAdmin(ctx: Context) {
  const caller = await ctx.requireCaller();
  if (!isAdmin(caller)) throw new ForbiddenError('only an admin key may manage API keys');
  return caller;
}

@Resolver()
export class ApiKeyResolver {
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
