import type { ApolloServerOptionsWithGateway } from '@apollo/server';
import { DocumentNode, execute, GraphQLSchema, OperationDefinitionNode, printSchema } from 'graphql';
import type { CompiledQuery } from 'graphql-jit';
import type { Context } from '../../common/request/context';
import type { QueryGate } from '../../common/query-gate';
import { compileOperation, runOperation } from './execute';

type Gateway = ApolloServerOptionsWithGateway<Context>['gateway'];

/** A query operation Apollo has validated and graphql-jit compiled. */
export interface KnownOperation {
  document: DocumentNode;
  operation: OperationDefinitionNode;
  compiled: CompiledQuery;
}

/** Where the gateway reports such operations with their text (lean.ts's CompiledOperations). */
export interface OperationMemory {
  remember(query: string | undefined, operationName: string | null | undefined, known: KnownOperation, hash?: string): void;
}

interface Seen {
  uses: number;
  compiled?: CompiledQuery;
}

/**
 * Runs query operations through graphql-jit, which compiles a document into one function over the same
 * schema and resolvers: none of graphql-js's per-field info objects and promise bookkeeping, which were
 * most of the time of large responses. A document is compiled on its second use (compiling costs more
 * than one graphql-js execution, and many documents, e.g. from Sandbox, come once); its first use and
 * every mutation go through graphql-js (as does a document graphql-jit cannot compile). Variables
 * are always coerced by graphql-js first, so a bad variable is refused in graphql-js's words. Large
 * queries take their turn at the gate (QueryGate).
 *
 * Apollo Server 5 takes a custom executor through its `gateway` option (its migration guide's
 * replacement for the `executor` option of version 3); Apollo still parses, validates (with our
 * operation limits), runs the plugins and formats errors. Compiled operations are kept per operation
 * of a parsed document, which Apollo's document cache reuses for the same text, and go with it.
 */
export function jitGateway(schema: GraphQLSchema, largeQueries: QueryGate, known?: OperationMemory): Gateway {
  // By operation: one document may hold several, chosen by operationName.
  const seen = new WeakMap<OperationDefinitionNode, Seen>();
  const run = (document: DocumentNode, operation: OperationDefinitionNode, variables: Record<string, unknown>, context: Context) => {
    let entry = seen.get(operation);
    if (!entry) seen.set(operation, (entry = { uses: 0 }));
    entry.uses += 1;
    const compiled =
      operation.operation === 'query' && entry.uses > 1 ? (entry.compiled ??= compileOperation(schema, document, operation)) : undefined;
    return { compiled, result: runOperation(schema, largeQueries, document, operation, variables, context, compiled) };
  };
  return {
    onSchemaLoadOrUpdate(callback) {
      callback({ apiSchema: schema, coreSupergraphSdl: printSchema(schema) });
      return () => {};
    },
    async load() {
      return {
        executor: async (request) => {
          // No operation of the document answers to operationName (or several and none named): graphql-js's
          // own refusal, which Apollo turns into a 400 (an explorer may send the name of an operation just deleted).
          if (!request.operation) return (await execute({ schema, document: request.document, operationName: request.request.operationName })) as never;
          const { compiled, result } = run(request.document, request.operation, request.request.variables ?? {}, request.context as Context);
          const answer = await result;
          // Validated by Apollo and compiled: later requests with this text may take the lean path (lean.ts).
          // The text Apollo resolved (a persisted query's by its hash, too), and its hash.
          if (compiled && known && !answer.errors) {
            known.remember(request.source ?? request.request.query, request.request.operationName, { document: request.document, operation: request.operation, compiled }, request.queryHash);
          }
          return answer as never;
        },
      };
    },
    async stop() {},
  };
}
