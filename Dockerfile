# The gateway as a container: built in one stage, run from a lean one as a non-root user.
# Without DATABASE_URL it keeps its embedded PostgreSQL under /app/data (mount a volume there). Node 24, an
# LTS line the suite runs on in CI (package.json "engines").
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ormconfig.ts ./
COPY src ./src
RUN npm run build

FROM node:24-bookworm-slim
ENV NODE_ENV=production PORT=4000 DATA_DIR=/app/data
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
RUN mkdir -p /app/data && chown node:node /app/data
USER node
EXPOSE 4000
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:' + (process.env.PORT || 4000) + '/readyz').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"
# Exec form: SIGTERM reaches node itself, which drains and exits.
CMD ["node", "--max-semi-space-size=8", "--max-old-space-size=2000", "dist/src/main.js"]
