import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { ASTVisitor, DocumentNode, ExecutionArgs, ExecutionResult, GraphQLError, GraphQLFormattedError, GraphQLSchema, getOperationAST, parse, subscribe, validate, ValidationContext } from 'graphql';
import { WebSocketServer } from 'ws';
import { useServer } from 'graphql-ws/use/ws';
import { DataSource } from 'typeorm';
import { BadRequestError, RateLimitedError } from '../../common/errors';
import { logger } from '../../common/logger';
import { RequestPolicy } from '../../common/request/context';
import { EventWakeup } from '../../modules/event/event.wakeup';
import type { SubscriptionContext } from '../../modules/event/event.resolver';
import { createContext } from '../context';
import { toClientError } from './format-error';
import type { RateLimit } from '../http/rate-limit';
import { documentRules, MAX_TOKENS } from './protections';
import { persistedHashOf } from './http-request';
import type { TrustedDocuments } from './trusted/trusted-documents';

/** A validation rule of POST /graphql: a subscription there is the client's mistake (400), not a server error. */
export function subscriptionsOverWebSocket(context: ValidationContext): ASTVisitor {
  return {
    OperationDefinition(node) {
      if (node.operation === 'subscription') {
        context.reportError(
          new GraphQLError('subscriptions are served over WebSocket on /graphql (graphql-ws protocol, subprotocol graphql-transport-ws), not by POST', {
            nodes: [node],
          }),
        );
      }
    },
  };
}

export interface SubscriptionOptions {
  /** The rate limits of the HTTP doors: an upgrade takes a token of its client's bucket like a request. */
  rateLimit?: RateLimit;
  production: boolean;
  maxAliases?: number;
  /** Operations one connection may have open at once (SUBSCRIPTIONS_PER_CONNECTION). */
  perConnection: number;
  /** TRUSTED_DOCUMENTS allow or require: a subscribe message may name a registered document by its id (and in require, must run one). */
  trust?: TrustedDocuments;
  /** Bytes of one WebSocket message from a client (the JSON body limit of POST /graphql). */
  maxPayload: number;
}

export interface SubscriptionServer {
  /** Tells every client the server is going away (close code 1001), waits up to `withinMs` for them to close, then cuts the rest. */
  close(withinMs?: number): Promise<void>;
}

/** The request id of each operation on a socket, by socket and operation id, for its errors and logs. */
type Ids = Map<string, string>;

/**
 * The WebSocket door of /graphql: the graphql-ws protocol (what Apollo Sandbox and Apollo Client's
 * GraphQLWsLink speak), for subscriptions only; queries and mutations go by POST, where the rate
 * limits, API keys and idempotency apply. Documents pass the same parser limit and validation rules
 * as on POST, and every error carries one of our codes and a request id.
 */
