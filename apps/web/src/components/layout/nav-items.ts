import type { Principal } from '@inferq/contracts';
import { hasScope } from '../../auth/permissions.ts';

export interface NavItem {
  to: string;
  label: string;
}

/** The pages a key may open, in menu order; stable labels that end-to-end tests select by. */
export function navItemsFor(principal: Principal | undefined): NavItem[] {
  const items: Array<NavItem & { visible: boolean }> = [
    { to: '/', label: 'Overview', visible: hasScope(principal, 'jobs:read') },
    { to: '/jobs', label: 'Jobs', visible: hasScope(principal, 'jobs:read') },
    { to: '/batches', label: 'Batches', visible: hasScope(principal, 'jobs:read') },
    { to: '/playground', label: 'Playground', visible: hasScope(principal, 'jobs:write') },
    { to: '/models', label: 'Models', visible: hasScope(principal, 'jobs:read') },
    { to: '/workers', label: 'Workers', visible: hasScope(principal, 'jobs:read') },
    // Every key with jobs:read: the API answers a non-admin key with its own jobs only.
    { to: '/usage', label: 'Usage', visible: hasScope(principal, 'jobs:read') },
    { to: '/keys', label: 'API keys', visible: hasScope(principal, 'admin') },
  ];
  return items.filter((item) => item.visible).map(({ to, label }) => ({ to, label }));
}
