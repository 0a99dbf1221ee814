/**
 * The console's Payments page (staff): invoices by status and by account, newest first, and the
 * money received that paid no invoice (with why, in words). Staff attach such a payment to an
 * invoice, pending or expired: the service pays it once (audited) and extends the subscription,
 * or refuses in words (PAYMENT_TOO_SMALL, INVOICE_NOT_PENDING, an unknown or used payment).
 */
import { Stack, Title } from '@mantine/core';
import { useI18n } from '../../i18n/i18n';
import { InvoiceList } from './InvoiceList';
import { UnmatchedList } from './UnmatchedList';

export function PaymentsPage() {
  const { t } = useI18n();
  return (
    <Stack>
      <Title order={2}>{t('console.payments.title')}</Title>
      <InvoiceList />
      <UnmatchedList />
    </Stack>
  );
}
