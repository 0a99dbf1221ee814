import { Injectable } from '@nestjs/common';
import { Transactional } from '@nestjs-cls/transactional';
import { AuditService } from '../audit/audit.service';
import { AppError } from '../common/errors';
import { keysetPage, type Page, type PageQuery, pagePosition } from '../common/pagination';
import { BillingRepository, type InvoiceRecord } from './billing.repository';
import { TON_CURRENCY } from './money';
import { type Confirmation, ConfirmationService } from './confirmation.service';
import {
  type ReceivedPaymentRecord,
  ReceivedPaymentsRepository,
} from './received-payments.repository';

/** The audit action of a payment attached by hand (targetType `invoice`). */
export const PAYMENT_ATTACHED = 'invoice.payment_attached';

/** What an invoice's `amount` counts: nanotons for a TON invoice, else its currency's minor unit. */
function invoiceUnit(invoice: InvoiceRecord): string {
  return invoice.provider === 'ton' ? TON_CURRENCY : invoice.currency;
}

/** Money received that paid no invoice, and staff attaching it to one. */
@Injectable()
export class UnmatchedPaymentsService {
  constructor(
    private readonly received: ReceivedPaymentsRepository,
    private readonly billing: BillingRepository,
    private readonly confirmation: ConfirmationService,
    private readonly audit: AuditService,
  ) {}

  /** Newest first; a payment attached to an invoice leaves the list. */
  async list(query: PageQuery): Promise<Page<ReceivedPaymentRecord>> {
    const { after, limit } = pagePosition(query);
    return keysetPage(await this.received.unmatchedPage(after, limit + 1), limit);
  }

  /**
   * Pays the invoice (pending, or expired of any age) with an unmatched payment, through the one
   * confirmation, once: the payment row stays locked until the invoice is paid and the payment
   * marked attached, and both are audited in the same transaction.
   */
  @Transactional()
  async attach(staffId: string, invoiceId: string, txRef: string): Promise<Confirmation> {
    const payment = await this.received.lockUnmatched(txRef);
    if (!payment) throw new AppError('NOT_FOUND', 'no unmatched payment with this tx_ref');
    const invoice = await this.billing.findInvoice(invoiceId);
    if (!invoice) throw new AppError('NOT_FOUND', 'invoice not found');
    if (invoice.status === 'paid') {
      throw new AppError('INVOICE_NOT_PENDING', 'the invoice is paid already');
    }
    if (invoice.provider !== payment.provider) {
      throw new AppError(
        'CONFLICT',
        `a ${payment.provider} payment cannot pay a ${invoice.provider} invoice`,
      );
    }
    // Anyone can send a transfer with any comment: a payment pays only what it covers in full.
    const unit = invoiceUnit(invoice);
    if (payment.currency !== unit) {
      throw new AppError(
        'CONFLICT',
        `a payment in ${payment.currency} cannot pay an invoice in ${unit}`,
      );
    }
    if (BigInt(payment.amount) < BigInt(invoice.amount)) {
      throw new AppError(
        'PAYMENT_TOO_SMALL',
        `the payment (${payment.amount}) is less than the invoice's amount (${invoice.amount} ${unit})`,
      );
    }
    const confirmed = await this.confirmation.confirm(
      invoice.userId,
      invoice.id,
      { ref: payment.txRef, amount: BigInt(payment.amount) },
      { byStaff: true },
    );
    await this.received.markAttached(payment.txRef, invoice.id);
    await this.audit.record({
      actorId: staffId,
      action: PAYMENT_ATTACHED,
      targetType: 'invoice',
      targetId: invoice.id,
      before: { status: invoice.status },
      after: {
        status: confirmed.invoice.status,
        tx_ref: payment.txRef,
        amount: payment.amount,
        reason: payment.reason,
      },
    });
    return confirmed;
  }
}
