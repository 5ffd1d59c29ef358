import { GetBucketLifecycleConfigurationCommand, PutBucketLifecycleConfigurationCommand, type LifecycleRule, type S3Client } from '@aws-sdk/client-s3';

/** A bucket lifecycle rule that expires every object under `prefix` `days` after it was written. */
export interface ExpiryRule {
  /** The rule's ID: rules of other IDs in the bucket (an operator's own) are kept as they are. */
  id: string;
  prefix: string;
  /** 0: no such rule (removed if present). */
  days: number;
}

export type ExpiryRuleOutcome = 'set' | 'unchanged' | 'removed' | 'unsupported';

/**
 * Puts `rule` into the bucket's lifecycle configuration beside the rules
 * already there, honoured by S3 and MinIO alike: the backstop that expires
 * objects the service's own deletes missed. Servers without lifecycle support
 * (the embedded test server) answer `unsupported`.
 */
export async function ensureExpiryRule(client: S3Client, bucket: string, rule: ExpiryRule): Promise<ExpiryRuleOutcome> {
  let existing: LifecycleRule[];
  try {
    existing = (await client.send(new GetBucketLifecycleConfigurationCommand({ Bucket: bucket }))).Rules ?? [];
  } catch (err) {
    if (hasName(err, 'NoSuchLifecycleConfiguration')) existing = [];
    else if (isUnsupported(err)) return 'unsupported';
    else throw err;
  }
  const others = existing.filter((r) => r.ID !== rule.id);
  const ours = existing.find((r) => r.ID === rule.id);
  if (rule.days === 0 && !ours) return 'unchanged';
  if (rule.days > 0 && ours?.Status === 'Enabled' && ours.Expiration?.Days === rule.days && ours.Filter?.Prefix === rule.prefix) return 'unchanged';
  const wanted: LifecycleRule[] =
    rule.days === 0 ? others : [...others, { ID: rule.id, Status: 'Enabled', Filter: { Prefix: rule.prefix }, Expiration: { Days: rule.days } }];
  try {
    await client.send(new PutBucketLifecycleConfigurationCommand({ Bucket: bucket, LifecycleConfiguration: { Rules: wanted } }));
  } catch (err) {
    if (isUnsupported(err)) return 'unsupported';
    throw err;
  }
  return rule.days === 0 ? 'removed' : 'set';
}

function hasName(err: unknown, ...names: string[]): boolean {
  const name = (err as { name?: unknown; Code?: unknown })?.name;
  return typeof name === 'string' && names.includes(name);
}

const isUnsupported = (err: unknown): boolean =>
  hasName(err, 'NotImplemented') || (err as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode === 501;

/**
 * Days after which the bucket expires an upload object no job took: the backstop behind the API's own sweep of
 * expired uploads (UPLOAD_TTL_S is at most a day, so one day is past any upload's life). S3 counts whole days.
 */
export const UPLOAD_OBJECTS_EXPIRE_DAYS = 1;
