import { readdirSync } from 'node:fs';
import path from 'node:path';
import express from 'express';
import { GraphQLSchema } from 'graphql';
import { openApiDocument } from './openapi';
import { routes } from './routes';

/** Swagger UI's page, with its script and styles served from this server (no CDN). */
const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>/v1 reference: NFT marketplace gateway</title>
  <link rel="stylesheet" href="/v1/docs/assets/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/v1/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/v1/docs/init.js"></script>
</body>
</html>
`;

const DOCS_INIT = `window.ui = SwaggerUIBundle({ url: '/v1/openapi.json', dom_id: '#swagger-ui', deepLinking: true });\n`;

const SWAGGER_UI = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const OPENAPI = '/v1/openapi.json';
const DOCS = '/v1/docs';
const INIT = '/v1/docs/init.js';
const ASSETS = '/v1/docs/assets';

/** The pages apiDocsRouter answers to GET (and HEAD): static documents, outside the rate limit (entry/paths.ts). */
export const DOCS_PAGES: readonly string[] = [
  OPENAPI,
  DOCS,
  INIT,
  ...readdirSync(SWAGGER_UI, { withFileTypes: true })
    .filter((file) => file.isFile())
    .map((file) => `${ASSETS}/${file.name}`),
];

/** GET /v1/openapi.json (the description, made once at start-up) and GET /v1/docs (a readable reference). */
export function apiDocsRouter(schema: GraphQLSchema): express.Router {
  const document = JSON.stringify(openApiDocument(schema, routes));
  const router = express.Router();
  router.get(OPENAPI, (_req, res) => {
    res.type('json').send(document);
  });
  router.get(DOCS, (_req, res) => {
    res.type('html').send(DOCS_PAGE);
  });
  router.get(INIT, (_req, res) => {
    res.type('js').send(DOCS_INIT);
  });
  router.use(ASSETS, express.static(SWAGGER_UI, { index: false, maxAge: '1d' }));
  return router;
}
