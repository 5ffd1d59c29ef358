import type { ApiKey } from '@inferq/contracts';
import { useSetKeyRetention } from '../../api/mutations/keys.ts';
import { RetentionEditor } from '../retention/retention-editor.tsx';

/** How long a key's finished jobs are kept (`default`: the server's JOB_RETENTION_S, unless a model says otherwise), and its editor. */
export function KeyRetention({ apiKey }: { apiKey: Pick<ApiKey, 'id' | 'name' | 'retentionS' | 'revokedAt'> }) {
  const save = useSetKeyRetention(apiKey.id);
  return <RetentionEditor subject={apiKey.name} current={apiKey.retentionS ?? null} editable={!apiKey.revokedAt} save={save} />;
}
