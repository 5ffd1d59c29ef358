export * from './s3-client.ts';
export * from './s3-config.ts';
export * from './keys.ts';
export * from './expiry-rule.ts';
export * from './tensor-store.ts';
