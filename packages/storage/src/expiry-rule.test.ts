import { describe, expect, it } from 'vitest';
import { GetBucketLifecycleConfigurationCommand, PutBucketLifecycleConfigurationCommand, type LifecycleRule, type S3Client } from '@aws-sdk/client-s3';
import { ensureExpiryRule } from './expiry-rule.ts';

/** A bucket's lifecycle configuration, served the way S3 and MinIO serve it. */
function bucketWith(rules: LifecycleRule[] | undefined) {
  const state = { rules, puts: 0 };
  const client = {
    async send(command: unknown) {
      if (command instanceof GetBucketLifecycleConfigurationCommand) {
        if (state.rules === undefined) throw Object.assign(new Error('none'), { name: 'NoSuchLifecycleConfiguration' });
        return { Rules: state.rules };
      }
      if (command instanceof PutBucketLifecycleConfigurationCommand) {
        state.puts++;
        state.rules = command.input.LifecycleConfiguration?.Rules;
        return {};
      }
      throw new Error('unexpected command');
    },
  } as unknown as S3Client;
  return { client, state };
}

const operatorsRule: LifecycleRule = { ID: 'tmp-uploads', Status: 'Enabled', Filter: { Prefix: 'tmp/' }, Expiration: { Days: 1 } };
const rule = { id: 'inferq-job-objects', prefix: 'jobs/', days: 30 };

describe('ensureExpiryRule', () => {
  it("adds its rule beside the operator's, and leaves a bucket that has it alone", async () => {
    const bucket = bucketWith([operatorsRule]);
    expect(await ensureExpiryRule(bucket.client, 'b', rule)).toBe('set');
    expect(bucket.state.rules).toEqual([operatorsRule, { ID: rule.id, Status: 'Enabled', Filter: { Prefix: 'jobs/' }, Expiration: { Days: 30 } }]);
    expect(await ensureExpiryRule(bucket.client, 'b', rule)).toBe('unchanged');
    expect(bucket.state.puts).toBe(1);
  });

  it('changes its own rule in place and removes it with 0 days', async () => {
    const bucket = bucketWith(undefined);
    await ensureExpiryRule(bucket.client, 'b', rule);
    expect(await ensureExpiryRule(bucket.client, 'b', { ...rule, days: 45 })).toBe('set');
    expect(bucket.state.rules).toHaveLength(1);
    expect(bucket.state.rules![0]!.Expiration?.Days).toBe(45);
    expect(await ensureExpiryRule(bucket.client, 'b', { ...rule, days: 0 })).toBe('removed');
    expect(bucket.state.rules).toEqual([]);
  });

  it('answers unsupported on a server without lifecycle rules (the embedded test server)', async () => {
    const notImplemented = {
      async send() {
        throw Object.assign(new Error('not implemented'), { name: 'NotImplemented', $metadata: { httpStatusCode: 501 } });
      },
    };
    expect(await ensureExpiryRule(notImplemented as unknown as S3Client, 'b', rule)).toBe('unsupported');
  });
});
