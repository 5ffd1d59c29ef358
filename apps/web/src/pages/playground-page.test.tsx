// @vitest-environment happy-dom
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { MemoryRouter } from 'react-router';
import { parseInferRequestBody } from '@inferq/contracts';
import { writeNpy } from '@inferq/sdk';
import { PlaygroundPage } from './playground-page.tsx';

// Untyped on purpose: only the fields the page reads.
const MLP = {
  name: 'mlp',
  version: 1,
  signature: { inputs: [{ name: 'features', datatype: 'FP32', shape: [-1, 64] }], outputs: [], batchable: true },
  batching: { mode: 'fixed', maxBatchSize: 8, maxBatchDelayMs: 5 },
};

interface Sent {
  headers: Headers;
  body: Uint8Array;
}

/** GET /v1/models lists MLP; POST /v1/jobs is accepted and kept; GET of the job answers it queued. */
function stubApi(): Sent[] {
  const sent: Sent[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init?: RequestInit) => {
      if (url.startsWith('/v1/models')) return Response.json({ items: [MLP] });
      if (init?.method === 'POST') {
        sent.push({ headers: new Headers(init.headers), body: new Uint8Array(await new Response(init.body).arrayBuffer()) });
        return Response.json({ id: '0190a1b2-0000-7000-8000-000000000001', status: 'queued' }, { status: 202 });
      }
      return Response.json({
        id: '0190a1b2-0000-7000-8000-000000000001',
        model: 'mlp',
        modelVersion: 1,
        status: 'queued',
        createdAt: new Date().toISOString(),
      });
    }),
  );
  return sent;
}

function renderPage() {
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false }, mutations: { retry: false } } });
  render(
    <QueryClientProvider client={queryClient}>
      <MemoryRouter initialEntries={['/playground']}>
        <PlaygroundPage />
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

const choose = (file: File) => fireEvent.change(screen.getByLabelText('features file'), { target: { files: [file] } });
const rows = (n: number) => Float32Array.from({ length: n * 64 }, (_, i) => i / 8);
const npy = (values: Float32Array, shape: number[], datatype: 'FP32' | 'INT32' = 'FP32') =>
  new File([writeNpy({ datatype, shape, bytes: new Uint8Array(values.buffer) }) as BlobPart], 'features.npy');
const fileError = () => {
  const ids = screen.getByLabelText('features file').getAttribute('aria-describedby')?.split(' ') ?? [];
  return ids.map((id) => document.getElementById(id)).find((el) => el?.getAttribute('role') === 'alert')?.textContent;
};

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe('PlaygroundPage tensor files', () => {
  it('takes a .npy file, shows its name, size, datatype and shape, and submits it framed', async () => {
    const sent = stubApi();
    renderPage();
    await screen.findByLabelText('features file');
    const values = rows(16);
    choose(npy(values, [16, 64]));
    expect(await screen.findByText('features.npy')).toBeTruthy();
    expect(screen.getByLabelText('features file', { selector: 'div' }).textContent).toMatch(/features.npy · 4.1 KiB · FP32 \[16, 64\]/);
    expect(screen.queryByLabelText('features values')).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Submit' }));
    await waitFor(() => expect(sent).toHaveLength(1));
    expect(sent[0]!.headers.get('content-type')).toBe('application/octet-stream');
    const parsed = parseInferRequestBody(sent[0]!.body, Number(sent[0]!.headers.get('inference-header-content-length')));
    if (!parsed.ok || parsed.value.header === null) throw new Error('not framed');
    expect(parsed.value.header.inputs).toEqual([{ name: 'features', datatype: 'FP32', shape: [16, 64], parameters: { binary_data_size: 4096 } }]);
    expect(parsed.value.tensors[0]).toEqual(new Uint8Array(values.buffer));
  });

  it('says inline why a .npy file does not fit the signature, and keeps the typed values', async () => {
    stubApi();
    renderPage();
    await screen.findByLabelText('features file');
    choose(npy(new Float32Array(Int32Array.from({ length: 64 }).buffer as ArrayBuffer), [1, 64], 'INT32'));
    await waitFor(() => expect(fileError()).toBe('features.npy holds INT32; features takes FP32.'));
    choose(npy(rows(1), [64, 1]));
    await waitFor(() => expect(fileError()).toBe('features.npy has shape [64, 1]; features takes [?, 64].'));
    expect(screen.getByLabelText('features values')).toBeTruthy();
  });

  it('takes a raw .bin file with the shape from its size, and checks that size', async () => {
    stubApi();
    renderPage();
    await screen.findByLabelText('features file');
    choose(new File([new Uint8Array(100)], 'x.bin'));
    await waitFor(() => expect(fileError()).toMatch(/^x\.bin is 100 bytes; FP32 \[1, 64\] is 256/));
    choose(new File([rows(3).buffer as ArrayBuffer], 'x.bin'));
    expect(await screen.findByText('x.bin')).toBeTruthy();
    expect(screen.getByLabelText('features file', { selector: 'div' }).textContent).toMatch(/FP32 \[3, 64\]/);
    fireEvent.click(screen.getByRole('button', { name: 'Use typed values' }));
    expect(await screen.findByLabelText('features values')).toBeTruthy();
  });
});
