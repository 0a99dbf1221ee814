/** The console's calls for invoices and payments, and their query keys. */
import { useQueryClient } from '@tanstack/react-query';
import { type ListQuery, staffCall, useCursorList } from '../api';

/** An id (of an invoice, an account) as the service writes it; a partly typed one is not sent. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const paymentKeys = {
  /** Every list of invoices (the Payments page's, an account's own), by their filters. */
  invoices: ['staff', 'invoices'] as const,
  unmatched: ['staff', 'payments', 'unmatched'] as const,
};

/** `GET /admin/invoices`, newest first, by status and account. */
export const useInvoiceList = (query: ListQuery<'/admin/invoices'>) =>
  useCursorList(paymentKeys.invoices, '/admin/invoices', query);

/** `GET /admin/payments/unmatched`: money received that paid no invoice. */
export const useUnmatchedPayments = () =>
  useCursorList(paymentKeys.unmatched, '/admin/payments/unmatched');

/** Pays an invoice with an unmatched payment (audited by the service). */
export const attachPayment = (invoiceId: string, txRef: string) =>
  staffCall('POST', '/admin/invoices/{id}/attach-payment', {
    path: { id: invoiceId },
    body: { tx_ref: txRef },
  });

/** Reads the invoices and the unmatched payments again. */
export function useRereadPayments() {
  const client = useQueryClient();
  return () =>
    Promise.all([
      client.invalidateQueries({ queryKey: paymentKeys.invoices }),
      client.invalidateQueries({ queryKey: paymentKeys.unmatched }),
    ]);
}
