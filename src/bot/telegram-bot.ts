import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { autoRetry } from '@grammyjs/auto-retry';
import type { I18n } from '@grammyjs/i18n';
import { Api, Bot, BotError, type MiddlewareFn } from 'grammy';
import type { Update } from 'grammy/types';
import { AppError } from '../common/errors';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import { AdvisoryLocks } from '../database/advisory-lock';
import { Metrics } from '../metrics/metrics.service';
import { BotAccountsService } from './bot-accounts.service';
import { ALLOWED_UPDATES, INIT_WITHIN_MS, WEBHOOK_ANSWER_WITHIN_MS } from './bot.constants';
import { BuyComposer } from './composers/buy.composer';
import { ConnectComposer } from './composers/connect.composer';
import { LoginComposer } from './composers/login.composer';
import { PartnerComposer } from './composers/partner.composer';
import { StartComposer } from './composers/start.composer';
import { WarningsComposer } from './composers/warnings.composer';
import { type BotContext, createI18n } from './i18n';
import { type ApiSignal, Polling } from './polling';

/** Codes of errors a user can act on, and the text that tells them. */
const ERROR_TEXT: Partial<Record<string, string>> = {
  UPSTREAM_UNAVAILABLE: 'error-upstream',
  CONFLICT: 'error-too-many-invoices',
  NOT_FOUND: 'plan-gone',
};

/**
 * The grammY bot inside the app, in the mode BOT_MODE says: off, webhook (`POST /bot/webhook`
 * hands updates in) or long polling (one instance). Interactive replies retry after Telegram's
 * `retry_after`; an update that fails is logged with its id and the bot goes on.
 */
