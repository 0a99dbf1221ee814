import { ApiProperty } from '@nestjs/swagger';
import { INVOICE_PROVIDERS, type InvoiceProvider } from '../entities/invoice.entity';
import { UNMATCHED_REASONS, type UnmatchedReason } from '../entities/received-payment.entity';
import type { ReceivedPaymentRecord } from '../received-payments.repository';

export class UnmatchedPaymentResponse {
  @ApiProperty({ description: 'the TON transaction hash; attach it with this' })
  tx_ref: string;

  @ApiProperty({ enum: INVOICE_PROVIDERS })
  provider: InvoiceProvider;

  @ApiProperty({ example: '2035920000', description: "in the provider's unit (nanotons)" })
  amount: string;

  @ApiProperty({ example: 'TON' })
  currency: string;

  @ApiProperty({ type: String, nullable: true, description: 'the sending address' })
  sender: string | null;

  @ApiProperty({ type: String, nullable: true })
  comment: string | null;

  @ApiProperty({ format: 'date-time' })
  received_at: string;

  @ApiProperty({
    enum: UNMATCHED_REASONS,
    description:
      'no_invoice: its comment names no payable invoice; underpaid: less than the invoice asks; too_late: after the late window, or after expiry and short of the price at the current rate',
  })
  reason: UnmatchedReason;
}

export class UnmatchedPaymentPageResponse {
  @ApiProperty({ type: [UnmatchedPaymentResponse] })
  items: UnmatchedPaymentResponse[];

  @ApiProperty({ type: String, nullable: true, description: 'null on the last page' })
  next_cursor: string | null;
}

export function toUnmatchedPaymentResponse(
  payment: ReceivedPaymentRecord,
): UnmatchedPaymentResponse {
  return {
    tx_ref: payment.txRef,
    provider: payment.provider,
    amount: payment.amount,
    currency: payment.currency,
    sender: payment.sender,
    comment: payment.comment,
    received_at: payment.receivedAt.toISOString(),
    reason: payment.reason ?? 'no_invoice',
  };
}
