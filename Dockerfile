# The service image used by docker-compose.yml.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY seeds ./seeds
COPY migrations ./migrations
# The browser console (docs/CONSOLE.md) is built into dist/console with the service.
COPY console ./console
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/migrations ./migrations
COPY --from=build /app/seeds/fixtures ./seeds/fixtures
USER node
EXPOSE 4000
HEALTHCHECK --interval=10s --timeout=3s --retries=3 CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||4000)+'/ready').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# The CLI is in the image too: `docker compose exec <service> node dist/src/cli.js import logflare`
# (docs/MIGRATING.md), `… node dist/src/cli.js keys create --name ops --scope admin`.
CMD ["node", "dist/src/main.js"]
