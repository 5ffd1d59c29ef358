import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_SUBMIT_RETRY, newIdempotencyKey, resolveSubmitRetry } from './submit-retry.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('resolveSubmitRetry', () => {
  it("takes the call's options over the client's over the defaults, ignoring undefined ones", () => {
    expect(resolveSubmitRetry(undefined, undefined)).toEqual(DEFAULT_SUBMIT_RETRY);
    expect(resolveSubmitRetry({ attempts: 2, maxElapsedMs: 1000 }, { attempts: 3, attemptTimeoutMs: undefined })).toEqual({
      attempts: 3,
      maxElapsedMs: 1000,
      attemptTimeoutMs: 10_000,
    });
    expect(resolveSubmitRetry(undefined, { attempts: 0 })).toMatchObject({ attempts: 1 });
  });

  it('is off when the call says false, or the client does and the call says nothing', () => {
    expect(resolveSubmitRetry({ attempts: 9 }, false)).toBe(false);
    expect(resolveSubmitRetry(false, undefined)).toBe(false);
    expect(resolveSubmitRetry(false, { attempts: 2 })).toMatchObject({ attempts: 2 });
  });
});

describe('newIdempotencyKey', () => {
  it('is a UUID v4, a new one each time, made from getRandomValues where randomUUID is missing (an insecure browser context)', () => {
    const a = newIdempotencyKey();
    expect(a).toMatch(UUID);
    expect(newIdempotencyKey()).not.toBe(a);
    const real = globalThis.crypto;
    vi.stubGlobal('crypto', { getRandomValues: <T extends ArrayBufferView>(array: T) => real.getRandomValues(array as never) as T });
    const fallback = newIdempotencyKey();
    expect(fallback).toMatch(UUID);
    expect(newIdempotencyKey()).not.toBe(fallback);
  });
});
