import { ApiProperty, getSchemaPath } from '@nestjs/swagger';
import { SubscriptionView, subscriptionViewOf } from '../../users/dto/user.response';
import type { SubscriptionRecord } from '../../users/subscriptions.repository';
import type { InvoiceRecord } from '../billing.repository';
import type { Confirmation } from '../confirmation.service';
import {
  INVOICE_PROVIDERS,
  INVOICE_STATUSES,
  type InvoiceProvider,
  type InvoiceStatus,
} from '../entities/invoice.entity';

export class TonPaymentView {
  @ApiProperty({ description: "the service's wallet" })
  address: string;

  @ApiProperty({ example: '2035920000' })
  amount_nano: string;

  @ApiProperty({ example: 'inv-3fa9c0d1e2b4', description: 'must be sent as the text comment' })
  comment: string;

  @ApiProperty({ example: 'ton://transfer/<address>?amount=<nano>&text=<comment>' })
  link: string;
}

export class TelegramPaymentView {
  @ApiProperty({ example: 'https://t.me/$abc' })
  invoice_link: string;
}

export class InvoiceResponse {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ format: 'uuid' })
  user_id: string;

  @ApiProperty({ example: 'monthly' })
  plan_name: string;

  @ApiProperty({ example: 'USD' })
  currency: string;

  @ApiProperty({
    example: '499',
    description: "in the provider's unit: nanotons for ton, minor units of currency for telegram",
  })
  amount: string;

  @ApiProperty({ enum: INVOICE_PROVIDERS })
  provider: InvoiceProvider;

  @ApiProperty({ enum: INVOICE_STATUSES })
  status: InvoiceStatus;

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiProperty({ format: 'date-time', type: String, nullable: true })
  paid_at: string | null;

  @ApiProperty({
    oneOf: [{ $ref: getSchemaPath(TonPaymentView) }, { $ref: getSchemaPath(TelegramPaymentView) }],
  })
  payment: TonPaymentView | TelegramPaymentView;
}

export class InvoicePageResponse {
  @ApiProperty({ type: [InvoiceResponse] })
  items: InvoiceResponse[];

  @ApiProperty({ type: String, nullable: true, description: 'null on the last page' })
  next_cursor: string | null;
}

export class ConfirmationResponse {
  @ApiProperty({ type: InvoiceResponse })
  invoice: InvoiceResponse;

  @ApiProperty({ type: SubscriptionView })
  subscription: SubscriptionView;
}

export function toInvoiceResponse(invoice: InvoiceRecord): InvoiceResponse {
  return {
    id: invoice.id,
    user_id: invoice.userId,
    plan_name: invoice.planName,
    currency: invoice.currency,
    amount: invoice.amount,
    provider: invoice.provider,
    status: invoice.status,
    created_at: invoice.createdAt.toISOString(),
    paid_at: invoice.paidAt?.toISOString() ?? null,
    payment: invoice.payment as unknown as TonPaymentView | TelegramPaymentView,
  };
}

export function toSubscriptionView(
  subscription: SubscriptionRecord,
  now = new Date(),
): SubscriptionView {
  // Its account is the signed-in caller or a Telegram payer: never blocked (a block ends sessions).
  return subscriptionViewOf({ ...subscription, blockedAt: null }, now);
}

export function toConfirmationResponse(confirmation: Confirmation): ConfirmationResponse {
  return {
    invoice: toInvoiceResponse(confirmation.invoice),
    subscription: toSubscriptionView(confirmation.subscription),
  };
}
