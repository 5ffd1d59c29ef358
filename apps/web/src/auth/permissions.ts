import type { Principal, Scope } from '@inferq/contracts';

/** Whether the key may do what `scope` guards; admin keys hold every scope, as the API decides. */
export const hasScope = (principal: Principal | undefined, scope: Scope): boolean =>
  principal !== undefined && (principal.admin || principal.scopes.includes(scope));
