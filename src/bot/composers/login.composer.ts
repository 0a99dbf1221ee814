import { Injectable } from '@nestjs/common';
import { Composer, InlineKeyboard } from 'grammy';
import { BotAccountsService, type StartBranch } from '../bot-accounts.service';
import { CALLBACK, CALLBACK_PATTERN } from '../callback-data';
import { type BotContext, formatTime } from '../i18n';
import { botUser } from './from';

/** Sign-in from the apps: `/start login_<code>` asks, and only Confirm signs in. */
@Injectable()
export class LoginComposer {
  readonly composer = new Composer<BotContext>();

  constructor(accounts: BotAccountsService) {
    this.composer.callbackQuery(CALLBACK_PATTERN.login, async (ctx) => {
      const [, action, code] = ctx.match;
      const result = await accounts.decideLogin(
        botUser(ctx.from),
        code,
        action === 'ok' ? 'confirm' : 'cancel',
      );
      await ctx.answerCallbackQuery();
      await ctx.editMessageText(ctx.t(`login-${result}`));
    });
  }
}

/** The question a login link asks: what is asking, and when, with Confirm and Cancel. */
export async function askLogin(
  ctx: BotContext,
  branch: Extract<StartBranch, { kind: 'login' }>,
): Promise<void> {
  if (branch.createdAt === null) {
    await ctx.reply(ctx.t('login-unavailable'));
    return;
  }
  await ctx.reply(ctx.t('login-prompt', { created: formatTime(branch.createdAt) }), {
    reply_markup: new InlineKeyboard()
      .text(ctx.t('login-confirm'), CALLBACK.loginConfirm(branch.code))
      .text(ctx.t('login-cancel'), CALLBACK.loginCancel(branch.code)),
  });
}
