/** The console's calls for partners' withdrawals, and their query key. */
import { useQueryClient } from '@tanstack/react-query';
import { type ListQuery, staffCall, useCursorList } from '../api';

export const withdrawalKeys = { all: ['staff', 'withdrawals'] as const };

/** `GET /admin/withdrawals`, newest first, by state. */
export const useWithdrawalList = (query: ListQuery<'/admin/withdrawals'>) =>
  useCursorList(withdrawalKeys.all, '/admin/withdrawals', query);

/** The moves of a withdrawal the service allows by its state (checked again under a row lock). */
export const withdrawalMoves = (id: string) => {
  const path = { id };
  return {
    approve: () => staffCall('POST', '/admin/withdrawals/{id}/approve', { path }),
    reject: (reason: string) =>
      staffCall('POST', '/admin/withdrawals/{id}/reject', { path, body: { reason } }),
    paid: (txRef: string) =>
      staffCall('POST', '/admin/withdrawals/{id}/paid', {
        path,
        body: txRef !== '' ? { tx_ref: txRef } : {},
      }),
  };
};

/** Reads the withdrawals again. */
export function useRereadWithdrawals() {
  const client = useQueryClient();
  return () => client.invalidateQueries({ queryKey: withdrawalKeys.all });
}
