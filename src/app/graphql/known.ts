import type { Request, Response } from 'express';
import type { DocumentNode, ExecutionResult, GraphQLSchema, OperationDefinitionNode } from 'graphql';
import type { QueryGate } from '../../common/query-gate';
import type { Context } from '../../common/request/context';
import type { RequestScope } from '../../common/request/scope';
import type { KnownOperation, OperationMemory } from './jit';
import { runOperation } from './execute';
import { graphqlAnswer, graphqlRefusal } from './answer';
import { sendAnswer, type HttpAnswer } from '../http/respond';
import { GraphQLHttpRequest, queryHashOf, readPostBody, responseTypeFor } from './http-request';
import { keyFromHeaders } from '../../modules/apikey/api-key.service';
import type { SqlPlan } from './sql-plan';

/** At most this many documents are remembered (by their text); later ones keep going through Apollo. */
const MAX_KNOWN = 1000;

/**
 * Query documents that Apollo has parsed, validated (with our operation limits) and that graphql-jit has
 * compiled, by their text and operation name. Only such documents take the lean path.
 */
export class CompiledOperations implements OperationMemory {
  /** By the query's text, then its operation name ('' when none is given): no key is built per request. */
  private readonly byText = new Map<string, Map<string, Known>>();
  /** By a persisted query's hash (sha256 of the text), then its operation name: requests that send only the hash. */
  private readonly byHash = new Map<string, Map<string, Known>>();
  private size = 0;

  /** `plan`: the SQL plan of an operation (sql-plan/), made once when it is remembered; none when absent. */
  constructor(private readonly plan?: (operation: OperationDefinitionNode, options: { document: DocumentNode }) => SqlPlan | undefined) {}

  remember(query: string | undefined, operationName: string | null | undefined, known: KnownOperation, hash?: string): void {
    if (query === undefined || known.operation.operation !== 'query') return;
    const name = operationName ?? '';
    let byName = this.byText.get(query);
    if (byName?.has(name) || this.size >= MAX_KNOWN) return;
    if (!byName) this.byText.set(query, (byName = new Map()));
    const entry = this.prepare(known, hash ?? queryHashOf(query));
    byName.set(name, entry);
    let sameHash = this.byHash.get(entry.hash);
    if (!sameHash) this.byHash.set(entry.hash, (sameHash = new Map()));
    sameHash.set(name, entry);
    this.size += 1;
  }

  /** A compiled query ready for the lean path: with its SQL plan, when it has one, and its text's hash. */
  prepare(known: KnownOperation, hash: string): Known {
    return { ...known, plan: this.plan?.(known.operation, { document: known.document }), hash };
  }

  find(query: string, operationName: string | null | undefined): Known | undefined {
    return this.byText.get(query)?.get(operationName ?? '');
  }

  /**
   * The operation of a request: by its text, whose persisted hash, when one is given, must be the text's
   * (else Apollo refuses it); by the hash alone when the text is left out.
   */
  of(request: GraphQLHttpRequest): Known | undefined {
    if (request.query === undefined) return this.byHash.get(request.persistedHash!)?.get(request.operationName ?? '');
    const found = this.find(request.query, request.operationName);
    return found && (request.persistedHash === undefined || request.persistedHash === found.hash) ? found : undefined;
  }
}

/** A remembered operation: compiled, with its plan (if any) and its text's persisted-query hash. */
export type Known = KnownOperation & { plan?: SqlPlan; hash: string };

/**
 * TRUSTED_DOCUMENTS=allow|require as the lean path sees it (trusted/trusted-documents.ts): the registered
 * documents, found by their id (the hash of their text).
 */
export interface DocumentTrust {
  readonly mode: 'allow' | 'require';
  /**
   * The registered query of this id compiled, loaded from the database on its first use in the process;
   * null when no document has this id, undefined when one has but the lean path does not run it (a
   * mutation, another operationName, a document the schema no longer validates: Apollo answers those).
   */
  compiledQuery(id: string, operationName: string | undefined): Promise<Known | null | undefined>;
  /** Whether this process holds a registered document of this id (no statement). */
  isRegistered(id: string): boolean;
}

