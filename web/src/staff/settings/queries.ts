/** The console's call for the service's settings. */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { staffCall } from '../api';
import { userKeys } from '../users/queries';

/**
 * `PATCH /admin/settings/traffic-limit`: the default traffic limit. Accounts without a limit of
 * their own show the new one, so every view of accounts is read again.
 */
export function useSaveDefaultTrafficLimit() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (defaultBytes: number) =>
      staffCall('PATCH', '/admin/settings/traffic-limit', {
        body: { default_bytes: defaultBytes },
      }),
    onSuccess: () => client.invalidateQueries({ queryKey: userKeys.all }),
  });
}
