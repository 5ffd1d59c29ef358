import { expect, it } from 'vitest';
import { stageShares, type CpuProfile, type Stage } from './cpu-profile-stages.ts';

const frame = (id: number, functionName: string, url: string, children: number[] = []) => ({ id, callFrame: { functionName, url }, children });

// root ─┬─ (idle)
//       ├─ handler ─┬─ query (pg)          stage "db"
//       │           └─ stringify           stage "handler"
//       ├─ limiter ── query (pg)           stage "limiter": first in the list wins over "db"
//       └─ (garbage collector)             stage "other"
const profile: CpuProfile = {
  startTime: 1_000,
  endTime: 2_000,
  nodes: [
    frame(1, '(root)', '', [2, 3, 6, 8]),
    frame(2, '(idle)', ''),
    frame(3, 'handler', 'file:///app/handler.ts', [4, 5]),
    frame(4, 'query', 'file:///node_modules/pg/lib/client.js'),
    frame(5, 'stringify', ''),
    frame(6, 'limiter', 'file:///app/rate-limit.ts', [7]),
    frame(7, 'query', 'file:///node_modules/pg/lib/client.js'),
    frame(8, '(garbage collector)', ''),
  ],
  // Sample times 1,100 1,200 … 1,900: idle, db, db, handler, limiter, gc, idle, db, db.
  samples: [2, 4, 4, 5, 7, 8, 2, 4, 4],
  timeDeltas: [100, 100, 100, 100, 100, 100, 100, 100, 100],
};

const stages: Stage[] = [
  { name: 'limiter', frame: /rate-limit/ },
  { name: 'db', frame: /\/pg\// },
  { name: 'handler', frame: /handler\.ts/ },
];

it("gives each busy sample's time to the first stage a frame of its stack matches, idle left out, the rest to other", () => {
  expect(stageShares(profile, stages)).toEqual([
    { stage: 'limiter', share: 1 / 7 },
    { stage: 'db', share: 4 / 7 },
    { stage: 'handler', share: 1 / 7 },
    { stage: 'other', share: 1 / 7 },
  ]);
});

it('counts only the samples within the window', () => {
  expect(stageShares(profile, stages, { fromUs: 1_350, toUs: 1_650 })).toEqual([
    { stage: 'limiter', share: 1 / 3 },
    { stage: 'db', share: 0 },
    { stage: 'handler', share: 1 / 3 },
    { stage: 'other', share: 1 / 3 },
  ]);
  expect(() => stageShares(profile, stages, { fromUs: 5_000, toUs: 6_000 })).toThrow(/outside the profile/);
});
