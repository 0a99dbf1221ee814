import { Injectable } from '@nestjs/common';
import { Composer, InlineKeyboard } from 'grammy';
import { type AreaLinks, BotAccountsService } from '../bot-accounts.service';
import { CALLBACK } from '../callback-data';
import type { BotContext } from '../i18n';
import { botUser } from './from';
import { askLogin } from './login.composer';
import { linkNotice } from './partner.composer';

/** `/start` with any payload: the account, the link's branch, and the menu with fresh links. */
@Injectable()
export class StartComposer {
  readonly composer = new Composer<BotContext>();

  constructor(accounts: BotAccountsService) {
    this.composer.command('start', async (ctx) => {
      if (!ctx.from || ctx.chat.type !== 'private') return;
      const { branch, links } = await accounts.start(botUser(ctx.from), ctx.match);
      const notice = linkNotice(ctx, branch);
      await ctx.reply([notice, ctx.t('welcome')].filter(Boolean).join('\n\n'), {
        reply_markup: menu(ctx, links),
      });
      if (branch.kind === 'login') await askLogin(ctx, branch);
    });
  }
}

function menu(ctx: BotContext, links: AreaLinks): InlineKeyboard {
  return new InlineKeyboard()
    .text(ctx.t('button-connect'), CALLBACK.connect)
    .row()
    .url(ctx.t('button-account'), links.account)
    .row()
    .url(ctx.t('button-plans'), links.plans)
    .row()
    .url(ctx.t('button-syndicate'), links.syndicate)
    .row()
    .text(ctx.t('button-buy'), CALLBACK.plans);
}
