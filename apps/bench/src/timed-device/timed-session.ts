import type { InferenceSession, Tensor } from 'onnxruntime-node';
import type { ServedSession } from '@inferq/inference/session-thread-server';
import { batchTimeMs, type DeviceTime } from './device-time.ts';

type Feeds = Parameters<InferenceSession['run']>[0];
type NumericData = Exclude<Tensor['data'], string[]>;

interface ItemOutput {
  type: Tensor['type'];
  /** Dims after dim 0. */
  rest: readonly number[];
  /** One item's elements. */
  row: NumericData;
}

/** Sleeps this thread for `ms` without spinning (Atomics.wait: microsecond precision, no CPU). */
const cell = new Int32Array(new SharedArrayBuffer(4));
const sleep = (ms: number): void => void Atomics.wait(cell, 0, 0, ms);

/**
 * A session whose runs take the device's time and almost no CPU: the first
 * run (the worker's warm-up) runs the real model once, to learn one item's
 * outputs; every later run sleeps the batch's time, then answers each item
 * with those outputs, so results are as large as the real ones. Inputs are
 * checked against the real model's signature as always. Models whose outputs
 * are not numeric tensors batched along dim 0 cannot be stood in for.
 */
export function timedSession(real: InferenceSession, device: DeviceTime): ServedSession['session'] {
  let perItem: Map<string, ItemOutput> | undefined;
  const itemsOf = (feeds: Feeds): number => (Object.values(feeds)[0] as Tensor | undefined)?.dims[0] ?? 1;

  async function learn(feeds: Feeds): Promise<Awaited<ReturnType<InferenceSession['run']>>> {
    const outputs = await real.run(feeds);
    const items = itemsOf(feeds);
    const learned = new Map<string, ItemOutput>();
    for (const name of real.outputNames) {
      const t = outputs[name] as Tensor;
      if (t.type === 'string' || t.dims[0] !== items)
        throw new Error(`the timed device cannot stand in for output "${name}": not numeric, batched along dim 0`);
      const data = t.data as NumericData;
      const rowLength = data.length / items;
      learned.set(name, { type: t.type, rest: t.dims.slice(1), row: data.slice(0, rowLength) as NumericData });
    }
    // Kept only when every output could be learned: a model the device cannot stand in for fails every run, not some.
    perItem = learned;
    return outputs;
  }

  function answer(items: number): Record<string, Tensor> {
    const outputs: Record<string, Tensor> = {};
    for (const [name, o] of perItem!) {
      const Ctor = o.row.constructor as new (length: number) => NumericData;
      const data = new Ctor(o.row.length * items);
      for (let i = 0; i < items; i++) (data as Float32Array).set(o.row as Float32Array, i * o.row.length);
      // The stand-in's tensors: what fromOrtTensor reads (type, dims, data).
      outputs[name] = { type: o.type, dims: [items, ...o.rest], data } as unknown as Tensor;
    }
    return outputs;
  }

  return {
    inputNames: real.inputNames,
    outputNames: real.outputNames,
    inputMetadata: real.inputMetadata,
    async run(feeds: Feeds) {
      if (!perItem) return learn(feeds);
      const items = itemsOf(feeds);
      sleep(batchTimeMs(device, items));
      return answer(items);
    },
    release: () => real.release(),
  } as ServedSession['session'];
}
