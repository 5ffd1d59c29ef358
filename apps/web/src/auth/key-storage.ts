// The signed-in API key lives in localStorage so it survives reloads; the
// listeners let React (useSyncExternalStore) follow sign-in and sign-out.

const STORAGE_KEY = 'inferq.apiKey';

export type SignOutReason = 'signed-out' | 'key-rejected';

const listeners = new Set<() => void>();
let lastSignOutReason: SignOutReason | undefined;

const readStorage = (): string | null => {
  try {
    return localStorage.getItem(STORAGE_KEY);
  } catch {
    return null;
  }
};

const notify = () => listeners.forEach((listener) => listener());

export const getApiKey = (): string | null => readStorage();

export function setApiKey(key: string): void {
  localStorage.setItem(STORAGE_KEY, key);
  lastSignOutReason = undefined;
  notify();
}

export function clearApiKey(reason: SignOutReason): void {
  if (readStorage() === null) return;
  localStorage.removeItem(STORAGE_KEY);
  lastSignOutReason = reason;
  notify();
}

/** Why the last sign-out happened, so the sign-in page can say so. */
export const getSignOutReason = (): SignOutReason | undefined => lastSignOutReason;

export function subscribeApiKey(listener: () => void): () => void {
  listeners.add(listener);
  // Another tab signing in or out changes the same storage.
  const onStorage = (event: StorageEvent) => event.key === STORAGE_KEY && listener();
  window.addEventListener('storage', onStorage);
  return () => {
    listeners.delete(listener);
    window.removeEventListener('storage', onStorage);
  };
}
