--[[
  Shared functions of the fair-priority scripts (included by fair-priority-assign-2.lua and
  fair-priority-promote-8.lua; packages/queue/src/fair-priority.ts explains the ordering).

  BullMQ layout: BullMQ 6.7.0 (a prioritized job's score in the prioritized zset is
  priority * 2^32 + the priority counter mod 2^32, includes/getPriorityScore.lua).

  Reads, from the including script:
    KEYS[1] BullMQ's prioritized zset of the queue ('<prefix>:<queue>:prioritized'; read here)
    KEYS[2] our fair-finish hashes' key stem ('<prefix>:<queue>:fair'; one hash per class: KEYS[2] .. ':' .. class)
    ARGV[1] the class range size: BullMQ priority numbers per class (CLASS_RANGE)
    ARGV[2] the job key prefix ('<prefix>:<queue>:'; a job's hash is ARGV[2] .. job id), for a rebase

  Defines:
    fairTag(c, tenant, cost): the BullMQ priority of a job in class c (0 high, 1 normal, 2 low, 3 batch) for key
      `tenant`, advancing the key's finish by `cost`; an empty tenant is a flow of its own and keeps no state.
    saveFinishes(): writes the finishes fairTag advanced, one HSET per class (call once, at the end).
  Each class keeps its keys' finishes in a hash of its own (KEYS[2] .. ':' .. class, in the queue's hash
  slot), read once per key and class and written once per class by saveFinishes(), so a group of submits
  costs one HGET per key, not an HGET and an HSET per job; deleted when the class has nothing waiting
  (it starts afresh, and keys that stopped sending leave nothing behind). Scores are exact in a double.

  Rebase: a class that never drains (a batch stream) would see its first waiting job's number climb to the
  top of the range, where every tag clamps to the last number and the order between keys falls back to
  FIFO. So once the first waiting job is past half the range, every waiting job of the class and every
  key's finish move down by its offset, order and counters kept, the job hashes' `priority` with them (as
  BullMQ's changePriority writes it): once per half a range of jobs served, one write per waiting job.
  Jobs held by a worker or backing off keep their number, and come back behind the rebased ones.
]]
local range = tonumber(ARGV[1])
local jobPrefix = ARGV[2]
local shift = 4294967296
local now = {}
local function rebase(c, lo, by)
  local from, to = string.format('%.0f', lo * shift), '(' .. string.format('%.0f', (lo + range) * shift)
  local waiting = redis.call('ZRANGEBYSCORE', KEYS[1], from, to, 'WITHSCORES')
  for j = 1, #waiting, 2 do
    local score = tonumber(waiting[j + 1])
    local priority = math.floor(score / shift)
    redis.call('ZADD', KEYS[1], string.format('%.0f', (priority - by) * shift + (score - priority * shift)), waiting[j])
    redis.call('HSET', jobPrefix .. waiting[j], 'priority', priority - by)
  end
  local stored = redis.call('HGETALL', KEYS[2] .. ':' .. c)
  for j = 2, #stored, 2 do stored[j] = string.format('%.17g', math.max(0, tonumber(stored[j]) - by)) end
  for j = 1, #stored, 1000 do redis.call('HSET', KEYS[2] .. ':' .. c, unpack(stored, j, math.min(j + 999, #stored))) end
end
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
      if now[c] > range / 2 then
        rebase(c, lo, now[c])
        now[c] = 0
      end
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
