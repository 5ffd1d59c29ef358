/**
 * What a PUT of one job's input to S3 costs the process that sends it (the API, for inputs kept in object storage):
 * `node --import tsx apps/bench/src/costs/s3-puts.ts [puts] [bytes] [in flight]` (default 6,000 PUTs of 12,288 bytes,
 * 16 at a time) through the storage package's client, against an embedded S3 server (s3rver) in a process of its
 * own, so that this process's CPU is the client's alone. A warm-up round first; prints PUTs a second and CPU µs a PUT.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { createStorage } from '@inferq/storage';

const [puts = 6_000, bytes = 12_288, inFlight = 16] = process.argv.slice(2, 5).map(Number);
const dir = await mkdtemp(join(tmpdir(), 'inferq-s3-puts-'));
const server = spawn(
  process.execPath,
  [
    '--import',
    'tsx',
    '--input-type=module',
    '-e',
    `import { startS3Server } from '@inferq/dev-stack'; const s = await startS3Server({ dir: ${JSON.stringify(dir)} }); console.log(s.endpoint);`,
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
try {
  const [line] = (await once(server.stdout!, 'data')) as [Buffer];
  const storage = createStorage({
    endpoint: line.toString().trim(),
    region: 'us-east-1',
    bucket: 'inferq-s3-puts',
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    forcePathStyle: true,
  });
  await storage.ensureBucket();
  const body = new Uint8Array(bytes).map((_, i) => i);
  const round = () =>
    Promise.all(
      Array.from({ length: inFlight }, async (_, lane) => {
        for (let i = lane; i < puts; i += inFlight) await storage.putObject(`puts/${i}.bin`, body);
      }),
    );
  await round();
  const cpu = process.cpuUsage();
  const started = performance.now();
  await round();
  const used = process.cpuUsage(cpu);
  console.log(
    JSON.stringify({ putsPerS: Math.round(puts / ((performance.now() - started) / 1000)), cpuUsPerPut: Math.round((used.user + used.system) / puts) }),
  );
  storage.close();
} finally {
  server.kill();
  await rm(dir, { recursive: true, force: true });
}
