import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import type { GraphQLFormattedError, GraphQLSchema } from 'graphql';
import { AppError, httpStatusOf } from '../../common/errors';
import type { QueryGate } from '../../common/query-gate';
import type { Context } from '../../common/request/context';
import type { ReadRouter } from '../../common/request/scope';
import { keyFromHeaders } from '../../modules/apikey/api-key.service';
import type { QueryCache } from '../graphql/apq-cache';
import { retryOf, withRequestId } from '../graphql/answer';
import { classifyError, formatGraphQLError, logIfInternal } from '../graphql/format-error';
import { jitGateway } from '../graphql/jit';
import type { CompiledOperations } from '../graphql/known';
import { operationLimits } from '../graphql/limits';
import { MAX_TOKENS, protectionRules } from '../graphql/protections';
import { subscriptionsOverWebSocket } from '../graphql/subscriptions';
import { sandboxWithLocalFallback } from '../http/explorer';

/**
 * A request that carries a key must carry a valid one, read or write: a client with a broken or revoked
 * key finds out at once (401), not on its first write.
 */
async function checkKey(context: Context): Promise<void> {
  try {
    await context.requireCaller();
  } catch (err) {
    // Apollo answers a context error with the status in its extensions (500 otherwise).
    if (err instanceof AppError) Object.assign(err.extensions, { http: { status: httpStatusOf[String(err.extensions.code)] } });
    throw err;
  }
}

export interface ApolloParts {
  schema: GraphQLSchema;
  largeQueries: QueryGate;
  /** Where the gateway remembers the queries it validated and compiled (the known path runs them after). */
  compiledOperations: CompiledOperations;
  /** Automatic persisted queries: in Redis when there is one (every process finds them), else in memory. */
  apqCache: QueryCache;
  production: boolean;
  maxAliases?: number;
  /** With read replicas (db/replicas.ts): a mutation's answer carries the consistency token a client may send back. */
  readRouter?: ReadRouter;
}

/**
 * Apollo Server for what the known path does not run (a document's first uses, mutations, Sandbox):
 * parse (max tokens), validate (operation limits and protections), the API key's check, the executor
 * of jit.ts, errors formatted as every road formats them (graphql/answer.ts). Not started.
 */
export function createApollo(parts: ApolloParts): ApolloServer<Context> {
  const { schema, production, readRouter } = parts;
  return new ApolloServer<Context>({
    persistedQueries: { cache: parts.apqCache, ttl: 24 * 3600 },
    // The schema, with queries run by graphql-jit (see jit.ts).
    gateway: jitGateway(schema, parts.largeQueries, parts.compiledOperations),
    // Sandbox (development) needs introspection; production answers neither.
    introspection: !production,
    // main.ts owns the signals: it stops the HTTP server, then Apollo, then the database, in that order.
    stopOnTerminationSignals: false,
    includeStacktraceInErrorResponses: false,
    formatError: formatGraphQLError(schema, production),
    validationRules: [operationLimits, ...protectionRules(parts.maxAliases), subscriptionsOverWebSocket],
    // A document over MAX_TOKENS is refused by the parser itself, before it is ever held whole in memory.
    parseOptions: { maxTokens: MAX_TOKENS },
    // One operation per HTTP request (Apollo's default, stated here): a JSON array is refused with 400.
    allowBatchedHttpRequests: false,
    csrfPrevention: true,
    plugins: [
      production ? ApolloServerPluginLandingPageDisabled() : sandboxWithLocalFallback(),
      // We send no cache hints; the default cache-control plugin would wrap every field resolver to look for them.
      ApolloServerPluginCacheControlDisabled(),
      {
        async requestDidStart({ contextValue }) {
          const { scope } = contextValue;
          return {
            async didResolveOperation({ operationName, request }) {
              scope.operation = operationName ?? undefined;
              // After validation, so a refused document costs no statement.
              const headers = request.http?.headers;
              const key = headers && keyFromHeaders({ 'access-token': headers.get('access-token'), authorization: headers.get('authorization') });
              if (key) await checkKey(contextValue);
            },
            async didEncounterErrors({ errors }) {
              for (const error of errors) logIfInternal(classifyError(schema, error), error, scope.requestId);
            },
            async willSendResponse({ response, operation }) {
              response.http.headers.set('x-sql-statements', String(scope.sqlStatements));
              if (readRouter && operation?.operation === 'mutation') response.http.headers.set('x-min-lsn', await readRouter.consistencyToken());
              if (response.body.kind !== 'single') return;
              const result = response.body.singleResult;
              if (!result.errors) return;
              const errors = result.errors.map((error: GraphQLFormattedError) => withRequestId(error, scope.requestId));
              result.errors = errors;
              const retry = retryOf(errors, result.data);
              for (let i = 0; i < retry.headers.length; i += 2) response.http.headers.set(retry.headers[i], retry.headers[i + 1]);
              // Nothing could be returned: the status says so too, as on the REST door.
              if (retry.status) response.http.status = retry.status;
            },
          };
        },
      },
    ],
  });
}
