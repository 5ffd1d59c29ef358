import type { FileDeletedSchema, FileList, FileObject, ListFilesQuery } from '@inferq/contracts';
import { isReadableStream, type HttpClient } from './http.ts';
import { eachOfPages } from './openai-pages.ts';
import { newIdempotencyKey, resolveSubmitRetry, sendWhileRefused, type SubmitRetryOptions } from './submit-retry.ts';

// Batch API files (POST /v1/files and the rest): a JSONL file of requests up,
// a batch's output and error files down, streamed both ways.

export type FileDeleted = (typeof FileDeletedSchema)['static'];
export type FilesQuery = Omit<ListFilesQuery, 'after'>;

/**
 * What `files.upload` sends, streamed rather than read into memory: a path (Node only, opened with `fs.openAsBlob`), a
 * Blob or File, or a stream of bytes (a Node Readable or any async iterable of Uint8Array, or a ReadableStream).
 */
export type FileSource = string | Blob | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array | string>;

export interface FileUploadOptions {
  /** The file's name on the server. @default the path's last part, a File's name, a Node file stream's path's last part, else `batch.jsonl` */
  filename?: string;
  /** @default 'batch' (the only purpose an upload may have) */
  purpose?: 'batch';
  /** Seconds after the upload the server deletes the file (3600–2592000; OpenAI's `expires_after`). @default the server's BATCH_FILE_EXPIRES_S (30 days) */
  expiresAfterS?: number;
  /**
   * Over the client's `submitRetry`: an upload the server refused for now (429, 503) is sent again, a path or Blob only (a
   * stream is read once); one left unanswered is not, as the server may have kept it. `false`: sent once.
   */
  submitRetry?: SubmitRetryOptions | false;
  signal?: AbortSignal;
}

/** A line of a batch's output or error file: one request's answer, keyed by its `custom_id`. */
export interface BatchOutputLine {
  id: string;
  custom_id: string;
  /** The endpoint's answer: 200 and the job (or embeddings), or the status and `{ error: { code, message } }` of a refusal or failure. */
  response: { status_code: number; request_id: string | null; body: unknown } | null;
  /** Why a request did not run (`batch_cancelled`, `batch_expired`, `deadline_exceeded`); null when it has a response. */
  error: { code: string; message: string } | null;
}

export interface FilesApi {
  /** Uploads a JSONL file of batch requests as multipart (`purpose`, `file`), streamed: it is never read whole into memory. */
  upload(source: FileSource, options?: FileUploadOptions): Promise<FileObject>;
  get(id: string): Promise<FileObject>;
  /** Every file of the key, newest first, fetching pages (`limit` each) as it goes. */
  list(query?: FilesQuery): AsyncIterableIterator<FileObject>;
  /** One page; pass `last_id` back as `after` for the next while `has_more`. */
  page(query?: ListFilesQuery): Promise<FileList>;
  /** The file's bytes (JSONL) as they arrive. */
  content(id: string, options?: { signal?: AbortSignal }): Promise<ReadableStream<Uint8Array>>;
  /** The file's lines as they arrive, without their line breaks; blank lines skipped. `JSON.parse` a batch file's as `BatchOutputLine`. */
  lines(id: string, options?: { signal?: AbortSignal }): AsyncIterableIterator<string>;
  /** 409 `FILE_IN_USE` while a batch that has not ended reads it. */
  delete(id: string): Promise<FileDeleted>;
}

const filePath = (id: string) => `/v1/files/${encodeURIComponent(id)}`;

type NodeFs = { openAsBlob(path: string, options?: { type?: string }): Promise<Blob> };

/**
 * Node's fs for a path, asked of the runtime (`getBuiltinModule`, Node 20.16 and later) when a path is given rather than
 * imported, so that the browser entry bundles no node: module and runs without Node's globals; in a browser a path throws.
 */
function nodeFs(): NodeFs {
  const runtime = (globalThis as { process?: { getBuiltinModule?(id: string): unknown } }).process;
  const fs = runtime?.getBuiltinModule?.('node:fs') as Partial<NodeFs> | undefined;
  if (typeof fs?.openAsBlob !== 'function') throw new TypeError('a file path needs Node (20.16 or later); pass a Blob, a File or a stream');
  return fs as NodeFs;
}

const lastPart = (path: string) => path.split(/[\\/]/).filter(Boolean).at(-1) ?? path;

/** A path's last part, a File's name, a Node file stream's path's last part, else `batch.jsonl`. */
function defaultFilename(source: FileSource): string {
  if (typeof source === 'string') return lastPart(source);
  const { name, path } = source as { name?: unknown; path?: unknown };
  if (typeof name === 'string' && name !== '') return name;
  return typeof path === 'string' && path !== '' ? lastPart(path) : 'batch.jsonl';
}

