import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3';

// An S3 multipart upload driven part by part by its writer, over as long as
// it needs (a Batch API batch's output file, a part as its answers fill one);
// putObjectStream's lib-storage Upload is for one stream written at once.

export interface MultipartUploads {
  /**
   * Starts a multipart upload to `key`, written a part at a time over as long as its writer needs (a Batch API
   * batch's output file as its lines end); its id. Parts are numbered 1 to 10,000, each 5 MiB or more but the last.
   */
  createMultipartUpload(key: string, options?: { contentType?: string }): Promise<string>;
  /** Uploads one part of an upload (the same number again replaces it); its ETag. */
  uploadPart(key: string, uploadId: string, partNumber: number, body: Uint8Array): Promise<string>;
  /** Makes the object of the parts named, in number order; the upload is then gone (NoSuchUpload). */
  completeMultipartUpload(key: string, uploadId: string, parts: ReadonlyArray<{ partNumber: number; etag: string }>): Promise<void>;
  /** Drops an upload and its parts. */
  abortMultipartUpload(key: string, uploadId: string): Promise<void>;
}

export function multipartUploads(client: S3Client, bucket: string): MultipartUploads {
  return {
    async createMultipartUpload(key, options = {}) {
      const res = await client.send(
        new CreateMultipartUploadCommand({ Bucket: bucket, Key: key, ContentType: options.contentType ?? 'application/octet-stream' }),
      );
      if (!res.UploadId) throw new Error(`createMultipartUpload(${key}): no UploadId in the response`);
      return res.UploadId;
    },

    async uploadPart(key, uploadId, partNumber, body) {
      const res = await client.send(new UploadPartCommand({ Bucket: bucket, Key: key, UploadId: uploadId, PartNumber: partNumber, Body: body }));
      if (!res.ETag) throw new Error(`uploadPart(${key}, ${partNumber}): no ETag in the response`);
      return res.ETag;
    },

    async completeMultipartUpload(key, uploadId, parts) {
      await client.send(
        new CompleteMultipartUploadCommand({
          Bucket: bucket,
          Key: key,
          UploadId: uploadId,
          MultipartUpload: { Parts: parts.map((p) => ({ PartNumber: p.partNumber, ETag: p.etag })) },
        }),
      );
    },

    async abortMultipartUpload(key, uploadId) {
      await client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId }));
    },
  };
}
