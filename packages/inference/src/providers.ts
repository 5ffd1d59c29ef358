/**
 * Execution-provider selection. onnxruntime does not fall back between
 * providers by itself (a session created with ['cuda', 'cpu'] throws when
 * CUDA cannot start), so the session thread tries these candidates one at a
 * time, in order.
 */

export type DeviceKind = 'cpu' | 'cuda' | 'webgpu';

export interface Device {
  kind: DeviceKind;
  index: number;
}

/** One entry of onnxruntime-node's `executionProviders`, in the form its binding accepts. */
export type ProviderCandidate = string | { name: string; deviceId: number };

const KNOWN_PROVIDERS = ['cpu', 'cuda', 'tensorrt', 'webgpu'] as const;
type ProviderName = (typeof KNOWN_PROVIDERS)[number];
const GPU_PROVIDERS: ReadonlySet<string> = new Set(['cuda', 'tensorrt', 'webgpu']);
const MAX_DEVICE_INDEX = 1023;

const isProviderName = (name: string): name is ProviderName => (KNOWN_PROVIDERS as readonly string[]).includes(name);

/** Parses `cpu`, `cuda:N` or `webgpu:N`; throws an Error naming the accepted forms otherwise. */
export function parseDevice(device: string): Device {
  if (device === 'cpu') return { kind: 'cpu', index: 0 };
  const match = /^(cuda|webgpu):(0|[1-9]\d{0,3})$/.exec(device);
  const index = match ? Number(match[2]) : NaN;
  if (!match || index > MAX_DEVICE_INDEX) {
    throw new Error(`invalid device "${device}": expected "cpu", "cuda:N" or "webgpu:N" with N an integer from 0 to ${MAX_DEVICE_INDEX}`);
  }
  return { kind: match[1] as DeviceKind, index };
}

function toCandidate(name: ProviderName, device: Device): ProviderCandidate {
  // The WebGPU provider of onnxruntime-node 1.30 rejects any `deviceId` option
  // (TypeError "unrecognized option"), so Dawn picks the adapter: a launcher
  // pins webgpu:N > 0 through the environment, not through session options.
  if (name === 'cuda' || name === 'tensorrt') return { name, deviceId: device.index };
  return name;
}

/**
 * The ordered provider attempts for a device: `configured` (a model's
 * provider list) when given, else the device's own provider then cpu. A cpu
 * device never tries a GPU provider; the list is never empty.
 */
export function providerCandidates(device: string, configured?: readonly string[]): ProviderCandidate[] {
  const parsed = parseDevice(device);
  const requested = configured && configured.length > 0 ? configured : [parsed.kind, 'cpu'];
  const names: ProviderName[] = [];
  for (const raw of requested) {
    const name = raw.trim().toLowerCase();
    if (!isProviderName(name)) throw new Error(`unknown execution provider "${raw}": expected one of ${KNOWN_PROVIDERS.join(', ')}`);
    if (parsed.kind === 'cpu' && GPU_PROVIDERS.has(name)) continue;
    if (!names.includes(name)) names.push(name);
  }
  if (names.length === 0) {
    throw new Error(`no execution provider in [${requested.join(', ')}] can run on device ${device}`);
  }
  return names.map((name) => toCandidate(name, parsed));
}

/** The provider's name, for logs and `failedProviders`. */
export const providerName = (candidate: ProviderCandidate): string => (typeof candidate === 'string' ? candidate : candidate.name);
