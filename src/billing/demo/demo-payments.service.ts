import { Inject, Injectable } from '@nestjs/common';
import { Address } from '@ton/core';
import { AppError } from '../../common/errors';
import type { Settings } from '../../config/settings';
import { SETTINGS } from '../../config/settings.module';
import { BillingService } from '../billing.service';
import { requestJson } from '../providers/upstream';
import { DEMO_TRANSFER_PATH } from './fake-toncenter';

/**
 * The demo mode's "simulate the payment": the fake chain shows the transfer a wallet would send for
 * the caller's pending TON invoice, so that "I paid" (or reconciliation) confirms it as any other.
 * Outside the demo mode there is no such thing: 404.
 */
@Injectable()
export class DemoPaymentsService {
  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly billing: BillingService,
  ) {}

  async simulatePayment(userId: string, invoiceId: string): Promise<void> {
    if (!this.settings.demoPayments) throw new AppError('NOT_FOUND', 'not found');
    const invoice = await this.billing.ownInvoice(userId, invoiceId);
    if (invoice.provider !== 'ton' || invoice.comment === null || !this.settings.tonWalletAddress) {
      throw new AppError('NOT_FOUND', 'invoice not found');
    }
    if (invoice.status !== 'pending') {
      throw new AppError('INVOICE_NOT_PENDING', 'this invoice is no longer waiting for payment');
    }
    await requestJson(`${this.settings.tonApiUrl}${DEMO_TRANSFER_PATH}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        to: Address.parse(this.settings.tonWalletAddress).toRawString().toUpperCase(),
        value: invoice.amount,
        comment: invoice.comment,
      }),
    });
  }
}
