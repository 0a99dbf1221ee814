import { Invoice } from './entities/invoice.entity';
import { PartnerCommission } from './entities/partner-commission.entity';
import { PaymentScan } from './entities/payment-scan.entity';
import { PlanPrice } from './entities/plan-price.entity';
import { Plan } from './entities/plan.entity';
import { ReceivedPayment } from './entities/received-payment.entity';
import { TelegramPayment } from './entities/telegram-payment.entity';

/**
 * The entities of billing/: BillingModule registers them, src/entities.ts joins them for the CLI.
 */
export const BILLING_ENTITIES = [
  PartnerCommission,
  Plan,
  PlanPrice,
  Invoice,
  TelegramPayment,
  ReceivedPayment,
  PaymentScan,
];
