import { useState, type FormEvent } from 'react';
import { Link, useSearchParams } from 'react-router';
import { PRIORITIES, type Model, type Priority } from '@inferq/contracts';
import { isInferqError, type SubmitRequest } from '@inferq/sdk';
import { useSubmitJob } from '../api/mutations/jobs.ts';
import { useModels } from '../api/queries/models.ts';
import { JobWatch } from '../components/playground/job-watch.tsx';
import { SubmitManyPanel } from '../components/playground/submit-many-panel.tsx';
import { TensorInput } from '../components/playground/tensor-input.tsx';
import { Button, buttonStyles } from '../components/ui/button.tsx';
import { Card } from '../components/ui/card.tsx';
import { EnumSelect } from '../components/ui/enum-select.tsx';
import { Field, Select } from '../components/ui/form-controls.tsx';
import { PageHeader } from '../components/ui/page-header.tsx';
import { EmptyState, ErrorAlert, LoadingState } from '../components/ui/states.tsx';
import { useSubmitMany } from '../hooks/use-submit-many.ts';
import { useTensorDrafts } from '../hooks/use-tensor-drafts.ts';
import { applyServerErrors, draftsToInputs } from '../lib/tensor-drafts.ts';

const MANY_JOBS = 100;
const MANY_IN_FLIGHT = 10;

export function PlaygroundPage() {
  const models = useModels();
  const [searchParams, setSearchParams] = useSearchParams();
  const model = models.data?.find((m) => m.name === searchParams.get('model')) ?? models.data?.[0];
  const inputs = useTensorDrafts(model);
  const [priority, setPriority] = useState<Priority>('normal');
  const submit = useSubmitJob();
  const many = useSubmitMany();

  if (models.isPending)
    return (
      <>
        <PageHeader title="Playground" />
        <LoadingState label="Loading models…" />
      </>
    );
  if (models.isError)
    return (
      <>
        <PageHeader title="Playground" />
        <ErrorAlert error={models.error} onRetry={() => void models.refetch()} />
      </>
    );
  if (!model) {
    return (
      <>
        <PageHeader title="Playground" />
        <EmptyState
          title="No models registered"
          action={
            <Link to="/models" className={buttonStyles({ variant: 'primary' })}>
              Upload a model
            </Link>
          }
        >
          Register an ONNX model to send it jobs from here.
        </EmptyState>
      </>
    );
  }

  /** The request body, or undefined after marking the inputs that cannot be sent. */
  const buildBody = (): SubmitRequest | undefined => {
    const result = draftsToInputs(inputs.drafts);
    if (!result.ok) {
      inputs.replaceAll(result.drafts);
      return undefined;
    }
    return { model: `${model.name}:${model.version}`, priority, inputs: result.inputs };
  };
  const submitOne = (event: FormEvent) => {
    event.preventDefault();
    const body = buildBody();
    if (!body) return;
    submit.mutate(body, {
      onError: (err) => isInferqError(err) && inputs.replaceAll(applyServerErrors(inputs.drafts, err.errors)),
    });
  };
  const submitMany = () => {
    const body = buildBody();
    if (body) void many.start(model.name, body, MANY_JOBS, MANY_IN_FLIGHT);
  };

  return (
    <>
      <PageHeader title="Playground" description="Send a model a job built from its input signature and watch it run." />
      <div className="grid gap-6 xl:grid-cols-[minmax(0,3fr)_minmax(0,2fr)]">
        <form onSubmit={submitOne} noValidate className="space-y-4">
          <Card>
            <div className="grid gap-3 sm:grid-cols-2">
              <Field label="Model" hint={`Version ${model.version} · ${batchingHint(model)}`}>
                {(control) => (
                  <Select {...control} value={model.name} onChange={(e) => setSearchParams({ model: e.target.value }, { replace: true })}>
                    {models.data.map((m) => (
                      <option key={m.name} value={m.name}>
                        {m.name}
                      </option>
                    ))}
                  </Select>
                )}
              </Field>
              <Field label="Priority">{(control) => <EnumSelect {...control} values={PRIORITIES} value={priority} onChange={setPriority} />}</Field>
            </div>
          </Card>
          <Card
            title="Inputs"
            actions={
              <div className="flex gap-2">
                <Button size="sm" onClick={() => inputs.fillAll('random')}>
                  Random
                </Button>
                <Button size="sm" onClick={() => inputs.fillAll('zeros')}>
                  Zeros
                </Button>
              </div>
            }
          >
            <div className="space-y-4">
              {inputs.drafts.map((draft, i) => (
                <TensorInput
                  key={draft.name}
                  draft={draft}
                  onResize={(dim, size) => inputs.resize(i, dim, size)}
                  onEditText={(text) => inputs.editText(i, text)}
                  onFile={(file) => void inputs.setFile(i, file)}
                />
              ))}
            </div>
          </Card>
          {submit.isError && <ErrorAlert error={submit.error} />}
          <div className="flex flex-wrap gap-2">
            <Button type="submit" variant="primary" disabled={submit.isPending}>
              {submit.isPending ? 'Submitting…' : 'Submit'}
            </Button>
            <Button onClick={submitMany} disabled={many.run?.submitting}>
              Submit {MANY_JOBS}
            </Button>
          </div>
        </form>
        <div className="space-y-4">
          {submit.data && <JobWatch key={submit.data.id} id={submit.data.id} />}
          {many.run && <SubmitManyPanel run={many.run} />}
          {!submit.data && !many.run && <EmptyState title="Nothing sent yet">Submit a job to see its status and result here.</EmptyState>}
        </div>
      </div>
    </>
  );
}

function batchingHint(model: Model): string {
  if (!model.signature.batchable) return 'not batchable';
  return `${model.batching.mode === 'auto' ? 'auto-batches' : 'batches'} up to ${model.batching.maxBatchSize} jobs`;
}
