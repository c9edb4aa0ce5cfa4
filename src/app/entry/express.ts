import { timingSafeEqual } from 'node:crypto';
import { constants as zlibConstants } from 'node:zlib';
import type { ApolloServer } from '@apollo/server';
import compression from 'compression';
import express, { NextFunction, Request, RequestHandler, Response } from 'express';
import type { GraphQLSchema } from 'graphql';
import { graphqlUploadExpress } from 'graphql-upload-minimal';
import type { DataSource } from 'typeorm';
import { AppError, BadRequestError, NotFoundError, PayloadTooLargeError, UnauthenticatedError, UnsupportedMediaTypeError } from '../../common/errors';
import type { InFlight } from '../../common/in-flight';
import { metricsRegistry } from '../../common/metrics';
import type { Context } from '../../common/request/context';
import type { RequestScope } from '../../common/request/scope';
import { requestSpanOf } from '../../common/tracing';
import { keyFromHeaders } from '../../modules/apikey/api-key.service';
import { chainLags } from '../../modules/chain/chain.sync';
import { MAX_IMPORT_BYTES } from '../../modules/import/csv-rows';
import { createContext, type ContextOptions } from '../context';
import { graphqlRefusal } from '../graphql/answer';
import { answerByApollo, type ApolloRoadDeps } from '../graphql/by-apollo';
import { retryAfterFor } from '../graphql/format-error';
import { graphqlHttpErrors, uploadErrorsAreClientErrors } from '../graphql/http-errors';
import { answerCompiled, type KnownDeps } from '../graphql/known';
import { trustedDocumentsGate } from '../graphql/trusted/gate';
import type { TrustedDocuments } from '../graphql/trusted/trusted-documents';
import { explorerRouter } from '../http/explorer';
import { home } from '../http/home';
import { exchangeOf } from '../http/exchange';
import { sendAnswer, sendMiddlewareError } from '../http/respond';
import { keyBeforeUpload } from '../http/upload-key';
import { sendRestError } from '../rest/errors';
import { apiDocsRouter } from '../rest/v1/docs';
import { methodNotAllowed, requireBodyType } from '../rest/v1/http-rules';
import { routes } from '../rest/v1/routes';
import { createIdempotency } from './idempotency';
import type { AppOptions } from './options';

declare module 'express-serve-static-core' {
  interface Request {
    requestId: string;
    /** Set once the body has been read, for /graphql and /v1: the request's SQL statement counter. */
    scope: RequestScope;
  }
}

/** Bodies over 1 KB, for clients that accept it: REST W1 is 411 KB of JSON (the bench shows the trade). */
export const COMPRESSION_THRESHOLD = 1024;

/** The compression middleware (COMPRESSION=off: none), shared by express and the lean door. */
export function compressionOf(options: AppOptions): RequestHandler | undefined {
  if (!(options.compression ?? true)) return undefined;
  // Brotli at the package's quality (4) with a 512 KB window, not the default 4 MB: the encoder's memory
  // follows its window, and under 32 connections dozens of REST W1 answers (418 KB, less than the window:
  // not a byte larger) are compressed at once. Peak RSS under REST W1 br: 270-329 -> 221-227 MB.
  const brotli = { params: { [zlibConstants.BROTLI_PARAM_LGWIN]: 19 } };
  return compression({ threshold: COMPRESSION_THRESHOLD, brotli } as compression.CompressionOptions);
}

/**
 * The scope the entry opened for a request of /graphql or /v1 (http/exchange.ts openScope), given to the
 * routes once the body has been read: the request's context hands it to every statement the request causes
 * (see scopedDataSource), and an error answered before that (a body that cannot be read) carries no
 * statement count.
 */
function bodyRead(req: Request, _res: Response, next: NextFunction): void {
  req.scope = exchangeOf(req).scope!;
  next();
}

