/** The invoices, newest first, narrowed by status and by account. */
import { Anchor, Group, NativeSelect, Stack, Text, TextInput, Title } from '@mantine/core';
import { useState } from 'react';
import { StatusBadge } from '../../account/AccountPage';
import { useI18n } from '../../i18n/i18n';
import { DataTable } from '../../layout/DataTable';
import { Failed, Loading } from '../../layout/Loading';
import type { Schemas } from '../api';
import { CursorMore, NoWrap, RefreshList } from '../shared/ListControls';
import { UUID, useInvoiceList } from './queries';

type Invoice = Schemas['InvoiceResponse'];

const INVOICE_STATES: Invoice['status'][] = ['pending', 'paid', 'expired'];

/** The amount an invoice asks, in the unit it is paid in (nanotons for TON). */
function invoiceAmount(invoice: Invoice, money: (amount: string, currency: string) => string) {
  return money(invoice.amount, invoice.provider === 'ton' ? 'TON' : invoice.currency);
}

export function InvoiceList() {
  const { t, money, date } = useI18n();
  const [status, setStatus] = useState<Invoice['status'] | ''>('');
  const [account, setAccount] = useState('');
  const userId = account.trim();
  const accountValid = userId === '' || UUID.test(userId);
  const list = useInvoiceList({
    status: status || undefined,
    // An id being typed is not sent: only a whole one narrows the list.
    user_id: accountValid ? userId || undefined : undefined,
  });
  const invoices = list.data?.pages.flatMap((page) => page.items) ?? [];

  return (
    <section role="region" aria-labelledby="console-invoices-title">
      <Stack gap="sm">
        <Group justify="space-between">
          <Title order={3} id="console-invoices-title">
            {t('console.payments.invoices')}
          </Title>
          <RefreshList list={list} />
        </Group>
        <Group align="flex-start">
          <NativeSelect
            label={t('console.payments.status')}
            value={status}
            onChange={(event) => setStatus(event.currentTarget.value as Invoice['status'] | '')}
            data={[
              { value: '', label: t('console.payments.anyStatus') },
              ...INVOICE_STATES.map((value) => ({ value, label: t(`status.${value}`) })),
            ]}
          />
          <TextInput
            label={t('console.payments.account')}
            description={t('console.payments.accountHint')}
            value={account}
            onChange={(event) => setAccount(event.currentTarget.value)}
            error={accountValid ? undefined : t('console.payments.accountInvalid')}
            w={360}
          />
        </Group>
        {list.isPending && <Loading />}
        {list.isError && <Failed error={list.error} retry={() => void list.refetch()} />}
        {list.isSuccess && (
          <DataTable
            minWidth={860}
            rows={invoices}
            rowKey={(invoice) => invoice.id}
            columns={[
              {
                header: t('console.payments.created'),
                cell: (invoice) => <NoWrap>{date(invoice.created_at)}</NoWrap>,
              },
              {
                header: t('console.payments.invoice'),
                breakAll: true,
                cell: (invoice) => (
                  <Text size="xs" ff="monospace">
                    {invoice.id}
                  </Text>
                ),
              },
              {
                header: t('console.payments.account'),
                breakAll: true,
                cell: (invoice) => (
                  <Anchor
                    component="button"
                    type="button"
                    size="xs"
                    ff="monospace"
                    ta="left"
                    title={t('console.payments.onlyThisAccount')}
                    onClick={() => setAccount(invoice.user_id)}
                  >
                    {invoice.user_id}
                  </Anchor>
                ),
              },
              { header: t('console.payments.plan'), cell: (invoice) => invoice.plan_name },
              {
                header: t('console.payments.amount'),
                cell: (invoice) => (
                  <NoWrap>
                    <Text size="sm">{invoiceAmount(invoice, money)}</Text>
                    <Text size="xs">
                      {t('console.payments.paidWith', {
                        provider: t(`console.payments.provider.${invoice.provider}`),
                      })}
                    </Text>
                  </NoWrap>
                ),
              },
              {
                header: t('console.payments.status'),
                cell: (invoice) => (
                  <NoWrap>
                    <StatusBadge status={invoice.status} />
                    {invoice.paid_at && (
                      <Text size="xs">
                        {t('console.payments.paidOn', { date: date(invoice.paid_at) })}
                      </Text>
                    )}
                  </NoWrap>
                ),
              },
            ]}
          />
        )}
        <CursorMore list={list} />
      </Stack>
    </section>
  );
}
