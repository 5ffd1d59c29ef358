import {
  CopyObjectCommand,
  CreateBucketCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  PutObjectCommand,
  paginateListObjectsV2,
  S3Client,
  type BucketLocationConstraint,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { Upload } from '@aws-sdk/lib-storage';
import type { Readable } from 'node:stream';
import { ensureExpiryRule, type ExpiryRule, type ExpiryRuleOutcome } from './expiry-rule.ts';
import { multipartUploads, type MultipartUploads } from './multipart.ts';
import { silenceNodeVersionWarning } from './sdk-env.ts';

export interface StorageOptions {
  /** Unset for AWS S3; set for MinIO and the embedded S3 server. */
  endpoint?: string;
  /** The endpoint clients reach S3 at, when it differs from `endpoint` (MinIO behind compose's network): download links are signed for it. */
  publicEndpoint?: string;
  region: string;
  bucket: string;
  /** Unset to use the SDK's default credential chain (IAM role, profile). */
  accessKeyId?: string;
  secretAccessKey?: string;
  forcePathStyle: boolean;
}

export interface PutObjectOptions {
  contentType?: string;
  /** Required when the body is a stream: S3 rejects a PUT without a length. */
  contentLength?: number;
}

export interface PresignPutOptions {
  expiresInS: number;
  /** Signed: S3 refuses a PUT of any other length, so the object is exactly this size. */
  contentLength: number;
  /** Signed too when given: the PUT must send the same Content-Type. */
  contentType?: string;
}

/** A presigned PUT: the URL, and the headers the client must send with it (they are part of the signature). */
export interface PresignedPut {
  url: string;
  headers: Record<string, string>;
}

/** One object of a listing. */
export interface ListedObject {
  key: string;
  lastModified: Date;
  sizeBytes: number;
}

export interface Storage extends MultipartUploads {
  readonly bucket: string;
  /** Creates the bucket when it is missing; safe to call from every process at start. */
  ensureBucket(): Promise<void>;
  /** Sets (or, with 0 days, removes) one lifecycle expiry rule, keeping the bucket's other rules. */
  ensureExpiryRule(rule: ExpiryRule): Promise<ExpiryRuleOutcome>;
  putObject(key: string, body: Uint8Array | NodeJS.ReadableStream, options?: PutObjectOptions): Promise<void>;
  /**
   * Streams a body of unknown length to `key` (a multipart upload in parts of STREAM_PART_BYTES, one PUT when it is
   * smaller): at most STREAM_QUEUE parts are held at once, so memory does not grow with the object. A failed upload
   * is aborted (no parts left behind).
   */
  putObjectStream(key: string, body: NodeJS.ReadableStream, options?: Pick<PutObjectOptions, 'contentType'>): Promise<void>;
  getObject(key: string): Promise<Uint8Array>;
  /** `length` bytes of the object from `offset` (a ranged GET): fewer when the object ends first. */
  getObjectRange(key: string, offset: number, length: number): Promise<Uint8Array>;
  getObjectStream(key: string): Promise<NodeJS.ReadableStream>;
  /** Undefined when the object does not exist. */
  headObject(key: string): Promise<{ sizeBytes: number } | undefined>;
  presignGet(key: string, expiresInS: number): Promise<string>;
  /**
   * The objects under `prefix`, in key order, after `startAfter` when given; pages are
   * fetched as the caller iterates, so breaking out early stops the listing.
   */
  listObjects(prefix: string, options?: { startAfter?: string }): AsyncIterable<ListedObject>;
  deleteObjects(keys: string[]): Promise<void>;
  close(): void;
  /**
   * A URL a client PUTs exactly `contentLength` bytes to, without credentials, for `expiresInS` seconds (signed for the public
   * endpoint). S3 and MinIO refuse another length; the embedded test server does not, so check the object's size before using it.
   */
  presignPut(key: string, options: PresignPutOptions): Promise<PresignedPut>;
  /** Copies an object within the bucket on the server side (CopyObject: the bytes never pass through this process; up to 5 GB). */
  copyObject(srcKey: string, dstKey: string): Promise<void>;
}

/** Attempts per request, the first included; the SDK backs off between them. */
const MAX_ATTEMPTS = 3;
const CONNECTION_TIMEOUT_MS = 5_000;
/** Inactivity limit rather than a total, so a slow multi-GB transfer that keeps moving is not cut off. */
const SOCKET_IDLE_TIMEOUT_MS = 30_000;
/** A streamed upload's part size (S3's least is 5 MiB) and how many parts are in flight at once. */
const STREAM_PART_BYTES = 8 * 1024 * 1024;
const STREAM_QUEUE = 2;
/** S3 caps DeleteObjects at 1,000 keys per request. */
const DELETE_BATCH_SIZE = 1_000;

export function createStorage(options: StorageOptions): Storage {
  silenceNodeVersionWarning();
  const { bucket } = options;
  const client = new S3Client(createClientConfig(options));
  // Signing is local (no request): a second client only changes the host the links name and are signed for.
  const presigner = options.publicEndpoint ? new S3Client(createClientConfig({ ...options, endpoint: options.publicEndpoint })) : client;

  return {
    bucket,

    async ensureBucket() {
      try {
        await client.send(new HeadBucketCommand({ Bucket: bucket }));
        return;
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      // us-east-1 is the one region that rejects an explicit LocationConstraint.
      const location = options.region === 'us-east-1' ? undefined : { LocationConstraint: options.region as BucketLocationConstraint };
      try {
        await client.send(new CreateBucketCommand({ Bucket: bucket, CreateBucketConfiguration: location }));
      } catch (err) {
        // Another process (a second worker, a parallel test) may win the race.
        if (!hasErrorName(err, 'BucketAlreadyOwnedByYou', 'BucketAlreadyExists')) throw err;
      }
    },

    ensureExpiryRule: (rule) => ensureExpiryRule(client, bucket, rule),

    async putObject(key, body, putOptions = {}) {
      const isBytes = body instanceof Uint8Array;
      if (!isBytes && putOptions.contentLength === undefined) {
        throw new Error(`putObject(${key}): contentLength is required for a stream body`);
      }
      await client.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: key,
          Body: body as Uint8Array | Readable,
          ContentType: putOptions.contentType ?? 'application/octet-stream',
          ContentLength: isBytes ? body.byteLength : putOptions.contentLength,
        }),
      );
    },

    async putObjectStream(key, body, putOptions = {}) {
      const upload = new Upload({
        client,
        params: { Bucket: bucket, Key: key, Body: body as Readable, ContentType: putOptions.contentType ?? 'application/octet-stream' },
        partSize: STREAM_PART_BYTES,
        queueSize: STREAM_QUEUE,
        leavePartsOnError: false,
      });
      await upload.done();
    },

    async getObject(key) {
      const res = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      if (!res.Body) throw new Error(`getObject(${key}): response has no body`);
      return res.Body.transformToByteArray();
    },

    async getObjectRange(key, offset, length) {
      if (length === 0) return new Uint8Array(0);
      const res = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key, Range: `bytes=${offset}-${offset + length - 1}` }));
      if (!res.Body) throw new Error(`getObjectRange(${key}): response has no body`);
      return res.Body.transformToByteArray();
    },

    async getObjectStream(key) {
      const res = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      if (!res.Body) throw new Error(`getObjectStream(${key}): response has no body`);
      // In Node the SDK's body is the http.IncomingMessage, already a Readable.
      return res.Body as Readable;
    },

    async headObject(key) {
      try {
        const res = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
        return { sizeBytes: res.ContentLength ?? 0 };
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    },

    presignGet(key, expiresInS) {
      return getSignedUrl(presigner, new GetObjectCommand({ Bucket: bucket, Key: key }), { expiresIn: expiresInS });
    },

    async *listObjects(prefix, listOptions = {}) {
      const pages = paginateListObjectsV2({ client }, { Bucket: bucket, Prefix: prefix, StartAfter: listOptions.startAfter || undefined });
      for await (const page of pages) {
        for (const o of page.Contents ?? []) {
          if (o.Key) yield { key: o.Key, lastModified: o.LastModified ?? new Date(0), sizeBytes: o.Size ?? 0 };
        }
      }
    },

    async deleteObjects(keys) {
      for (let i = 0; i < keys.length; i += DELETE_BATCH_SIZE) {
        const batch = keys.slice(i, i + DELETE_BATCH_SIZE);
        const res = await client.send(
          new DeleteObjectsCommand({
            Bucket: bucket,
            Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true },
          }),
        );
        const failed = res.Errors ?? [];
        if (failed.length > 0) {
          const first = failed[0]!;
          throw new Error(`deleteObjects: ${failed.length} of ${batch.length} keys failed, first ${first.Key}: ${first.Code} ${first.Message}`);
        }
      }
    },

    close() {
      client.destroy();
    },

    async presignPut(key, { expiresInS, contentLength, contentType }) {
      const command = new PutObjectCommand({ Bucket: bucket, Key: key, ContentLength: contentLength, ContentType: contentType });
      const headers: Record<string, string> = { 'content-length': String(contentLength) };
      if (contentType !== undefined) headers['content-type'] = contentType;
      // Named explicitly so they are signed, not left out of the signature: a PUT of another length (or type) fails it.
      const url = await getSignedUrl(presigner, command, { expiresIn: expiresInS, signableHeaders: new Set(Object.keys(headers)) });
      return { url, headers };
    },

    async copyObject(srcKey, dstKey) {
      await client.send(new CopyObjectCommand({ Bucket: bucket, Key: dstKey, CopySource: `${bucket}/${srcKey.split('/').map(encodeURIComponent).join('/')}` }));
    },

    ...multipartUploads(client, bucket),
  };
}

