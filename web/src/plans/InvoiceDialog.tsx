import { Alert, Anchor, Button, Image, Modal, Stack, Text } from '@mantine/core';
import QRCode from 'qrcode';
import { useEffect, useState } from 'react';
import { INVOICE_TTL_HOURS } from '../../../src/billing/billing.constants';
import { ApiError, type Invoice, type TonPayment } from '../api/client';
import { useConfig, useConfirmInvoice, useSimulatePayment } from '../api/hooks';
import { useI18n } from '../i18n/i18n';
import { minorToDecimal } from '../i18n/money';
import { CopyField } from '../layout/CopyField';

const HOUR_MS = 3_600_000;

/** When a pending invoice stops waiting for its payment: the service's own period after it was made. */
export function invoiceExpiry(invoice: Invoice): Date {
  return new Date(Date.parse(invoice.created_at) + INVOICE_TTL_HOURS * HOUR_MS);
}

/** What an invoice asks of the payer, in a dialog: opened from the plans page or from /account. */
export function InvoiceDialog({ invoice, onClose }: { invoice: Invoice | null; onClose(): void }) {
  const { t } = useI18n();
  return (
    <Modal
      opened={invoice !== null}
      onClose={onClose}
      title={
        invoice &&
        t(invoice.provider === 'ton' ? 'ton.title' : 'telegram.title', {
          plan: invoice.plan_name,
        })
      }
      closeButtonProps={{ 'aria-label': t('common.close') }}
    >
      {invoice && invoice.provider === 'ton' && <TonInvoice key={invoice.id} invoice={invoice} />}
      {invoice && invoice.provider === 'telegram' && <TelegramInvoice invoice={invoice} />}
    </Modal>
  );
}

function TonInvoice({ invoice }: { invoice: Invoice }) {
  const { t, money, date, dateTime, errorText } = useI18n();
  const payment = invoice.payment as TonPayment;
  const confirm = useConfirmInvoice();
  const demo = useConfig().data?.demo_payments === true;
  const [qr, setQr] = useState<string | null>(null);

  useEffect(() => {
    let live = true;
    QRCode.toDataURL(payment.link, { margin: 1, width: 220 })
      .then((url) => live && setQr(url))
      .catch(() => live && setQr(null));
    return () => {
      live = false;
    };
  }, [payment.link]);

  if (confirm.data) {
    return (
      <Alert color="green" role="status">
        {t('ton.done', { date: date(confirm.data.subscription.expires_at) })}
      </Alert>
    );
  }
  // Not finding the transfer yet is the usual answer while it travels, not a failure.
  const notYet = confirm.error instanceof ApiError && confirm.error.code === 'PAYMENT_NOT_FOUND';
  return (
    <Stack gap="sm">
      <Text size="sm">{t('ton.steps')}</Text>
      <CopyField
        label={t('ton.amount')}
        shown={money(payment.amount_nano, 'TON')}
        copy={minorToDecimal(payment.amount_nano, 'TON')}
        copyWhat={t('ton.copyAmount')}
      />
      <CopyField
        label={t('ton.address')}
        shown={payment.address}
        copy={payment.address}
        copyWhat={t('ton.copyAddress')}
      />
      <CopyField
        label={t('ton.comment')}
        shown={payment.comment}
        copy={payment.comment}
        copyWhat={t('ton.copyComment')}
      />
      <Text size="sm">
        {t('ton.validUntil', { date: dateTime(invoiceExpiry(invoice).toISOString()) })}
      </Text>
      {qr && <Image src={qr} alt={t('ton.qr')} w={220} h={220} mx="auto" />}
      <Anchor href={payment.link}>{t('ton.open')}</Anchor>
      {confirm.isError &&
        (notYet ? (
          <Alert color="gray" role="status">
            {errorText(confirm.error)}
          </Alert>
        ) : (
          <Alert color="red" role="alert">
            {errorText(confirm.error)}
          </Alert>
        ))}
      <Button onClick={() => confirm.mutate(invoice.id)} loading={confirm.isPending}>
        {t('ton.paid')}
      </Button>
      {demo && <SimulatePayment onPaid={() => confirm.mutate(invoice.id)} invoiceId={invoice.id} />}
      {confirm.isPending && (
        <Text size="sm" role="status">
          {t('ton.checking')}
        </Text>
      )}
    </Stack>
  );
}

/** Demo mode only: the fake chain receives this invoice's transfer, then "I paid" runs by itself. */
function SimulatePayment({ invoiceId, onPaid }: { invoiceId: string; onPaid(): void }) {
  const { t, errorText } = useI18n();
  const simulate = useSimulatePayment();
  return (
    <Stack gap={4}>
      <Button
        variant="default"
        onClick={() => simulate.mutate(invoiceId, { onSuccess: onPaid })}
        loading={simulate.isPending}
      >
        {t('ton.simulate')}
      </Button>
      <Text size="sm">{t('ton.simulateHint')}</Text>
      {simulate.isError && (
        <Alert color="red" role="alert">
          {errorText(simulate.error)}
        </Alert>
      )}
    </Stack>
  );
}

function TelegramInvoice({ invoice }: { invoice: Invoice }) {
  const { t } = useI18n();
  const link = 'invoice_link' in invoice.payment ? invoice.payment.invoice_link : '';
  return (
    <Stack>
      <Button component="a" href={link} target="_blank" rel="noopener noreferrer">
        {t('telegram.open')}
      </Button>
      <Text size="sm">{t('telegram.after')}</Text>
    </Stack>
  );
}
