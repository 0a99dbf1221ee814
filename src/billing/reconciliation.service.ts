import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { AppError } from '../common/errors';
import { AdvisoryLocks } from '../database/advisory-lock';
import { JOBS } from '../scheduler/intervals';
import { JobRunner } from '../scheduler/job-runner.service';
import { LATE_PAYMENT_DAYS } from './billing.constants';
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
 * Every RECONCILE_INTERVAL_S: expires stale pending invoices, then asks each provider for the
 * transactions received since the last run and confirms the invoices they pay, through the one
 * confirmation; what paid nothing is kept for staff (`settle`). An advisory lock
 * keeps it to one instance at a time; a provider that is down is skipped until the next run.
 */
@Injectable()
export class ReconciliationService implements OnModuleInit {
  private readonly logger = new Logger(ReconciliationService.name);

  constructor(
    private readonly billing: BillingRepository,
    private readonly locks: AdvisoryLocks,
    private readonly providers: PaymentProviders,
    private readonly confirmation: ConfirmationService,
    private readonly jobs: JobRunner,
  ) {}

  onModuleInit(): void {
    // The runner takes the same lock as reconcile() and claims the period across instances.
    this.jobs.every(JOBS.reconcile, (signal) => this.run(signal));
  }

  /** A run now (tests, operators), unless one is going on somewhere; `ran: false` then. */
  async reconcile(): Promise<ReconcileReport> {
    const report = await this.locks.tryWithLock(JOBS.reconcile.lockKey, () => this.run());
    return report ?? { ran: false, expired: 0, confirmed: 0, failedProviders: [] };
  }

  /** `signal`: the job's time bound; a run past it stops between invoices. */
  private async run(signal?: AbortSignal): Promise<ReconcileReport> {
    const report: ReconcileReport = {
      ran: true,
      expired: await this.billing.expireStale(),
      confirmed: 0,
      failedProviders: [],
    };
    for (const provider of this.providers.all()) {
      if (signal?.aborted) break;
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
        if (signal?.aborted) break;
        try {
          // A late payment is judged at the current rate, which may be unavailable for now.
          const payment = await provider.findPayment(invoice, { transactions });
          if (!payment) continue;
          await this.confirmation.confirm(invoice.userId, invoice.id, payment);
          report.confirmed += 1;
        } catch (error) {
          // Confirmed meanwhile by its owner, or the transaction already paid another invoice.
          if (error instanceof AppError && error.status < 500) continue;
          // Its transfers stay unsettled (settle leaves a paying one alone): the next run retries.
          this.logger.error({ err: error }, `could not confirm invoice ${invoice.id}`);
        }
      }
      try {
        await provider.settle(transactions);
      } catch (error) {
        // Left unsettled, so the next run settles them.
        this.logger.error({ err: error }, `${provider.kind}: could not settle received payments`);
        report.failedProviders.push(provider.kind);
      }
    }
    return report;
  }
}