export function serveSubscriptions(
  server: http.Server,
  schema: GraphQLSchema,
  ds: DataSource,
  wakeup: EventWakeup,
  policy: RequestPolicy,
  options: SubscriptionOptions,
): SubscriptionServer {
  const { rateLimit } = options;
  const wss = new WebSocketServer({
    server,
    path: '/graphql',
    maxPayload: options.maxPayload,
    // A client at its limit is refused before the upgrade (HTTP 429, as a request would be): else a socket a
    // second would be a way around the limit, each costing a connection, a context and its subscriptions.
    verifyClient: rateLimit && ((info: { req: http.IncomingMessage }, done: (ok: boolean, code?: number, message?: string, headers?: Record<string, string>) => void) => {
      rateLimit.takeUpgrade(info.req).then(
        (refused) => {
          if (!refused) return done(true);
          const body = JSON.stringify({ errors: [{ message: refused.message, extensions: { code: 'RATE_LIMITED', details: [], requestId: randomUUID() } }] });
          done(false, 429, body, { ...refused.headers, 'Content-Type': 'application/json; charset=utf-8', 'X-Content-Type-Options': 'nosniff' });
        },
        () => done(true),
      );
    }),
  });
  const rules = documentRules(options.maxAliases);
  const requestIds = new WeakMap<object, Ids>();
  const idsOf = (ctx: object): Ids => {
    let ids = requestIds.get(ctx);
    if (!ids) requestIds.set(ctx, (ids = new Map()));
    return ids;
  };

  const format = (error: GraphQLError, requestId: string, requestError: boolean): GraphQLFormattedError => {
    const client = toClientError(schema, error, requestError, requestId, options.production);
    return { message: client.message, locations: error.locations, path: error.path, extensions: { code: client.code, details: client.details, requestId } };
  };
  // The errors of the document itself (parse, validation, the wrong kind of operation): the client's.
  const refuse = (errors: readonly GraphQLError[], requestId: string) => errors.map((e) => Object.assign(e, { requestError: true, requestId }));

  /**
   * Subscriptions started in onSubscribe, by their context: graphql-ws answers a subscription whose start
   * fails (a bad argument, an unknown event type) with `next` and `complete`; started there, the failure
   * is refused with an `error` message, graphql-ws's way for an operation it does not run.
   */
  const started = new WeakMap<object, AsyncGenerator<ExecutionResult, void, void>>();
  const disposable = useServer<Record<string, unknown>>(
    {
      schema,
      isProd: options.production,
      subscribe: (args: ExecutionArgs) => started.get(args.contextValue as object) ?? subscribe(args),
      async onSubscribe(ctx, id, payload) {
        const requestId = randomUUID();
        idsOf(ctx).set(id, requestId);
        if (Object.keys(ctx.subscriptions).length > options.perConnection) {
          return refuse([new RateLimitedError(`a connection may have at most ${options.perConnection} operations open; complete one first or open another connection`)], requestId);
        }
        let query: unknown = payload.query;
        if (options.trust) {
          const verdict = await options.trust.judge(query, persistedHashOf(payload.extensions) ?? undefined);
          if ('refuse' in verdict) return refuse([verdict.refuse], requestId);
          if (verdict.run === 'registered') query = verdict.body;
        }
        if (typeof query !== 'string' || query === '') {
          return refuse([new BadRequestError('the subscribe message needs the document in payload.query')], requestId);
        }
        let document: DocumentNode;
        try {
          document = parse(query, { maxTokens: MAX_TOKENS });
        } catch (err) {
          return refuse([err instanceof GraphQLError ? err : new BadRequestError(String(err))], requestId);
        }
        const errors = validate(schema, document, rules);
        if (errors.length) return refuse(errors, requestId);
        const operation = getOperationAST(document, payload.operationName);
        if (!operation) return refuse([new BadRequestError('the document must hold one operation, or operationName must name one of its operations')], requestId);
        if (operation.operation !== 'subscription') {
          return refuse([new BadRequestError(`the WebSocket carries subscriptions only; send a ${operation.operation} by POST /graphql`)], requestId);
        }
        // Object.assign, not a spread: the context's methods and lazy parts are on its prototype.
        const context: SubscriptionContext = Object.assign(createContext(ds, { requestId, sqlStatements: 0 }, undefined, { policy }), { eventWakeup: wakeup });
        const args = { schema, document, operationName: payload.operationName, variableValues: payload.variables, contextValue: context };
        const stream = await subscribe(args);
        if (!(Symbol.asyncIterator in stream)) return refuse(stream.errors ?? [new BadRequestError('the subscription could not start')], requestId);
        started.set(context, stream);
        return args;
      },
      onNext(ctx, id, _payload, _args, result) {
        if (!result.errors?.length) return undefined;
        const requestId = idsOf(ctx).get(id) ?? randomUUID();
        return { ...result, errors: result.errors.map((e) => format(e, requestId, false)) };
      },
      onError(ctx, id, _payload, errors) {
        const requestId = idsOf(ctx).get(id) ?? randomUUID();
        return errors.map((e) => format(e, requestId, (e as { requestError?: boolean }).requestError === true));
      },
      onComplete(ctx, id) {
        idsOf(ctx).delete(id);
      },
    },
    wss,
  );
  void disposable;

  let closing: Promise<void> | undefined;
  return {
    close(withinMs = 1000) {
      closing ??= (async () => {
        const clients = [...wss.clients];
        const closed = Promise.all(clients.map((c) => new Promise<void>((resolve) => (c.readyState === c.CLOSED ? resolve() : c.once('close', () => resolve())))));
        for (const client of clients) client.close(1001, 'the server is shutting down; reconnect and resume with after');
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([closed, new Promise<void>((resolve) => (timer = setTimeout(resolve, withinMs).unref()))]);
        clearTimeout(timer);
        // A client that does not answer the close handshake is cut: the shutdown does not wait for it.
        for (const client of wss.clients) client.terminate();
        wss.removeAllListeners();
        await new Promise<void>((resolve) => wss.close(() => resolve()));
        logger.debug('subscriptions closed', { clients: clients.length });
      })();
      return closing;
    },
  };
}
