import { Arg, Args, ArgsType, Ctx, Extensions, Field, ID, Query, Resolver } from 'type-graphql';
import { Node } from '../../common/graphql/node';
import type { Context } from '../../common/request/context';
import { findNodes, MAX_NODE_IDS } from './node.service';

@ArgsType()
class NodesArgs {
  @Field(() => [ID], { description: `At most ${MAX_NODE_IDS}` })
  @Extensions({ listedItems: MAX_NODE_IDS })
  ids: string[];
}

/** Global object identification: any object by its id (docs/api.md, "Object identification"). */
@Resolver()
export class NodeResolver {
  @Query(() => Node, {
    nullable: true,
    description: 'The object with this id, of any type; null when none has it, or the caller may not see it (another key\'s webhook)',
  })
  async node(@Arg('id', () => ID) id: string, @Ctx() ctx: Context) {
    const [found] = await findNodes(ctx, [id], () => 'id');
    return found;
  }

  @Query(() => [Node], { nullable: 'items', description: 'The objects with these ids, in their order; null for each that node(id) would answer null' })
  nodes(@Args() args: NodesArgs, @Ctx() ctx: Context) {
    return findNodes(ctx, args.ids, (i) => `ids[${i}]`);
  }
}
