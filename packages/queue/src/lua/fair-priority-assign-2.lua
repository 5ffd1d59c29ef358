--[[
  Fair BullMQ priorities for jobs about to be added to a queue, in order (assignFairPriorities in
  ../fair-priority.ts). Reads BullMQ's prioritized zset; writes our fair-finish hashes, and in a rebase
  (includes/fair-tag.lua) the class's waiting jobs' scores and job hashes' priority.

  BullMQ layout: BullMQ 6.7.0 (the prioritized zset's score layout, see includes/fair-tag.lua).

  Input:
    KEYS[1] BullMQ's prioritized zset of the queue ('<prefix>:<queue>:prioritized')
    KEYS[2] our fair-finish hashes' key stem ('<prefix>:<queue>:fair')

    ARGV[1] the class range size (CLASS_RANGE)
    ARGV[2] the job key prefix ('<prefix>:<queue>:'; a job's hash is ARGV[2] .. job id)
    ARGV[3...] per job, three each: key id (tenant, '' for none), class index (0 high, 1 normal, 2 low, 3 batch), cost (1 / weight)

  Output:
    a BullMQ priority per job, in ARGV's order
]]
--- @include "includes/fair-tag"
local out = {}
for i = 3, #ARGV, 3 do
  out[#out + 1] = fairTag(tonumber(ARGV[i + 1]), ARGV[i], tonumber(ARGV[i + 2]))
end
saveFinishes()
return out