@Injectable()
export class TelegramBot implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Bot');
  readonly i18n: I18n<BotContext> = createI18n();
  private bot: Bot<BotContext> | null = null;
  /** Without automatic retries: for messages nobody is waiting for (reminders, set-up). */
  private plainApi: Api | null = null;
  private polling: Polling | null = null;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly locks: AdvisoryLocks,
    private readonly accounts: BotAccountsService,
    private readonly start: StartComposer,
    private readonly login: LoginComposer,
    private readonly buy: BuyComposer,
    private readonly partner: PartnerComposer,
    private readonly connect: ConnectComposer,
    private readonly warnings: WarningsComposer,
    private readonly metrics: Metrics,
  ) {}

  /** The Bot API for messages sent on the service's own initiative; null when the bot is off. */
  get api(): Api | null {
    return this.plainApi;
  }

  onApplicationBootstrap(): void {
    const token = this.settings.botToken;
    if (this.settings.botMode === 'off' || !token) return;
    const client = { apiRoot: this.settings.telegramApiRoot };
    this.plainApi = new Api(token, client);
    this.bot = this.build(new Bot<BotContext>(token, { client }));
    if (this.settings.botMode === 'webhook') {
      void this.registerWebhook(this.plainApi);
    } else {
      this.polling = new Polling(this.plainApi, this.locks, (u) => this.handle(u), this.logger);
      this.polling.start();
    }
  }

  /** Stops polling and lets updates in hand finish, for SHUTDOWN_GRACE_S at most. */
  async onModuleDestroy(): Promise<void> {
    await this.polling?.stop();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...this.inFlight]),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, this.settings.shutdownGraceS * 1000);
      }),
    ]);
    clearTimeout(timer);
  }

  /** A webhook update: handled, but answered after WEBHOOK_ANSWER_WITHIN_MS at the latest. */
  async receiveWebhookUpdate(update: Update): Promise<void> {
    const work = this.handle(update);
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      work,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, WEBHOOK_ANSWER_WITHIN_MS);
      }),
    ]);
    clearTimeout(timer);
  }

  /** One update through the middleware; never throws. */
  async handle(update: Update): Promise<void> {
    const bot = this.bot;
    if (!bot) return;
    try {
      // grammY retries `getMe` here without end while Telegram is unreachable.
      if (!bot.isInited()) await bot.init(AbortSignal.timeout(INIT_WITHIN_MS) as ApiSignal);
      await bot.handleUpdate(update);
    } catch (error) {
      // Failed outside the error boundary (before it, or setting the bot up).
      this.metrics.botUpdate('failed');
      const cause = error instanceof BotError ? error.error : error;
      this.logger.error({ err: cause, update_id: update.update_id }, 'bot update failed');
    }
  }

  private build(bot: Bot<BotContext>): Bot<BotContext> {
    // Network errors fail the call: auto-retry would otherwise retry them, without a limit on
    // attempts, for as long as Telegram is unreachable.
    bot.api.config.use(
      autoRetry({ maxRetryAttempts: 3, maxDelaySeconds: 30, rethrowHttpErrors: true }),
    );
    bot.use(answerCallbackQueries);
    bot.use(this.i18n);
    bot.use(this.errorBoundary);
    // Only the private chat tells whether the account can be written to.
    bot.chatType('private').on('my_chat_member', async (ctx, next) => {
      const status = ctx.myChatMember.new_chat_member.status;
      if (status === 'kicked') await this.accounts.markUnreachable(ctx.from.id);
      else await next();
    });
    bot.use(async (ctx, next) => {
      if (ctx.from && ctx.chat?.type === 'private') {
        await this.accounts.noteChat(ctx.from.id, ctx.from.language_code ?? null);
      }
      await next();
    });
    bot.use(
      this.start.composer,
      this.login.composer,
      this.buy.composer,
      this.partner.composer,
      this.connect.composer,
      this.warnings.composer,
    );
    bot.on('callback_query:data', (ctx) =>
      ctx.answerCallbackQuery({ text: ctx.t('button-stale') }),
    );
    return bot;
  }

  /**
   * Counts the update, logs a failure with the update's id and tells the user in a way they can act
   * on. A user's mistake the bot explained counts as handled.
   */
  private readonly errorBoundary: MiddlewareFn<BotContext> = async (ctx, next) => {
    try {
      await next();
      this.metrics.botUpdate('handled');
    } catch (error) {
      const known = error instanceof AppError && error.status < 500 ? error : null;
      const upstream = error instanceof AppError && error.code === 'UPSTREAM_UNAVAILABLE';
      this.metrics.botUpdate(known ? 'handled' : 'failed');
      if (!known && !upstream) {
        this.logger.error({ err: error, update_id: ctx.update.update_id }, 'bot update failed');
      }
      const text = ctx.t(
        (error instanceof AppError ? ERROR_TEXT[error.code] : undefined) ?? 'error-generic',
      );
      try {
        if (ctx.preCheckoutQuery) await ctx.answerPreCheckoutQuery(false, text);
        else if (ctx.callbackQuery) await ctx.answerCallbackQuery({ text, show_alert: true });
        else if (ctx.chat) await ctx.reply(text);
      } catch (replyError) {
        this.logger.warn({ err: replyError, update_id: ctx.update.update_id }, 'no error reply');
      }
    }
  };

  private async registerWebhook(api: Api): Promise<void> {
    try {
      await api.setWebhook(`${this.settings.publicApiUrl}/api/v1/bot/webhook`, {
        secret_token: this.settings.botWebhookSecret ?? undefined,
        allowed_updates: [...ALLOWED_UPDATES],
      });
    } catch (error) {
      this.logger.error({ err: error }, 'could not register the webhook with Telegram');
    }
  }
}

/** Telegram shows a spinner until a callback query is answered: answer every one, once. */
const answerCallbackQueries: MiddlewareFn<BotContext> = async (ctx, next) => {
  if (!ctx.callbackQuery) return next();
  let answered = false;
  const answer = ctx.answerCallbackQuery.bind(ctx);
  ctx.answerCallbackQuery = (...args) => {
    answered = true;
    return answer(...args);
  };
  try {
    await next();
  } finally {
    if (!answered) await answer().catch(() => undefined);
  }
};
