import type { ReactNode } from 'react';
import type { Scope } from '@inferq/contracts';
import { useMe } from '../api/queries/me.ts';
import { EmptyState } from '../components/ui/states.tsx';
import { hasScope } from './permissions.ts';

const SCOPE_NEED: Record<Scope, string> = {
  'jobs:read': 'a key with the jobs:read scope',
  'jobs:write': 'a key with the jobs:write scope',
  'models:write': 'a key with the models:write scope',
  admin: 'an admin key',
};

/** Shows the page only to keys holding `scope`; others get an explanation instead of errors. */
export function RequireScope({ scope, children }: { scope: Scope; children: ReactNode }) {
  const { data: principal } = useMe();
  if (hasScope(principal, scope)) return children;
  return <EmptyState title="Not available with this API key">This page needs {SCOPE_NEED[scope]}. Sign in with another key to use it.</EmptyState>;
}
