import type { Priority } from '@inferq/contracts';

/** One queue per model; BullMQ rejects `:` in queue names, model names never contain one. */
export const queueNameFor = (model: string): string => `infer.${model}`;
export const JOB_NAME = 'infer.run';

/**
 * BullMQ priority for each API priority (1 is served first). Every job gets an
 * explicit priority: an unprioritised BullMQ job would jump ahead of all of them.
 * The gaps leave room for aging between the levels.
 */
export const BULL_PRIORITY: Record<Priority, number> = { high: 1, normal: 100, low: 200 };

/** The API priority of a BullMQ priority (jobs added by this project only carry these three). */
export const priorityOfBull = (bull: number): Priority => (bull <= BULL_PRIORITY.high ? 'high' : bull <= BULL_PRIORITY.normal ? 'normal' : 'low');
