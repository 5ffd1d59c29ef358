import type { Queue } from 'bullmq';
import type { Priority } from '@inferq/contracts';
import type { RedisClient } from './connection.ts';
import { luaScript } from './lua-script.ts';

// Fair ordering inside each priority class of a model queue. BullMQ serves
// the lowest priority number first, FIFO within a number. The number space
// (1 … 2^21 − 1) is cut into three ranges, one per class, so a class is
// always served before the next (jobs move up a class by aging, see
// priority-aging). Inside a class the number is a start tag of start-time
// fair queueing: a job starts where its key's previous job in the class
// finished, or where the class is now (its first waiting job) if that is
// later, and each job advances its key by 1 / weight. A key that floods the
// queue gets numbers far ahead; a key with a trickle starts at the front.

/** BullMQ's largest priority. */
const PRIORITY_LIMIT = 2 ** 21 - 1;
/** Numbers per class. */
export const CLASS_RANGE = Math.floor(PRIORITY_LIMIT / 3);
export const PRIORITY_CLASSES: readonly Priority[] = ['high', 'normal', 'low'];

/** The BullMQ numbers of a class: [min, max]. */
export const classRange = (p: Priority): { min: number; max: number } => {
  const min = PRIORITY_CLASSES.indexOf(p) * CLASS_RANGE + 1;
  return { min, max: min + CLASS_RANGE - 1 };
};

/** Each class's first number: what every job of the class gets without fair ordering (FAIR_SCHEDULING=false: plain BullMQ priorities). */
export const BULL_PRIORITY: Record<Priority, number> = { high: classRange('high').min, normal: classRange('normal').min, low: classRange('low').min };

/** The class of a BullMQ priority number. */
export const priorityOfBull = (bull: number): Priority => PRIORITY_CLASSES[Math.min(2, Math.max(0, Math.floor((bull - 1) / CLASS_RANGE)))]!;

/**
 * Shared Lua: `fairTag(c, tenant, cost)` is a job's number in class c (0 high,
 * 1 normal, 2 low) for key `tenant`, advancing the key's finish by `cost`.
 * Each class keeps its keys' finishes in a hash of its own (KEYS[2] .. ':' ..
 * class, in the queue's hash slot: read once per key and class and written
 * once per class by `saveFinishes()` at the end of a call, so a group of
 * submits costs one HGET per key, not an HGET and an HSET per job), deleted
 * when the class has nothing waiting: it starts afresh, and keys that
 * stopped sending leave nothing behind. An empty tenant is a flow of its own and keeps no state. Scores are
 * priority × 2^32 + counter (BullMQ), exact in a double. KEYS[1] is the
 * prioritized set, ARGV[1] the class range size.
 */
const FAIR_TAG_LUA = `
local range = tonumber(ARGV[1])
local shift = 4294967296
local now = {}
local function classStart(c)
  if now[c] == nil then
    local lo = c * range + 1
    local from, to = string.format('%.0f', lo * shift), '(' .. string.format('%.0f', (lo + range) * shift)
    local first = redis.call('ZRANGEBYSCORE', KEYS[1], from, to, 'WITHSCORES', 'LIMIT', 0, 1)
    if #first == 0 then
      redis.call('DEL', KEYS[2] .. ':' .. c)
      now[c] = 0
    else
      now[c] = math.floor(tonumber(first[2]) / shift) - lo
    end
  end
  return now[c]
end
local finishes = {}
local function fairTag(c, tenant, cost)
  local start = classStart(c)
  if tenant ~= '' then
    local class = finishes[c]
    if class == nil then
      class = {}
      finishes[c] = class
    end
    local finish = class[tenant]
    if finish == nil then finish = tonumber(redis.call('HGET', KEYS[2] .. ':' .. c, tenant) or '0') end
    start = math.max(start, finish)
    class[tenant] = start + cost
  end
  return c * range + 1 + math.min(math.floor(start), range - 1)
end
local function saveFinishes()
  for c, class in pairs(finishes) do
    local fields = {}
    for tenant, finish in pairs(class) do
      fields[#fields + 1] = tenant
      fields[#fields + 1] = string.format('%.17g', finish)
      if #fields == 1000 then
        redis.call('HSET', KEYS[2] .. ':' .. c, unpack(fields))
        fields = {}
      end
    end
    if #fields > 0 then redis.call('HSET', KEYS[2] .. ':' .. c, unpack(fields)) end
  end
end
`;

