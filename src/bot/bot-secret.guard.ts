import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { AppError } from '../common/errors';
import { DocumentedGuard } from '../common/openapi/answers';
import { secretsEqual } from '../common/secrets';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';

/**
 * The webhook: Telegram sends BOT_WEBHOOK_SECRET in `X-Telegram-Bot-Api-Secret-Token`. Compared in
 * constant time; without webhook mode nothing is accepted.
 */
@Injectable()
@DocumentedGuard({ schemes: ['telegram_webhook'], errors: ['UNAUTHENTICATED'] })
export class BotSecretGuard implements CanActivate {
  constructor(@Inject(SETTINGS) private readonly settings: Settings) {}

  canActivate(context: ExecutionContext): boolean {
    const expected = this.settings.botMode === 'webhook' ? this.settings.botWebhookSecret : null;
    const given = context
      .switchToHttp()
      .getRequest<Request>()
      .header('x-telegram-bot-api-secret-token');
    if (!expected || !given || !secretsEqual(given, expected)) {
      throw new AppError('UNAUTHENTICATED', 'missing or wrong X-Telegram-Bot-Api-Secret-Token');
    }
    return true;
  }
}
