/**
 * The console's Payments page (staff): invoices by status and by account, newest first, and the
 * money received that paid no invoice (with why, in words). Staff attach such a payment to an
 * invoice, pending or expired: the service pays it once (audited) and extends the subscription,
 * or refuses in words (PAYMENT_TOO_SMALL, INVOICE_NOT_PENDING, an unknown or used payment).
 */
import { Alert, Anchor, Group, NativeSelect, Stack, Text, TextInput, Title } from '@mantine/core';
import { useState } from 'react';
import { StatusBadge } from '../../account/AccountPage';
import { ApiError } from '../../api/client';
import { useI18n } from '../../i18n/i18n';
import { DataTable } from '../../layout/DataTable';
import { Failed, Loading } from '../../layout/Loading';
import type { Schemas } from '../api';
import { ConfirmAction } from '../../layout/ConfirmAction';
import { CursorMore, NoWrap, RefreshList } from '../shared/ListControls';
import { attachPayment, useInvoiceList, useRereadPayments, useUnmatchedPayments } from './queries';

type Invoice = Schemas['InvoiceResponse'];
type Unmatched = Schemas['UnmatchedPaymentResponse'];
type Confirmation = Schemas['ConfirmationResponse'];

const INVOICE_STATES: Invoice['status'][] = ['pending', 'paid', 'expired'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

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

/** The amount an invoice asks, in the unit it is paid in (nanotons for TON). */
function invoiceAmount(invoice: Invoice, money: (amount: string, currency: string) => string) {
  return money(invoice.amount, invoice.provider === 'ton' ? 'TON' : invoice.currency);
}

function InvoiceList() {
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

function UnmatchedList() {
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

/** Attaching one unmatched payment to the invoice whose id staff enter. */
function AttachPayment({
  payment,
  onAttached,
}: {
  payment: Unmatched;
  onAttached: (confirmation: Confirmation) => void;
}) {
  const { t, money } = useI18n();
  const [invoiceId, setInvoiceId] = useState('');
  const amount = money(payment.amount, payment.currency);

  async function attach() {
    const target = invoiceId.trim().toLowerCase();
    if (!UUID.test(target)) {
      // Said here, in the words the service would use, rather than sent to be refused.
      throw new ApiError({
        status: 400,
        code: 'VALIDATION_FAILED',
        message: 'invalid invoice id',
        details: [
          {
            field: t('console.payments.invoiceId'),
            message: t('console.payments.invoiceIdInvalid'),
          },
        ],
      });
    }
    try {
      const confirmation = await attachPayment(target, payment.tx_ref);
      onAttached(confirmation);
    } catch (failure) {
      // The service's 404 covers both ids: say which two things may be wrong.
      if (failure instanceof ApiError && failure.status === 404) {
        throw new ApiError({
          status: 404,
          code: 'ATTACH_NOT_FOUND',
          message: t('console.payments.attachNotFound'),
        });
      }
      throw failure;
    }
  }

  // Done or refused, both lists are read again once the dialog closes: a refusal may mean that
  // another staff member attached the payment meanwhile.
  const reread = useRereadPayments();

  return (
    <ConfirmAction
      label={t('console.payments.attach')}
      question={t('console.payments.attachQuestion', { amount })}
      color="blue"
      action={attach}
      onClosed={reread}
    >
      <TextInput
        label={t('console.payments.invoiceId')}
        description={t('console.payments.invoiceIdHint')}
        value={invoiceId}
        onChange={(event) => setInvoiceId(event.currentTarget.value)}
        required
      />
    </ConfirmAction>
  );
}
