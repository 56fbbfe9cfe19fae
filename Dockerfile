# Screenshot Appliance, headless: the server, Chromium and fonts from Debian bookworm.
# Build: docker build -t screenshot-appliance .   Run: docker compose up -d (compose.yaml)

FROM node:20-bookworm-slim AS build
WORKDIR /src
# Install scripts are skipped: Electron's would download the desktop app's runtime, which the
# server does not use (its types are all the build needs); sharp and esbuild ship prebuilt parts.
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
RUN npm run build --silent && npm prune --omit=dev --ignore-scripts --no-audit --no-fund

FROM node:20-bookworm-slim
# Chromium and the fonts pages expect: Latin, CJK, emoji, and metric-compatible Arial/Times/Courier.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      chromium fonts-noto-core fonts-noto-cjk fonts-noto-color-emoji fonts-liberation tini ca-certificates libnss3-tools \
 && rm -rf /var/lib/apt/lists/*

# A user of its own: Chromium keeps its sandbox (--no-sandbox is added only for root).
RUN groupadd --system --gid 10001 screenshot \
 && useradd --system --uid 10001 --gid screenshot --home-dir /var/lib/screenshot-appliance --shell /usr/sbin/nologin screenshot \
 && install -d -o screenshot -g screenshot -m 0700 /var/lib/screenshot-appliance

WORKDIR /opt/screenshot-appliance
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
RUN chmod 0755 dist/server/cli.js && ln -s /opt/screenshot-appliance/dist/server/cli.js /usr/local/bin/screenshot-appliance

ENV NODE_ENV=production \
    CHROMIUM_PATH=/usr/lib/chromium/chromium \
    SCREENSHOT_HOST=0.0.0.0 \
    SCREENSHOT_PORT=8080 \
    SCREENSHOT_DATA_DIR=/var/lib/screenshot-appliance \
    HOME=/tmp
VOLUME ["/var/lib/screenshot-appliance"]
EXPOSE 8080
USER screenshot:screenshot

HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.SCREENSHOT_PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"

# tini reaps the browsers' exited processes and passes SIGTERM on, for a graceful stop.
ENTRYPOINT ["/usr/bin/tini", "--", "node", "/opt/screenshot-appliance/dist/server/cli.js"]
CMD ["serve"]
