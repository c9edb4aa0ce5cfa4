import type { Request, Response } from 'express';
import type { GraphQLSchema, OperationDefinitionNode } from 'graphql';
import type { QueryGate } from '../../common/query-gate';
import type { Context } from '../../common/request/context';
import type { RequestScope } from '../../common/request/scope';
import { KnownOperation, OperationMemory, runOperation } from './jit';
import type { SqlPlan } from './sql-plan';

/** At most this many documents are remembered (by their text); later ones keep going through Apollo. */
const MAX_KNOWN = 1000;

/**
 * Query documents that Apollo has parsed, validated (with our operation limits) and that graphql-jit has
 * compiled, by their text and operation name. Only such documents take the lean path.
 */
export class CompiledOperations implements OperationMemory {
  private readonly byText = new Map<string, KnownOperation & { plan?: SqlPlan }>();

  /** `plan`: the SQL plan of an operation (sql-plan.ts), made once when it is remembered; none when absent. */
  constructor(private readonly plan?: (operation: OperationDefinitionNode) => SqlPlan | undefined) {}

  remember(query: string | undefined, operationName: string | null | undefined, known: KnownOperation): void {
    if (query === undefined || known.operation.operation !== 'query') return;
    const key = `${operationName ?? ''}\u0000${query}`;
    if (this.byText.has(key) || this.byText.size >= MAX_KNOWN) return;
    this.byText.set(key, { ...known, plan: this.plan?.(known.operation) });
  }

  find(query: string, operationName: string | null | undefined): (KnownOperation & { plan?: SqlPlan }) | undefined {
    return this.byText.get(`${operationName ?? ''}\u0000${query}`);
  }
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * POST /graphql for a query document already validated and compiled (CompiledOperations): the compiled
 * function runs at once, without Apollo's per-request pipeline (request parsing into its own objects,
 * document cache lookup, plugins' hooks, response assembly). It answers only what it can answer as Apollo
 * would: a JSON body with `query` (no persisted-query extensions), no API key (whose check Apollo's
 * plugin runs), an Accept that takes application/json, and a result without errors. Anything else
 * returns false before a byte is written (a result with errors after resetting the request's statement
 * count): Apollo then handles the request as always, errors, their formatting and request ids included.
 */
export async function answerCompiled(
  req: Request,
  res: Response,
  known: CompiledOperations,
  schema: GraphQLSchema,
  largeQueries: QueryGate,
  newContext: (scope: RequestScope) => Context,
): Promise<boolean> {
  if (req.method !== 'POST' || req.headers['access-token'] !== undefined || req.headers.authorization !== undefined) return false;
  const accept = req.headers.accept;
  if (accept !== undefined && accept !== '*/*' && !accept.startsWith('application/json')) return false;
  const contentType = req.headers['content-type'];
  if (typeof contentType !== 'string' || !contentType.startsWith('application/json')) return false;
  const body: unknown = req.body;
  if (!isPlainObject(body) || typeof body.query !== 'string' || body.extensions !== undefined) return false;
  const { operationName, variables } = body;
  if (operationName != null && typeof operationName !== 'string') return false;
  if (variables != null && !isPlainObject(variables)) return false;
  const found = known.find(body.query, operationName);
  if (!found) return false;
  const scope = req.scope;
  scope.operation = operationName ?? undefined;
  const result = await runOperation(schema, largeQueries, found.document, found.operation, (variables ?? {}) as Record<string, unknown>, newContext(scope), found.compiled, found.plan);
  if (result.errors?.length) {
    scope.sqlStatements = 0;
    scope.readFrom = undefined;
    return false;
  }
  res.status(200);
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('x-sql-statements', String(scope.sqlStatements));
  // As Apollo writes it (prettyJSONStringify of { data }).
  res.send(`${JSON.stringify({ data: result.data })}\n`);
  return true;
}
