/**
 * Attaching a payment that paid no invoice to the invoice staff name: the service pays it once
 * (audited) or refuses in words.
 */
import { TextInput } from '@mantine/core';
import { useState } from 'react';
import { ApiError } from '../../api/client';
import { useI18n } from '../../i18n/i18n';
import { ConfirmAction } from '../../layout/ConfirmAction';
import type { Schemas } from '../api';
import { attachPayment, useRereadPayments, UUID } from './queries';

type Unmatched = Schemas['UnmatchedPaymentResponse'];
type Confirmation = Schemas['ConfirmationResponse'];

/** Attaching one unmatched payment to the invoice whose id staff enter. */
export function AttachPayment({
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
      // Refused here as the service would refuse it (its field and rule), rather than sent.
      throw new ApiError({
        status: 400,
        code: 'VALIDATION_FAILED',
        message: 'invalid invoice id',
        details: [{ field: 'invoice_id', message: 'must be a UUID', rule: 'isUuid' }],
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
