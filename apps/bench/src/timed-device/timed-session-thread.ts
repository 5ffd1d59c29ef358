/** Entry of a timed device's session thread: the model's real session stood in for by timedSession. */
import { createSessionWithFallback, serveSessionThread } from '@inferq/inference/session-thread-server';
import { deviceTimeFromEnv } from './device-time.ts';
import { timedSession } from './timed-session.ts';

const device = deviceTimeFromEnv();

void serveSessionThread(async (options) => {
  const created = await createSessionWithFallback(options);
  return { ...created, provider: 'timed', session: timedSession(created.session, device) };
});