/** ARGV after the range: (key id, class index, cost) per job. Returns a priority per job. */
const assignScript = luaScript(
  'inferqFairAssign',
  2,
  `${FAIR_TAG_LUA}
local out = {}
for i = 2, #ARGV, 3 do
  out[#out + 1] = fairTag(tonumber(ARGV[i + 1]), ARGV[i], tonumber(ARGV[i + 2]))
end
saveFinishes()
return out
`,
);

/**
 * KEYS[3] the priority counter, KEYS[4] the marker, KEYS[5] the queue's meta
 * hash; ARGV after the range: the job key prefix, then (job id, key id,
 * target class index) per job, each key's oldest first. The first job of each
 * key still waiting below its target class is re-added at its key's fair
 * number there, as BullMQ's changePriority does (new score, the job hash's
 * priority, the marker that wakes workers — left out while the queue is
 * paused, as BullMQ leaves it out; the job stays in the queue either way):
 * one job per key a pass, so a key's aged backlog enters the class above at
 * the pace of the passes instead of all at once ahead of other keys' work
 * there. Returns how many moved.
 */
const promoteScript = luaScript(
  'inferqFairPromote',
  5,
  `${FAIR_TAG_LUA}
local moved = 0
local done = {}
for i = 3, #ARGV, 3 do
  local id = ARGV[i]
  local target = tonumber(ARGV[i + 2])
  local score = (not done[ARGV[i + 1]]) and redis.call('ZSCORE', KEYS[1], id)
  if score and math.floor((math.floor(tonumber(score) / shift) - 1) / range) > target then
    done[ARGV[i + 1]] = true
    local priority = fairTag(target, ARGV[i + 1], 1)
    local counter = redis.call('INCR', KEYS[3]) % shift
    redis.call('ZADD', KEYS[1], string.format('%.0f', priority * shift + counter), id)
    redis.call('HSET', ARGV[2] .. id, 'priority', priority)
    if redis.call('HEXISTS', KEYS[5], 'paused') == 0 then redis.call('ZADD', KEYS[4], 0, '0') end
    moved = moved + 1
  end
end
saveFinishes()
return moved
`,
);

export interface FairJob {
  /** Whose job: the API key id; '' for a job that is a flow of its own (nothing is kept for it). */
  tenant: string;
  priority: Priority;
  /** The key's share against others at the same priority. @default 1 */
  weight?: number;
}

/** BullMQ priorities for jobs about to be added to `queue`, in order, fair between tenants within each class. */
export async function assignFairPriorities(connection: RedisClient, queue: Queue, jobs: readonly FairJob[]): Promise<number[]> {
  if (jobs.length === 0) return [];
  const args = jobs.flatMap((j) => [j.tenant, String(PRIORITY_CLASSES.indexOf(j.priority)), String(1 / (j.weight ?? 1))]);
  return (await assignScript(connection, [queue.toKey('prioritized'), queue.toKey('fair')], [CLASS_RANGE, ...args])) as number[];
}

/** Moves waiting jobs up to their target class (aging), at most one per key, each to its key's fair number there, in one round trip; returns how many moved. */
export async function promoteJobs(
  connection: RedisClient,
  queue: Queue,
  jobs: ReadonlyArray<{ id: string; tenant: string; target: Priority }>,
): Promise<number> {
  if (jobs.length === 0) return 0;
  const args = jobs.flatMap((j) => [j.id, j.tenant, String(PRIORITY_CLASSES.indexOf(j.target))]);
  return (await promoteScript(
    connection,
    [queue.toKey('prioritized'), queue.toKey('fair'), queue.toKey('pc'), queue.toKey('marker'), queue.toKey('meta')],
    [CLASS_RANGE, queue.toKey(''), ...args],
  )) as number;
}

/** Waiting jobs per class: one ZCOUNT per class range on the prioritized set. */
export async function countWaitingPerClass(connection: RedisClient, queue: Queue): Promise<Record<Priority, number>> {
  const shift = 2 ** 32;
  const key = queue.toKey('prioritized');
  const counts = await Promise.all(
    PRIORITY_CLASSES.map((p) => {
      const { min, max } = classRange(p);
      return connection.zcount(key, min * shift, `(${(max + 1) * shift}`);
    }),
  );
  return { high: counts[0]!, normal: counts[1]!, low: counts[2]! };
}