/** `Authorization: Bearer <token>` with exactly this token, compared in constant time. */
function bearerIs(authorization: string | undefined, token: string): boolean {
  const given = Buffer.from(/^Bearer (.+)$/i.exec(authorization ?? '')?.[1] ?? '');
  const wanted = Buffer.from(token);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

/** What express is given by createApp: the pieces it shares with the lean door. */
export interface ExpressParts {
  ds: DataSource;
  schema: GraphQLSchema;
  options: AppOptions;
  production: boolean;
  contextOptions: ContextOptions;
  /** GET /metrics is served (METRICS). */
  metrics: boolean;
  /** The known queries and how they run (graphql/known.ts). */
  known: KnownDeps;
  trust?: TrustedDocuments;
  /** The automatic persisted queries' text by hash. */
  persistedText: (hash: string) => Promise<string | undefined>;
  apollo: ApolloServer<Context>;
  inFlight: InFlight;
  /** REST's express router (rest/v1/router.ts). */
  restRouter: express.Router;
  compress?: RequestHandler;
}

/**
 * express, for what the lean door leaves to it (entry/door.ts): the server's own paths, uploads, bodies
 * over 64 KB, writes of /v1, an Idempotency-Key or x-min-lsn. The entry has done each step of a request it
 * is given that does not read the body (its id, the headers every answer carries, CORS and its preflights,
 * the rate limit, the scope, its log line and metrics: http/exchange.ts, entry/paths.ts); express routes
 * it, reads its body and answers it.
 */
export function createExpressApp(parts: ExpressParts): express.Express {
  const { ds, schema, options, production } = parts;
  const app = express();
  app.disable('x-powered-by');
  // Express's own setting of the mode, read where an error is answered (sendRestError): no suggestions of names in production.
  app.set('env', production ? 'production' : 'development');
  app.set('query parser', 'simple');
  // The id the entry gave the request (its headers are set already).
  app.use((req, _res, next) => {
    req.requestId = exchangeOf(req).requestId;
    next();
  });
  if (parts.compress) app.use(parts.compress);
  if (parts.metrics) app.get('/metrics', metricsPage(options.metricsToken));
  serveOwnPaths(app, ds, options);
  // The description of /v1 and its reference page: static documents.
  app.use(apiDocsRouter(schema));
  // GraphiQL, where Sandbox cannot load (http/explorer.ts); like Sandbox, not in production.
  if (!production) app.use(explorerRouter());
  app.use(keyBeforeUpload((req) => createContext(ds, { requestId: req.requestId, sqlStatements: 0, span: requestSpanOf(req) }, keyFromHeaders(req.headers), parts.contextOptions).requireCaller()));
  const idempotency = createIdempotency(ds, options.idempotencyTtlS ?? 86400, parts.persistedText);
  app.use('/graphql', ...graphqlChain(parts, idempotency));
  app.use(requireBodyType(routes));
  // The documented import sends the CSV text form-urlencoded: that one path takes bodies up to the import limit.
  app.use('/v1/assets/import', express.urlencoded({ extended: false, limit: MAX_IMPORT_BYTES + 64 * 1024 }));
  app.use('/v1', express.json({ limit: options.jsonBodyLimit ?? '1mb' }), bodyRead, idempotency);
  app.use(parts.restRouter);
  app.use(methodNotAllowed(schema, routes));
  app.use((req, res) => {
    sendRestError(res, schema, new NotFoundError(`no route ${req.method} ${req.path}; see the README for the API`), false);
  });
  app.use(errorHandler(schema, production));
  return app;
}

/** GET /metrics, behind METRICS_TOKEN when one is set. */
function metricsPage(token: string | undefined): RequestHandler {
  return async (req, res) => {
    if (token !== undefined && !bearerIs(req.headers.authorization, token)) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="metrics"');
      return sendMiddlewareError(req, res, new UnauthenticatedError('GET /metrics needs the METRICS_TOKEN in Authorization: Bearer'));
    }
    res.type(metricsRegistry.contentType).send(await metricsRegistry.metrics());
  };
}

/** The home page, /healthz and /readyz. */
function serveOwnPaths(app: express.Express, ds: DataSource, options: AppOptions): void {
  app.get('/', home(app, routes.map((r) => r.path)));
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
}

/** /graphql in express: uploads, the JSON body, the scope, trusted documents, idempotency, then a known query or Apollo. */
function graphqlChain(parts: ExpressParts, idempotency: RequestHandler): RequestHandler[] {
  // Apollo's pipeline as the lean door runs it (graphql/by-apollo.ts); the documents are past the gate below already.
  const apollo: ApolloRoadDeps = { apollo: parts.apollo, newContext: parts.known.newContext, persisted: parts.persistedText };
  return [
    graphqlHttpErrors,
    // Multipart uploads (importAssets). One byte over the limit, so the import's own byte count refuses the file with 413.
    uploadErrorsAreClientErrors(graphqlUploadExpress({ maxFileSize: MAX_IMPORT_BYTES + 1, maxFiles: 1 })),
    express.json({ limit: parts.options.jsonBodyLimit ?? '1mb' }),
    bodyRead,
    // Before anything reads the document: a refused one is never parsed; an id alone becomes its registered text.
    ...(parts.trust ? [trustedDocumentsGate(parts.trust, parts.persistedText)] : []),
    idempotency,
    (req: Request, res: Response) =>
      parts.inFlight.track(async () => {
        // A query Apollo has validated and graphql-jit compiled runs without Apollo's pipeline (graphql/known.ts).
        if (await answerCompiled(req, res, parts.known)) return;
        const at = req.url.indexOf('?');
        const request = { method: req.method, headers: req.headers, search: at < 0 ? '' : req.url.slice(at), body: req.body };
        sendAnswer(res, await answerByApollo(apollo, request, req.scope), req.scope);
      }),
  ];
}

/**
 * What failed outside every road: a body its parser refuses (express.json, express.urlencoded,
 * graphql-upload) is the client's, answered as every refusal is on both doors and by both roads
 * (http/respond.ts refusalAnswer: 400 not JSON, 413 too large, 415 a charset or encoding it does not read,
 * another 4xx a 400); anything else as its door answers an error (an unexpected one logged and INTERNAL:
 * the client never gets a stack).
 */
function errorHandler(schema: GraphQLSchema, production: boolean) {
  return (err: Error & { type?: string; status?: number }, req: Request, res: Response, _next: NextFunction) => {
    const refused = bodyRefusal(err);
    if (refused) return sendMiddlewareError(req, res, refused);
    if (req.originalUrl.startsWith('/graphql')) sendAnswer(res, graphqlRefusal(schema, production, { requestId: req.requestId, sqlStatements: 0 }, err));
    else sendRestError(res, schema, err, false);
  };
}

/** The client's error in a body its parser refused, or undefined for an error of another kind. */
function bodyRefusal(err: Error & { type?: string; status?: number; limit?: number }): AppError | undefined {
  if (err.type === 'entity.parse.failed') return new BadRequestError('the request body is not valid JSON');
  if (err.status === 413) return new PayloadTooLargeError(err.limit ? `the request body is larger than ${Math.floor(err.limit / 1024)} KB` : err.message);
  // A charset or an encoding the parser does not read (express.json's 415s).
  if (err.status === 415) return new UnsupportedMediaTypeError(`the request body cannot be read: ${err.message}`);
  if (err.status && err.status >= 400 && err.status < 500) return new BadRequestError(`the request cannot be read: ${err.message}`);
  return undefined;
}
