import { Tokenizer } from '@huggingface/tokenizers';
import { AppError } from '@inferq/core';
import type { ModelRecord } from '@inferq/db';
import type { Storage } from '@inferq/storage';

/** Tokenizers kept parsed per API process; each is a few MB at most. */
const CACHED_TOKENIZERS = 32;

/**
 * Parses a Hugging Face tokenizer.json. The library reads the settings
 * lazily, so a sample text is encoded too: a file it cannot run is refused at
 * upload, not at the first request.
 */
export function parseTokenizer(bytes: Uint8Array): { tokenizer: Tokenizer; json: Record<string, unknown> } {
  try {
    const json = JSON.parse(new TextDecoder().decode(bytes)) as Record<string, unknown>;
    if (typeof json !== 'object' || json === null || typeof json.model !== 'object') throw new Error('it has no "model" section');
    const tokenizer = new Tokenizer(json, {});
    tokenizer.encode('inferq checks this tokenizer');
    return { tokenizer, json };
  } catch (err) {
    const detail = `not a tokenizer.json the tokenizer library can run: ${err instanceof Error ? err.message : String(err)}`.slice(0, 300);
    throw new AppError('VALIDATION_FAILED', detail, { errors: [{ pointer: '/body/tokenizer', code: 'VALIDATION_FAILED', detail }] });
  }
}

export interface TokenizerCache {
  /** The model's tokenizer, read from S3 on first use. */
  forModel(model: ModelRecord): Promise<Tokenizer>;
}

export function createTokenizerCache(storage: Storage): TokenizerCache {
  // Keyed by the S3 key (content-addressed): versions sharing a tokenizer share the entry. Insertion order is recency.
  const cache = new Map<string, Promise<Tokenizer>>();
  return {
    forModel(model) {
      const key = model.tokenizerKey;
      if (!key) throw new AppError('MODEL_NOT_EMBEDDING', `model ${model.name}:${model.version} was registered without a tokenizer`);
      let entry = cache.get(key);
      if (entry) cache.delete(key);
      else entry = storage.getObject(key).then((bytes) => parseTokenizer(bytes).tokenizer);
      cache.set(key, entry);
      // A failed read is not kept: the next request tries again.
      entry.catch(() => cache.get(key) === entry && cache.delete(key));
      if (cache.size > CACHED_TOKENIZERS) cache.delete(cache.keys().next().value!);
      return entry;
    },
  };
}
