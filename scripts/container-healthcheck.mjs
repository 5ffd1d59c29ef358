// The images' HEALTHCHECK: GET /healthz on the port the process listens on, as its environment says.
// Usage (in the image): node healthcheck.mjs <port variable> <default port> [<host variable>]
// e.g. `node healthcheck.mjs PORT 8080 HOST` (the API), `node healthcheck.mjs METRICS_PORT 9464 METRICS_HOST` (a worker:
// its first device process). Exits 0 when /healthz answers 2xx within 2 s, else 1.
const [portVar, defaultPort, hostVar] = process.argv.slice(2);
const port = process.env[portVar] || defaultPort;
const bound = hostVar ? process.env[hostVar] : undefined;
// A wildcard address (or none) is reached on loopback; a specific one is asked for itself.
const host = !bound || bound === '0.0.0.0' || bound === '::' ? '127.0.0.1' : bound.includes(':') ? `[${bound}]` : bound;
fetch(`http://${host}:${port}/healthz`, { signal: AbortSignal.timeout(2_000) }).then(
  (r) => process.exit(r.ok ? 0 : 1),
  () => process.exit(1),
);
