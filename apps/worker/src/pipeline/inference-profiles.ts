import { InferenceProfile } from '@inferq/inference';

/**
 * The measured inference time per batch size of each model this worker
 * serves (all versions together), shared by the batch runner, which records
 * every run, and the model's batcher, which reads it to meet deadlines.
 */
export function createInferenceProfiles() {
  const profiles = new Map<string, InferenceProfile>();
  return {
    of(model: string): InferenceProfile {
      let p = profiles.get(model);
      if (!p) profiles.set(model, (p = new InferenceProfile()));
      return p;
    },
  };
}
export type InferenceProfiles = ReturnType<typeof createInferenceProfiles>;
