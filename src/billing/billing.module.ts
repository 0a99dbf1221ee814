import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { UsersModule } from '../users/users.module';
import { AuditModule } from '../audit/audit.module';
import { BillingRepository } from './billing.repository';
import { BillingService } from './billing.service';
import { Clock, SystemClock } from './clock';
import { ConfirmationService } from './confirmation.service';
import {
  AdminInvoicesController,
  AdminPaymentsController,
  InvoicesController,
} from './invoices.controller';
import { ReceivedPaymentsRepository } from './received-payments.repository';
import { ToncenterClient } from './providers/toncenter.client';
import { UnmatchedPaymentsService } from './unmatched-payments.service';
import { ThrottlingModule } from '../common/throttling/throttling.module';
import { TrialController } from './trial.controller';
import { PlansController } from './plans.controller';
import { PlansRepository } from './plans.repository';
import { PlansService } from './plans.service';
import {
  PAYMENT_PROVIDER_LIST,
  type PaymentProvider,
  PaymentProviders,
} from './providers/payment-provider';
import { DemoPaymentsController } from './demo/demo-payments.controller';
import { DemoPaymentsService } from './demo/demo-payments.service';
import { TelegramProvider } from './providers/telegram.provider';
import { TonRates } from './providers/ton-rates';
import { TonProvider } from './providers/ton.provider';
import { ReconciliationService } from './reconciliation.service';
import { CommissionsRepository } from './commissions.repository';
import { TelegramPaymentsService } from './telegram-payments.service';
import { TrafficResetService } from './traffic-reset.service';
import { BILLING_ENTITIES } from './billing.entities';

@Module({
  imports: [TypeOrmModule.forFeature(BILLING_ENTITIES), AuditModule, UsersModule, ThrottlingModule],
  controllers: [
    PlansController,
    InvoicesController,
    AdminInvoicesController,
    DemoPaymentsController,
    AdminPaymentsController,
    TrialController,
  ],
  providers: [
    DemoPaymentsService,
    BillingRepository,
    ReceivedPaymentsRepository,
    ToncenterClient,
    UnmatchedPaymentsService,
    PlansRepository,
    CommissionsRepository,
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
    TelegramPaymentsService,
    TrafficResetService,
  ],
  // The bot buys through BillingService and PlansService and settles Telegram payments through
  // TelegramPaymentsService; reminders read the time from the Clock.
  exports: [BillingService, PlansService, ReconciliationService, TelegramPaymentsService, Clock],
})
export class BillingModule {}
