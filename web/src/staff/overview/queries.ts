/** The console's call for the business figures, and its query key. */
import { useQuery } from '@tanstack/react-query';
import { staffCall } from '../api';

export const statsKeys = { days: (days: number) => ['staff', 'stats', days] as const };

/** `GET /admin/stats`: today's figures and the last `days` UTC days. */
export const useStats = (days: number) =>
  useQuery({
    queryKey: statsKeys.days(days),
    queryFn: () => staffCall('GET', '/admin/stats', { query: { days } }),
  });
