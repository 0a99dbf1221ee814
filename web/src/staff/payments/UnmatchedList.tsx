/** The money received that paid no invoice, with why in words, each attachable to an invoice. */
import { Alert, Group, Stack, Text, Title } from '@mantine/core';
import { useState } from 'react';
import { useI18n } from '../../i18n/i18n';
import { DataTable } from '../../layout/DataTable';
import { Failed, Loading } from '../../layout/Loading';
import type { Schemas } from '../api';
import { CursorMore, NoWrap, RefreshList } from '../shared/ListControls';
import { AttachPayment } from './AttachPayment';
import { useUnmatchedPayments } from './queries';

type Confirmation = Schemas['ConfirmationResponse'];

export function UnmatchedList() {
  const { t, money, date } = useI18n();
  const list = useUnmatchedPayments();
  const payments = list.data?.pages.flatMap((page) => page.items) ?? [];
  const [attached, setAttached] = useState<Confirmation | null>(null);

  return (
    <section role="region" aria-labelledby="console-unmatched-title">
      <Stack gap="sm">
        <Group justify="space-between">
          <Title order={3} id="console-unmatched-title">
            {t('console.payments.unmatched')}
          </Title>
          <RefreshList list={list} />
        </Group>
        <Text size="sm">{t('console.payments.unmatchedHint')}</Text>
        {attached && (
          <Alert color="green" role="status" withCloseButton onClose={() => setAttached(null)}>
            {t('console.payments.attached', {
              invoice: attached.invoice.id,
              date: date(attached.subscription.expires_at),
            })}
          </Alert>
        )}
        {list.isPending && <Loading />}
        {list.isError && <Failed error={list.error} retry={() => void list.refetch()} />}
        {list.isSuccess && (
          <DataTable
            minWidth={860}
            rows={payments}
            rowKey={(payment) => payment.tx_ref}
            columns={[
              {
                header: t('console.payments.received'),
                cell: (payment) => <NoWrap>{date(payment.received_at)}</NoWrap>,
              },
              {
                header: t('console.payments.amount'),
                cell: (payment) => <NoWrap>{money(payment.amount, payment.currency)}</NoWrap>,
              },
              {
                header: t('console.payments.sender'),
                breakAll: true,
                cell: (payment) => (
                  <Text size="xs" ff="monospace">
                    {payment.sender ?? '—'}
                  </Text>
                ),
              },
              {
                header: t('console.payments.comment'),
                cell: (payment) => payment.comment ?? t('console.payments.noComment'),
              },
              {
                header: t('console.payments.why'),
                cell: (payment) => t(`console.payments.reason.${payment.reason}`),
              },
              {
                header: t('console.payments.transaction'),
                breakAll: true,
                cell: (payment) => (
                  <Text size="xs" ff="monospace">
                    {payment.tx_ref}
                  </Text>
                ),
              },
              {
                header: t('console.payments.actions'),
                cell: (payment) => <AttachPayment payment={payment} onAttached={setAttached} />,
              },
            ]}
          />
        )}
        <CursorMore list={list} />
      </Stack>
    </section>
  );
}
