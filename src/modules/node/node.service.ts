import type { Caller, Context } from '../../common/request/context';
import { isAdmin } from '../../common/request/context';
import { BadRequestError, FieldProblem } from '../../common/errors';
import { canonicalNodeId } from './node.keys';
import { NODE_OWNER, NodeValue } from './node.loaders';

/** Ids one `nodes` may ask for. */
export const MAX_NODE_IDS = 100;

/**
 * An id that can be no object's is the request's mistake: BAD_REQUEST naming the argument, answered as
 * every error met while executing is (200 under application/json, as GraphQL over HTTP has it). A 400
 * decided here would depend on which root's error graphql-js collects first when several fail.
 */
function refused(problems: FieldProblem[]): BadRequestError {
  return new BadRequestError(problems.map((p) => `${p.field}: ${p.message}`).join('; '), problems);
}

/** A webhook is its API key's alone (as webhook(id) has it); an API key, its account's and an admin's. */
function visible(node: NodeValue, caller: Caller | null): boolean {
  const owner = node[NODE_OWNER];
  if (!owner) return true;
  if (!caller) return false;
  if (owner.keyId !== undefined) return owner.keyId === caller.keyId;
  return isAdmin(caller) || owner.address === caller.address;
}

/**
 * The objects with these ids, in their order: null for an id that no object has, or whose object the
 * caller may not see. An id that can be no object's (neither a UUID nor an id the API writes) is a 400
 * naming its argument (`fieldOf` its index).
 */
export async function findNodes(ctx: Context, ids: readonly string[], fieldOf: (index: number) => string): Promise<(NodeValue | null)[]> {
  if (ids.length > MAX_NODE_IDS) throw refused([{ field: 'ids', message: `at most ${MAX_NODE_IDS} ids per request, got ${ids.length}` }]);
  const problems: FieldProblem[] = [];
  const canonical = ids.map((id, i) => {
    const known = canonicalNodeId(id);
    if (known === undefined) problems.push({ field: fieldOf(i), message: `must be an object's id (as the API gives it), got ${JSON.stringify(id.slice(0, 100))}` });
    return known ?? '';
  });
  if (problems.length) throw refused(problems);
  const found = await Promise.all(canonical.map((id) => ctx.loaders.nodeById.load(id)));
  const caller = found.some((node) => node?.[NODE_OWNER]) ? await ctx.caller() : null;
  return found.map((node) => (node && visible(node, caller) ? node : null));
}
