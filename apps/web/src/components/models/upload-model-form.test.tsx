// @vitest-environment happy-dom
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { UploadModelForm } from './upload-model-form.tsx';

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json' } });

/** POST /v1/models answers `answer`; every form the SDK sent is kept. */
function stubUpload(answer: () => Response) {
  const sent: FormData[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (_url: string, init?: RequestInit) => {
      if (init?.method === 'POST') sent.push(init.body as FormData);
      return init?.method === 'POST' ? answer() : json(200, { items: [] });
    }),
  );
  return sent;
}

function renderForm() {
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false }, mutations: { retry: false } } });
  render(
    <QueryClientProvider client={queryClient}>
      <UploadModelForm />
    </QueryClientProvider>,
  );
}

const choose = (label: string, file: File) => fireEvent.change(screen.getByLabelText(label), { target: { files: [file] } });
const type = (label: string, value: string) => fireEvent.change(screen.getByLabelText(label), { target: { value } });
const chooseEncoder = () => {
  choose('ONNX file', new File([new Uint8Array([8, 1])], 'encoder.onnx'));
  choose('Tokenizer (tokenizer.json)', new File(['{"model":{}}'], 'tokenizer.json', { type: 'application/json' }));
};
const upload = () => fireEvent.click(screen.getByRole('button', { name: 'Upload' }));
const errorOf = (label: string) => {
  const ids = screen.getByLabelText(label).getAttribute('aria-describedby')?.split(' ') ?? [];
  return ids.map((id) => document.getElementById(id)).find((el) => el?.getAttribute('role') === 'alert')?.textContent;
};

