import { Express, Request, RequestHandler, Response } from 'express';

/** What each endpoint is for, as a newcomer who opens the server's address reads it, and its key in the JSON answer. */
const ABOUT: Record<string, { rel: string; about: string }> = {
  '/graphql': { rel: 'graphql', about: 'GraphQL: POST queries here; a browser gets Apollo Sandbox' },
  '/graphql/explorer': { rel: 'explorer', about: 'GraphiQL served by the gateway itself: the explorer that opens offline (not in production)' },
  '/v1/docs': { rel: 'docs', about: 'The /v1 REST reference, to read and try' },
  '/v1/openapi.json': { rel: 'openapi', about: 'The OpenAPI 3.1 description of /v1' },
  '/healthz': { rel: 'health', about: 'Liveness: {"status":"ok"} while the process runs' },
  '/readyz': { rel: 'ready', about: 'Readiness: 200 while the database answers (and how far followed chains lag), 503 otherwise' },
  '/metrics': { rel: 'metrics', about: 'Prometheus metrics (Authorization: Bearer <METRICS_TOKEN> when one is set)' },
};

interface Link {
  rel: string;
  href: string;
  about: string;
}

/** The path GraphQL is mounted at: a mount (app.use), which the route walk below does not see. */
const GRAPHQL = '/graphql';

interface RouterLayer {
  route?: { path: unknown; methods: Record<string, boolean> };
  handle?: { stack?: RouterLayer[] };
}

/** The GET routes of the app and of the routers it uses, in the order registered. */
function getRoutes(stack: readonly RouterLayer[]): string[] {
  return stack.flatMap((layer) => {
    if (layer.route) return layer.route.methods.get && typeof layer.route.path === 'string' ? [layer.route.path] : [];
    return layer.handle?.stack ? getRoutes(layer.handle.stack) : [];
  });
}

/**
 * The endpoints a client may open, as the app has registered them: its GET routes without parameters,
 * less `/`, the files a page loads (`/v1/docs/init.js`) and the /v1 API's own routes (`apiRoutes`,
 * which /v1/docs lists). Derived, so the page never misses one.
 */
export function endpointsOf(app: Express, apiRoutes: readonly string[]): Link[] {
  const api = new Set(apiRoutes);
  const paths = getRoutes((app as unknown as { router: { stack: RouterLayer[] } }).router.stack).filter(
    (p) => p !== '/' && !api.has(p) && !/[:*(]/.test(p) && !/\.(?!json$)\w+$/.test(p),
  );
  // In the order of ABOUT (the product first, operations last); any other after them, as registered.
  const known = Object.keys(ABOUT);
  const order = (href: string) => (href in ABOUT ? known.indexOf(href) : known.length);
  return [...new Set([GRAPHQL, ...paths])]
    .sort((a, b) => order(a) - order(b))
    .map((href) => ({ rel: ABOUT[href]?.rel ?? href, href, about: ABOUT[href]?.about ?? '' }));
}

const TITLE = 'NFT marketplace gateway';

function page(links: Link[]): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>${TITLE}</title>
</head>
<body>
  <h1>${TITLE}</h1>
  <ul>
${links.map((l) => `    <li><a href="${l.href}">${l.href}</a>${l.about ? `: ${l.about}` : ''}</li>`).join('\n')}
  </ul>
</body>
</html>
`;
}

/**
 * GET /: a page of links for a browser (by its Accept header), the same links as JSON for anyone else,
 * keyed by their rel. Built on the first request, once every route is registered.
 */
export function home(app: Express, apiRoutes: readonly string[]): RequestHandler {
  let built: { html: string; json: string } | undefined;
  return (req: Request, res: Response) => {
    built ??= (() => {
      const links = endpointsOf(app, apiRoutes);
      return { html: page(links), json: JSON.stringify({ name: TITLE, links: Object.fromEntries(links.map((l) => [l.rel, { href: l.href, about: l.about }])) }) };
    })();
    res.vary('Accept');
    if (req.accepts(['json', 'html']) === 'html') res.type('html').send(built.html);
    else res.type('json').send(built.json);
  };
}