function createClientConfig(options: StorageOptions): S3ClientConfig {
  const credentials =
    options.accessKeyId && options.secretAccessKey ? { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey } : undefined;
  return {
    region: options.region,
    endpoint: options.endpoint,
    forcePathStyle: options.forcePathStyle,
    credentials,
    maxAttempts: MAX_ATTEMPTS,
    // Each command class's middleware resolved once, not on every request (13 % of a PUT's samples in the client's
    // profile); nothing here changes a client's middleware after its first request (the presigner resolves its own).
    cacheMiddleware: true,
    retryMode: 'standard',
    requestHandler: { connectionTimeout: CONNECTION_TIMEOUT_MS, socketTimeout: SOCKET_IDLE_TIMEOUT_MS },
    // S3-compatible servers (s3rver, older MinIO, Ceph) do not understand the
    // SDK's default CRC32 checksums: a streamed PUT is sent aws-chunked with a
    // trailer, which they store verbatim. AWS itself keeps the default.
    ...(options.endpoint ? { requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' } : {}),
  };
}

/** Whether an S3 error means the object (or its bucket) does not exist. */
export function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return hasErrorName(err, 'NotFound', 'NoSuchKey', 'NoSuchBucket') || e?.$metadata?.httpStatusCode === 404;
}

const NETWORK_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * Whether an S3 error means the service cannot be reached or is failing now
 * (retry later), not that the request is wrong. Only errors from this client
 * count: the SDK marks every error it throws with `$metadata`, so a database
 * connection error with the same system code is not mistaken for one.
 */
export function isStorageUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; $metadata?: { httpStatusCode?: number } } | undefined;
  if (!e || typeof e !== 'object' || !('$metadata' in e)) return false;
  if (typeof e.code === 'string' && NETWORK_ERROR_CODES.has(e.code)) return true;
  return hasErrorName(err, 'TimeoutError', 'RequestTimeout') || (e.$metadata?.httpStatusCode ?? 0) >= 500;
}

function hasErrorName(err: unknown, ...names: string[]): boolean {
  const name = (err as { name?: unknown })?.name;
  return typeof name === 'string' && names.includes(name);
}
