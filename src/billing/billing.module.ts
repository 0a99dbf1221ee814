import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { BillingRepository } from './billing.repository';
import { BillingService } from './billing.service';
import { Clock, SystemClock } from './clock';
import { ConfirmationService } from './confirmation.service';
import {
  AdminInvoicesController,
  InvoicesController,
  TrialController,
} from './invoices.controller';
import { PlansController } from './plans.controller';
import { PlansRepository } from './plans.repository';
import { PlansService } from './plans.service';
import {
  PAYMENT_PROVIDER_LIST,
  type PaymentProvider,
  PaymentProviders,
} from './providers/payment-provider';
import { TelegramProvider } from './providers/telegram.provider';
import { TonRates } from './providers/ton-rates';
import { TonProvider } from './providers/ton.provider';
import { ReconciliationService } from './reconciliation.service';
import { SubscriptionsRepository } from './subscriptions.repository';

@Module({
  imports: [AuditModule],
  controllers: [PlansController, InvoicesController, AdminInvoicesController, TrialController],
  providers: [
    BillingRepository,
    PlansRepository,
    SubscriptionsRepository,
    { provide: Clock, useClass: SystemClock },
    TonRates,
    TonProvider,
    TelegramProvider,
    {
      provide: PAYMENT_PROVIDER_LIST,
      useFactory: (ton: TonProvider, telegram: TelegramProvider): PaymentProvider[] => [
        ton,
        telegram,
      ],
      inject: [TonProvider, TelegramProvider],
    },
    PaymentProviders,
    ConfirmationService,
    BillingService,
    PlansService,
    ReconciliationService,
  ],
  // The bot records Telegram payments through BillingService.recordTelegramPayment.
  exports: [BillingService, ReconciliationService],
})
export class BillingModule {}
