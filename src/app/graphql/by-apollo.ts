import type { IncomingHttpHeaders } from 'node:http';
import { ApolloServer, HeaderMap } from '@apollo/server';
import type { Context } from '../../common/request/context';
import type { RequestScope } from '../../common/request/scope';
import { keyFromHeaders } from '../../modules/apikey/api-key.service';
import { refusalAnswer, type HttpAnswer } from '../http/respond';
import { withRequestIds } from './http-errors';
import { trustedRequest } from './trusted/gate';
import type { TrustedDocuments } from './trusted/trusted-documents';

/** What Apollo's road needs of the app. */
export interface ApolloRoadDeps {
  apollo: ApolloServer<Context>;
  /** A request's context, with the API key it carries. */
  newContext: (scope: RequestScope, apiKey?: string) => Context;
  /** The registered documents (TRUSTED_DOCUMENTS allow or require); absent when off. */
  trust?: TrustedDocuments;
  /** The automatic persisted queries' text by hash. */
  persisted: (hash: string) => Promise<string | undefined>;
}

/**
 * A GraphQL request (method, headers, the URL's search, the parsed JSON body) answered by Apollo's
 * pipeline, as express's /graphql chain answers it for the same request: the trusted-documents check
 * (trusted/gate.ts), then Apollo (parse, validate, plugins, the executor of jit.ts), whose error bodies
 * get the request id (http-errors.ts). For the lean door (entry/door.ts) and express (entry/express.ts, without
 * `trust`: its gate ran before), which write the answer.
 */
export async function answerByApollo(
  deps: ApolloRoadDeps,
  request: { method: string; headers: IncomingHttpHeaders; search: string; body?: unknown },
  scope: RequestScope,
  unregistered?: string,
): Promise<HttpAnswer> {
  let { search, body } = request;
  if (deps.trust) {
    const verdict = await trustedRequest(deps.trust, deps.persisted, request, unregistered);
    if ('refuse' in verdict) return refusalAnswer('/graphql', scope.requestId, verdict.refuse);
    search = verdict.search ?? search;
    body = verdict.body ?? body;
  }
  const headers = new HeaderMap();
  for (const [name, value] of Object.entries(request.headers)) if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  const response = await deps.apollo.executeHTTPGraphQLRequest({
    httpGraphQLRequest: { method: request.method, headers, search, body },
    context: async () => deps.newContext(scope, keyFromHeaders(request.headers)),
  });
  let text: string;
  if (response.body.kind === 'complete') text = response.body.string;
  else {
    text = '';
    for await (const chunk of response.body.asyncIterator) text += chunk;
  }
  const status = response.status ?? 200;
  const out: string[] = [];
  for (const [name, value] of response.headers) if (name !== 'content-type' && name !== 'x-sql-statements') out.push(name, value);
  // Apollo's plugin writes the statement count of every operation it ran; its refusals of a request carry none.
  return { status, headers: out, body: withRequestIds(status, text, scope.requestId), type: response.headers.get('content-type'), uncounted: !response.headers.has('x-sql-statements') };
}
