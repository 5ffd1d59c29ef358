import type { HttpClient } from './http.ts';

/** What `POST /v1/uploads` answers: where to PUT the tensor's bytes, and the id a job input names them by. */
export interface UploadTicket {
  id: string;
  url: string;
  method: string;
  headers: Record<string, string>;
  bytes: number;
  expiresAt: string;
}

export interface UploadsApi {
  /** Asks for an upload of a tensor of `datatype` and `shape` (its bytes are what they come to). */
  create(tensor: { datatype: string; shape: readonly number[] }, options?: { signal?: AbortSignal }): Promise<UploadTicket>;
  /**
   * Uploads a tensor's raw little-endian bytes and resolves to the upload id, to name in a job input as
   * `{ name, datatype, shape, upload: id }`. An upload is used once and expires unused (the server's UPLOAD_TTL_S).
   */
  put(tensor: { datatype: string; shape: readonly number[]; bytes: Uint8Array | Blob }, options?: { signal?: AbortSignal }): Promise<string>;
}

// fetch sets these from the body and the URL; browsers refuse to have them set.
const SET_BY_FETCH = new Set(['content-length', 'host']);

export function createUploadsApi(http: HttpClient): UploadsApi {
  const create: UploadsApi['create'] = async ({ datatype, shape }, options = {}) =>
    (await http.json<UploadTicket>('/v1/uploads', { method: 'POST', body: { datatype, shape: [...shape] }, signal: options.signal })).body;
  return {
    create,
    async put(tensor, options = {}) {
      const ticket = await create(tensor, options);
      const size = tensor.bytes instanceof Blob ? tensor.bytes.size : tensor.bytes.byteLength;
      if (size !== ticket.bytes) throw new RangeError(`${size} bytes are not ${tensor.datatype} [${tensor.shape.join(', ')}] (${ticket.bytes} bytes)`);
      const headers = Object.fromEntries(Object.entries(ticket.headers).filter(([name]) => !SET_BY_FETCH.has(name.toLowerCase())));
      await http.external(ticket.url, { method: ticket.method, headers, body: tensor.bytes, signal: options.signal });
      return ticket.id;
    },
  };
}
