/** One queue per model; BullMQ rejects `:` in queue names, model names never contain one. */
export const queueNameFor = (model: string): string => `infer.${model}`;
export const JOB_NAME = 'infer.run';
