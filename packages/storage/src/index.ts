export * from './s3-client.ts';
export * from './keys.ts';
