/** One generated request and what its answer must be. */
export interface FuzzCase {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string | Buffer;
  /** `reject`: invalid, must get a 4xx; `accept`: valid, must get a 2xx; `any`: may be either (never a 5xx). */
  expect: 'reject' | 'accept' | 'any';
  /** Which key to send: the fuzzing key (not admin), the admin key (admin-only routes), or none (the headers say). */
  as: 'fuzzer' | 'admin' | 'none';
  /** Prefer: wait was asked for, so 503 MODEL_UNAVAILABLE is the right answer while no worker runs. */
  waits?: boolean;
  label: string;
}
