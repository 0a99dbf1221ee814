/**
 * The console's calls for accounts, and their query keys. An account is cached once, under
 * `userKeys.detail(id)`, wherever it shows (its page, an actor's name in the audit log); a change
 * to it writes the answer there and reads every view of accounts again.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type ListQuery, type Schemas, staffCall, useCursorList } from '../api';

export type StaffUser = Schemas['UserResponse'];

/** The query keys of this area: every list and view of accounts starts with `userKeys.all`. */
export const userKeys = {
  all: ['staff', 'users'] as const,
  list: () => [...userKeys.all, 'list'] as const,
  detail: (id: string) => [...userKeys.all, 'one', id] as const,
  devices: (id: string) => [...userKeys.all, 'devices', id] as const,
};

/** `GET /admin/users`: the accounts a search finds, a page at a time. */
export const useUserList = (search: ListQuery<'/admin/users'>) =>
  useCursorList(userKeys.list(), '/admin/users', search);

/** `GET /admin/users/{id}`. */
export const useUser = (id: string, options: { staleTime?: number } = {}) =>
  useQuery({
    queryKey: userKeys.detail(id),
    queryFn: () => staffCall('GET', '/admin/users/{id}', { path: { id } }),
    ...options,
  });

/**
 * A change to an account: `call` makes it; when it answers the account as it now stands, every
 * view shows that at once; then every view of accounts is read again.
 */
export function useUserChange(id: string) {
  const queryClient = useQueryClient();
  return async (call: () => Promise<StaffUser | void>) => {
    const changed = await call();
    if (changed) queryClient.setQueryData(userKeys.detail(id), changed);
    await queryClient.invalidateQueries({ queryKey: userKeys.all });
  };
}

export type UserChange = ReturnType<typeof useUserChange>;

/** The account kinds staff create from the console. */
export type StaffKind = 'moderator' | 'support' | 'partner';

/**
 * Creates an account of a kind by its own route (moderators and support only the owner may
 * create); a partner also gets its commission and, when given, its partner code. The lists of
 * accounts are read again.
 */
export function useCreateAccount() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({
      kind,
      account,
      partner,
    }: {
      kind: StaffKind;
      account: Schemas['CreateStaffRequest'];
      partner: { commission: number; code: string };
    }) => {
      if (kind === 'partner') {
        return staffCall('POST', '/admin/partners', {
          body: {
            ...account,
            commission_percent: partner.commission,
            ...(partner.code !== '' ? { partner_code: partner.code } : {}),
          },
        });
      }
      const route = kind === 'moderator' ? '/admin/moderators' : '/admin/support';
      return staffCall('POST', route, { body: account });
    },
    onSuccess: () => queryClient.invalidateQueries({ queryKey: userKeys.all }),
  });
}

/** `GET /admin/users/{id}/devices`. */
export const useUserDevices = (id: string) =>
  useQuery({
    queryKey: userKeys.devices(id),
    queryFn: () => staffCall('GET', '/admin/users/{id}/devices', { path: { id } }),
  });

/** Reads an account's devices again. */
export function useRereadUserDevices(id: string) {
  const queryClient = useQueryClient();
  return () => queryClient.invalidateQueries({ queryKey: userKeys.devices(id) });
}

/** Removes one of an account's devices, with the reason the audit log keeps. */
export const removeUserDevice = (id: string, deviceId: string, reason: string) =>
  staffCall('DELETE', '/admin/users/{id}/devices/{device_id}', {
    path: { id, device_id: deviceId },
    body: { reason },
  });

/**
 * What staff do to an account, each by its own route (audited by the service). All but the
 * password answer the account as it now stands, for `useUserChange`.
 */
export const userActions = (id: string) => {
  const path = { id };
  return {
    moveSubscription: (body: Schemas['MoveSubscriptionRequest']) =>
      staffCall('POST', '/admin/users/{id}/subscription', { path, body }),
    setTrafficLimit: (bytes: number | null) =>
      staffCall('PATCH', '/admin/users/{id}/traffic-limit', {
        path,
        body: { traffic_limit_bytes: bytes },
      }),
    setNodeAccess: (allowed: boolean) =>
      staffCall('PATCH', '/admin/users/{id}/node-access', {
        path,
        body: { can_manage_nodes: allowed },
      }),
    resetTraffic: (reason: string) =>
      staffCall('POST', '/admin/users/{id}/traffic/reset', { path, body: { reason } }),
    block: (reason: string) =>
      staffCall('POST', '/admin/users/{id}/block', { path, body: { reason } }),
    unblock: () => staffCall('POST', '/admin/users/{id}/unblock', { path }),
    /** A staff account's new password (the owner's); every session of that account ends. */
    setPassword: (password: string) =>
      staffCall('POST', '/admin/users/{id}/password', { path, body: { password } }),
  };
};
