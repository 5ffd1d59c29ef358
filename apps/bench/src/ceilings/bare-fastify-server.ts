// The least a queue-backed submit route does: parse the JSON body, one BullMQ
// add with inferq's job options, answer 202. Run as its own process (its own
// event loop, as the API has) by bare-fastify.ts, which passes the Redis URL
// and the queue prefix as arguments.
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { Queue } from 'bullmq';
import Fastify from 'fastify';
import { BULL_PRIORITY, createRedisConnection, JOB_NAME, jobOptions, queueNameFor } from '@inferq/queue';

const [redisUrl, prefix] = process.argv.slice(2) as [string, string];
const connection = createRedisConnection(redisUrl, 'producer');
await once(connection, 'ready');
const queue = new Queue(queueNameFor('bare'), { connection, prefix, skipVersionCheck: true });
const app = Fastify();
app.post('/v1/jobs', async (request, reply) => {
  const id = randomUUID();
  await queue.add(JOB_NAME, request.body, jobOptions(id, BULL_PRIORITY.normal));
  return reply.status(202).send({ id });
});
// Exit as a process ends normally, so `--cpu-prof` writes its profile.
process.once('SIGTERM', () => process.exit(0));
await app.listen({ host: '127.0.0.1', port: 0 });
console.log(`listening on ${(app.server.address() as { port: number }).port}`);
