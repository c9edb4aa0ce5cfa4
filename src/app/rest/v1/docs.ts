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

/** GET /v1/openapi.json (the description, made once at start-up) and GET /v1/docs (a readable reference). */
export function apiDocsRouter(schema: GraphQLSchema): express.Router {
  const document = JSON.stringify(openApiDocument(schema, routes));
  const router = express.Router();
  router.get('/v1/openapi.json', (_req, res) => {
    res.type('json').send(document);
  });
  router.get('/v1/docs', (_req, res) => {
    res.type('html').send(DOCS_PAGE);
  });
  router.get('/v1/docs/init.js', (_req, res) => {
    res.type('js').send(DOCS_INIT);
  });
  router.use('/v1/docs/assets', express.static(path.dirname(require.resolve('swagger-ui-dist/package.json')), { index: false, maxAge: '1d' }));
  return router;
}
