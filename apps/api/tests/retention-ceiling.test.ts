import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '@inferq/core';
import { checkApiConfig } from '../src/config.ts';
import { buildTestApp, type TestApp } from './helpers.ts';

// A retention longer than the bucket keeps job objects (S3_JOB_OBJECTS_EXPIRE_DAYS)
// would leave jobs whose rows read as whole while their S3 tensors are gone:
// the API refuses to start with such a default and refuses such an override.

const CEILING_S = 2 * 86_400;
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ retentionCeilingS: CEILING_S });
  expect((await t.registerModel('mlp')).statusCode).toBe(201);
});
afterAll(() => t?.close());

const patch = (url: string, retentionS: number | null) => t.server.inject({ method: 'PATCH', url, payload: { retentionS }, headers: t.auth(t.adminKey) });

describe('the retention ceiling', () => {
  it('refuses a key or model override longer than the bucket keeps job objects, with a pointer to retentionS', async () => {
    const keys = (await t.server.inject({ method: 'GET', url: '/v1/keys', headers: t.auth(t.adminKey) })).json().items as Array<{ id: string }>;
    const keyUrl = `/v1/keys/${keys[0]!.id}`;
    for (const url of [keyUrl, '/v1/models/mlp']) {
      const refused = await patch(url, CEILING_S + 1);
      expect(refused.statusCode).toBe(400);
      expect(refused.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ pointer: '/body/retentionS' }] });
      expect((await patch(url, CEILING_S)).statusCode).toBe(200);
      expect((await patch(url, null)).statusCode).toBe(200);
    }
  });

  it('keeps the API from starting with a default longer than the bucket rule (unless it is off) or the tombstone retention', () => {
    const tombstones = { JOB_TOMBSTONE_RETENTION_S: 400 * 86_400 };
    expect(() => checkApiConfig({ JOB_RETENTION_S: 31 * 86_400, S3_JOB_OBJECTS_EXPIRE_DAYS: 30, ...tombstones })).toThrow(ConfigError);
    expect(() => checkApiConfig({ JOB_RETENTION_S: 31 * 86_400, S3_JOB_OBJECTS_EXPIRE_DAYS: 0, ...tombstones })).not.toThrow();
    expect(() => checkApiConfig({ JOB_RETENTION_S: 31 * 86_400, S3_JOB_OBJECTS_EXPIRE_DAYS: 0, JOB_TOMBSTONE_RETENTION_S: 30 * 86_400 })).toThrow(
      /partition would be dropped/,
    );
    expect(checkApiConfig({ JOB_RETENTION_S: 7 * 86_400, S3_JOB_OBJECTS_EXPIRE_DAYS: 30, ...tombstones }).JOB_RETENTION_S).toBe(7 * 86_400);
  });
});
