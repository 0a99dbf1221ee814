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
# `npm run migration:run|revert|show` work here too (the TypeORM CLI on dist/cli-data-source.js).
FROM node:20-bookworm-slim
ENV NODE_ENV=production
# glibc's malloc returns blocks over 128 KiB to the system when freed: left dynamic, the threshold
# rises to the largest block freed (an argon2 run's 19 MiB, a 4 MB traffic report), and every later
# one stays in a thread's arena (about 60 MiB more resident after a burst of staff logins). glibc
# reads it only at process start.
ENV MALLOC_MMAP_THRESHOLD_=131072
# V8's young generation at 8 MiB a semi-space (Node 20's default is 16): under load it fills with
# the objects of requests waiting on the database (about 20 MiB less resident; bench/RESULTS.md).
# V8 reads it only at start, from the command line or NODE_OPTIONS.
ENV NODE_OPTIONS=--max-semi-space-size=8
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
