FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# npm ci's postinstall: argon2 must load (built from source only when its prebuilt binary does not).
COPY scripts/check-argon2.mjs ./scripts/
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev

# What runs: the compiled code (dist/, with its migrations), the built web app (web/dist/, served
# outside /api), the node agent's bundle and the production dependencies only.
# `npm run migration:run|revert|show` work here too (the TypeORM CLI on dist/database/cli-data-source.js).
FROM node:20-bookworm-slim
ENV NODE_ENV=production
# No allocator variable here: `node dist/main.js` applies glibc's settings itself (it runs the
# service in a child started with them; src/system/allocator.ts).
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/web/dist ./web/dist
# The node agent's bundle, which provisioning uploads to each node.
COPY --from=build /app/agent/dist ./agent/dist
COPY --from=build /app/deploy ./deploy
COPY package.json ./
USER node
EXPOSE 3000
CMD ["node", "dist/main.js"]
