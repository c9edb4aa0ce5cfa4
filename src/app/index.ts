import type { DocumentNode, OperationDefinitionNode } from 'graphql';
import http from 'node:http';
import type express from 'express';
import { DataSource } from 'typeorm';
import { InFlight } from '../common/in-flight';
import { watchMetadataQueue, watchPool, watchSettlements, PoolFigures } from '../common/metrics';
import { QueryGate } from '../common/query-gate';
import type { RequestPolicy } from '../common/request/context';
import { readRouterOf } from '../common/request/scope';
import { traceRequest } from '../common/tracing';
import { callerForKey } from '../modules/apikey/api-key.service';
import { ChainFollower, startChainFollowers } from '../modules/chain/chain.follower';
import { contractOwnerReader } from '../modules/chain/chain.owner';
import { EventWakeup } from '../modules/event/event.wakeup';
import { startExpirySweeper } from '../modules/event/expiry.sweeper';
import { pendingSettlements } from '../modules/order/settlement';
import { settlement } from '../modules/order/settlement.settings';
import { WebhookWorker } from '../modules/webhook/webhook.worker';
import { MetadataWorker } from '../modules/metadata/metadata.worker';
import { metadataQueueFigures } from '../modules/metadata/metadata.queue';
import { ContextOptions, createContext } from './context';
import { createApollo } from './entry/apollo';
import { leanDoor } from './entry/door';
import { COMPRESSION_THRESHOLD, compressionOf, createExpressApp } from './entry/express';
import { entryRules } from './entry/paths';
import type { AppOptions } from './entry/options';
import { memoryQueryCache, persistedQueryText, redisQueryCache } from './graphql/apq-cache';
import { answerByApollo } from './graphql/by-apollo';
import { CompiledOperations, KnownDeps, runKnown } from './graphql/known';
import { buildAppSchema } from './graphql/schema';
import { planOperation } from './graphql/sql-plan';
import { serveSubscriptions, SubscriptionServer } from './graphql/subscriptions';
import { TrustedDocuments } from './graphql/trusted/trusted-documents';
import { endStalledBodies } from './http/body-stall';
import { corsOf } from './http/cors';
import type { ObserveOptions } from './http/observe';
import { createRateLimit } from './http/rate-limit';
import { restRouter } from './rest/v1/router';

export type { AppOptions } from './entry/options';

export interface App {
  app: express.Express;
  /** The HTTP server's request listener: the lean door (known queries, GET routes of /v1; entry/door.ts) in front of `app`. */
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

/**
 * The gateway without its listen: the lean door (entry/door.ts) in front of express (entry/express.ts),
 * over one schema, one executor (graphql/execute.ts) and Apollo (entry/apollo.ts); and the work that runs
 * beside the requests (subscriptions, the expiry sweeper, chain followers, webhook delivery, metadata fetching).
 */
export async function createApp(ds: DataSource, options: AppOptions = {}): Promise<App> {
  if (options.settlement) settlement.use(options.settlement);
  const policy: RequestPolicy = {
    signatures: options.signatures ?? 'optional',
    webhookAllowPrivate: options.webhooks?.allowPrivate ?? false,
    statisticsMaxAgeMs: options.statisticsMaxAgeMs ?? 0,
    auctionMinIncrementPercent: options.auctionMinIncrementPercent,
    importStatementTimeoutMs: options.importStatementTimeoutMs,
    metadataRefreshIntervalS: options.metadata?.refreshIntervalS,
    contractOwner: contractOwnerReader(options.chains),
  };
  const rateLimit = options.rateLimit ? createRateLimit(options.rateLimit, async (key) => (await callerForKey(ds, key)) !== null) : undefined;
  // Every request's context tells the rate limit what its key's lookup found.
  const contextOptions: ContextOptions = { policy, keyChecked: rateLimit?.keyChecked };
  const schema = await buildAppSchema();
  const largeQueries = new QueryGate(options.largeQuerySlots ?? 4, options.largeQueryItems ?? 5000);
  const production = options.production ?? false;
  const plans =
    options.sqlPlans ?? true
      ? (operation: OperationDefinitionNode, planOptions?: { restText?: boolean; document?: DocumentNode }) => planOperation(schema, operation, planOptions)
      : undefined;
  const compiledOperations = new CompiledOperations(plans);
  const trustMode = options.trustedDocuments ?? 'allow';
  const trust =
    trustMode === 'off'
      ? undefined
      : new TrustedDocuments(trustMode, ds, schema, { maxAliases: options.maxAliases, prepare: (known, hash) => compiledOperations.prepare(known, hash) });
  const apqCache = options.redisUrl ? redisQueryCache(options.redisUrl, options.apqRedisPrefix ?? 'nftgw:apq:') : memoryQueryCache();
  const persistedText = (hash: string) => persistedQueryText(apqCache, hash);
  // With read replicas (db/replicas.ts): write responses carry the consistency token a client may send back.
  const apollo = createApollo({ schema, largeQueries, compiledOperations, apqCache, production, maxAliases: options.maxAliases, readRouter: readRouterOf(ds) });
  await apollo.start();
  const inFlight = new InFlight();
  const known: KnownDeps = { known: compiledOperations, schema, largeQueries, newContext: (scope, apiKey) => createContext(ds, scope, apiKey, contextOptions), trust, production };
  const rest = restRouter(schema, ds, inFlight, largeQueries, contextOptions, production, plans);
  const observe: ObserveOptions = { metrics: options.metrics ?? true, slowRequestMs: options.slowRequestMs ?? 1000 };
  const compress = compressionOf(options);
  const app = createExpressApp({ ds, schema, options, production, contextOptions, metrics: observe.metrics, known, trust, persistedText, apollo, inFlight, restRouter: rest.router, compress });
  const door = leanDoor(
    {
      graphql: {
        answerKnown: (request, apiKey, scope, noted) => runKnown(request, apiKey, scope, known, noted),
        answerByApollo: (request, scope, unregistered) => answerByApollo({ apollo, newContext: known.newContext, trust, persisted: persistedText }, request, scope, unregistered),
      },
      rest,
      inFlight,
      rateLimit,
      observe,
      compression: compress && { middleware: compress as never, threshold: COMPRESSION_THRESHOLD },
      cors: corsOf(options.corsOrigins ?? []),
      rules: entryRules({ metrics: observe.metrics, explorer: !production }),
    },
    (req, res) => void app(req, res),
  );
  const watchBody = endStalledBodies(options.requestBodyTimeoutMs ?? 30_000);
  const listener: http.RequestListener = (req, res) => {
    traceRequest(req, res);
    watchBody(req, res);
    door(req, res);
  };

  const unwatchPool = watchPool(() => (ds.driver as unknown as { master?: PoolFigures }).master);
  const unwatchSettlements = watchSettlements(() => pendingSettlements(ds));
  const unwatchMetadataQueue = watchMetadataQueue(() => metadataQueueFigures(ds));
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
