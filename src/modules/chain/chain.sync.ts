import { Field, ID, Int, ObjectType } from 'type-graphql';
import { GraphQLSafeInt } from 'graphql-scalars';
import type { Context } from '../../common/request/context';
import { NotFoundError } from '../../common/errors';
import { chainIdOf } from '../../common/validate';

/** How far the gateway has followed a chain (docs/chain.md "Sync status"), as the follower last wrote it. */
@ObjectType({ simpleResolvers: true })
export class ChainSync {
  @Field(() => ID)
  chainId: string;

  @Field(() => Boolean, { description: 'Whether a process follows (or has followed) the chain; false: every figure below is null' })
  following: boolean;

  @Field(() => GraphQLSafeInt, { nullable: true, description: "The chain's head as the follower last read it; null before its first look" })
  headBlock: number | null;

  @Field(() => Int, { nullable: true, description: 'Confirmations a block needs before it is applied' })
  confirmations: number | null;

  @Field(() => GraphQLSafeInt, { nullable: true, description: 'The highest block with its confirmations (head - confirmations)' })
  confirmedBlock: number | null;

  @Field(() => GraphQLSafeInt, { nullable: true, description: "The last block whose transfers are applied, for every collection of the chain" })
  lastAppliedBlock: number | null;

  @Field(() => String, { nullable: true })
  lastAppliedHash: string | null;

  @Field(() => GraphQLSafeInt, { nullable: true, description: 'Confirmed blocks not applied yet (0: caught up)' })
  lag: number | null;

  @Field(() => String, { nullable: true, description: "The follower's last failure, cleared by its next applied step" })
  lastError: string | null;

  @Field(() => Date, { nullable: true })
  lastErrorAt: Date | null;

  @Field(() => Date, { nullable: true, description: 'When the follower last wrote this state; null when no process has followed the chain' })
  updatedAt: Date | null;
}

/**
 * Confirmed blocks not applied yet, of a chain_sync row `s`; null before the follower's first look at the
 * head (GREATEST skips nulls: without the CASE an unfollowed chain would read as caught up).
 */
const LAG = 'CASE WHEN s.head_block IS NOT NULL THEN GREATEST(s.head_block - s.confirmations - COALESCE(s.last_block, -1), 0)::float8 END';

const SYNC_COLUMNS = `c.id AS "chainId", s.chain_id IS NOT NULL AS following, s.head_block::float8 AS "headBlock", s.confirmations,
  CASE WHEN s.head_block IS NOT NULL THEN GREATEST(s.head_block - s.confirmations, -1)::float8 END AS "confirmedBlock",
  s.last_block::float8 AS "lastAppliedBlock",
  s.last_hash AS "lastAppliedHash", ${LAG} AS lag,
  s.last_error AS "lastError", s.last_error_at AS "lastErrorAt", s.updated_at AS "updatedAt"`;

/** The sync state of a known chain; every figure null when no follower has looked at it. */
export async function chainSync(ctx: Context, given: string): Promise<ChainSync> {
  const chainId = chainIdOf('chainId', given);
  const [row] = await ctx.ds.query(`SELECT ${SYNC_COLUMNS} FROM chains c LEFT JOIN chain_sync s ON s.chain_id = c.id WHERE c.id = $1`, [chainId]);
  if (!row) throw new NotFoundError(`no chain ${chainId}`);
  return row;
}

/** The lag in blocks and last error of these chains (those the process is set to follow), for /readyz. */
export async function chainLags(ds: Context['ds'], chainIds: string[]): Promise<{ chainId: string; lag: number | null; lastError: string | null }[]> {
  return ds.query(
    `SELECT c.id AS "chainId", ${LAG} AS lag, s.last_error AS "lastError"
     FROM chains c LEFT JOIN chain_sync s ON s.chain_id = c.id WHERE c.id = ANY($1::text[]) ORDER BY c.id`,
    [chainIds],
  );
}
