import { ApiProperty } from '@nestjs/swagger';
import { PAYMENT_METHODS, type PaymentMethod } from '../billing/providers/payment-methods';

export class ConfigResponse {
  @ApiProperty({ type: String, nullable: true, example: 'my_vpn_bot' })
  bot_username: string | null;

  @ApiProperty({ type: String, nullable: true, example: 'https://grafana.example.com' })
  grafana_url: string | null;

  @ApiProperty({
    enum: PAYMENT_METHODS,
    isArray: true,
    example: ['ton', 'stars'],
    description:
      'The ways of paying that are set up: ton (TON_WALLET_ADDRESS), telegram (BOT_TOKEN and ' +
      'TELEGRAM_PAYMENT_PROVIDER_TOKEN), stars (BOT_TOKEN); empty when none is',
  })
  payment_methods: PaymentMethod[];

  @ApiProperty({
    example: false,
    description:
      'DEMO_PAYMENTS (development only): TON payments go to a local fake chain, and a pending TON ' +
      'invoice can be paid with POST /demo/invoices/{id}/simulate-payment',
  })
  demo_payments: boolean;
}

export class HealthResponse {
  @ApiProperty({ enum: ['ok', 'error'] })
  status: 'ok' | 'error';

  @ApiProperty({ enum: ['up', 'down'] })
  db: 'up' | 'down';
}
