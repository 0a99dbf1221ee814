import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type {
  AttachPartnerRequest,
  CreateInvoiceRequest,
  CreateTicketRequest,
  SubmitScoreRequest,
  User,
  WithdrawalRequest,
} from './client';
import { inRoleSet } from '../../../src/auth/guards/role-sets';
import { api, mayHaveSession, ME_KEY, noteSignedOut } from './client';

/** Query keys: one per resource, so a write invalidates exactly what it changed. */
export const keys = {
  me: ME_KEY,
  config: ['config'] as const,
  plans: ['plans'] as const,
  invoices: ['invoices'] as const,
  tickets: ['tickets'] as const,
  ticket: (id: string) => ['tickets', id] as const,
  earnings: ['earnings'] as const,
  withdrawals: ['withdrawals'] as const,
  leaderboard: ['leaderboard'] as const,
  devices: ['devices'] as const,
  subscriptionInfo: (token: string) => ['subscription-info', token] as const,
};

export const useConfig = () =>
  useQuery({ queryKey: keys.config, queryFn: api.config, staleTime: 60_000 });
export const usePlans = () => useQuery({ queryKey: keys.plans, queryFn: api.plans });
export const useInvoices = () =>
  useQuery({ queryKey: keys.invoices, queryFn: () => api.listInvoices({ limit: 20 }) });
export const useTickets = () =>
  useQuery({ queryKey: keys.tickets, queryFn: () => api.listTickets({ limit: 50 }) });
export const useTicket = (id: string) =>
  useQuery({ queryKey: keys.ticket(id), queryFn: () => api.getTicket(id) });
export const useEarnings = (enabled: boolean) =>
  useQuery({ queryKey: keys.earnings, queryFn: () => api.earnings({ limit: 20 }), enabled });
export const useWithdrawals = (enabled: boolean) =>
  useQuery({ queryKey: keys.withdrawals, queryFn: () => api.withdrawals({ limit: 20 }), enabled });
// The service caches the board for a few seconds; while it is on screen it is read again.
export const useLeaderboard = () =>
  useQuery({ queryKey: keys.leaderboard, queryFn: api.leaderboard, refetchInterval: 5_000 });

/** The account's link and devices (`/account` → Connect). */
export const useDevices = () => useQuery({ queryKey: keys.devices, queryFn: api.devices });
/** What a subscription link's page shows, read with the link's own token (no session). */
export const useSubscriptionInfo = (token: string) =>
  useQuery({
    queryKey: keys.subscriptionInfo(token),
    queryFn: () => api.subscriptionInfo(token),
  });

/** Roles that may use the staff console (partners have their own page). */
export function isStaffRole(role: User['role']): role is 'owner' | 'moderator' | 'support' {
  return inRoleSet(role, 'support_staff');
}

/** The signed-in account; `data` is null when nobody is signed in. */
export function useMe() {
  return useQuery({
    queryKey: keys.me,
    queryFn: async (): Promise<User | null> => {
      if (!mayHaveSession()) return null;
      try {
        return await api.me();
      } catch (error) {
        if (error instanceof Error && 'status' in error && error.status === 401) {
          noteSignedOut();
          return null;
        }
        throw error;
      }
    },
  });
}

/** A mutation that refreshes the named resources once it succeeds. */
function useWrite<A, R>(call: (args: A) => Promise<R>, refreshes: (readonly string[])[]) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: call,
    onSuccess: async () => {
      await Promise.all(refreshes.map((queryKey) => client.invalidateQueries({ queryKey })));
    },
  });
}

export const useStartTrial = () => useWrite(() => api.startTrial(), [keys.me]);
export const useAttachPartner = () =>
  useWrite((body: AttachPartnerRequest) => api.attachPartner(body), [keys.me]);
export const useCreateInvoice = () =>
  useWrite((body: CreateInvoiceRequest) => api.createInvoice(body), [keys.invoices]);
export const useConfirmInvoice = () =>
  useWrite((id: string) => api.confirmInvoice(id), [keys.invoices, keys.me]);
/**
 * The demo mode's "simulate the payment" (`GET /config` says `demo_payments`): the service's fake
 * chain shows the transfer a wallet would send; the usual confirmation then finds it. Development
 * only, so outside the API's document and the typed client.
 */
export const useSimulatePayment = () =>
  useMutation({
    mutationFn: (id: string) =>
      api.request<void>('POST', `/demo/invoices/${encodeURIComponent(id)}/simulate-payment`),
  });
export const useCreateTicket = () =>
  useWrite((body: CreateTicketRequest) => api.createTicket(body), [keys.tickets]);
export const usePostTicketMessage = (id: string) =>
  useWrite((body: string) => api.postTicketMessage(id, { body }), [keys.ticket(id), keys.tickets]);
export const useRequestWithdrawal = () =>
  useWrite(
    (body: WithdrawalRequest) => api.requestWithdrawal(body),
    [keys.withdrawals, keys.earnings],
  );
export const useCreateDevice = () =>
  useWrite((name: string) => api.createDevice({ name }), [keys.devices]);
export const useRenameDevice = () =>
  useWrite(
    ({ id, name }: { id: string; name: string }) => api.renameDevice(id, { name }),
    [keys.devices],
  );
export const useRemoveDevice = () => useWrite((id: string) => api.removeDevice(id), [keys.devices]);
export const useRotateLink = () => useWrite(() => api.rotateSubscriptionLink(), [keys.devices]);
export const useStartRound = () => useWrite(() => api.startRound(), []);
export const useSubmitScore = () =>
  useWrite(
    ({ roundId, body }: { roundId: string; body: SubmitScoreRequest }) =>
      api.submitScore(roundId, body),
    [keys.leaderboard],
  );
