--[[
  Aging: moves waiting jobs up to their target class (promoteJobs in ../fair-priority.ts). The first
  job of each key still waiting below its target class is re-added at its key's fair number there, as
  BullMQ's changePriority-7.lua does: a new score in the prioritized zset (from the priority counter),
  the job hash's priority field, and the marker that wakes workers, left out while the queue is paused
  (as BullMQ leaves it out; the job stays in the queue either way). One job per key a pass, so a key's
  aged backlog enters the class above at the pace of the passes instead of all at once ahead of other
  keys' work there. Jobs not in the prioritized zset (active, gone) are skipped. A member of a group entry
  (../queue-groups.ts) moves its entry, and the entry's other members' count moves class with it.

  BullMQ layout: BullMQ 6.7.0 (writes its private keys: prioritized, pc, marker, the job hash; reads meta).

  Input:
    KEYS[1] BullMQ's prioritized zset of the queue ('<prefix>:<queue>:prioritized'; score priority * 2^32 + counter)
    KEYS[2] our fair-finish hashes' key stem ('<prefix>:<queue>:fair')
    KEYS[3] BullMQ's priority counter ('<prefix>:<queue>:pc', a string INCRed per prioritized add)
    KEYS[4] BullMQ's marker zset ('<prefix>:<queue>:marker'; member '0' at score 0: a job is waiting)
    KEYS[5] BullMQ's queue meta hash ('<prefix>:<queue>:meta'; field 'paused' while paused)
    KEYS[6] group members' entries ('<prefix>:<queue>:group-members'; member job id -> entry id)
    KEYS[7] waiting group entries' extra members ('<prefix>:<queue>:group-sizes'; entry id -> members less one)
    KEYS[8] waiting extra members per class ('<prefix>:<queue>:group-extras'; class index -> count)

    ARGV[1] the class range size (CLASS_RANGE)
    ARGV[2] the job key prefix ('<prefix>:<queue>:'; a job's hash is ARGV[2] .. job id)
    ARGV[3...] per job, three each: job id, key id (tenant), target class index (0 high, 1 normal, 2 low, 3 batch); each key's oldest first

  Output:
    how many jobs moved
]]
--- @include "includes/fair-tag"
local moved = 0
local done = {}
for i = 3, #ARGV, 3 do
  local id = redis.call('HGET', KEYS[6], ARGV[i]) or ARGV[i]
  local target = tonumber(ARGV[i + 2])
  local score = (not done[ARGV[i + 1]]) and redis.call('ZSCORE', KEYS[1], id)
  local from = score and math.floor((math.floor(tonumber(score) / shift) - 1) / range)
  if score and from > target then
    done[ARGV[i + 1]] = true
    local extra = tonumber(redis.call('HGET', KEYS[7], id) or '0')
    if extra > 0 then
      redis.call('HINCRBY', KEYS[8], from, -extra)
      redis.call('HINCRBY', KEYS[8], target, extra)
    end
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
