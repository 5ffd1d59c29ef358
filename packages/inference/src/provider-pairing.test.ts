import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findPairingFacts, judgeProviderPairing, onnxruntimeBinDir, parseProviderRecord, PROVIDER_RECORD_FILE, type PairingFacts } from './provider-pairing.ts';

const facts = (over: Partial<PairingFacts> = {}): PairingFacts => ({
  provider: 'cuda',
  coreVersion: '1.30.0',
  libraryPresent: true,
  record: { release: '1.30.0', source: 'npm x@1' },
  binDir: '/ort/bin',
  ...over,
});

describe('judgeProviderPairing', () => {
  it('runs a provider of the core release and says so', () => {
    expect(judgeProviderPairing(facts(), 'same-release')).toEqual({
      verdict: 'same-release',
      usable: true,
      line: 'core 1.30.0 with cuda provider 1.30.0 (npm x@1): same release',
    });
  });

  it('refuses another release under same-release, and runs it under any, naming both releases and why', () => {
    const older = facts({ record: { release: '1.29.0', source: 'npm com.github.asus4.onnxruntime.linux-x64-gpu@0.4.9' } });
    expect(judgeProviderPairing(older, 'same-release')).toMatchObject({
      verdict: 'refused',
      usable: false,
      line: expect.stringMatching(/^core 1\.30\.0 with cuda provider 1\.29\.0 \(npm com\.github.+\): unsupported pairing, refused/),
    });
    expect(judgeProviderPairing(older, 'any')).toMatchObject({
      verdict: 'mismatch',
      usable: true,
      line: expect.stringMatching(/^core 1\.30\.0 with cuda provider 1\.29\.0 .+: unsupported pairing, run because CUDA_PROVIDER_PAIRING=any/),
    });
  });

  it('takes a provider with no record to be the core release (what the install script fetches)', () => {
    expect(judgeProviderPairing(facts({ record: undefined }), 'same-release')).toMatchObject({ verdict: 'unrecorded', usable: true });
  });

  it('does not try a provider whose library is not beside the core', () => {
    expect(judgeProviderPairing(facts({ libraryPresent: false, provider: 'tensorrt' }), 'any')).toEqual({
      verdict: 'missing',
      usable: false,
      line: "no libonnxruntime_providers_tensorrt.so beside onnxruntime-node 1.30.0's libonnxruntime.so.1 (/ort/bin)",
    });
  });
});

describe('parseProviderRecord', () => {
  it('reads release, source and the kept architectures; says what is wrong otherwise', () => {
    expect(parseProviderRecord('{"release":"1.29.0","source":"npm p@1","cudaArchitectures":[90]}')).toEqual({
      release: '1.29.0',
      source: 'npm p@1',
      cudaArchitectures: [90],
    });
    expect(parseProviderRecord('{"release":"latest","source":"x"}')).toMatch(/needs "release"/);
    expect(parseProviderRecord('{')).toMatch(/^not JSON/);
  });
});

describe('findPairingFacts', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'inferq-pairing-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads the library and the record beside the core, and refuses an unreadable record', async () => {
    expect(findPairingFacts('cuda', '1.30.0', dir)).toMatchObject({ libraryPresent: process.platform !== 'linux', record: undefined });
    await writeFile(join(dir, 'libonnxruntime_providers_cuda.so'), '');
    await writeFile(join(dir, PROVIDER_RECORD_FILE), JSON.stringify({ release: '1.29.0', source: 'npm p@1' }));
    expect(findPairingFacts('cuda', '1.30.0', dir)).toMatchObject({ libraryPresent: true, record: { release: '1.29.0' } });
    await writeFile(join(dir, PROVIDER_RECORD_FILE), '[]');
    expect(() => findPairingFacts('cuda', '1.30.0', dir)).toThrow(/onnxruntime-providers\.json cannot be read/);
  });

  it("finds the installed onnxruntime-node's native folder", () => {
    expect(onnxruntimeBinDir()).toMatch(/node_modules\/onnxruntime-node\/bin\/napi-v6\/linux\/x64$/);
  });
});