const hintOf = (label: string) => document.getElementById(`${screen.getByLabelText(label).id}-hint`)?.textContent;

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe('UploadModelForm', () => {
  it('sends the response cache off by default, and no embedding fields without a tokenizer', async () => {
    const sent = stubUpload(() => json(201, { name: 'mlp', version: 1 }));
    renderForm();
    expect((screen.getByLabelText('Response cache') as HTMLInputElement).checked).toBe(false);
    choose('ONNX file', new File([new Uint8Array([8, 1])], 'mlp.onnx'));
    expect(screen.queryByLabelText('Pooling')).toBeNull();
    upload();
    expect(await screen.findByText('Registered mlp version 1.')).toBeTruthy();
    expect([...sent[0]!.keys()].sort()).toEqual(['file', 'name', 'responseCache']);
    expect(sent[0]!.get('responseCache')).toBe('false');
  });

  it('shows the embedding settings once a tokenizer is chosen, and sends them with it', async () => {
    const sent = stubUpload(() => json(201, { name: 'encoder', version: 1 }));
    renderForm();
    fireEvent.click(screen.getByLabelText('Response cache'));
    chooseEncoder();
    expect((screen.getByLabelText('Normalize') as HTMLInputElement).checked).toBe(true);
    type('Pooling', 'cls');
    fireEvent.click(screen.getByLabelText('Normalize'));
    type('Output name', 'last_hidden_state');
    type('Max tokens', '64');
    upload();
    expect(await screen.findByText('Registered encoder version 1.')).toBeTruthy();
    const form = sent[0]!;
    expect(Object.fromEntries(['name', 'responseCache', 'pooling', 'normalize', 'embeddingOutput', 'maxTokens'].map((k) => [k, form.get(k)]))).toEqual({
      name: 'encoder',
      responseCache: 'true',
      pooling: 'cls',
      normalize: 'false',
      embeddingOutput: 'last_hidden_state',
      maxTokens: '64',
    });
    expect((form.get('tokenizer') as File).name).toBe('tokenizer.json');
    // The form starts over, settings hidden again.
    expect(screen.queryByLabelText('Pooling')).toBeNull();
  });

  it('leaves unset embedding settings to the server', async () => {
    const sent = stubUpload(() => json(201, { name: 'encoder', version: 1 }));
    renderForm();
    chooseEncoder();
    upload();
    expect(await screen.findByText('Registered encoder version 1.')).toBeTruthy();
    expect([...sent[0]!.keys()].sort()).toEqual(['file', 'name', 'normalize', 'responseCache', 'tokenizer']);
  });

  it('sends auto batching with its latency target, the size and delay hinted as upper bounds', async () => {
    const sent = stubUpload(() => json(201, { name: 'mlp', version: 1 }));
    renderForm();
    expect(screen.queryByLabelText('Latency target (ms)')).toBeNull();
    choose('ONNX file', new File([new Uint8Array([8, 1])], 'mlp.onnx'));
    type('Batching', 'auto');
    expect(hintOf('Max batch size')).toMatch(/^Upper bound/);
    expect(hintOf('Max batch delay (ms)')).toMatch(/^Upper bound/);
    type('Latency target (ms)', '250');
    type('Max batch size', '64');
    upload();
    expect(await screen.findByText('Registered mlp version 1.')).toBeTruthy();
    const form = sent[0]!;
    expect(Object.fromEntries(['batching', 'latencyTargetMs', 'maxBatchSize'].map((k) => [k, form.get(k)]))).toEqual({
      batching: 'auto',
      latencyTargetMs: '250',
      maxBatchSize: '64',
    });
  });

  it('shows the server’s refusal of the latency target beside it', async () => {
    const detail = 'must be <= 600000';
    stubUpload(() =>
      json(400, {
        type: 'about:blank',
        title: 'Request validation failed',
        status: 400,
        code: 'VALIDATION_FAILED',
        detail: `body/latencyTargetMs ${detail}`,
        errors: [{ pointer: '/body/latencyTargetMs', code: 'VALIDATION_FAILED', detail }],
      }),
    );
    renderForm();
    choose('ONNX file', new File([new Uint8Array([8, 1])], 'mlp.onnx'));
    type('Batching', 'auto');
    type('Latency target (ms)', '500');
    upload();
    expect(await screen.findByText(detail)).toBeTruthy();
    expect(errorOf('Latency target (ms)')).toBe(detail);
    expect(errorOf('ONNX file')).toBeUndefined();
  });

  it('checks max tokens is a whole number before sending anything', () => {
    const sent = stubUpload(() => json(201, {}));
    renderForm();
    chooseEncoder();
    type('Max tokens', '2.5');
    upload();
    expect(errorOf('Max tokens')).toMatch(/whole number from 1/);
    expect(sent).toEqual([]);
  });

  it('shows the server’s refusal beside the embedding field its pointer names, not beside the file', async () => {
    const detail = 'pooling "cls" reads a rank-3 output; "pooled" has shape [-1, 8]';
    stubUpload(() =>
      json(422, {
        type: 'about:blank',
        title: 'The model cannot be served',
        status: 422,
        code: 'MODEL_UNSUPPORTED',
        detail: `not an encoder /v1/embeddings can drive: ${detail}`,
        errors: [{ pointer: '/body/pooling', code: 'MODEL_UNSUPPORTED', detail }],
      }),
    );
    renderForm();
    chooseEncoder();
    type('Pooling', 'cls');
    upload();
    expect(await screen.findByText(detail)).toBeTruthy();
    expect(errorOf('Pooling')).toBe(detail);
    expect(errorOf('ONNX file')).toBeUndefined();
    // Changing the field clears its error.
    type('Pooling', 'none');
    expect(errorOf('Pooling')).toBeUndefined();
  });

  it('shows a file problem without a pointer beside the file, and a tokenizer problem beside the tokenizer', async () => {
    let problem = {
      type: 'about:blank',
      title: 'Not a valid ONNX model',
      status: 422,
      code: 'MODEL_INVALID',
      detail: 'the file is not an ONNX protobuf',
      errors: [] as object[],
    };
    stubUpload(() => json(problem.status, problem));
    renderForm();
    chooseEncoder();
    upload();
    expect(await screen.findByText('the file is not an ONNX protobuf')).toBeTruthy();
    expect(errorOf('ONNX file')).toBe('the file is not an ONNX protobuf');

    problem = {
      ...problem,
      title: 'Request validation failed',
      status: 400,
      code: 'VALIDATION_FAILED',
      detail: 'bad tokenizer',
      errors: [{ pointer: '/body/tokenizer', code: 'VALIDATION_FAILED', detail: 'not a tokenizer.json' }],
    };
    upload();
    expect(await screen.findByText('not a tokenizer.json')).toBeTruthy();
    expect(errorOf('Tokenizer (tokenizer.json)')).toBe('not a tokenizer.json');
    expect(errorOf('ONNX file')).toBeUndefined();
  });
});