/**
 * The known operation a request asks for, as TRUSTED_DOCUMENTS allows: any known one when trust is off;
 * with trust, an id alone names a registered document as well (in `require`, only those), and in
 * `require` a text runs only when it is a registered document's. `noted.unregistered`: set to an id that
 * no document has, when it looked one up (the trust check before Apollo then does not look again).
 */
function knownOf(request: GraphQLHttpRequest, deps: KnownDeps, noted?: { unregistered?: string }): Known | undefined | Promise<Known | undefined> {
  const { trust } = deps;
  if (!trust) return deps.known.of(request);
  if (request.query !== undefined) {
    const found = deps.known.of(request);
    return found && (trust.mode === 'allow' || trust.isRegistered(found.hash)) ? found : undefined;
  }
  const known = trust.mode === 'allow' ? deps.known.of(request) : undefined;
  if (known) return known;
  const id = request.persistedHash!;
  return trust.compiledQuery(id, request.operationName).then((registered) => {
    if (registered === null && noted) noted.unregistered = id;
    return registered ?? undefined;
  });
}


/** What running known operations needs of the app. */
export interface KnownDeps {
  known: CompiledOperations;
  schema: GraphQLSchema;
  largeQueries: QueryGate;
  /** A request's context, with the API key it carries. */
  newContext: (scope: RequestScope, apiKey?: string) => Context;
  /** The registered documents (TRUSTED_DOCUMENTS allow or require); absent when off. */
  trust?: DocumentTrust;
  /** NODE_ENV=production: errors without suggestions of names (as formatGraphQLError). */
  production: boolean;
}

/**
 * Runs a known query (a GraphQL request read as Apollo reads it, http-request.ts) and gives its whole
 * answer, data or errors (answer.ts, as Apollo would write it), or undefined when the request is not one
 * of the known operations (then nothing has run). A request with an API key is a read like any other
 * once its key is found valid, as Apollo's plugin finds it (one statement); a key that is not valid is
 * refused here, as Apollo refuses it.
 */
export async function runKnown(request: GraphQLHttpRequest | undefined, apiKey: string | undefined, scope: RequestScope, deps: KnownDeps, noted?: { unregistered?: string }): Promise<HttpAnswer | undefined> {
  if (!request) return undefined;
  // Awaited only when it is a promise (a registered id's first use): a known text costs no extra turn.
  let found = knownOf(request, deps, noted);
  if (found instanceof Promise) found = await found;
  if (!found) return undefined;
  // The operation's own name, as Apollo reports it (logs and metrics), whether or not the client named it.
  scope.operation = found.operation.name?.value;
  const context = deps.newContext(scope, apiKey);
  let result: ExecutionResult;
  try {
    if (apiKey !== undefined) await context.requireCaller();
    result = await runOperation(deps.schema, deps.largeQueries, found.document, found.operation, request.variables, context, found.compiled, found.plan);
  } catch (err) {
    return graphqlRefusal(deps.schema, deps.production, scope, err);
  }
  return graphqlAnswer(deps.schema, deps.production, scope, result);
}

/**
 * POST /graphql for a query document already validated and compiled (CompiledOperations), inside
 * express, for the requests the lean door leaves to express (an Idempotency-Key, an x-min-lsn, a body
 * too large for the door, a trusted Origin): the compiled function runs at once, without Apollo's
 * per-request pipeline, and its answer (errors included) is written here. Returns false, before
 * anything has run, for a request that is not a known query: Apollo then handles it.
 */
export async function answerCompiled(req: Request, res: Response, deps: KnownDeps): Promise<boolean> {
  if (req.method !== 'POST') return false;
  const type = responseTypeFor(req.headers.accept);
  if (!type) return false;
  const contentType = req.headers['content-type'];
  if (typeof contentType !== 'string' || !contentType.startsWith('application/json')) return false;
  const answer = await runKnown(readPostBody(req.body), keyFromHeaders(req.headers), req.scope, deps);
  if (answer === undefined) return false;
  req.scope.entry = 'express';
  sendAnswer(res, answer, req.scope, type);
  return true;
}
