/** Each service has a namespace of its own, so fixed ports cannot collide. */
export const SERVICE_PORTS = { redis: 6379, redisRelay: 6380, postgres: 5432, s3: 9000, api: 8080 } as const;
