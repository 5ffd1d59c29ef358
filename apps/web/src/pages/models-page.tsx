import { useMe } from '../api/queries/me.ts';
import { useModels } from '../api/queries/models.ts';
import { useWorkers } from '../api/queries/workers.ts';
import { hasScope } from '../auth/permissions.ts';
import { ModelCard } from '../components/models/model-card.tsx';
import { UploadModelForm } from '../components/models/upload-model-form.tsx';
import { PageHeader } from '../components/ui/page-header.tsx';
import { EmptyState, ErrorAlert, LoadingState } from '../components/ui/states.tsx';

export function ModelsPage() {
  const models = useModels();
  const workers = useWorkers();
  const { data: principal } = useMe();
  const canUpload = hasScope(principal, 'models:write');

  return (
    <>
      <PageHeader title="Models" description="The latest version of each registered model; pick a version to see older ones." />
      <div className="space-y-6">
        {canUpload && <UploadModelForm />}
        <section aria-labelledby="registered-heading" className="space-y-4">
          <h2 id="registered-heading" className="text-lg font-semibold">
            Registered models
          </h2>
          {models.isPending && <LoadingState label="Loading models…" />}
          {models.isError && <ErrorAlert error={models.error} onRetry={() => void models.refetch()} />}
          {models.data?.length === 0 && (
            <EmptyState title="No models registered">
              {canUpload ? 'Upload an ONNX file above to register the first one.' : 'An operator with the models:write scope can register one.'}
            </EmptyState>
          )}
          {models.data?.map((model) => (
            <ModelCard key={model.name} latest={model} workers={workers.data} canSubmit={hasScope(principal, 'jobs:write')} />
          ))}
        </section>
      </div>
    </>
  );
}
