import { useState, type FormEvent } from 'react';
import { Navigate, useLocation, useNavigate } from 'react-router';
import { useMutation } from '@tanstack/react-query';
import { isUnauthenticated } from '../api/api-error.ts';
import { fetchMeWithKey } from '../api/queries/me.ts';
import { getSignOutReason } from '../auth/key-storage.ts';
import { useApiKey, useSignIn } from '../auth/use-auth.ts';
import { Button } from '../components/ui/button.tsx';
import { Field, Input } from '../components/ui/form-controls.tsx';
import { ErrorAlert } from '../components/ui/states.tsx';

const KEY_REJECTED_MESSAGE = 'This API key is not valid or was revoked.';

/** Where to go after signing in: the page the visitor first asked for. */
const returnPath = (state: unknown): string => {
  const from = (state as { from?: unknown } | null)?.from;
  return typeof from === 'string' && from.startsWith('/') && !from.startsWith('/sign-in') ? from : '/';
};

export function SignInPage() {
  const apiKey = useApiKey();
  const location = useLocation();
  const navigate = useNavigate();
  const signIn = useSignIn();
  const [key, setKey] = useState('');
  const check = useMutation({
    mutationFn: (candidate: string) => fetchMeWithKey(candidate),
    onSuccess: (principal, candidate) => {
      signIn(candidate, principal);
      void navigate(returnPath(location.state), { replace: true });
    },
  });
  if (apiKey !== null && !check.isSuccess) return <Navigate to={returnPath(location.state)} replace />;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (key.trim()) check.mutate(key.trim());
  };
  const keyError = check.isError && isUnauthenticated(check.error) ? KEY_REJECTED_MESSAGE : undefined;
  const signedOutByServer = !check.isError && getSignOutReason() === 'key-rejected';

  return (
    <main className="flex min-h-screen items-center justify-center px-4">
      <div className="w-full max-w-sm rounded-xl bg-white p-6 shadow-sm ring-1 ring-slate-200 sm:p-8">
        <p className="text-lg font-semibold text-brand">inferq</p>
        <h1 className="mt-1 text-2xl font-semibold tracking-tight">Sign in</h1>
        <p className="mt-1 text-sm text-slate-600">Use an inferq API key. It stays in this browser until you sign out.</p>
        {signedOutByServer && (
          <p role="alert" className="mt-4 rounded-md bg-tone-danger/5 p-3 text-sm text-tone-danger">
            You were signed out: {KEY_REJECTED_MESSAGE}
          </p>
        )}
        <form className="mt-6 space-y-4" onSubmit={submit} noValidate>
          <Field label="API key" error={keyError} hint="Looks like iq_…; an admin creates keys on the API keys page.">
            {(control) => (
              <Input
                {...control}
                type="password"
                autoComplete="current-password"
                spellCheck={false}
                value={key}
                onChange={(e) => setKey(e.target.value)}
                required
              />
            )}
          </Field>
          {check.isError && !keyError && <ErrorAlert error={check.error} />}
          <Button type="submit" variant="primary" className="w-full" disabled={check.isPending || !key.trim()}>
            {check.isPending ? 'Signing in…' : 'Sign in'}
          </Button>
        </form>
      </div>
    </main>
  );
}
