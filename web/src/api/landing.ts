/** Pages a visitor without a session may see; a failed refresh there moves nobody. */
const OPEN_PAGES = new Set(['/', '/plans', '/telegram-login']);

/**
 * Where a failed refresh lands: the sign-in page of the area the visitor is in (`/`, or the staff
 * sign-in at `/staff`); a page open to visitors stays as it is.
 */
export function landingAfterFailedRefresh(pathname: string, fallback: string): string | null {
  if (OPEN_PAGES.has(pathname)) return null;
  if (pathname === '/staff' || pathname.startsWith('/staff/')) return '/staff';
  return fallback;
}
