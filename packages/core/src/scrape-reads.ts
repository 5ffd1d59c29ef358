import { Counter, Gauge, type GaugeConfiguration, type LabelValues, type Registry } from 'prom-client';

/**
 * How long the dependency reads of one scrape may take in all: /metrics answers within about this much through any
 * dependency's outage (a Redis or Postgres that refuses, or a host that vanished and never answers), well inside
 * Prometheus's scrape timeout (10 s by default).
 */
export const SCRAPE_READ_LIMIT_MS = 1_000;

/** After the scrape's limit: a gauge's own backstop, so a read that times out is told as its source's. */
const GAUGE_GRACE_MS = 25;

/** A scrape-time read that failed (`error`) or ran past the scrape's limit (`timeout`), and the dependency it read. */
export class ScrapeReadError extends Error {
  constructor(
    readonly source: string,
    readonly reason: 'timeout' | 'error',
    cause?: unknown,
  ) {
    super(reason === 'timeout' ? `${source} read ran past the scrape's limit` : `${source} read failed: ${(cause as Error | undefined)?.message ?? cause}`, {
      cause,
    });
  }
}

/** What a scrape-time gauge's read writes: given to the gauge only once the whole read has succeeded in time. */
export interface GaugeValues<L extends string> {
  set(value: number): void;
  set(labels: LabelValues<L>, value: number): void;
  inc(labels?: LabelValues<L>, value?: number): void;
}

export interface ScrapeGaugeConfiguration<L extends string> extends Omit<GaugeConfiguration<L>, 'collect' | 'registers'> {
  /** The dependency the read reaches (`postgres`, `redis`, `gpu`): a failure no `reads.read` of its own names is this source's. */
  source: string;
  /** Reads the values of this scrape; a gauge whose read fails or runs past the limit is left out of the scrape. */
  read(values: GaugeValues<L>): Promise<void>;
}

export interface ScrapeReads {
  /** A gauge read at scrape time, within the scrape's limit; when its read fails or times out it is empty (no stale values) and counted. */
  gauge<L extends string>(config: ScrapeGaugeConfiguration<L>): Gauge<L>;
  /** One dependency read inside a gauge's read (or shared by several), bounded by the scrape's limit and told as `source`'s. */
  read<T>(source: string, read: () => Promise<T>): Promise<T>;
}

/** The reads of one scrape: every gauge collected at once by one registry.metrics() call, and the reads they share. */
interface Round {
  deadline: number;
  /** Sources a read of this round failed for: a later success in the round does not make them up again. */
  failed: Set<string>;
  pending: Set<Promise<void>>;
}

/**
 * The one seam for metrics read from a dependency when Prometheus scrapes: each gauge's read (and each shared read in
 * it) runs under the scrape's time limit (`limitMs`, SCRAPE_READ_LIMIT_MS by default, one deadline for all the reads of
 * a scrape). A read that fails or times out leaves its gauge out of that scrape (reset: nothing stale is served) and is
 * counted in `inferq_scrape_read_failures_total{gauge,source,reason}`; `inferq_metrics_source_up{source}` says, per
 * dependency, whether the scrape read it. Values a late read writes after its timeout are dropped.
 */
