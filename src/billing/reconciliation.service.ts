import {
  Inject,
  Injectable,
  Logger,
  type OnModuleDestroy,
  type OnModuleInit,
  Optional,
} from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { AppError } from '../common/errors';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import { LATE_PAYMENT_DAYS, RECONCILE_INTERVAL, RECONCILE_LOCK_KEY } from './billing.constants';
import { BillingRepository } from './billing.repository';
import { ConfirmationService } from './confirmation.service';
import { PaymentProviders } from './providers/payment-provider';

export interface ReconcileReport {
  /** False when another instance held the lock and this run did nothing. */
  ran: boolean;
  expired: number;
  confirmed: number;
  /** Providers whose transactions could not be fetched this time. */
  failedProviders: string[];
}

/**
 * Every RECONCILE_INTERVAL_S: expires stale pending invoices, then asks each provider for its recent
 * transactions and confirms the invoices they pay, through the one confirmation. An advisory lock
 * keeps it to one instance at a time; a provider that is down is skipped until the next run.
 */
@Injectable()
export class ReconciliationService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(ReconciliationService.name);
  private running = false;

  constructor(
    private readonly billing: BillingRepository,
    private readonly providers: PaymentProviders,
    private readonly confirmation: ConfirmationService,
    @Inject(SETTINGS) private readonly settings: Settings,
    /** Present only when the app runs its scheduled jobs (not in tests). */
    @Optional() private readonly scheduler?: SchedulerRegistry,
  ) {}

  onModuleInit(): void {
    if (!this.scheduler) return;
    const handle = setInterval(() => void this.tick(), this.settings.reconcileIntervalS * 1000);
    this.scheduler.addInterval(RECONCILE_INTERVAL, handle);
  }

  onModuleDestroy(): void {
    if (this.scheduler?.doesExist('interval', RECONCILE_INTERVAL)) {
      this.scheduler.deleteInterval(RECONCILE_INTERVAL);
    }
  }

  /** One scheduled run; a run still going on in this instance is not started twice. */
  private async tick(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      await this.reconcile();
    } catch (error) {
      this.logger.error({ err: error }, 'reconciliation failed; retrying next interval');
    } finally {
      this.running = false;
    }
  }

  async reconcile(): Promise<ReconcileReport> {
    const report = await this.billing.withAdvisoryLock(RECONCILE_LOCK_KEY, () => this.run());
    return report ?? { ran: false, expired: 0, confirmed: 0, failedProviders: [] };
  }

  private async run(): Promise<ReconcileReport> {
    const report: ReconcileReport = {
      ran: true,
      expired: await this.billing.expireStale(),
      confirmed: 0,
      failedProviders: [],
    };
    for (const provider of this.providers.all()) {
      if (!provider.isConfigured()) continue;
      let transactions;
      try {
        transactions = await provider.recentTransactions();
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        this.logger.warn(`${provider.kind}: recent transactions unavailable (${reason})`);
        report.failedProviders.push(provider.kind);
        continue;
      }
      if (transactions.length === 0) continue;
      // Only the invoices these transactions could pay, not every unpaid one.
      const memos = transactions.map((tx) => tx.memo);
      const candidates = await this.billing.payableInvoices(
        provider.kind,
        LATE_PAYMENT_DAYS,
        memos,
      );
      for (const invoice of candidates) {
        const payment = await provider.findPayment(invoice, { transactions });
        if (!payment) continue;
        try {
          await this.confirmation.confirm(invoice.userId, invoice.id, payment);
          report.confirmed += 1;
        } catch (error) {
          // Confirmed meanwhile by its owner, or the transaction already paid another invoice.
          if (error instanceof AppError && error.status < 500) continue;
          this.logger.error({ err: error }, `could not confirm invoice ${invoice.id}`);
        }
      }
    }
    return report;
  }
}
