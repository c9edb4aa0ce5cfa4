import type { DocumentNode, OperationDefinitionNode } from 'graphql';
import { randomUUID, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import express, { NextFunction, Request, Response } from 'express';
import compression from 'compression';
import { constants as zlibConstants } from 'node:zlib';
import { ApolloServer } from '@apollo/server';
import { expressMiddleware } from '@as-integrations/express5';
import { graphqlUploadExpress } from 'graphql-upload-minimal';
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { DataSource } from 'typeorm';
import { AppError, BadRequestError, httpStatusOf, NotFoundError, PayloadTooLargeError, UnauthenticatedError } from '../common/errors';
import { InFlight } from '../common/in-flight';
import { QueryGate } from '../common/query-gate';
import { processCounters, readRouterOf, RequestScope } from '../common/request/scope';
import { parseLsn } from '../common/lsn';
import { Context, RequestPolicy } from '../common/request/context';
import type { SignatureMode } from '../common/eip712';
import { ContextOptions, createContext } from './context';
import { classifyError, formatGraphQLError, internalMessage, logIfInternal, RETRYABLE_CODES, retryAfterFor, toClientError } from './graphql/format-error';
import { jitGateway } from './graphql/jit';
import { answerCompiled, bodyReadByDoor, CompiledOperations, hasApiKey, LeanDeps, leanDoor, timedOutAtDoor } from './graphql/lean';
import { planOperation } from './graphql/sql-plan';
import { memoryQueryCache, persistedQueryText, redisQueryCache } from './graphql/apq-cache';
import { graphqlHttpErrors, uploadErrorsAreClientErrors } from './graphql/http-errors';
import { operationLimits } from './graphql/limits';
import { MAX_TOKENS, protectionRules } from './graphql/protections';
import { buildAppSchema } from './graphql/schema';
import { trustedDocumentsGate } from './graphql/trusted/gate';
import { TrustedDocuments } from './graphql/trusted/trusted-documents';
import { serveSubscriptions, subscriptionsOverWebSocket, SubscriptionServer } from './graphql/subscriptions';
import { EventWakeup } from '../modules/event/event.wakeup';
import { callerForKey, keyFromHeaders } from '../modules/apikey/api-key.service';
import { sendRestError } from './rest/errors';
import { restRouter } from './rest/v1/router';
import { apiDocsRouter } from './rest/v1/docs';
import { explorerRouter, sandboxWithLocalFallback } from './http/explorer';
import { methodNotAllowed, requireBodyType } from './rest/v1/http-rules';
import { routes } from './rest/v1/routes';
import { corsMiddleware } from './http/cors';
import { home } from './http/home';
import { ObserveOptions, observeRequests } from './http/observe';
import { metricsRegistry, watchMetadataQueue, watchPool, watchSettlements, PoolFigures } from '../common/metrics';
import { MAX_IMPORT_BYTES } from '../modules/import/csv-rows';
import { ChainSettings, MetadataSettings, SettlementSettings, RateLimitSettings, TrustMode, WebhookSettings } from '../config';
import { WebhookWorker } from '../modules/webhook/webhook.worker';
import { MetadataWorker } from '../modules/metadata/metadata.worker';
import { metadataQueueFigures } from '../modules/metadata/metadata.queue';
import { createIdempotency } from './http/idempotency';
import { createRateLimit } from './http/rate-limit';
import { endStalledBodies } from './http/body-stall';
import { sendMiddlewareError } from './http/respond';
import { keyBeforeUpload } from './http/upload-key';
import { startExpirySweeper } from '../modules/event/expiry.sweeper';
import { ChainFollower, startChainFollowers } from '../modules/chain/chain.follower';
import { chainLags } from '../modules/chain/chain.sync';
import { settlement } from '../modules/order/settlement.settings';
import { pendingSettlements } from '../modules/order/settlement';

export interface AppOptions {
  jsonBodyLimit?: string;
  /** See QueryGate; defaults 4 slots for queries over 5,000 estimated items. */
  largeQuerySlots?: number;
  largeQueryItems?: number;
  /** Browser origins that may send an API key (CORS_ORIGINS); any origin may read. */
  corsOrigins?: string[];
  /** Serve GET /metrics and record metrics (METRICS=off: false). Default true. */
  metrics?: boolean;
  /** Requests slower than this are logged as slow (SLOW_REQUEST_MS). Default 1000. */
  slowRequestMs?: number;
  /** Aliases a /graphql document may use (GRAPHQL_MAX_ALIASES); default 15. */
  maxAliases?: number;
  /** gzip/br for responses over 1 KB when the client accepts it (COMPRESSION=off: false). Default true. */
  compression?: boolean;
  /**
   * Known queries whose whole selection PostgreSQL can answer run as one statement that builds their JSON
   * (SQL_PLANS=off: false; app/graphql/sql-plan/). Default true.
   */
  sqlPlans?: boolean;
  /** Rate limits of /graphql and /v1; none when absent (main.ts passes the configured ones). */
  rateLimit?: RateLimitSettings | null;
  /** Seconds an Idempotency-Key's record is kept; default 24 h. */
  idempotencyTtlS?: number;
  /** NODE_ENV=production: no introspection, no Sandbox, no field suggestions in error messages. */
  production?: boolean;
  /** SIGNATURES: how listing and offer signatures are checked; default optional (verified when given). */
  signatures?: SignatureMode;
  /**
   * A statistics page is computed at most this often per database state (STATISTICS_MAX_AGE_MS; main.ts
   * passes it, 1,000 by default). 0 unless asked: tests that pin statistics to exact moments compute every time.
   */
  statisticsMaxAgeMs?: number;
  /** AUCTION_MIN_INCREMENT_PERCENT: a bid on an english auction exceeds its best bid by this much (default 5). */
  auctionMinIncrementPercent?: number;
  /** DB_IMPORT_STATEMENT_TIMEOUT_MS: the statement_timeout inside an import's transaction. Default 120,000. */
  importStatementTimeoutMs?: number;
  /** REDIS_URL: automatic persisted queries are kept there, shared by every process; in this process's memory otherwise. */
  redisUrl?: string;
  /** Prefix of the persisted queries' Redis keys (tests give each server its own). Default nftgw:apq: */
  apqRedisPrefix?: string;
  /**
   * TRUSTED_DOCUMENTS: the registered operations of persisted-query manifests (`npm run documents`,
   * docs/trusted-documents.md). `allow` (default) serves a registered id besides everything else, `require`
   * runs nothing else on /graphql, `off` never reads them.
   */
  trustedDocuments?: TrustMode;
  /**
   * Run the expiry sweeper in this process (EXPIRY_SWEEPER; main.ts passes it, on by default). Off unless
   * asked: tests that start many servers run it only where they test it.
   */
  expirySweeper?: boolean;
  /** Live subscriptions read the log's head this often whatever LISTEN/NOTIFY says (EVENTS_POLL_MS). Default 1000. */
  eventsPollMs?: number;
  /** LISTEN on the database for commits of other processes (on PGlite it is skipped by itself). Default true. */
  listenForEvents?: boolean;
  /** Operations one WebSocket connection may have open (SUBSCRIPTIONS_PER_CONNECTION). Default 20. */
  subscriptionsPerConnection?: number;
  /** METRICS_TOKEN: GET /metrics needs `Authorization: Bearer <token>` (401 otherwise); open when absent. */
  metricsToken?: string;
  /** REQUEST_BODY_TIMEOUT_MS: a request body that sends nothing for this long is ended with 408. Default 30,000. */
  requestBodyTimeoutMs?: number;
  /** Webhooks: whether private targets are allowed, and the delivery worker (started when `deliver`). Default: neither. */
  webhooks?: WebhookSettings;
  /** The chains to follow (CHAIN_RPC_<chain_id>, docs/chain.md): a follower per chain, one process at a time per chain. None by default. */
  chains?: ChainSettings;
  /** Fetching tokenURI documents (METADATA_*, docs/metadata.md): the worker starts when `fetch`. Default: no worker, the default limits. */
  metadata?: MetadataSettings;
  /**
   * SETTLEMENT and SETTLEMENT_DEADLINE (docs/chain.md "Settlement on chain"): set for the whole process when
   * given (main.ts passes them); the process's setting stays as it is otherwise (offchain from the start).
   */
  settlement?: SettlementSettings;
}

export interface App {
  app: express.Express;
  /** The HTTP server's request listener: the lean door (known queries, GET routes of /v1; lean.ts) in front of `app`. */
  listener: http.RequestListener;
  /** Requests being handled now (a client that hung up does not end its request's work). */
  inFlight: InFlight;
  /** The turns of large queries, REST and GraphQL alike. */
  largeQueries: QueryGate;
  /** Serves the WebSocket door of /graphql (graphql-ws subscriptions) on this HTTP server. */
  attachSubscriptions(server: http.Server): void;
  /** Closes every subscription's socket (1001 going away), waiting up to withinMs for the clients' close handshakes. */
  closeSubscriptions(withinMs?: number): Promise<void>;
  /** The wake-up of this process's live subscriptions (LISTEN/NOTIFY, in-process, poll). */
  eventWakeup: EventWakeup;
  /** The chain followers of this process (one per followed chain; each follows while it holds its chain's lock). */
  chainFollowers: ChainFollower[];
  /** Closes the subscriptions, waits (up to drainMs) for the requests in flight to finish their work, then stops Apollo. */
  stop(drainMs?: number): Promise<void>;
}

declare module 'express-serve-static-core' {
  interface Request {
    requestId: string;
    /** Set once the body has been read, for /graphql and /v1: the request's SQL statement counter. */
    scope: RequestScope;
  }
}

/**
 * Opens the request scope (request id, SQL statement counter) once the body has been read; the request's
 * context hands it to every statement the request causes (see scopedDataSource).
 */
function openScope(req: Request, _res: Response, next: NextFunction): void {
  processCounters.requests += 1;
  req.scope = { requestId: req.requestId, sqlStatements: 0 };
  const timedOut = timedOutAtDoor(req);
  if (timedOut) req.scope.failWith = timedOut;
  // A write's consistency token, sent back: with read replicas, this request reads only where that write is.
  const token = req.headers['x-min-lsn'];
  if (typeof token === 'string' && token !== '') {
    const lsn = parseLsn(token);
    if (lsn === undefined) return next(new BadRequestError(`x-min-lsn must be a WAL position such as 0/16B3748 (from a write's x-min-lsn header), got "${token.slice(0, 40)}"`));
    req.scope.minLsn = lsn;
  }
  next();
}

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

/** `Authorization: Bearer <token>` with exactly this token, compared in constant time. */
function bearerIs(authorization: string | undefined, token: string): boolean {
  const given = Buffer.from(/^Bearer (.+)$/i.exec(authorization ?? '')?.[1] ?? '');
  const wanted = Buffer.from(token);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

/** An id a client may give in x-request-id: letters, digits and . _ : -, 8 to 128 of them. */
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/** The client's own id, when it is a plain token, so its logs and ours share it; else a new one. */
function requestIdOf(req: http.IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && CLIENT_REQUEST_ID.test(given) ? given : randomUUID();
}

/** The express app: /graphql (Apollo + Sandbox), /v1 (REST over the same schema), /healthz, /readyz. No listen. */
export async function createApp(ds: DataSource, options: AppOptions = {}): Promise<App> {
  if (options.settlement) settlement.use(options.settlement);
  const policy: RequestPolicy = {
    signatures: options.signatures ?? 'optional',
    webhookAllowPrivate: options.webhooks?.allowPrivate ?? false,
    statisticsMaxAgeMs: options.statisticsMaxAgeMs ?? 0,
    auctionMinIncrementPercent: options.auctionMinIncrementPercent,
    importStatementTimeoutMs: options.importStatementTimeoutMs,
    metadataRefreshIntervalS: options.metadata?.refreshIntervalS,
  };
  const rateLimit = options.rateLimit ? createRateLimit(options.rateLimit, async (key) => (await callerForKey(ds, key)) !== null) : undefined;
  // Every request's context tells the rate limit what its key's lookup found.
  const contextOptions: ContextOptions = { policy, keyChecked: rateLimit?.keyChecked };
  // With read replicas (db/replicas.ts): write responses carry the consistency token a client may send back.
  const readRouter = readRouterOf(ds);
  const schema = await buildAppSchema();
  const largeQueries = new QueryGate(options.largeQuerySlots ?? 4, options.largeQueryItems ?? 5000);
  const limit = options.jsonBodyLimit ?? '1mb';
  const production = options.production ?? false;
  const plans =
    options.sqlPlans ?? true
      ? (operation: OperationDefinitionNode, planOptions?: { restText?: boolean; document?: DocumentNode }) => planOperation(schema, ds, operation, planOptions)
      : undefined;
  const compiledOperations = new CompiledOperations(plans);
  const trustMode = options.trustedDocuments ?? 'allow';
  const trust =
    trustMode === 'off'
      ? undefined
      : new TrustedDocuments(trustMode, ds, schema, { maxAliases: options.maxAliases, prepare: (known, hash) => compiledOperations.prepare(known, hash) });
  const apqCache = options.redisUrl ? redisQueryCache(options.redisUrl, options.apqRedisPrefix ?? 'nftgw:apq:') : memoryQueryCache();
  const apollo = new ApolloServer<Context>({
    // Automatic persisted queries: in Redis when there is one (every process finds them), else in memory.
    persistedQueries: { cache: apqCache, ttl: 24 * 3600 },
    // The schema, with queries run by graphql-jit (see jit.ts).
    gateway: jitGateway(schema, largeQueries, compiledOperations),
    // Sandbox (development) needs introspection; production answers neither.
    introspection: !production,
    // main.ts owns the signals: it stops the HTTP server, then Apollo, then the database, in that order.
    stopOnTerminationSignals: false,
    includeStacktraceInErrorResponses: false,
    formatError: formatGraphQLError(schema, production),
    validationRules: [operationLimits, ...protectionRules(options.maxAliases), subscriptionsOverWebSocket],
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
              const { errors, data } = response.body.singleResult;
              for (const error of errors ?? []) {
                const formatted = error as { message: string; extensions?: Record<string, unknown> };
                formatted.extensions = { ...formatted.extensions, requestId: scope.requestId };
                if (formatted.extensions.code === 'INTERNAL') formatted.message = internalMessage(scope.requestId);
              }
              const retryable = errors?.find((e) => RETRYABLE_CODES.has(String(e.extensions?.code)));
              if (retryable) {
                const code = String(retryable.extensions!.code);
                for (const [name, value] of Object.entries(retryAfterFor(code))) response.http.headers.set(name, value);
                // Nothing could be returned: the status says so too, as on the REST door.
                if (!data || Object.values(data).every((value) => value === null)) response.http.status = httpStatusOf[code];
              }
            },
          };
        },
      },
    ],
  });
  await apollo.start();
  const inFlight = new InFlight();
  const graphqlHandler = expressMiddleware(apollo, {
    context: async ({ req }) => createContext(ds, req.scope, keyFromHeaders(req.headers), contextOptions),
  });

  const app = express();
  app.disable('x-powered-by');
  // Express's own setting of the mode, read where an error is answered (sendRestError): no suggestions of names in production.
  app.set('env', production ? 'production' : 'development');
  app.set('query parser', 'simple');
  app.use((req, res, next) => {
    // Set already when the lean door passed the request on.
    req.requestId ??= requestIdOf(req);
    res.setHeader('x-request-id', req.requestId);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    // An answer for an API key is the key's own: no cache keeps it (the lean door says the same).
    if (hasApiKey(req)) res.setHeader('Cache-Control', 'no-store');
    next();
  });
  const metrics = options.metrics ?? true;
  const observe: ObserveOptions = { metrics, slowRequestMs: options.slowRequestMs ?? 1000 };
  app.use(observeRequests(observe));
  // Bodies over 1 KB, for clients that accept it: REST W1 is 411 KB of JSON (the bench shows the trade).
  const compressionThreshold = 1024;
  // Brotli at the package's quality (4) with a 512 KB window, not the default 4 MB: the encoder's memory
  // follows its window, and under 32 connections dozens of REST W1 answers (418 KB, less than the window:
  // not a byte larger) are compressed at once. Peak RSS under REST W1 br: 270-329 -> 221-227 MB.
  const brotli = { params: { [zlibConstants.BROTLI_PARAM_LGWIN]: 19 } };
  const compress = options.compression ?? true ? compression({ threshold: compressionThreshold, brotli } as compression.CompressionOptions) : undefined;
  if (compress) app.use(compress);
  const unwatchPool = watchPool(() => (ds.driver as unknown as { master?: PoolFigures }).master);
  const unwatchSettlements = watchSettlements(() => pendingSettlements(ds));
  const unwatchMetadataQueue = watchMetadataQueue(() => metadataQueueFigures(ds));
  if (metrics) {
    const token = options.metricsToken;
    app.get('/metrics', async (req, res) => {
      if (token !== undefined && !bearerIs(req.headers.authorization, token)) {
        res.setHeader('WWW-Authenticate', 'Bearer realm="metrics"');
        return sendMiddlewareError(req, res, new UnauthenticatedError('GET /metrics needs the METRICS_TOKEN in Authorization: Bearer'));
      }
      res.type(metricsRegistry.contentType).send(await metricsRegistry.metrics());
    });
  }
  const cors = corsMiddleware(options.corsOrigins ?? []);
  app.use(cors);

  app.get('/', home);
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    try {
      // A chain that lags behind leaves the gateway ready (it answers from what it has applied) and says so;
      // without chains, one statement tells whether the database answers.
      const followed = options.chains?.follow.map((c) => c.chainId) ?? [];
      const chains = followed.length ? await chainLags(ds, followed) : await ds.query('SELECT 1').then(() => []);
      res.json(followed.length ? { status: 'ready', chains } : { status: 'ready' });
    } catch {
      res.status(503).set(retryAfterFor('UNAVAILABLE')).json({ status: 'unavailable', reason: 'the database does not answer' });
    }
  });

  // The description of /v1 and its reference page: static documents, outside the rate limit.
  app.use(apiDocsRouter(schema));
  // GraphiQL, where Sandbox cannot load (http/explorer.ts); like Sandbox, not in production.
  if (!production) app.use(explorerRouter());
  if (rateLimit) app.use(['/graphql', '/v1'], rateLimit.middleware);
  app.use(keyBeforeUpload((req) => createContext(ds, { requestId: req.requestId, sqlStatements: 0 }, keyFromHeaders(req.headers), contextOptions).requireCaller()));
  const lean: LeanDeps = { known: compiledOperations, schema, largeQueries, newContext: (scope, apiKey) => createContext(ds, scope, apiKey, contextOptions), trust };
  const persistedText = (hash: string) => persistedQueryText(apqCache, hash);
  const idempotency = createIdempotency(ds, options.idempotencyTtlS ?? 86400, persistedText);
  app.use(
    '/graphql',
    graphqlHttpErrors,
    // Multipart uploads (importAssets). One byte over the limit, so the import's own byte count refuses the file with 413.
    uploadErrorsAreClientErrors(graphqlUploadExpress({ maxFileSize: MAX_IMPORT_BYTES + 1, maxFiles: 1 })),
    express.json({ limit }),
    bodyReadByDoor,
    openScope,
    // Before anything reads the document: a refused one is never parsed; an id alone becomes its registered text.
    ...(trust ? [trustedDocumentsGate(trust, persistedText)] : []),
    idempotency,
    (req: Request, res: Response, next: NextFunction) =>
      inFlight.track(async () => {
        // A query Apollo has validated and graphql-jit compiled runs without Apollo's pipeline (lean.ts).
        if (await answerCompiled(req, res, lean)) return;
        return graphqlHandler(req, res, next);
      }),
  );
  app.use(requireBodyType(schema, routes));
  // The documented import sends the CSV text form-urlencoded: that one path takes bodies up to the import limit.
  app.use('/v1/assets/import', express.urlencoded({ extended: false, limit: MAX_IMPORT_BYTES + 64 * 1024 }));
  app.use('/v1', express.json({ limit }), openScope, idempotency);
  const rest = restRouter(schema, ds, inFlight, largeQueries, contextOptions, plans);
  app.use(rest.router);
  app.use(methodNotAllowed(schema, routes));

  app.use((req, res) => {
    sendRestError(res, schema, new NotFoundError(`no route ${req.method} ${req.path}; see the README for the API`), false);
  });

  // Body parsing (express, graphql-upload) and anything else that fails outside a resolver. Their 4xx
  // errors are the client's: they keep their status; the client never gets a stack.
  app.use((err: Error & { type?: string; status?: number }, req: Request, res: Response, _next: NextFunction) => {
    let error: unknown = err;
    if (err.type === 'entity.parse.failed') error = new BadRequestError('the request body is not valid JSON');
    else if (err.status === 413) {
      const max = (err as { limit?: number }).limit;
      error = new PayloadTooLargeError(max ? `the request body is larger than ${Math.floor(max / 1024)} KB` : err.message);
    } else if (err.status && err.status >= 400 && err.status < 500) {
      error = new BadRequestError(`the request cannot be read: ${err.message}`);
    }
    if (req.originalUrl.startsWith('/graphql')) {
      const client = toClientError(schema, error, false, req.requestId, production);
      res.status(httpStatusOf[client.code] ?? 500).set(retryAfterFor(client.code)).json({
        errors: [{ message: client.message, extensions: { code: client.code, requestId: req.requestId } }],
      });
    } else {
      sendRestError(res, schema, error, false);
    }
  });

  const sweeper = options.expirySweeper ? startExpirySweeper(ds) : undefined;
  const chainFollowers = options.chains?.follow.length ? startChainFollowers(ds, options.chains) : undefined;
  const eventWakeup = new EventWakeup(ds, {
    pollMs: options.eventsPollMs ?? 1000,
    listenUrl: options.listenForEvents ?? true ? (ds.options as { url?: string }).url : undefined,
  });
  eventWakeup.start();
  const subscriptionServers: SubscriptionServer[] = [];
  const closeSubscriptions = async (withinMs = 1000) => {
    await Promise.all(subscriptionServers.map((s) => s.close(withinMs)));
  };
  // Delivery runs beside the requests, in this process, for as long as the app does.
  const webhookWorker = options.webhooks?.deliver ? new WebhookWorker(ds, options.webhooks) : undefined;
  const metadataWorker = options.metadata?.fetch ? new MetadataWorker(ds, options.metadata) : undefined;

  const door = leanDoor(
    {
      ...lean,
      inFlight,
      rateLimit,
      observe,
      compression: compress && { middleware: compress as never, threshold: compressionThreshold },
      requestIdOf,
      rest,
      trustedOrigins: new Set(options.corsOrigins ?? []),
    },
    (req, res) => void app(req, res),
  );
  const watchBody = endStalledBodies(options.requestBodyTimeoutMs ?? 30_000);
  const listener: http.RequestListener = (req, res) => {
    watchBody(req, res);
    door(req, res);
  };

  return {
    app,
    listener,
    inFlight,
    largeQueries,
    eventWakeup,
    chainFollowers: chainFollowers?.followers ?? [],
    attachSubscriptions(server) {
      subscriptionServers.push(
        serveSubscriptions(server, schema, ds, eventWakeup, policy, {
          rateLimit,
          production,
          maxAliases: options.maxAliases,
          trust,
          perConnection: options.subscriptionsPerConnection ?? 20,
          maxPayload: 1024 * 1024,
        }),
      );
    },
    closeSubscriptions,
    async stop(drainMs = 30_000) {
      await closeSubscriptions(Math.min(1000, drainMs));
      await eventWakeup.stop();
      await Promise.all([sweeper?.stop(drainMs), inFlight.drained(drainMs), webhookWorker?.stop(drainMs), metadataWorker?.stop(drainMs), chainFollowers?.stop()]);
      unwatchPool();
      unwatchSettlements();
      unwatchMetadataQueue();
      await apollo.stop();
      await rateLimit?.close();
      await apqCache.close();
    },
  };
}
