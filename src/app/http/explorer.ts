import path from 'node:path';
import express from 'express';
import type { ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginLandingPageLocalDefault } from '@apollo/server/plugin/landingPage/default';

/**
 * The explorer of /graphql that opens without the internet. Apollo Sandbox, the landing page a browser
 * gets at /graphql, is loaded from Apollo's CDN; when its script cannot load (offline, air-gapped, blocked)
 * the page moves to GET /graphql/explorer: GraphiQL, with React and its styles served by this server from
 * node_modules. GraphiQL 4 is the last line published as a browser-ready (UMD) bundle, and React 18 the
 * last with UMD builds; both run without a build step of ours. Development only, like Sandbox: the app
 * mounts neither in production, where introspection is off.
 */
export const EXPLORER_PATH = '/graphql/explorer';
const FALLBACK_SCRIPT = `${EXPLORER_PATH}/fallback.js`;
/** How long the landing page waits for Sandbox's script before it opens the local explorer. */
const SANDBOX_WAIT_MS = 6000;

/** The files the page loads: name under /graphql/explorer/assets -> package and file in it. */
const ASSETS: Record<string, [pkg: string, file: string]> = {
  'react.js': ['react', 'umd/react.production.min.js'],
  'react-dom.js': ['react-dom', 'umd/react-dom.production.min.js'],
  'graphiql.js': ['graphiql', 'graphiql.min.js'],
  'graphiql.css': ['graphiql', 'graphiql.min.css'],
};

/** The pages explorerRouter answers to GET (and HEAD): outside the rate limit where it is mounted (entry/paths.ts). */
export const EXPLORER_PAGES: readonly string[] = [EXPLORER_PATH, `${EXPLORER_PATH}/start.js`, FALLBACK_SCRIPT, ...Object.keys(ASSETS).map((name) => `${EXPLORER_PATH}/assets/${name}`)];

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width,initial-scale=1">
  <title>GraphQL explorer: NFT marketplace gateway</title>
  <link rel="stylesheet" href="${EXPLORER_PATH}/assets/graphiql.css">
  <style>
    body { margin: 0; height: 100vh; display: flex; flex-direction: column; font-family: system-ui, sans-serif; }
    #about { padding: 4px 12px; font-size: 13px; background: #f3f4f6; border-bottom: 1px solid #d1d5db; }
    #graphiql { flex: 1; min-height: 0; }
  </style>
</head>
<body>
  <div id="about">GraphiQL, served by this gateway (works offline). Queries and mutations go by POST to /graphql,
    subscriptions over its WebSocket; an API key goes in Headers as <code>{"access-token": "..."}</code>.
    <a href="/graphql">Apollo Sandbox</a> needs the internet. <a href="/v1/docs">The /v1 reference</a>.</div>
  <div id="graphiql">Loading the explorer...</div>
  <script src="${EXPLORER_PATH}/assets/react.js"></script>
  <script src="${EXPLORER_PATH}/assets/react-dom.js"></script>
  <script src="${EXPLORER_PATH}/assets/graphiql.js"></script>
  <script src="${EXPLORER_PATH}/start.js"></script>
</body>
</html>
`;

const DEFAULT_QUERY = `# This gateway's own GraphQL explorer. Run with Ctrl-Enter.
# Docs: the book icon; past runs: the clock. An API key goes in
# Headers as {"access-token": "..."}; subscriptions run over WebSocket.
query Categories {
  categories(limit: 5) {
    result {
      id
      name
    }
  }
}
`;

/** GraphiQL on this origin: HTTP for queries and mutations, graphql-ws for subscriptions; headers are sent on both. */
const START = `(function () {
  var http = window.location.origin + '/graphql';
  var ws = (window.location.protocol === 'https:' ? 'wss://' : 'ws://') + window.location.host + '/graphql';
  var fetcher = GraphiQL.createFetcher({ url: http, subscriptionUrl: ws });
  var root = ReactDOM.createRoot(document.getElementById('graphiql'));
  root.render(React.createElement(GraphiQL, { fetcher: fetcher, defaultQuery: ${JSON.stringify(DEFAULT_QUERY)}, defaultEditorToolsVisibility: true }));
})();
`;

/**
 * Runs in Sandbox's page before Sandbox's own script (which may hang until the network gives up): when
 * that script fails, or Sandbox has not arrived within a few seconds, the local explorer opens instead.
 */
const FALLBACK = `(function () {
  var opened = false;
  function openLocal() {
    if (opened || window.EmbeddedSandbox) return;
    opened = true;
    window.location.replace(${JSON.stringify(EXPLORER_PATH)});
  }
  window.addEventListener('error', function (event) {
    var target = event.target;
    if (target && target.tagName === 'SCRIPT' && /apollographql\\.com/.test(target.src)) openLocal();
  }, true);
  setTimeout(openLocal, ${SANDBOX_WAIT_MS});
})();
`;

/** GET /graphql/explorer (GraphiQL), its start script and assets, and the landing page's fallback script. */
export function explorerRouter(): express.Router {
  const router = express.Router();
  router.get(EXPLORER_PATH, (_req, res) => {
    res.type('html').send(PAGE);
  });
  router.get(`${EXPLORER_PATH}/start.js`, (_req, res) => {
    res.type('js').send(START);
  });
  router.get(FALLBACK_SCRIPT, (_req, res) => {
    res.type('js').send(FALLBACK);
  });
  for (const [name, [pkg, file]] of Object.entries(ASSETS)) {
    const absolute = path.join(path.dirname(require.resolve(`${pkg}/package.json`)), file);
    router.get(`${EXPLORER_PATH}/assets/${name}`, (_req, res, next) => {
      res.sendFile(absolute, { maxAge: '1d' }, (err) => {
        if (err) next(err);
      });
    });
  }
  return router;
}

/**
 * Apollo Sandbox as Apollo renders it (embedded, cookies off), with the fallback script first in its
 * <head>: its Content-Security-Policy allows scripts from this origin ('self').
 */
export function sandboxWithLocalFallback(): ApolloServerPlugin {
  const sandbox = ApolloServerPluginLandingPageLocalDefault({ embed: true, includeCookies: false });
  const withFallback = (html: string) => {
    if (!html.includes('<head>')) throw new Error('Apollo Sandbox page has no <head> to load the local explorer fallback from');
    return html.replace('<head>', `<head>\n    <script src="${FALLBACK_SCRIPT}"></script>`);
  };
  return {
    async serverWillStart(service) {
      const listener = await sandbox.serverWillStart!(service);
      const render = listener!.renderLandingPage!;
      return {
        async renderLandingPage() {
          const { html } = await render();
          return { html: async () => withFallback(typeof html === 'string' ? html : await html()) };
        },
      };
    },
  };
}
