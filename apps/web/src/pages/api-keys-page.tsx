import { useState } from 'react';
import type { CreatedKey } from '@inferq/sdk';
import { useApiKeys } from '../api/queries/keys.ts';
import { useMe } from '../api/queries/me.ts';
import { CreateKeyForm } from '../components/keys/create-key-form.tsx';
import { KeysTable } from '../components/keys/keys-table.tsx';
import { SecretReveal } from '../components/keys/secret-reveal.tsx';
import { PageHeader } from '../components/ui/page-header.tsx';
import { EmptyState, ErrorAlert, LoadingState } from '../components/ui/states.tsx';

export function ApiKeysPage() {
  const keys = useApiKeys();
  const { data: principal } = useMe();
  const [created, setCreated] = useState<CreatedKey>();

  return (
    <>
      <PageHeader title="API keys" description="Keys authenticate clients and this console. Secrets are stored as hashes and shown once." />
      <div className="space-y-6">
        {created && <SecretReveal created={created} onDone={() => setCreated(undefined)} />}
        <CreateKeyForm onCreated={setCreated} />
        <section aria-labelledby="keys-heading" className="space-y-3">
          <h2 id="keys-heading" className="text-lg font-semibold">
            All keys
          </h2>
          {keys.isPending && <LoadingState label="Loading keys…" />}
          {keys.isError && <ErrorAlert error={keys.error} onRetry={() => void keys.refetch()} />}
          {keys.data?.length === 0 && <EmptyState title="No keys yet">Create one above.</EmptyState>}
          {keys.data && keys.data.length > 0 && <KeysTable keys={keys.data} currentKeyId={principal?.keyId} />}
        </section>
      </div>
    </>
  );
}
