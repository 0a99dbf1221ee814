/** An account's invoices and support tickets on its console page, a page at a time. */
import { Anchor, SegmentedControl } from '@mantine/core';
import { useState } from 'react';
import { Link } from 'react-router';
import { useI18n } from '../../i18n/i18n';
import { DataTable } from '../../layout/DataTable';
import { Failed, Loading } from '../../layout/Loading';
import { useInvoiceList } from '../payments/queries';
import { CursorMore } from '../shared/ListControls';
import { useTicketQueue } from '../tickets/queries';
import { Section } from './parts';

export function UserInvoices({ userId }: { userId: string }) {
  const { t, date, money } = useI18n();
  const invoices = useInvoiceList({ user_id: userId });
  const items = invoices.data?.pages.flatMap((page) => page.items) ?? [];
  return (
    <Section id="user-invoices" title={t('console.users.invoices')}>
      {invoices.isPending && <Loading />}
      {invoices.isError && <Failed error={invoices.error} retry={() => void invoices.refetch()} />}
      {invoices.isSuccess && (
        <DataTable
          minWidth={520}
          rows={items}
          rowKey={(invoice) => invoice.id}
          columns={[
            { header: t('console.users.invoiceDate'), cell: (invoice) => date(invoice.created_at) },
            { header: t('console.users.plan'), cell: (invoice) => invoice.plan_name },
            {
              header: t('console.users.amount'),
              cell: (invoice) =>
                money(invoice.amount, invoice.provider === 'ton' ? 'TON' : invoice.currency),
            },
            {
              header: t('console.users.invoiceStatus'),
              cell: (invoice) => t(`status.${invoice.status}`),
            },
          ]}
        />
      )}
      <CursorMore list={invoices} />
    </Section>
  );
}

/** The account's support tickets, open or closed, each linking to its thread in the console. */
export function UserTickets({ userId }: { userId: string }) {
  const { t, date } = useI18n();
  const [status, setStatus] = useState<'open' | 'closed'>('open');
  const tickets = useTicketQueue({ user_id: userId, status });
  const items = tickets.data?.pages.flatMap((page) => page.items) ?? [];
  return (
    <Section id="user-tickets" title={t('console.users.tickets')}>
      <SegmentedControl
        mb="sm"
        aria-label={t('console.users.ticketStatus')}
        value={status}
        onChange={(value) => setStatus(value as 'open' | 'closed')}
        data={[
          { value: 'open', label: t('status.open') },
          { value: 'closed', label: t('status.closed') },
        ]}
      />
      {tickets.isPending && <Loading />}
      {tickets.isError && <Failed error={tickets.error} retry={() => void tickets.refetch()} />}
      {tickets.isSuccess && (
        <DataTable
          rows={items}
          rowKey={(ticket) => ticket.id}
          columns={[
            {
              header: t('console.users.ticketSubject'),
              cell: (ticket) => (
                <Anchor component={Link} to={`/staff/tickets/${ticket.id}`}>
                  {ticket.subject}
                </Anchor>
              ),
            },
            {
              header: t('console.users.ticketLastMessage'),
              cell: (ticket) => date(ticket.last_message_at),
            },
          ]}
        />
      )}
      <CursorMore list={tickets} />
    </Section>
  );
}
