/**
 * Where a visitor sent to sign in goes once signed in: a buyer who pressed Buy on /plans comes back
 * to that plan. Kept in this tab's session storage, which a Telegram sign-in's round trip keeps.
 */
const KEY = 'vpn.afterSignIn';

export interface AfterSignIn {
  /** A route of the app. */
  path: string;
  /** The plan's name as the buyer saw it, for the sign-in page to say why it is shown. */
  plan: string;
}

export function sendBackAfterSignIn(target: AfterSignIn): void {
  try {
    sessionStorage.setItem(KEY, JSON.stringify(target));
  } catch {
    // Storage turned off: the buyer lands on the account page as usual.
  }
}

export function afterSignIn(): AfterSignIn | null {
  try {
    const stored = JSON.parse(sessionStorage.getItem(KEY) ?? 'null') as AfterSignIn | null;
    return stored?.path.startsWith('/') ? stored : null;
  } catch {
    return null;
  }
}

/** Once the visitor is back where it was going. */
export function arrivedAfterSignIn(): void {
  try {
    sessionStorage.removeItem(KEY);
  } catch {
    // Nothing was kept.
  }
}

/** The route to show once signed in. */
export const landingAfterSignIn = (): string => afterSignIn()?.path ?? '/account';
