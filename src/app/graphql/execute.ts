import { DocumentNode, execute, ExecutionResult, FieldNode, GraphQLSchema, Kind, locatedError, OperationDefinitionNode, valueFromASTUntyped } from 'graphql';
import { CompiledQuery, compileQuery, isCompiledQuery } from 'graphql-jit';
import type { Context } from '../../common/request/context';
import type { QueryGate } from '../../common/query-gate';
import { estimate, limitsError } from './limits';
import { coerceVariables } from './variables';
import { checkVariables } from '../../common/limits';
import { StatementTimeoutError, UnavailableError, ValidationError } from '../../common/errors';
import { logger } from '../../common/logger';
import { operationsRun } from '../../common/metrics';
import { traceOperation } from '../../common/tracing';
import type { SqlPlan } from './sql-plan';

/**
 * The one executor of the gateway: every operation, whichever door it came through (the lean door,
 * express's compiled path, Apollo through jit.ts's gateway, a /v1 route), runs here, once.
 */

/** graphql-jit's compiled form of an operation, or undefined when graphql-jit cannot compile it. */
export function compileOperation(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode): CompiledQuery | undefined {
  const compiled = compileQuery(schema, document, operation.name?.value);
  return isCompiledQuery(compiled) ? compiled : undefined;
}

/**
 * Runs one operation, for /graphql and /v1 alike: graphql-js coerces the variables first (a bad one is
 * refused in graphql-js's words, with no `data`), a limit out of its list's range refuses the operation
 * (no `data`), then the operation takes its turn at the gate if it is large, and runs compiled when `compiled` is given, else through graphql-js.
 */
export async function runOperation(
  schema: GraphQLSchema,
  largeQueries: QueryGate,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Record<string, unknown>,
  context: Context,
  compiled?: CompiledQuery,
  plan?: SqlPlan,
): Promise<ExecutionResult> {
  // Text PostgreSQL cannot store, non-finite numbers, huge arrays, deep JSON: refused before any resolver.
  // A query only reads: with read replicas, its statements may go to one (a mutation's never do).
  context.scope.readOnly = operation.operation === 'query';
  // Every road runs its operation here: this is the operation's span (off: the call itself).
  const result = await traceOperation(operation.operation, operation.name?.value, context.scope, () =>
    runOnce(schema, largeQueries, document, operation, variables, context, compiled, plan),
  );
  operationsRun.inc({ executor: context.scope.executor ?? 'refused' });
  return result;
}

async function runOnce(
  schema: GraphQLSchema,
  largeQueries: QueryGate,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Record<string, unknown>,
  context: Context,
  compiled?: CompiledQuery,
  plan?: SqlPlan,
): Promise<ExecutionResult> {
  const hostile = checkVariables(variables);
  if (hostile.list.length) return { errors: [new ValidationError(hostile.list)] };
  const coercion = coerceVariables(schema, operation, variables);
  if (coercion.errors) return { errors: coercion.errors };
  // A limit out of range would fail its own list alone while the rest of the operation ran at full size.
  const { items, outOfRange } = estimate(schema, document, operation, coercion.coerced);
  if (outOfRange.length) return { errors: [limitsError(outOfRange)] };
  return largeQueries.run(items, async () => {
    // One statement that builds the whole answer, when the plan can give it exactly (else it steps aside).
    let data: Record<string, unknown> | undefined;
    try {
      data = await plan?.run(context, coercion.coerced);
    } catch (err) {
      // A database fault (connection lost, no connection within the pool wait, a statement cancelled by
      // its timeout) is the answer, as the resolvers would give it: going on to them would make the client
      // (and, for a timeout, the database) wait a second time.
      if (err instanceof UnavailableError || err instanceof StatementTimeoutError) {
        const root = operation.selectionSet.selections.find((s): s is FieldNode => s.kind === Kind.FIELD)!;
        return { data: null, errors: [locatedError(err, [root], [root.alias?.value ?? root.name.value])] };
      }
      // Any other failure steps aside to the resolvers; logged, since it is a plan's own mistake.
      logger.warn('SQL plan stepped aside after an error', { requestId: context.scope.requestId, error: (err as Error).message });
    }
    if (data) {
      context.scope.executor = 'plan';
      return { data };
    }
    context.scope.executor = compiled ? 'compiled' : 'graphql-js';
    return compiled
      ? compiled.query(undefined, context, withDefaults(operation, variables))
      : execute({ schema, document, variableValues: variables, contextValue: context, operationName: operation.name?.value });
  });
}

/** Per operation: its variables' default values as a client would send them (JSON), or null when none has one. */
const defaultsOf = new WeakMap<OperationDefinitionNode, [string, unknown][] | null>();

/**
 * The request's variables with the operation's defaults filled in for those it leaves out, in their
 * JSON form (an enum by its name). graphql-js applies a default itself; graphql-jit does not, and refuses
 * an absent `Int! = 3` by a throw (an INTERNAL error on every use after the first), so the compiled query
 * is given what graphql-js would have used. Variables were coerced by graphql-js before: nothing here can
 * be refused.
 */
function withDefaults(operation: OperationDefinitionNode, variables: Record<string, unknown>): Record<string, unknown> {
  let defaults = defaultsOf.get(operation);
  if (defaults === undefined) {
    const found = (operation.variableDefinitions ?? []).filter((d) => d.defaultValue).map((d): [string, unknown] => [d.variable.name.value, valueFromASTUntyped(d.defaultValue!)]);
    defaultsOf.set(operation, (defaults = found.length ? found : null));
  }
  if (!defaults) return variables;
  let filled: Record<string, unknown> | undefined;
  for (const [name, value] of defaults) {
    if (Object.prototype.hasOwnProperty.call(variables, name)) continue;
    filled ??= { ...variables };
    filled[name] = value;
  }
  return filled ?? variables;
}
