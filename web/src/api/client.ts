import { QueryClient } from '@tanstack/react-query';
import { ApiError, createClient, REFRESH_GENERATION_KEY } from '../../../client/src/index';
import type { User } from '../../../client/src/index';
import { landingAfterFailedRefresh } from './landing';

export { ApiError };
export type * from '../../../client/src/index';

/** Set by the router once it exists; until then a move is a page load. */
let navigateTo: (path: string) => void = (path) => window.location.assign(path);

export function setNavigator(navigate: (path: string) => void): void {
  navigateTo = navigate;
}

/**
 * The one client of the app (same origin: the service serves the app). It holds the session rule:
 * a 401 refreshes once and retries; a failed refresh drops the cached queries and sends the app to
 * its sign-in page.
 */
export const api = createClient({
  baseUrl: '',
  navigate: (path) => {
    // On a page open to visitors nothing changes: the account query reads "nobody" by itself, and
    // a sign-in finishing on that page at the same moment must not be undone.
    const landing = landingAfterFailedRefresh(window.location.pathname, path);
    if (landing === null) return;
    forgetSession();
    if (landing !== window.location.pathname) navigateTo(landing);
  },
  currentPath: () => window.location.pathname,
});

/** The query key of the signed-in account (`null` when nobody is signed in). */
export const ME_KEY = ['me'] as const;

/** The count of cookie renewals (`REFRESH_GENERATION_KEY`) at which nobody was signed in. */
const SIGNED_OUT_AT_KEY = 'vpn-signed-out-generation';

/**
 * Whether this browser may hold a session, without asking the service: the session cookies are
 * HttpOnly, and asking costs an anonymous visitor two 401s in the console on every page load. The
 * client counts every sign-in and refresh in storage; a browser that never got cookies, or got none
 * since it was last found signed out, has no session. Storage refused: maybe, so ask.
 */
export function mayHaveSession(): boolean {
  try {
    const renewals = localStorage.getItem(REFRESH_GENERATION_KEY);
    return renewals !== null && renewals !== localStorage.getItem(SIGNED_OUT_AT_KEY);
  } catch {
    return true;
  }
}

/** Notes that nobody is signed in as of the current count of renewals. */
export function noteSignedOut(): void {
  try {
    const renewals = localStorage.getItem(REFRESH_GENERATION_KEY);
    if (renewals !== null) localStorage.setItem(SIGNED_OUT_AT_KEY, renewals);
  } catch {
    // Storage refused: the next page load asks the service.
  }
}

/**
 * After signing out or a failed refresh: nobody is signed in, and nothing of the last account's
 * data stays in memory. Pages watching the account see `null` at once.
 */
export function forgetSession(): void {
  noteSignedOut();
  queryClient.removeQueries({ predicate: (query) => query.queryKey[0] !== ME_KEY[0] });
  queryClient.setQueryData(ME_KEY, null);
}

/**
 * After a sign-in: the account it answered with is the signed-in one. A read of the account sent
 * before the sign-in (and answered "nobody") is dropped rather than allowed to land after it.
 */
export async function rememberSignIn(user: User): Promise<void> {
  await queryClient.cancelQueries({ queryKey: ME_KEY });
  queryClient.setQueryData(ME_KEY, user);
}

export const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // A 4xx will not change by asking again; the network may.
      retry: (failures, error) =>
        failures < 2 && !(error instanceof ApiError && error.status >= 400 && error.status < 500),
      refetchOnWindowFocus: false,
      staleTime: 10_000,
    },
  },
});
