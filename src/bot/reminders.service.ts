import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { GrammyError, InlineKeyboard } from 'grammy';
import { Clock } from '../billing/clock';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import { AdvisoryLocks } from '../database/advisory-lock';
import { JOBS } from '../scheduler/intervals';
import { JobRunner } from '../scheduler/job-runner.service';
import { ENDED_REMINDER_DAYS, REMINDERS_BATCH, REMINDERS_LOCK_KEY } from './bot.constants';
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
 * sending), with a button to renew. Once per period across all instances (the job runner).
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
    }
  }

  /** A run now (tests), unless one is going on somewhere or the bot is off; `ran: false` then. */
  async run(): Promise<RemindersReport> {
    const idle = { ran: false, sent: 0, unreachable: 0, failed: 0 };
    if (!this.bot.api) return idle;
    return (await this.locks.tryWithLock(REMINDERS_LOCK_KEY, () => this.sendDue())) ?? idle;
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

  private async send(reminder: DueReminder): Promise<'sent' | 'unreachable' | 'failed'> {
    const api = this.bot.api;
    if (!api) return 'failed';
    const locale = pickLocale(reminder.languageCode);
    const t = (key: string, vars?: Record<string, string>) => this.bot.i18n.t(locale, key, vars);
    try {
      await api.sendMessage(
        Number(reminder.tgId),
        t(`reminder-${reminder.kind}`, { until: formatTime(reminder.expiresAt) }),
        { reply_markup: new InlineKeyboard().text(t('reminder-renew'), CALLBACK.plans) },
      );
      return 'sent';
    } catch (error) {
      if (error instanceof GrammyError && error.error_code === 403) return 'unreachable';
      this.logger.warn({ err: error }, `reminder to a Telegram account not sent; next run retries`);
      return 'failed';
    }
  }
}
