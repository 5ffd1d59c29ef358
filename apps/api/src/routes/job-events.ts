import { PassThrough, type Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { JobEventsHeadersSchema, JobParamsSchema, isTerminalStatus, problemResponses } from '@inferq/contracts';
import { ownerFilter } from '../services/keys/api-keys-service.ts';
import { jobEventId, type JobEventStream } from '../services/jobs/view/job-event-stream.ts';
import type { JobsService } from '../services/jobs/jobs-service.ts';

export interface JobEventsRoutesOptions {
  jobs: Pick<JobsService, 'getJob'>;
  streamJobEvents: JobEventStream;
  /** Comment lines on a quiet stream, so proxies keep it open. @default 15000 */
  heartbeatIntervalMs?: number;
}

/** How soon EventSource reconnects after the connection drops. */
const RECONNECT_MS = 2_000;

const FORMAT = [
  "A `text/event-stream` of the job's status: the current one at once, then each change (queued → " +
    'running → succeeded, failed, canceled or expired; back to queued when a failed attempt is retried), ' +
    "ending after a terminal status. A job shows running once its batch has run for the workers' WORKER_RUNNING_MARK_MS " +
    '(250 ms by default); a job whose batch is quicker goes from queued to its end.',
  'Each event is `id: <n>`, `event: status`, `data: {"id", "status", "attempts", "error"?}` (error: the last one, `{code, message}`).',
  "Ids grow along the job's life and mean the same on every connection: reconnect with `Last-Event-ID` " +
    '(EventSource does) to get only what came after, the terminal status included.',
  'A reconnect after the terminal event is 204, which tells EventSource to stop. `: keep-alive` comments come every 15 s. A purged job is 410 `JOB_PURGED`.',
  'A job the record lost (its row dropped by a failover to an asynchronous standby) is 410 `JOB_LOST`.',
].join(' ');

export const jobEventsRoutes: FastifyPluginAsyncTypebox<JobEventsRoutesOptions> = async (app, { jobs, streamJobEvents, heartbeatIntervalMs = 15_000 }) => {
  // Open streams end before the server waits for its connections to close.
  const open = new Set<AbortController>();
  app.addHook('preClose', async () => {
    for (const stream of open) stream.abort();
  });

  app.get(
    '/v1/jobs/:id/events',
    {
      config: { scope: 'jobs:read' },
      // A HEAD would open a stream it never reads.
      exposeHeadRoute: false,
      schema: {
        tags: ['jobs'],
        summary: "A job's status changes as server-sent events",
        description: FORMAT,
        params: JobParamsSchema,
        headers: JobEventsHeadersSchema,
        produces: ['text/event-stream'],
        response: {
          200: Type.Unsafe<Readable>({
            type: 'string',
            description: FORMAT,
            examples: ['id: 1\nevent: status\ndata: {"id":"0190…","status":"queued","attempts":0}\n\n'],
          }),
          204: Type.Null({ description: 'Last-Event-ID is the terminal event: nothing more will come' }),
          ...problemResponses(400, 401, 403, 404, 410),
        },
      },
    },
    async (request, reply) => {
      const ownerKeyId = ownerFilter(request.principal);
      // Another tenant's job is 404 here, before any stream starts.
      const job = await jobs.getJob(request.params.id, ownerKeyId);
      const header = request.headers['last-event-id'];
      const lastEventId = header === undefined ? undefined : Number(header);
      if (lastEventId !== undefined && isTerminalStatus(job.status) && lastEventId >= jobEventId(job)) return reply.status(204).send(null);

      const controller = new AbortController();
      open.add(controller);
      const out = new PassThrough();
      const write = (text: string) => {
        if (!out.destroyed && !out.writableEnded) out.write(text);
      };
      const heartbeat = setInterval(() => write(': keep-alive\n\n'), heartbeatIntervalMs);
      // Fastify destroys the payload when the client goes away.
      out.on('close', () => controller.abort());
      write(`retry: ${RECONNECT_MS}\n\n`);
      void (async () => {
        try {
          for await (const e of streamJobEvents({ job, ownerKeyId, lastEventId, signal: controller.signal })) {
            write(`id: ${e.eventId}\nevent: status\ndata: ${JSON.stringify(e.data)}\n\n`);
          }
        } catch (err) {
          // The client reconnects with Last-Event-ID and picks up where it was.
          request.log.warn({ err, jobId: job.id }, 'job event stream failed');
        } finally {
          clearInterval(heartbeat);
          open.delete(controller);
          if (!out.destroyed) out.end();
        }
      })();
      return reply
        .header('content-type', 'text/event-stream; charset=utf-8')
        .header('cache-control', 'no-cache, no-transform')
        .header('x-accel-buffering', 'no')
        .send(out);
    },
  );
};
