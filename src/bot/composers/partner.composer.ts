import { Injectable } from '@nestjs/common';
import { Composer, InlineKeyboard } from 'grammy';
import { BotAccountsService, type StartBranch } from '../bot-accounts.service';
import type { BotContext } from '../i18n';
import { botUser } from './from';

/** The partner (syndicate) area: `/partner` opens it with a fresh sign-in token. */
@Injectable()
export class PartnerComposer {
  readonly composer = new Composer<BotContext>();

  constructor(accounts: BotAccountsService) {
    this.composer.command('partner', async (ctx) => {
      if (!ctx.from) return;
      const link = await accounts.syndicateLink(botUser(ctx.from));
      await ctx.reply(ctx.t('partner-area'), {
        reply_markup: new InlineKeyboard().url(ctx.t('button-syndicate'), link),
      });
    });
  }
}

/** What a `p_<code>` or a referral link did, in a line above the welcome. */
export function linkNotice(ctx: BotContext, branch: StartBranch): string | null {
  switch (branch.kind) {
    case 'partner':
      return ctx.t(`partner-${branch.result}`, { code: branch.code });
    case 'referral':
      return branch.attached ? ctx.t('referral-attached') : null;
    case 'login':
    case 'plain':
      return null;
  }
}
