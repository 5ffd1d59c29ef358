// Runs one service on a host of the private network, inside its namespace:
//   node --import tsx host-service.ts <redis|postgres|s3> <address> <dir>
// Prints `READY <json>` (the variables that point a stack at it), then serves
// until its stdin closes or it gets SIGTERM. On the Redis host it also runs the
// delay relay (RELAY_PORT), which takes `delay <ms>` lines on stdin. A
// `restart` line stops the service and starts it again over the same data and
// port, then prints `RESTARTED`.
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { startPostgresServer, startRedisServer, startS3Server } from '@inferq/dev-stack';
import { startDelayRelay, type DelayRelay } from './delay-relay.ts';
import { SERVICE_PORTS } from './service-ports.ts';

const [kind, address, dir] = process.argv.slice(2) as [string, string, string];

async function start(): Promise<{ env: Record<string, string>; stop(): Promise<void> }> {
  switch (kind) {
    case 'redis': {
      const server = await startRedisServer({ dataDir: dir, port: SERVICE_PORTS.redis, bind: address });
      return { env: { REDIS_URL: server.url }, stop: server.stop };
    }
    case 'postgres': {
      const server = await startPostgresServer({ dataDir: join(dir, 'data'), port: SERVICE_PORTS.postgres, listenAddress: address });
      return { env: { DATABASE_URL: server.url }, stop: server.stop };
    }
    case 's3': {
      const s = await startS3Server({ dir, port: SERVICE_PORTS.s3, address });
      return { env: { S3_ENDPOINT: s.endpoint, S3_ACCESS_KEY_ID: s.accessKeyId, S3_SECRET_ACCESS_KEY: s.secretAccessKey, S3_REGION: s.region }, stop: s.stop };
    }
    default:
      throw new Error(`unknown service ${kind}`);
  }
}

let service = await start();
let relay: DelayRelay | undefined;
if (kind === 'redis') {
  relay = await startDelayRelay({ listen: { host: address, port: SERVICE_PORTS.redisRelay }, target: { host: address, port: SERVICE_PORTS.redis } });
}
let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await relay?.close();
  await service.stop();
  process.exit(0);
}
process.on('SIGTERM', () => void stop());
const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  const [command, value] = line.trim().split(/\s+/);
  if (command === 'delay' && relay) {
    relay.setDelayMs(Number(value));
    console.log(`DELAY ${Number(value)}`);
  }
  if (command === 'restart')
    void service
      .stop()
      .then(start)
      .then((started) => {
        service = started;
        console.log('RESTARTED');
      });
});
lines.on('close', () => void stop());
console.log(`READY ${JSON.stringify(service.env)}`);
