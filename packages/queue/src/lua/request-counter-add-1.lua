--[[
  Adds requests to a key's fixed rate-limit window (createRequestCounter in ../request-counter.ts),
  starting the window when the key is new, as @fastify/rate-limit's own store does, so processes of
  either kind count in one window during a rolling update. A key found without an expiry gets one, so
  a count can never outlive its window. Touches no BullMQ key.

  Input:
    KEYS[1] the key's request count ('<rate-limit prefix><key>', a string with a PEXPIRE)

    ARGV[1] how many requests to add
    ARGV[2] the window in milliseconds (the expiry of a new key)

  Output:
    { the count after the add, the window's milliseconds left }
]]
local n = tonumber(ARGV[1])
local count = redis.call('INCRBY', KEYS[1], n)
local ttl = count == n and -1 or redis.call('PTTL', KEYS[1])
if ttl < 0 then
  ttl = tonumber(ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ttl)
end
return {count, ttl}