/** The name, as the HTML standard's multipart encoder escapes it: `"` and line breaks percent-encoded. */
const quotedName = (name: string) => name.replaceAll('"', '%22').replaceAll('\r', '%0D').replaceAll('\n', '%0A');

async function* chunksOf(source: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array | string>): AsyncGenerator<Uint8Array> {
  const encoder = new TextEncoder();
  if (!isReadableStream(source)) {
    for await (const chunk of source) yield typeof chunk === 'string' ? encoder.encode(chunk) : chunk;
    return;
  }
  // A reader rather than `for await`: not every browser's ReadableStream is async iterable.
  const reader = source.getReader();
  let ended = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        ended = true;
        return;
      }
      yield value;
    }
  } finally {
    // Left early (a `break`, a failed upload): the rest is not wanted, and a download's connection is let go.
    if (!ended) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}

/** A multipart/form-data body of the fields and then the file, made as the stream is read: nothing held but a chunk. */
function multipartStream(fields: Readonly<Record<string, string>>, filename: string, bytes: AsyncGenerator<Uint8Array>) {
  const boundary = `inferq-${newIdempotencyKey()}`;
  const encoder = new TextEncoder();
  const disposition = (name: string) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"`;
  const fieldParts = Object.entries(fields).map(([name, value]) => `${disposition(name)}\r\n\r\n${value}\r\n`);
  const fileHead = `${disposition('file')}; filename="${quotedName(filename)}"\r\nContent-Type: application/jsonl\r\n\r\n`;
  async function* parts(): AsyncGenerator<Uint8Array> {
    yield encoder.encode(fieldParts.join('') + fileHead);
    yield* bytes;
    yield encoder.encode(`\r\n--${boundary}--\r\n`);
  }
  const it = parts();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await it.next();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    async cancel() {
      await it.return(undefined);
    },
  });
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

export function createFilesApi(http: HttpClient, submitRetry: SubmitRetryOptions | false | undefined): FilesApi {
  const page: FilesApi['page'] = async (query = {}) => (await http.json<FileList>('/v1/files', { query })).body;
  const content: FilesApi['content'] = async (id, options = {}) => {
    const response = await http.send(`${filePath(id)}/content`, { headers: { accept: 'application/jsonl, application/problem+json' }, signal: options.signal });
    return response.body ?? new Blob([]).stream();
  };

  return {
    async upload(source, options = {}) {
      const purpose = options.purpose ?? 'batch';
      const blob = typeof source === 'string' ? await nodeFs().openAsBlob(source, { type: 'application/jsonl' }) : source;
      const filename = options.filename ?? defaultFilename(source);
      const fields: Record<string, string> = { purpose };
      if (options.expiresAfterS !== undefined)
        Object.assign(fields, { 'expires_after[anchor]': 'created_at', 'expires_after[seconds]': String(options.expiresAfterS) });
      const send = (): Promise<FileObject> => {
        if (blob instanceof Blob) {
          // A Blob in FormData is streamed by fetch (one from openAsBlob from disk), and can be sent again.
          const form = new FormData();
          for (const [name, value] of Object.entries(fields)) form.set(name, value);
          form.set('file', blob, filename);
          return http.json<FileObject>('/v1/files', { method: 'POST', body: form, signal: options.signal }).then((r) => r.body);
        }
        const { body, contentType } = multipartStream(fields, filename, chunksOf(blob));
        return http
          .json<FileObject>('/v1/files', { method: 'POST', body, headers: { 'content-type': contentType }, signal: options.signal })
          .then((r) => r.body);
      };
      return sendWhileRefused(send, resolveSubmitRetry(submitRetry, options.submitRetry), { signal: options.signal, replayable: blob instanceof Blob });
    },
    get: async (id) => (await http.json<FileObject>(filePath(id))).body,
    list: (query = {}) => eachOfPages(page, query),
    page,
    content,
    async *lines(id, options = {}) {
      const decoder = new TextDecoder();
      let rest = '';
      const clean = (line: string) => (line.endsWith('\r') ? line.slice(0, -1) : line);
      for await (const chunk of chunksOf(await content(id, options))) {
        const parts = (rest + decoder.decode(chunk, { stream: true })).split('\n');
        rest = parts.pop()!;
        for (const line of parts) if (line.trim() !== '') yield clean(line);
      }
      rest += decoder.decode();
      if (rest.trim() !== '') yield clean(rest);
    },
    delete: async (id) => (await http.json<FileDeleted>(filePath(id), { method: 'DELETE' })).body,
  };
}
