import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { GrammyError, InlineKeyboard } from 'grammy';
import { Clock } from '../billing/clock';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import { AdvisoryLocks } from '../database/advisory-lock';
import { JOBS } from '../scheduler/intervals';
import { JobRunner } from '../scheduler/job-runner.service';
import { ENDED_REMINDER_DAYS, REMINDERS_BATCH, TRAFFIC_WARNING_HOURS } from './bot.constants';
import { BotRepository, type DueReminder } from './bot.repository';
import { CALLBACK } from './callback-data';
import { formatTime, pickLocale } from './i18n';
import { TelegramBot } from './telegram-bot';

export interface RemindersReport {
  /** False when another instance held the lock, or the bot is off. */
  ran: boolean;
  sent: number;
  /** Accounts found to have blocked the bot (Telegram answered 403). */
  unreachable: number;
  failed: number;
}

/**
 * Every BOT_REMINDER_INTERVAL_S: tells Telegram accounts 3 days and 1 day before their subscription
 * ends, and when it has ended, each once per subscription end (claimed in the database just before
 * sending). Every TRAFFIC_RESET_INTERVAL_S: tells them that their traffic reached 80% and 100% of
 * the limit, each once per traffic period. Each message has a button to renew and one to turn
 * these messages off. Once per period across all instances (the job runner).
 */
@Injectable()
export class RemindersService implements OnModuleInit {
  private readonly logger = new Logger(RemindersService.name);

  constructor(
    private readonly reminders: BotRepository,
    private readonly bot: TelegramBot,
    private readonly clock: Clock,
    private readonly locks: AdvisoryLocks,
    private readonly jobs: JobRunner,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  onModuleInit(): void {
    // The runner takes the same lock as run() and claims the period across instances.
    if (this.settings.botMode !== 'off') {
      this.jobs.every(JOBS.botReminders, (signal) => this.sendDue(signal));
      this.jobs.every(JOBS.botTrafficWarnings, (signal) => this.sendTrafficWarnings(signal));
    }
  }

  /** A run of the traffic warnings now (tests), unless one is going on somewhere or the bot is off. */
  async runTrafficWarnings(): Promise<RemindersReport> {
    const idle = { ran: false, sent: 0, unreachable: 0, failed: 0 };
    if (!this.bot.api) return idle;
    return (
      (await this.locks.tryWithLock(JOBS.botTrafficWarnings.lockKey, () =>
        this.sendTrafficWarnings(),
      )) ?? idle
    );
  }

  /**
   * Sends the traffic warnings the traffic batch recorded (80% and 100% of the limit), each once:
   * claimed in the database just before sending, released when Telegram failed for a passing
   * reason.
   */
  private async sendTrafficWarnings(signal?: AbortSignal): Promise<RemindersReport> {
    const report: RemindersReport = { ran: !!this.bot.api, sent: 0, unreachable: 0, failed: 0 };
    if (!this.bot.api) return report;
    const due = await this.reminders.dueTrafficWarnings(TRAFFIC_WARNING_HOURS, REMINDERS_BATCH);
    for (const warning of due) {
      if (signal?.aborted) break;
      if (!(await this.reminders.claimTrafficWarning(warning))) continue;
      const locale = pickLocale(warning.languageCode);
      const t = (key: string, vars?: Record<string, string>) => this.bot.i18n.t(locale, key, vars);
      const lines = [t(`warning-${warning.kind}`)];
      if (warning.resetsAt) lines.push(t('warning-resets', { at: formatTime(warning.resetsAt) }));
      const outcome = await this.deliver(warning.tgId, lines.join('\n'), t('reminder-renew'), t);
      report[outcome] += 1;
      if (outcome === 'failed') await this.reminders.releaseTrafficWarning(warning);
      if (outcome === 'unreachable') await this.reminders.markUnreachable(warning.tgId);
    }
    return report;
  }

  /** A run now (tests), unless one is going on somewhere or the bot is off; `ran: false` then. */
  async run(): Promise<RemindersReport> {
    const idle = { ran: false, sent: 0, unreachable: 0, failed: 0 };
    if (!this.bot.api) return idle;
    return (await this.locks.tryWithLock(JOBS.botReminders.lockKey, () => this.sendDue())) ?? idle;
  }

  /** `signal`: the job's time bound; a run past it stops between reminders. */
  private async sendDue(signal?: AbortSignal): Promise<RemindersReport> {
    const report: RemindersReport = { ran: !!this.bot.api, sent: 0, unreachable: 0, failed: 0 };
    if (!this.bot.api) return report;
    const now = new Date(this.clock.now());
    const due = await this.reminders.dueReminders(now, ENDED_REMINDER_DAYS, REMINDERS_BATCH);
    for (const reminder of due) {
      if (signal?.aborted) break;
      if (!(await this.reminders.claimReminder(reminder))) continue;
      const outcome = await this.send(reminder);
      report[outcome] += 1;
      if (outcome === 'failed') await this.reminders.releaseReminder(reminder);
      if (outcome === 'unreachable') await this.reminders.markUnreachable(reminder.tgId);
    }
    return report;
  }

  private send(reminder: DueReminder): Promise<'sent' | 'unreachable' | 'failed'> {
    const locale = pickLocale(reminder.languageCode);
    const t = (key: string, vars?: Record<string, string>) => this.bot.i18n.t(locale, key, vars);
    return this.deliver(
      reminder.tgId,
      t(`reminder-${reminder.kind}`, { until: formatTime(reminder.expiresAt) }),
      t('reminder-renew'),
      t,
    );
  }

  /** One message with a button to the plans and one to turn these messages off. */
  private async deliver(
    tgId: string,
    text: string,
    plansButton: string,
    t: (key: string) => string,
  ): Promise<'sent' | 'unreachable' | 'failed'> {
    const api = this.bot.api;
    if (!api) return 'failed';
    try {
      await api.sendMessage(Number(tgId), text, {
        reply_markup: new InlineKeyboard()
          .text(plansButton, CALLBACK.plans)
          .row()
          .text(t('warnings-off-button'), CALLBACK.warnings(false)),
      });
      return 'sent';
    } catch (error) {
      if (error instanceof GrammyError && error.error_code === 403) return 'unreachable';
      this.logger.warn({ err: error }, `reminder to a Telegram account not sent; next run retries`);
      return 'failed';
    }
  }
}
