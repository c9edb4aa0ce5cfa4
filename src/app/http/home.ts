import { Request, Response } from 'express';

/** Where a newcomer who opens the server's address goes next. */
const LINKS = [
  { rel: 'graphql', href: '/graphql', about: 'GraphQL: POST queries here; a browser gets Apollo Sandbox' },
  { rel: 'docs', href: '/v1/docs', about: 'The /v1 REST reference, to read and try' },
  { rel: 'openapi', href: '/v1/openapi.json', about: 'The OpenAPI 3.1 description of /v1' },
  { rel: 'health', href: '/healthz', about: 'Liveness: {"status":"ok"} while the process runs' },
];

const TITLE = 'NFT marketplace gateway';

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>${TITLE}</title>
</head>
<body>
  <h1>${TITLE}</h1>
  <ul>
${LINKS.map((l) => `    <li><a href="${l.href}">${l.href}</a>: ${l.about}</li>`).join('\n')}
  </ul>
</body>
</html>
`;

const JSON_BODY = JSON.stringify({ name: TITLE, links: Object.fromEntries(LINKS.map((l) => [l.rel, { href: l.href, about: l.about }])) });

/** GET /: a page of links for a browser (by its Accept header), the same links as JSON for anyone else. */
export function home(req: Request, res: Response): void {
  res.vary('Accept');
  if (req.accepts(['json', 'html']) === 'html') res.type('html').send(PAGE);
  else res.type('json').send(JSON_BODY);
}
