--[[
  A group entry taken by a worker for the first time (groupTaken in ../queue-groups.ts): its members beyond the
  first stop counting as waiting and count as held until the entry ends (groupEnded). The size moves as it is read,
  so an entry taken again (a lost worker's, after BullMQ's stalled check) moves nothing more.

  Input:
    KEYS[1] the waiting group entries' extra members ('<prefix>:<queue>:group-sizes'; entry id -> members less one)
    KEYS[2] waiting extra members per class ('<prefix>:<queue>:group-extras'; class index -> count)
    KEYS[3] the held group entries' extra members ('<prefix>:<queue>:group-held'; entry id -> members less one)

    ARGV[1] the entry's id
    ARGV[2] its class index now (0 high, 1 normal, 2 low, 3 batch: aging may have moved it)

  Output:
    the extra members moved (0 when the entry was taken before)
]]
local n = redis.call('HGET', KEYS[1], ARGV[1])
if not n then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HINCRBY', KEYS[2], ARGV[2], -tonumber(n))
redis.call('HSET', KEYS[3], ARGV[1], n)
return tonumber(n)
