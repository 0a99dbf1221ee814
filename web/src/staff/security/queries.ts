/** The console's calls for the signed-in staff account's second factor, and its query key. */
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { staffCall } from '../api';

export const secondFactorKeys = { status: ['staff', 'totp'] as const };

/** The signed-in staff account's second factor, and whether the operator requires one. */
export const useSecondFactorStatus = () =>
  useQuery({ queryKey: secondFactorKeys.status, queryFn: () => staffCall('GET', '/auth/totp') });

/** Reads the second factor's state again. */
export function useRereadSecondFactor() {
  const client = useQueryClient();
  return () => client.invalidateQueries({ queryKey: secondFactorKeys.status });
}

/** Setting the factor up (a secret for the authenticator), turning it on, turning it off. */
export const secondFactorCalls = {
  setUp: () => staffCall('POST', '/auth/totp/setup'),
  enable: (code: string) => staffCall('POST', '/auth/totp/enable', { body: { code } }),
  disable: (code: string) => staffCall('POST', '/auth/totp/disable', { body: { code } }),
};
