/** The console's calls for support tickets, and their query keys. */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type ListQuery, staffCall, useCursorList } from '../api';

/** Every view of tickets starts with `ticketKeys.all`: a reply or a close reads them all again. */
export const ticketKeys = {
  all: ['staff', 'tickets'] as const,
  queue: () => [...ticketKeys.all, 'queue'] as const,
  thread: (id: string) => [...ticketKeys.all, 'thread', id] as const,
};

/** `GET /admin/tickets`: the open or closed tickets, of everyone or of one account. */
export const useTicketQueue = (query: ListQuery<'/admin/tickets'>) =>
  useCursorList(ticketKeys.queue(), '/admin/tickets', query);

/** `GET /admin/tickets/{id}`: a ticket and its messages. */
export const useTicketThread = (id: string) =>
  useQuery({
    queryKey: ticketKeys.thread(id),
    queryFn: () => staffCall('GET', '/admin/tickets/{id}', { path: { id } }),
  });

/** Staff's reply in a ticket; the tickets are read again, sent or refused. */
export function useReplyToTicket(id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (text: string) =>
      staffCall('POST', '/admin/tickets/{id}/messages', { path: { id }, body: { body: text } }),
    onSettled: () => client.invalidateQueries({ queryKey: ticketKeys.all }),
  });
}

/** Closes a ticket; the tickets are read again, closed or refused. */
export function useCloseTicket(id: string) {
  const client = useQueryClient();
  return async () => {
    try {
      await staffCall('POST', '/admin/tickets/{id}/close', { path: { id } });
    } finally {
      await client.invalidateQueries({ queryKey: ticketKeys.all });
    }
  };
}
