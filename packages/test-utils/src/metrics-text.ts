import type { TestProcess } from './processes.ts';

/** The sum of a Prometheus metric's samples in a scrape's text whose labels contain every `labels` pair. */
export function metricSample(text: string, name: string, labels: Record<string, string> = {}): number {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .filter((line) => Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`)))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

/** The port a worker serves /metrics on, from its log line. */
export const workerMetricsPort = (worker: Pick<TestProcess, 'output'>): number => Number(/"port":(\d+),"msg":"metrics listening"/.exec(worker.output())?.[1]);
