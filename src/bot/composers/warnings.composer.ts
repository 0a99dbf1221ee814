import { Injectable } from '@nestjs/common';
import { Composer, InlineKeyboard } from 'grammy';
import { BotAccountsService } from '../bot-accounts.service';
import { CALLBACK, CALLBACK_PATTERN } from '../callback-data';
import type { BotContext } from '../i18n';

/**
 * Warnings (traffic at 80% and 100%, the subscription ending) on or off: `/warnings` says which,
 * with a button to change it; every warning carries the button to turn them off.
 */
@Injectable()
export class WarningsComposer {
  readonly composer = new Composer<BotContext>();

  constructor(accounts: BotAccountsService) {
    const answer = async (ctx: BotContext, on: boolean) => {
      await ctx.reply(ctx.t(on ? 'warnings-on' : 'warnings-off'), {
        reply_markup: new InlineKeyboard().text(
          ctx.t(on ? 'warnings-off-button' : 'warnings-on-button'),
          CALLBACK.warnings(!on),
        ),
      });
    };

    this.composer.command('warnings', async (ctx) => {
      if (!ctx.from) return;
      await answer(ctx, await accounts.warningsOn(ctx.from.id));
    });
    this.composer.callbackQuery(CALLBACK_PATTERN.warnings, async (ctx) => {
      await ctx.answerCallbackQuery();
      const on = ctx.match[1] === 'on';
      await accounts.setWarnings(ctx.from.id, on);
      await answer(ctx, on);
    });
  }
}
