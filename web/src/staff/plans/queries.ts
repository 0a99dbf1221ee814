/** The console's calls for plans, and their query key. */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type Schemas, staffCall } from '../api';

export type Plan = Schemas['AdminPlanResponse'];
export type PlanBody = Schemas['UpsertPlanRequest'];

export const planKeys = { all: ['staff', 'plans'] as const };

/** `GET /admin/plans`: every plan, on sale or not. */
export const useStaffPlans = () =>
  useQuery({ queryKey: planKeys.all, queryFn: () => staffCall('GET', '/admin/plans') });

/** PUT /admin/plans/{name}: creates or replaces the plan, prices included. */
export function useSavePlan() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ name, body }: { name: string; body: PlanBody }) =>
      staffCall('PUT', '/admin/plans/{name}', { path: { name }, body }),
    onSuccess: () => client.invalidateQueries({ queryKey: planKeys.all }),
  });
}
