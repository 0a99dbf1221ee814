import { AppError } from '../common/errors';

/**
 * The account, unless staff blocked it: then 403 ACCOUNT_BLOCKED. Every sign-in, session refresh,
 * authenticated request and routing request asks this.
 */
export function refuseBlocked<T extends { blockedAt?: Date | null }>(account: T): T {
  // An entity fresh from an insert may not carry the column: undefined is not blocked.
  if (account.blockedAt) {
    throw new AppError('ACCOUNT_BLOCKED', 'this account was blocked by staff');
  }
  return account;
}