export function createScrapeReads(registry: Registry, o: { sources: readonly string[]; limitMs?: number; now?: () => number }): ScrapeReads {
  const limitMs = o.limitMs ?? SCRAPE_READ_LIMIT_MS;
  const now = o.now ?? Date.now;
  const registers = [registry];
  const status = new Map<string, number>(o.sources.map((s) => [s, 1]));
  let round: Round | undefined;

  const current = (): Round => {
    if (!round || round.pending.size === 0 || now() >= round.deadline) round = { deadline: now() + limitMs, failed: new Set(), pending: new Set() };
    return round;
  };
  const track = (r: Round, p: Promise<unknown>) => {
    const done = p.then(
      () => {},
      () => {},
    );
    r.pending.add(done);
    void done.then(() => r.pending.delete(done));
  };
  const succeeded = (r: Round, source: string) => {
    if (!r.failed.has(source)) status.set(source, 1);
  };
  const failed = (r: Round, source: string) => {
    r.failed.add(source);
    status.set(source, 0);
  };
  /** `read` within `deadline`; its failure a ScrapeReadError (one from an inner read kept as it is). */
  const bounded = <T>(read: () => Promise<T>, deadline: number, source: string): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new ScrapeReadError(source, 'timeout')), Math.max(0, deadline - now()));
      timer.unref();
      let started: Promise<T>;
      try {
        started = read();
      } catch (err) {
        started = Promise.reject(err as Error);
      }
      started.then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (err: unknown) => {
          clearTimeout(timer);
          reject(err instanceof ScrapeReadError ? err : new ScrapeReadError(source, 'error', err));
        },
      );
    });

  /** Once every read of the scrape has ended (in time or not): what the source and failure metrics say is this scrape's. */
  const afterReads = async () => {
    // registry.metrics() starts every collect in one synchronous pass: once this resumes, the scrape's reads are all started.
    await Promise.resolve();
    while (round && round.pending.size > 0) await Promise.all(round.pending);
  };
  const failures = new Counter({
    name: 'inferq_scrape_read_failures_total',
    help:
      'Gauges read at scrape time whose read failed (reason error) or ran past the scrape limit (reason timeout), by gauge and the source that failed: ' +
      'the gauge was left out of that scrape',
    labelNames: ['gauge', 'source', 'reason'],
    registers,
    collect: afterReads,
  });
  new Gauge({
    name: 'inferq_metrics_source_up',
    help:
      'Whether this scrape read the gauges of a dependency (postgres, redis, gpu) in time (1), or a read failed or ran past the scrape limit (0): ' +
      'those gauges are missing from the scrape, not stale',
    labelNames: ['source'],
    registers,
    async collect() {
      await afterReads();
      for (const [source, up] of status) this.set({ source }, up);
    },
  });

  return {
    gauge<L extends string>(config: ScrapeGaugeConfiguration<L>): Gauge<L> {
      const { source, read, ...rest } = config;
      return new Gauge<L>({
        ...rest,
        registers,
        async collect() {
          const r = current();
          const writes: Array<(g: Gauge<L>) => void> = [];
          const values: GaugeValues<L> = {
            set(labelsOrValue: LabelValues<L> | number, value?: number) {
              writes.push((g) => (typeof labelsOrValue === 'number' ? g.set(labelsOrValue) : g.set(labelsOrValue, value!)));
            },
            inc(labels?: LabelValues<L>, value?: number) {
              writes.push((g) => (labels === undefined ? g.inc(value) : g.inc(labels, value)));
            },
          };
          if (!status.has(source)) status.set(source, 1);
          const gaugeFailed = (gauge: Gauge<L>, err: ScrapeReadError) => {
            gauge.reset();
            // A gauge without labels resets to 0, a value: it goes, as one with labels does.
            if ((rest.labelNames ?? []).length === 0) gauge.remove({} as LabelValues<L>);
            failures.inc({ gauge: rest.name, source: err.source, reason: err.reason });
            failed(r, err.source);
          };
          // Applied once, here, when the read has ended in time: what a timed-out read writes later goes nowhere.
          const settled = bounded(() => read(values), r.deadline + GAUGE_GRACE_MS, source).then(
            () => {
              this.reset();
              try {
                for (const write of writes) write(this);
              } catch (err) {
                // A value the gauge refuses (a label it does not have): left out as a failed read is.
                return gaugeFailed(this, new ScrapeReadError(source, 'error', err));
              }
              succeeded(r, source);
            },
            (err: ScrapeReadError) => gaugeFailed(this, err),
          );
          track(r, settled);
          await settled;
        },
      });
    },
    read<T>(source: string, read: () => Promise<T>): Promise<T> {
      const r = current();
      if (!status.has(source)) status.set(source, 1);
      const result = bounded(read, r.deadline, source).then(
        (value) => {
          succeeded(r, source);
          return value;
        },
        (err: ScrapeReadError) => {
          failed(r, err.source);
          throw err;
        },
      );
      track(r, result);
      return result;
    },
  };
}
