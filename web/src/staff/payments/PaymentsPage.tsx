/**
 * The console's Payments page (staff): invoices by status and by account, newest first, and the
 * money received that paid no invoice (with why, in words). Staff attach such a payment to an
 * invoice, pending or expired: the service pays it once (audited) and extends the subscription,
 * or refuses in words (PAYMENT_TOO_SMALL, INVOICE_NOT_PENDING, an unknown or used payment).
 */
import {
  Alert,
  Anchor,
  Group,
  NativeSelect,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { StatusBadge } from '../../account/AccountPage';
import { ApiError } from '../../api/client';
import { useI18n } from '../../i18n/i18n';
import { Failed, Loading } from '../../layout/Loading';
import { type Schemas, staffCall, useCursorList } from '../api';
import { ConfirmAction } from '../ConfirmAction';
import { CursorMore, RefreshList } from '../shared/ListControls';

type Invoice = Schemas['InvoiceResponse'];
type Unmatched = Schemas['UnmatchedPaymentResponse'];
type Confirmation = Schemas['ConfirmationResponse'];

const INVOICE_STATES: Invoice['status'][] = ['pending', 'paid', 'expired'];
const INVOICES_KEY = ['staff', 'invoices'] as const;
const UNMATCHED_KEY = ['staff', 'payments', 'unmatched'] as const;
const NO_WRAP = { whiteSpace: 'nowrap' } as const;
/** A table cell shrinks a badge to an ellipsis unless its box keeps the badge's whole width. */
const FITS_BADGE = { minWidth: 'max-content' } as const;
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
  const list = useCursorList<Invoice>(INVOICES_KEY, '/admin/invoices', {
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
        {list.isSuccess && invoices.length === 0 && <Text>{t('console.payments.noInvoices')}</Text>}
        {invoices.length > 0 && (
          <Table.ScrollContainer minWidth={860}>
            <Table>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>{t('console.payments.created')}</Table.Th>
                  <Table.Th>{t('console.payments.invoice')}</Table.Th>
                  <Table.Th>{t('console.payments.account')}</Table.Th>
                  <Table.Th>{t('console.payments.plan')}</Table.Th>
                  <Table.Th>{t('console.payments.amount')}</Table.Th>
                  <Table.Th>{t('console.payments.status')}</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {invoices.map((invoice) => (
                  <Table.Tr key={invoice.id}>
                    <Table.Td style={NO_WRAP}>{date(invoice.created_at)}</Table.Td>
                    <Table.Td>
                      <Text size="xs" ff="monospace" style={{ wordBreak: 'break-all' }}>
                        {invoice.id}
                      </Text>
                    </Table.Td>
                    <Table.Td>
                      <Anchor
                        component="button"
                        type="button"
                        size="xs"
                        ff="monospace"
                        style={{ wordBreak: 'break-all' }}
                        title={t('console.payments.onlyThisAccount')}
                        onClick={() => setAccount(invoice.user_id)}
                      >
                        {invoice.user_id}
                      </Anchor>
                    </Table.Td>
                    <Table.Td>{invoice.plan_name}</Table.Td>
                    <Table.Td style={NO_WRAP}>
                      <Text size="sm">{invoiceAmount(invoice, money)}</Text>
                      <Text size="xs">
                        {t('console.payments.paidWith', {
                          provider: t(`console.payments.provider.${invoice.provider}`),
                        })}
                      </Text>
                    </Table.Td>
                    <Table.Td style={NO_WRAP}>
                      <Stack gap={2} align="flex-start" style={FITS_BADGE}>
                        <StatusBadge status={invoice.status} />
                        {invoice.paid_at && (
                          <Text size="xs">
                            {t('console.payments.paidOn', { date: date(invoice.paid_at) })}
                          </Text>
                        )}
                      </Stack>
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        )}
        <CursorMore list={list} />
      </Stack>
    </section>
  );
}

function UnmatchedList() {
  const { t, date } = useI18n();
  const list = useCursorList<Unmatched>(UNMATCHED_KEY, '/admin/payments/unmatched');
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
        {list.isSuccess && payments.length === 0 && (
          <Text>{t('console.payments.noUnmatched')}</Text>
        )}
        {payments.length > 0 && (
          <Table.ScrollContainer minWidth={860}>
            <Table>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>{t('console.payments.received')}</Table.Th>
                  <Table.Th>{t('console.payments.amount')}</Table.Th>
                  <Table.Th>{t('console.payments.sender')}</Table.Th>
                  <Table.Th>{t('console.payments.comment')}</Table.Th>
                  <Table.Th>{t('console.payments.why')}</Table.Th>
                  <Table.Th>{t('console.payments.transaction')}</Table.Th>
                  <Table.Th>{t('console.payments.actions')}</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {payments.map((payment) => (
                  <UnmatchedRow key={payment.tx_ref} payment={payment} onAttached={setAttached} />
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        )}
        <CursorMore list={list} />
      </Stack>
    </section>
  );
}

function UnmatchedRow({
  payment,
  onAttached,
}: {
  payment: Unmatched;
  onAttached: (confirmation: Confirmation) => void;
}) {
  const { t, money, date } = useI18n();
  const client = useQueryClient();
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
      const confirmation = await staffCall<Confirmation>(
        'POST',
        `/admin/invoices/${target}/attach-payment`,
        { body: { tx_ref: payment.tx_ref } },
      );
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
  const reread = () =>
    Promise.all([
      client.invalidateQueries({ queryKey: INVOICES_KEY }),
      client.invalidateQueries({ queryKey: UNMATCHED_KEY }),
    ]);

  return (
    <Table.Tr
      aria-label={t('console.payments.paymentRow', { amount, date: date(payment.received_at) })}
    >
      <Table.Td style={NO_WRAP}>{date(payment.received_at)}</Table.Td>
      <Table.Td style={NO_WRAP}>{amount}</Table.Td>
      <Table.Td>
        <Text size="xs" ff="monospace" style={{ wordBreak: 'break-all' }}>
          {payment.sender ?? '—'}
        </Text>
      </Table.Td>
      <Table.Td style={{ wordBreak: 'break-word' }}>
        {payment.comment ?? t('console.payments.noComment')}
      </Table.Td>
      <Table.Td>{t(`console.payments.reason.${payment.reason}`)}</Table.Td>
      <Table.Td>
        <Text size="xs" ff="monospace" style={{ wordBreak: 'break-all' }}>
          {payment.tx_ref}
        </Text>
      </Table.Td>
      <Table.Td>
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
      </Table.Td>
    </Table.Tr>
  );
}
