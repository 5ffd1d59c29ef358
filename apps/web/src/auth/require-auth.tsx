import { Navigate, useLocation } from 'react-router';
import { useQuery } from '@tanstack/react-query';
import { meOptions } from '../api/queries/me.ts';
import { AppShell } from '../components/layout/app-shell.tsx';
import { ErrorAlert, LoadingState } from '../components/ui/states.tsx';
import { useApiKey } from './use-auth.ts';

/** The signed-in part of the console: sends visitors without a key to the sign-in page. */
export function RequireAuth() {
  const apiKey = useApiKey();
  const location = useLocation();
  const me = useQuery({ ...meOptions(), enabled: apiKey !== null });
  if (apiKey === null) return <Navigate to="/sign-in" replace state={{ from: `${location.pathname}${location.search}` }} />;
  if (me.isPending) {
    return (
      <div className="mx-auto max-w-md p-8">
        <LoadingState label="Checking your API key…" />
      </div>
    );
  }
  if (me.isError) {
    return (
      <div className="mx-auto max-w-md p-8">
        <ErrorAlert error={me.error} onRetry={() => void me.refetch()} />
      </div>
    );
  }
  return <AppShell principal={me.data} />;
}
